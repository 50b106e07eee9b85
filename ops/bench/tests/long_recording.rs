//! The long recording `scribe-bench asr --long` transcribes: built from the corpus's real English
//! clips, long enough, its reference the clips' references in order, and exactly 0.7 s of
//! silence between two clips, each clip's samples unchanged.

use std::path::PathBuf;

use scribe_bench::corpus::real_english_clips;
use scribe_bench::long_recording::{GAP_S, build};
use scribe_whisper::audio::{self, SAMPLE_RATE};

fn corpus() -> PathBuf {
    let dir = std::env::var_os("SCRIBE_CORPUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    assert!(dir.join("manifest.tsv").is_file(), "speech corpus not found in {} (set SCRIBE_CORPUS_DIR)", dir.display());
    dir
}

#[test]
fn long_recording_repeats_the_real_clips_with_pauses_until_long_enough() {
    let corpus = corpus();
    let (_, clips) = real_english_clips(&corpus).unwrap();
    assert!(clips.len() >= 2, "the corpus has real English clips");
    assert!(
        clips.iter().all(|c| !c.file.contains("en_synth_") && !c.file.starts_with("audio/variants/")),
        "only real clips: {:?}",
        clips.iter().map(|c| &c.file).collect::<Vec<_>>()
    );
    let one_pass: f64 = clips.iter().map(|c| c.duration_s).sum();
    // Longer than one pass over the clips: the set must repeat.
    let min_s = one_pass * 1.5;
    let dir = tempfile::tempdir().unwrap();
    let rec = build(&corpus, &clips, min_s, GAP_S, &dir.path().join("long.wav")).unwrap();

    assert!(rec.duration_s() >= min_s, "{} s < {min_s} s", rec.duration_s());
    let pcm = audio::decode_all(&rec.path).unwrap();
    assert_eq!(pcm.len(), rec.samples, "the file holds what the builder says");

    // The clips in manifest order, repeated in order.
    let order: Vec<&str> = rec.clips.iter().map(|p| p.file.as_str()).collect();
    let expected: Vec<&str> = clips.iter().map(|c| c.file.as_str()).cycle().take(order.len()).collect();
    assert_eq!(order, expected);
    assert!(order.len() > clips.len(), "the set repeats");

    // The reference: the clips' references joined in the same order.
    let reference: Vec<&str> =
        expected.iter().map(|f| clips.iter().find(|c| c.file == *f).unwrap().transcript.trim()).collect();
    assert_eq!(rec.reference, reference.join(" "));

    // 0.7 s of digital silence between two clips, none before the first or after the last.
    let gap = (GAP_S * SAMPLE_RATE as f64).round() as usize;
    assert_eq!(rec.clips[0].start, 0);
    assert_eq!(rec.clips.last().unwrap().end(), rec.samples);
    for pair in rec.clips.windows(2) {
        assert_eq!(pair[1].start - pair[0].end(), gap, "pause between {} and {}", pair[0].file, pair[1].file);
        assert!(pcm[pair[0].end()..pair[1].start].iter().all(|&s| s == 0.0), "the pause is silence");
    }
    // Each clip's samples as the clip file has them (16-bit on both sides).
    for placed in &rec.clips[..clips.len()] {
        let original = audio::decode_all(&corpus.join(&placed.file)).unwrap();
        assert_eq!(placed.len, original.len(), "{}", placed.file);
        let worst =
            original.iter().zip(&pcm[placed.start..placed.end()]).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
        assert!(worst <= 1.0 / 32768.0, "{}: samples differ by {worst}", placed.file);
    }
}

#[test]
fn a_short_request_still_holds_every_clip_once() {
    let corpus = corpus();
    let (_, clips) = real_english_clips(&corpus).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let rec = build(&corpus, &clips, 1.0, GAP_S, &dir.path().join("short.wav")).unwrap();
    assert_eq!(rec.clips.len(), clips.len());
}

#[test]
fn a_long_form_reading_is_cut_into_its_takes_with_their_texts() {
    // given the corpus's long-form reading and its table of takes
    let corpus = corpus();
    let (_, all) = scribe_bench::corpus::english_clips(&corpus).unwrap();
    let reading = all
        .iter()
        .find(|c| c.long_form && c.sidecar.as_deref().is_some_and(|s| s.ends_with(".segments.tsv")))
        .expect("the corpus has a long-form reading with takes");
    let table = std::fs::read_to_string(corpus.join(reading.sidecar.as_deref().unwrap())).unwrap();
    let rows: Vec<Vec<&str>> = table.lines().skip(1).map(|l| l.split('\t').collect()).collect();
    // when it is cut
    let dir = tempfile::tempdir().unwrap();
    let (rec, takes) = scribe_bench::long_recording::from_takes(&corpus, reading, dir.path()).unwrap();
    // then there is a take per row, each its row's text and its row's samples of the recording
    assert_eq!(takes.len(), rows.len());
    assert_eq!(rec.clips.len(), rows.len());
    let pcm = audio::decode_all(&rec.path).unwrap();
    assert_eq!(pcm.len(), rec.samples);
    for (i, ((take, placed), row)) in takes.iter().zip(&rec.clips).zip(&rows).enumerate().step_by(17) {
        assert_eq!(take.transcript, row[4], "take {i}");
        let start: f64 = row[0].parse().unwrap();
        assert_eq!(placed.start, (start * SAMPLE_RATE as f64).round() as usize, "take {i}");
        let cut = audio::decode_all(std::path::Path::new(&take.file)).unwrap();
        assert_eq!(cut.len(), placed.len, "take {i}");
        assert_eq!(cut, pcm[placed.start..placed.end()], "take {i} holds its samples unchanged");
    }
    // and the recording's reference is the takes' texts in order
    let joined: Vec<&str> = rows.iter().map(|r| r[4].trim()).collect();
    assert_eq!(rec.reference, joined.join(" "));
}
