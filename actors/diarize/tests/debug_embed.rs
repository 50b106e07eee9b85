//! Debug: cosine similarities of CAM++ embeddings of the two-voice clip's reference turns.
use std::path::PathBuf;
use scribe_diarize::embedding::{CamPlus, cosine};

#[test]
#[ignore]
fn similarities() {
    let models = PathBuf::from(std::env::var("SCRIBE_MODELS_DIR").unwrap());
    let cam = CamPlus::load(&models.join(scribe_diarize::pipeline::EMBEDDING_FILE)).unwrap();
    let s = scribe_whisper::audio::decode_all(&PathBuf::from("/work/shared/corpus/audio/en_synth_gettysburg_2voices.wav")).unwrap();
    let turns = [(0.0, 11.27), (12.07, 21.3), (22.1, 33.59), (34.4, 45.1), (45.9, 54.1)];
    let embs: Vec<Vec<f32>> = turns.iter().map(|(a, b)| cam.embed_samples(&s[(a * 16000.0) as usize..(b * 16000.0) as usize])).collect();
    for i in 0..embs.len() {
        let row: Vec<String> = (0..embs.len()).map(|j| format!("{:.3}", cosine(&embs[i], &embs[j]))).collect();
        eprintln!("{}", row.join(" "));
    }
    eprintln!("{:?}", &embs[0][..8]);
}

#[test]
#[ignore]
fn dump() {
    let models = PathBuf::from(std::env::var("SCRIBE_MODELS_DIR").unwrap());
    let cam = CamPlus::load(&models.join(scribe_diarize::pipeline::EMBEDDING_FILE)).unwrap();
    let s = scribe_whisper::audio::decode_all(&PathBuf::from("/work/shared/corpus/audio/en_synth_gettysburg_2voices.wav")).unwrap();
    let clip = &s[..5 * 16000];
    let fb = scribe_diarize::fbank::fbank(clip);
    let e = cam.embed(&fb, fb.len() / 80);
    let bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    std::fs::write("/tmp/fb.bin", bytes(&fb)).unwrap();
    std::fs::write("/tmp/emb.bin", bytes(&e)).unwrap();
    std::fs::write("/tmp/wav.bin", bytes(clip)).unwrap();
    let seg = scribe_diarize::segmentation::Segmentation::load(&models.join(scribe_diarize::pipeline::SEGMENTATION_FILE)).unwrap();
    let w = &s[..160_000];
    let logits = seg.logits(w, 1);
    std::fs::write("/tmp/seg_wav.bin", bytes(w)).unwrap();
    std::fs::write("/tmp/seg_logits.bin", bytes(&logits)).unwrap();
}
