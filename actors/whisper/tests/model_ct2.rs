//! The CTranslate2 reader against the real model files: every byte consumed, dimensions
//! derived correctly for both models, and broken files rejected with the file named.

use std::path::PathBuf;

use scribe_whisper::ct2::{Ct2File, WhisperDims};

fn models_dir() -> PathBuf {
    let dir = std::env::var_os("SCRIBE_MODELS_DIR").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()))
            .join("../../models")
    });
    assert!(
        dir.join("whisper-tiny.en/model.bin").is_file() && dir.join("whisper-base/model.bin").is_file(),
        "Whisper models not found in {} (set SCRIBE_MODELS_DIR or run `bash ops/setup.sh`)",
        dir.display()
    );
    dir
}

#[test]
fn tiny_en_parses_completely_with_its_dimensions() {
    let path = models_dir().join("whisper-tiny.en/model.bin");
    let f = Ct2File::open(&path).unwrap();
    assert_eq!(f.len() as u64, std::fs::metadata(&path).unwrap().len());
    assert_eq!((f.binary_version, f.spec.as_str(), f.revision), (6, "WhisperSpec", 3));
    assert_eq!(f.variable_names().count(), 148);
    assert_eq!(f.aliases().get("decoder/projection/weight").map(String::as_str), Some("decoder/embeddings/weight"));
    assert_eq!(f.shape("encoder/conv1/weight").unwrap(), &[384, 80, 3]);
    let dims = f.whisper_dims().unwrap();
    assert_eq!(
        dims,
        WhisperDims {
            n_mels: 80,
            d_model: 384,
            n_heads: 6,
            d_ffn: 1536,
            n_audio_ctx: 1500,
            n_text_ctx: 448,
            n_vocab: 51864,
            n_encoder_layers: 4,
            n_decoder_layers: 4,
        }
    );
}

#[test]
fn base_parses_completely_with_its_dimensions() {
    let f = Ct2File::open(&models_dir().join("whisper-base/model.bin")).unwrap();
    let dims = f.whisper_dims().unwrap();
    assert_eq!((dims.d_model, dims.n_heads, dims.n_encoder_layers, dims.n_decoder_layers), (512, 8, 6, 6));
    assert_eq!((dims.n_vocab, dims.d_ffn, dims.n_mels), (51865, 2048, 80));
    // The f16 payload converts to finite f32 values.
    assert!(f.f32("decoder/embeddings/weight").unwrap().iter().all(|x| x.is_finite()));
}

#[test]
fn truncated_copies_are_rejected_naming_the_file() {
    let path = models_dir().join("whisper-tiny.en/model.bin");
    let bytes = std::fs::read(&path).unwrap();
    for cut in [3, 40, 1000, bytes.len() / 2, bytes.len() - 1] {
        let e = Ct2File::parse(&path, bytes[..cut].to_vec()).err().expect("truncated model accepted");
        let msg = e.to_string();
        assert!(msg.contains("model.bin") && msg.contains("truncated"), "cut {cut}: {msg}");
    }
}

#[test]
fn foreign_and_missing_files_are_rejected() {
    let corpus_wav =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()))
            .join("../../../shared/corpus/audio/en_jfk.wav");
    let corpus_wav =
        std::env::var_os("SCRIBE_CORPUS_DIR").map(|d| PathBuf::from(d).join("audio/en_jfk.wav")).unwrap_or(corpus_wav);
    let e = Ct2File::open(&corpus_wav).err().expect("a wav file parsed as a model");
    assert!(e.to_string().contains("en_jfk.wav"), "{e}");

    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let random: Vec<u8> = (0..1 << 16)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    assert!(Ct2File::parse(std::path::Path::new("random.bin"), random).is_err());

    let e = Ct2File::open(std::path::Path::new("/nonexistent/model.bin")).err().unwrap();
    assert!(e.to_string().contains("/nonexistent/model.bin") && e.to_string().contains("not found"), "{e}");
}
