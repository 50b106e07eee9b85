//! Speech the VAD found is never skipped: two real clips joined with a short pause (a new
//! speaker after the first one stops) must both come back.
//!
//! Whisper's rule ends a 30 s window where the decoding ends on a single timestamp, taking it
//! to mean "nothing more is said here". After a sentence and a 0.7 s pause the decoder often
//! says exactly that while the second clip's speech is still in the window; faster-whisper and
//! openai-whisper then lose the second clip whole. Each pair below lost one clip that way
//! before the engine looked at the VAD's verdict on the rest of the window.
//!
//! Both decoding paths are held to it: the sequential one (what the engine picks for 19 s of
//! speech) and the batched one (forced with `batch_size`), which decodes VAD chunks without
//! the previous text and must not lose a sentence the decoder jumps over either.

use scribe_whisper::audio::{self, SAMPLE_RATE};
use scribe_whisper::vad::VadParams;
use scribe_whisper::{ComputeType, TranscribeOptions, Transcript};

mod common;
use common::{corpus, words, write_wav};

/// The words said between `from` and `to` seconds (by their timings).
fn words_between(t: &Transcript, from: f64, to: f64) -> Vec<String> {
    t.segments
        .iter()
        .flat_map(|s| &s.words)
        .filter(|w| (w.start + w.end) / 2.0 >= from && (w.start + w.end) / 2.0 < to)
        .flat_map(|w| words(&w.text))
        .collect()
}

/// How many of `expected`'s words `got` has (as a multiset).
fn recalled(got: &[String], expected: &[String]) -> usize {
    let mut pool = got.to_vec();
    expected
        .iter()
        .filter(|w| match pool.iter().position(|g| g == *w) {
            Some(i) => {
                pool.swap_remove(i);
                true
            }
            None => false,
        })
        .count()
}

#[test]
fn two_clips_joined_with_a_short_pause_both_come_back() {
    let dir = std::env::temp_dir().join(format!("scribe-joined-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pause = vec![0.0f32; SAMPLE_RATE as usize * 7 / 10];
    // (first, second, whether each clip alone decodes to stable text): the child's babble in
    // the CHILDES clip reads differently after any prompt, so there only the VAD's speech
    // regions are checked for words; the read speech must come back word for word.
    let pairs = [
        ("en_librispeech_1272-128104-0000", "en_childes_macwhinney_010411a_18s", false),
        ("en_command_what_s_the_weather_like_in_new_york", "en_childes_macwhinney_010411a_18s", false),
        ("en_librivox_sense_sensibility_0880", "en_librispeech_1272-128104-0000", true),
        ("en_jfk", "en_librispeech_1272-128104-0000", true),
    ];
    let mut failures = Vec::new();
    for model in ["whisper-base", "whisper-tiny.en"] {
        let engine = common::engine(model, ComputeType::Int8);
        let sequential = TranscribeOptions { language: Some("en".into()), ..Default::default() };
        let alone = |clip: &str| -> Vec<String> {
            let opts = &sequential;
            let t = engine.transcribe(&corpus().join(format!("audio/{clip}.wav")), opts, &mut |_| {}).unwrap();
            t.segments.iter().flat_map(|s| words(&s.text)).collect()
        };
        for (first, second, stable) in pairs {
            let a = audio::decode_all(&corpus().join(format!("audio/{first}.wav"))).unwrap();
            let b = audio::decode_all(&corpus().join(format!("audio/{second}.wav"))).unwrap();
            let second_at = (a.len() + pause.len()) as f64 / SAMPLE_RATE as f64;
            let joined: Vec<f32> = [a.as_slice(), &pause, &b].concat();
            let wav = dir.join(format!("{first}+{second}.wav"));
            write_wav(&wav, &joined);
            for (path, batch_size) in [("sequential", 0), ("batched", 2)] {
                let model = format!("{model} {path}");
                let opts = TranscribeOptions { batch_size, ..sequential.clone() };
                let t = engine.transcribe(&wav, &opts, &mut |_| {}).unwrap();

                // Each clip's words, as the engine hears the clip alone, are at their place.
                let clips = if stable {
                    vec![(first, 0.0, second_at), (second, second_at, t.duration_s + 1.0)]
                } else {
                    vec![]
                };
                for (clip, from, to) in clips {
                    let expected = alone(clip);
                    let got = words_between(&t, from, to);
                    let hit = recalled(&got, &expected);
                    println!("{model} {first}+{second}: {clip} {hit}/{} words", expected.len());
                    if hit * 10 < expected.len() * 8 {
                        failures.push(format!(
                        "{model}, {first} + 0.7 s + {second}: {hit} of the {} words of {clip} alone ({}) came back: {}",
                        expected.len(),
                        expected.join(" "),
                        got.join(" ")
                    ));
                    }
                }
                // And every stretch the VAD calls speech has words in it.
                let spans = engine.speech_spans(&wav, &VadParams::default()).unwrap();
                let all: Vec<_> = t.segments.iter().flat_map(|s| &s.words).collect();
                for span in spans {
                    if !all.iter().any(|w| w.end > span.start && w.start < span.end) {
                        failures.push(format!("{model}, {first}+{second}: no word in the speech at {span:?}"));
                    }
                }
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    assert!(failures.is_empty(), "speech was skipped:\n{}", failures.join("\n"));
}
