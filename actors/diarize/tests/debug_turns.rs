//! Debug: hypothesis turns and DER parts.
use std::path::PathBuf;
use scribe_diarize::der::{self, Turn};
use scribe_diarize::{DiarizeOptions, Diarizer, Speakers};

#[test]
#[ignore]
fn turns() {
    let models = PathBuf::from(std::env::var("SCRIBE_MODELS_DIR").unwrap());
    let d = Diarizer::load(&models).unwrap();
    let clip = std::env::var("CLIP").unwrap();
    let refp = std::env::var("REF").unwrap();
    let th: f32 = std::env::var("TH").unwrap().parse().unwrap();
    let a = scribe_whisper::audio::decode_all(&PathBuf::from("/work/shared/corpus/audio").join(&clip)).unwrap();
    let r = der::read_turns(&std::fs::read_to_string(PathBuf::from("/work/shared/corpus/audio/ref").join(&refp)).unwrap());
    let out = d.diarize(&a, &DiarizeOptions { speakers: Speakers::AtMost(std::env::var("MAXS").map_or(5, |v| v.parse().unwrap())), min_silhouette: th, step_frames: std::env::var("STEP").map_or(148, |v| v.parse().unwrap()), max_embed_frames: std::env::var("FR").map_or(600, |v| v.parse().unwrap()), ..Default::default() });
    for t in &out.turns { eprintln!("hyp {:.2} {:.2} {}", t.start, t.end, t.speaker); }
    for t in &r { eprintln!("ref {:.2} {:.2} {}", t.start, t.end, t.speaker); }
    let hyp: Vec<Turn> = out.turns.iter().map(|t| Turn { start: t.start, end: t.end, speaker: t.speaker.to_string() }).collect();
    eprintln!("{:?}", der::score(&r, &hyp, 0.0, a.len() as f64 / 16000.0));
}
