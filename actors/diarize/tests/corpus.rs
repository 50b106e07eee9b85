//! Diarization of the shared corpus's real recordings against their reference turns.
//!
//! Needs the models (`bash ops/setup.sh`; `SCRIBE_MODELS_DIR`, default `./models` at the
//! repository root) and the corpus at `../shared/corpus` (or `SCRIBE_CORPUS_DIR`, as in `tests/`). The DER bounds
//! are what this engine measured, plus a margin (see `scribe-bench diarization`).

use std::cell::Cell;
use std::path::PathBuf;
use std::time::Instant;

use scribe_diarize::der::{self, Turn};
use scribe_diarize::{DiarizeOptions, Diarizer, Speakers};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn models() -> PathBuf {
    std::env::var_os("SCRIBE_MODELS_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("models"))
}

fn corpus() -> PathBuf {
    std::env::var_os("SCRIBE_CORPUS_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("../shared/corpus"))
}

fn run(clip: &str, reference: &str, speakers: Speakers) -> (f64, usize) {
    let diarizer = Diarizer::load(&models()).expect("diarization models (bash ops/setup.sh)");
    let samples = scribe_whisper::audio::decode_all(&corpus().join("audio").join(clip)).expect("corpus clip");
    let secs = samples.len() as f64 / 16_000.0;
    let t0 = Instant::now();
    let d = diarizer.diarize(&samples, &DiarizeOptions { speakers, ..Default::default() });
    let took = t0.elapsed().as_secs_f64();
    let reference =
        der::read_turns(&std::fs::read_to_string(corpus().join("audio/ref").join(reference)).expect("reference turns"));
    let hyp: Vec<Turn> =
        d.turns.iter().map(|t| Turn { start: t.start, end: t.end, speaker: t.speaker.to_string() }).collect();
    let parts = der::score(&reference, &hyp, 0.0, secs);
    eprintln!(
        "{clip}: {} speakers, DER {:.1}% (miss {:.2}s fa {:.2}s conf {:.2}s of {:.2}s), {took:.2}s for {secs:.1}s (RTF {:.3})",
        d.speakers,
        100.0 * parts.der(),
        parts.missed,
        parts.false_alarm,
        parts.confusion,
        parts.reference,
        took / secs
    );
    (parts.der(), d.speakers)
}

#[test]
fn two_voices_are_two_speakers() {
    let (der, speakers) =
        run("en_synth_gettysburg_2voices.wav", "en_synth_gettysburg_2voices.turns.tsv", Speakers::AtMost(2));
    assert_eq!(speakers, 2);
    // Measured 7.5 % (no collar; the turns' edges are the synthesiser's pauses).
    assert!(der < 0.12, "DER {der}");
}

#[test]
fn two_voices_estimated() {
    let (_, speakers) =
        run("en_synth_gettysburg_2voices.wav", "en_synth_gettysburg_2voices.turns.tsv", Speakers::Estimate);
    assert_eq!(speakers, 2);
}

/// Real recordings (child speech, far-field meetings with overlap) are hard for both engines;
/// `scribe-bench diarization` reports their DER next to senko's. Here: they run and give 1–5
/// speakers.
#[test]
fn real_recordings_print_their_der() {
    for (clip, reference) in [
        ("en_childes_macwhinney_010411a_18s.wav", "en_childes_macwhinney_010411a_18s.rttm"),
        ("en_ami_pyannote_trn04.wav", "en_ami_pyannote_trn04.rttm"),
        ("en_ami_pyannote_trn05.wav", "en_ami_pyannote_trn05.rttm"),
    ] {
        for s in [Speakers::AtMost(5), Speakers::Estimate] {
            let (der, speakers) = run(clip, reference, s);
            assert!(der.is_finite() && (1..=5).contains(&speakers), "{clip} {s:?}: DER {der}, {speakers} speakers");
        }
    }
}

/// `numberOfSpeakers` given: every corpus recording with reference turns (the manifest's
/// `diarization` rows) comes back with as many speakers as speak in its reference.
#[test]
fn the_number_asked_for_is_the_number_found() {
    let manifest = std::fs::read_to_string(corpus().join("manifest.tsv")).expect("corpus manifest");
    let header: Vec<&str> = manifest.lines().next().expect("a header").split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect("manifest column");
    let (file, task, sidecars) = (col("file"), col("task"), col("sidecars"));
    let mut checked = 0;
    for row in manifest.lines().skip(1).map(|l| l.split('\t').collect::<Vec<_>>()) {
        if !row[task].split('+').any(|t| t == "diarization") {
            continue;
        }
        let reference = row[sidecars].split(',').map(str::trim).find(|s| s.ends_with(".rttm") || s.ends_with(".tsv"));
        let reference = reference.expect("reference turns").trim_start_matches("audio/ref/");
        let turns = der::read_turns(&std::fs::read_to_string(corpus().join("audio/ref").join(reference)).unwrap());
        let mut voices: Vec<&str> = turns.iter().map(|t| t.speaker.as_str()).collect();
        voices.sort_unstable();
        voices.dedup();
        let clip = row[file].trim_start_matches("audio/");
        let (_, speakers) = run(clip, reference, Speakers::Exactly(voices.len()));
        assert_eq!(speakers, voices.len(), "{clip}: reference voices {voices:?}");
        checked += 1;
    }
    assert!(checked >= 4, "only {checked} corpus recordings have reference turns");
}

/// One voice stays one speaker under the API's default (at most 2): the single-speaker clips
/// of the corpus (a speech, audiobook sentences, voice commands in two languages).
#[test]
fn monologues_are_one_speaker() {
    let diarizer = Diarizer::load(&models()).expect("diarization models (bash ops/setup.sh)");
    for clip in [
        "en_jfk.wav",
        "en_librispeech_1272-128104-0000.wav",
        "en_librivox_sense_sensibility_0880.wav",
        "en_command_what_s_the_weather_like_in_new_york.wav",
        "fr_command_quelle_heure_est_il.wav",
        "variants/en_jfk.mp3",
    ] {
        let samples = scribe_whisper::audio::decode_all(&corpus().join("audio").join(clip)).expect("corpus clip");
        let d = diarizer.diarize(&samples, &DiarizeOptions::default());
        assert_eq!(d.speakers, 1, "{clip}: {:?}", d.turns);
        assert!(d.speaker_for(0.5, 1.5) == Some(0));
    }
}

/// Silence has no speakers, and every word still gets none rather than a panic.
#[test]
fn silence_has_no_speakers() {
    let diarizer = Diarizer::load(&models()).expect("diarization models (bash ops/setup.sh)");
    let d = diarizer.diarize(&vec![0.0; 16_000 * 12], &DiarizeOptions::default());
    assert_eq!(d.speakers, 0);
    assert_eq!(d.speaker_for(1.0, 2.0), None);
    assert_eq!(diarizer.diarize(&[0.0; 100], &DiarizeOptions::default()).speakers, 0);
}

/// Streamed audio (how the service diarizes media, never decoding it whole) gives the same
/// turns whatever the size of its pieces, and a read error (a cancellation) ends the work.
#[test]
fn streamed_audio_gives_the_same_turns_in_any_pieces() {
    let diarizer = Diarizer::load(&models()).expect("diarization models (bash ops/setup.sh)");
    let samples = scribe_whisper::audio::decode_all(&corpus().join("audio/en_synth_gettysburg_2voices.wav"))
        .expect("corpus clip");
    let opts = DiarizeOptions::default();
    let whole = diarizer.diarize(&samples, &opts);
    assert_eq!(whole.speakers, 2);
    for piece in [777, 16_000 * 7] {
        let open = || {
            let mut pieces = samples.chunks(piece);
            Ok::<_, ()>(move || Ok(pieces.next().map(<[f32]>::to_vec)))
        };
        let streamed = diarizer.diarize_stream(open, &opts).expect("no read error");
        assert_eq!(streamed.turns, whole.turns, "pieces of {piece} samples");
    }
    // A read error ends the work with that error, at once.
    let reads = Cell::new(0);
    let stopped = diarizer.diarize_stream(
        || {
            let reads = &reads;
            Ok(move || {
                reads.set(reads.get() + 1);
                if reads.get() > 3 { Err("cancelled") } else { Ok(Some(vec![0.0; 16_000])) }
            })
        },
        &opts,
    );
    assert_eq!(stopped.err(), Some("cancelled"));
    assert_eq!(reads.get(), 4);
}

/// The audio is read a second time, for the short stretches' voice prints, only when there are
/// two speakers to choose between; a monologue's turns are those without the prints, and the two
/// voices' turns are not.
#[test]
fn the_audio_is_read_again_only_where_two_voices_are_found() {
    let diarizer = Diarizer::load(&models()).expect("diarization models (bash ops/setup.sh)");
    let opts = DiarizeOptions { speakers: Speakers::Estimate, ..Default::default() };
    let opened = |clip: &str| {
        let samples = scribe_whisper::audio::decode_all(&corpus().join(clip)).expect("corpus clip");
        let mut opens = 0;
        let d = diarizer
            .diarize_stream(
                || {
                    opens += 1;
                    let mut pieces = samples.chunks(16_000 * 10);
                    Ok::<_, ()>(move || Ok(pieces.next().map(<[f32]>::to_vec)))
                },
                &opts,
            )
            .expect("no read error");
        let without = diarizer.diarize(&samples, &DiarizeOptions { short_prints: false, ..opts.clone() });
        (d, opens, without)
    };
    let (one, opens, without) = opened("audio/en_jfk.wav");
    assert_eq!((one.speakers, opens), (1, 1));
    assert_eq!(one.turns, without.turns);
    let (two, opens, without) = opened("audio/en_synth_gettysburg_2voices.wav");
    assert_eq!((two.speakers, opens), (2, 2));
    assert_ne!(two.turns, without.turns, "the pieces moved nothing");
}
