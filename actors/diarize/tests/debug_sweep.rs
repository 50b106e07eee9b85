//! Debug: DER per clip across clustering thresholds.
use std::path::PathBuf;
use scribe_diarize::der::{self, Turn};
use scribe_diarize::{DiarizeOptions, Diarizer, Speakers};

#[test]
#[ignore]
fn sweep() {
    let models = PathBuf::from(std::env::var("SCRIBE_MODELS_DIR").unwrap());
    let d = Diarizer::load(&models).unwrap();
    let clips = [
        ("en_synth_gettysburg_2voices.wav", "en_synth_gettysburg_2voices.turns.tsv"),
        ("en_childes_macwhinney_010411a_18s.wav", "en_childes_macwhinney_010411a_18s.rttm"),
        ("en_ami_pyannote_trn04.wav", "en_ami_pyannote_trn04.rttm"),
        ("en_ami_pyannote_trn05.wav", "en_ami_pyannote_trn05.rttm"),
    ];
    let step: usize = std::env::var("STEP").ok().and_then(|s| s.parse().ok()).unwrap_or(148);
    let audio: Vec<Vec<f32>> = clips.iter().map(|c| scribe_whisper::audio::decode_all(&PathBuf::from("/work/shared/corpus/audio").join(c.0)).unwrap()).collect();
    let refs: Vec<Vec<Turn>> = clips.iter().map(|c| der::read_turns(&std::fs::read_to_string(PathBuf::from("/work/shared/corpus/audio/ref").join(c.1)).unwrap())).collect();
    for mode in [Speakers::AtMost(2), Speakers::AtMost(3), Speakers::Estimate] {
        for (th, share) in [(0.25f32, 450usize)] {
            let mut line = format!("{mode:?} th {th} share {share}: ");
            let mut tot = der::DerParts::default();
            let t0 = std::time::Instant::now();
            for (a, r) in audio.iter().zip(&refs) {
                let out = d.diarize(a, &DiarizeOptions { speakers: mode, min_silhouette: th, max_embed_frames: share, step_frames: step, ..Default::default() });
                let hyp: Vec<Turn> = out.turns.iter().map(|t| Turn { start: t.start, end: t.end, speaker: t.speaker.to_string() }).collect();
                let p = der::score(r, &hyp, 0.0, a.len() as f64 / 16000.0);
                tot = tot.add(&p);
                line += &format!("{:.1}%/{} ", 100.0 * p.der(), out.speakers);
            }
            eprintln!("{line} total {:.1}% ({:.1}s)", 100.0 * tot.der(), t0.elapsed().as_secs_f64());
        }
    }
}
