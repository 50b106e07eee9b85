//! A long input through the streaming path: several minutes built from corpus clips (with
//! silences between them) must be transcribed as well as the clips one by one, with every word
//! at its place in the file. Memory is measured by a benchmark, not here (see the report of
//! `scribe transcribe` under `/usr/bin/time -v`).

use scribe_whisper::audio::{self, SAMPLE_RATE};
use scribe_whisper::{ComputeType, Progress, TranscribeOptions, Transcript};

mod common;
use common::{corpus, words, write_wav};

fn transcript_words(t: &Transcript) -> Vec<String> {
    t.segments.iter().flat_map(|s| words(&s.text)).collect()
}

/// The manifest's reference transcript of a clip.
fn reference(clip: &str) -> String {
    let manifest = std::fs::read_to_string(corpus().join("manifest.tsv")).unwrap();
    let line = manifest
        .lines()
        .find(|l| l.starts_with(&format!("{clip}\t")))
        .unwrap_or_else(|| panic!("{clip} not in the manifest"));
    line.split('\t').nth(3).unwrap().to_string()
}

fn edit_distance(a: &[String], b: &[String]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, x) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, y) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(x != y)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[test]
fn a_long_file_gives_the_words_of_its_clips_at_their_places() {
    let engine = common::engine("whisper-tiny.en", ComputeType::Float16);
    let opts = TranscribeOptions { language: Some("en".into()), ..Default::default() };
    let clips = [
        "audio/en_jfk.wav",
        "audio/en_synth_gettysburg_2voices.wav",
        "audio/en_librispeech_1272-128104-0000.wav",
        "audio/en_command_what_s_the_weather_like_in_new_york.wav",
        "audio/en_jfk.wav",
    ];
    // Clips separated by 20 s of silence (the VAD drops it, so windows straddle clips), then
    // the whole sequence twice: about four and a half minutes.
    let silence = vec![0.0f32; 20 * SAMPLE_RATE as usize];
    let mut long = Vec::new();
    let mut truth = Vec::new();
    let mut one_by_one = Vec::new();
    let mut starts = Vec::new();
    for _ in 0..2 {
        for clip in clips {
            let path = corpus().join(clip);
            starts.push((clip, long.len() as f64 / SAMPLE_RATE as f64));
            long.extend(audio::decode_all(&path).unwrap());
            long.extend_from_slice(&silence);
            truth.extend(words(&reference(clip)));
            one_by_one.extend(transcript_words(&engine.transcribe(&path, &opts, &mut |_| {}).unwrap()));
        }
    }
    let dir = std::env::temp_dir().join(format!("scribe-long-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let wav = dir.join("long.wav");
    write_wav(&wav, &long);
    let duration = long.len() as f64 / SAMPLE_RATE as f64;
    drop(long);

    let mut progress: Vec<Progress> = Vec::new();
    let t = engine.transcribe(&wav, &opts, &mut |p| progress.push(p)).unwrap();
    std::fs::remove_dir_all(&dir).ok();

    assert!((t.duration_s - duration).abs() < 0.01, "duration {} vs {duration}", t.duration_s);
    // As accurate as the clips one by one. Not word for word: windows fall elsewhere and the
    // previous text is the prompt, which sways tiny.en on the synthetic voices either way.
    let got = transcript_words(&t);
    let (long_errors, clip_errors) = (edit_distance(&got, &truth), edit_distance(&one_by_one, &truth));
    println!("{} reference words; long file {long_errors} errors, clips one by one {clip_errors}", truth.len());
    assert!(
        long_errors <= clip_errors + truth.len() / 50,
        "long file: {long_errors} word errors, clips one by one: {clip_errors}\n{}\n--- one by one ---\n{}",
        got.join(" "),
        one_by_one.join(" ")
    );

    // Times are on the original file's timeline: ordered, within it, and each jfk copy's
    // "Americans" within its clip (said 1.8 s in).
    let all: Vec<_> = t.segments.iter().flat_map(|s| &s.words).collect();
    assert!(all.windows(2).all(|w| w[1].start >= w[0].start - 1e-6), "words out of order");
    assert!(all.iter().all(|w| w.end <= duration + 1e-6));
    let americans: Vec<f64> =
        all.iter().filter(|w| w.text.to_lowercase().contains("americans")).map(|w| w.start).collect();
    let jfk_starts: Vec<f64> = starts.iter().filter(|(c, _)| *c == "audio/en_jfk.wav").map(|s| s.1).collect();
    assert_eq!(americans.len(), jfk_starts.len(), "{americans:?}");
    for (a, s) in americans.iter().zip(&jfk_starts) {
        assert!(a - s > 1.0 && a - s < 3.0, "\"Americans\" at {a} s, its clip starts at {s} s");
    }

    // Progress goes forward and ends at the duration.
    assert!(progress.windows(2).all(|p| p[1].done_s >= p[0].done_s));
    let last = progress.last().expect("progress reported");
    assert!((last.done_s - duration).abs() < 1.0 && last.total_s == t.duration_s, "{last:?}");
}
