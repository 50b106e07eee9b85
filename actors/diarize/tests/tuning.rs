//! The sweep the pipeline's defaults were chosen with: DER per corpus clip and in total, and
//! the time taken, for a few settings. Ignored (it is a measurement, not a check); run it with
//!
//! ```sh
//! SCRIBE_MODELS_DIR=... STEP=222 cargo test --release -p scribe-diarize --test tuning -- --ignored --nocapture
//! ```

use std::path::PathBuf;

use scribe_diarize::der::{self, Turn};
use scribe_diarize::{DiarizeOptions, Diarizer, Speakers};

fn models() -> PathBuf {
    std::env::var_os("SCRIBE_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models"))
}

fn corpus() -> PathBuf {
    std::env::var_os("SCRIBE_CORPUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"))
}

#[test]
#[ignore]
fn sweep() {
    let d = Diarizer::load(&models()).expect("models");
    let clips = [
        ("en_synth_gettysburg_2voices.wav", "en_synth_gettysburg_2voices.turns.tsv"),
        ("en_childes_macwhinney_010411a_18s.wav", "en_childes_macwhinney_010411a_18s.rttm"),
        ("en_ami_pyannote_trn04.wav", "en_ami_pyannote_trn04.rttm"),
        ("en_ami_pyannote_trn05.wav", "en_ami_pyannote_trn05.rttm"),
    ];
    let step: usize =
        std::env::var("STEP").ok().and_then(|s| s.parse().ok()).unwrap_or(DiarizeOptions::default().step_frames);
    let audio: Vec<Vec<f32>> =
        clips.iter().map(|c| scribe_whisper::audio::decode_all(&corpus().join("audio").join(c.0)).unwrap()).collect();
    let refs: Vec<Vec<Turn>> = clips
        .iter()
        .map(|c| der::read_turns(&std::fs::read_to_string(corpus().join("audio/ref").join(c.1)).unwrap()))
        .collect();
    for speakers in [Speakers::AtMost(2), Speakers::Estimate] {
        for (min_silhouette, max_embed_frames) in [(0.25f32, 450usize), (0.25, 300), (0.3, 450)] {
            let opts =
                DiarizeOptions { speakers, min_silhouette, max_embed_frames, step_frames: step, ..Default::default() };
            let mut line = format!("{speakers:?} step {step} silhouette {min_silhouette} frames {max_embed_frames}: ");
            let mut total = der::DerParts::default();
            let t0 = std::time::Instant::now();
            for (a, r) in audio.iter().zip(&refs) {
                let out = d.diarize(a, &opts);
                let hyp: Vec<Turn> = out
                    .turns
                    .iter()
                    .map(|t| Turn { start: t.start, end: t.end, speaker: t.speaker.to_string() })
                    .collect();
                let p = der::score(r, &hyp, 0.0, a.len() as f64 / 16000.0);
                total = total.add(&p);
                line += &format!("{:.1}%/{} ", 100.0 * p.der(), out.speakers);
            }
            eprintln!("{line} total {:.1}% ({:.1}s)", 100.0 * total.der(), t0.elapsed().as_secs_f64());
        }
    }
}
