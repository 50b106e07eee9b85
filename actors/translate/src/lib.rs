//! Text translation for Scribe: Bergamot models (the small int8 transformers Firefox ships for
//! on-device translation) run by the pure-Rust `fxtranslate` engine, one model per language
//! pair, found in the models folder (see [`layout`]).
//!
//! It lives in its own crate so that the engine (and its C++ SIMD kernel) compiles once and the
//! service crates rebuild without it. Only `fxtranslate`'s default features are used: the
//! crate's model discovery and download code (`download`, `net`) is not compiled in, so nothing
//! here can reach the network; models come from the folder the operator (or `ops/setup.sh`)
//! filled.

pub mod layout;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use fxtranslate::engine::Engine;
use fxtranslate::shortlist::Shortlist;

pub use layout::{ModelFiles, TRANSLATION_DIR};

/// Why a translation model could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TranslateError {
    #[error("translation model {}: {reason}", path.display())]
    Model { path: PathBuf, reason: String },
}

/// One loaded model: text in `source` language to text in `target` language.
pub struct Translator {
    engine: Engine,
    source: String,
    target: String,
    dir: PathBuf,
}

impl Translator {
    /// Loads the model whose files [`layout::find`] located. A file that is not what its name
    /// says (truncated, another format) is an error naming it, never a panic.
    pub fn load(files: &ModelFiles) -> Result<Translator, TranslateError> {
        let model_err = |path: &Path, reason: String| TranslateError::Model { path: path.to_owned(), reason };
        for path in [Some(&files.model), Some(&files.source_vocab), Some(&files.target_vocab), files.shortlist.as_ref()]
            .into_iter()
            .flatten()
        {
            std::fs::metadata(path).map_err(|e| model_err(path, format!("cannot be read: {e}")))?;
        }
        // fxtranslate reports most malformed input as errors, but its vocabulary and shortlist
        // parsers index into the bytes; a foreign file must not take the server down.
        let loaded = std::panic::catch_unwind(|| {
            let engine = Engine::load_mmapped(&files.model, &files.source_vocab, &files.target_vocab)
                .map_err(|reason| model_err(&files.model, format!("not a Bergamot model: {reason}")))?;
            Ok::<Engine, TranslateError>(match &files.shortlist {
                Some(path) => {
                    let shortlist = Shortlist::load(path).map_err(|e| model_err(path, format!("cannot be read: {e}")))?;
                    engine.with_shortlist(shortlist)
                }
                None => engine,
            })
        });
        let engine = match loaded {
            Ok(result) => result?,
            Err(_) => {
                return Err(model_err(&files.dir, "its files are not a Bergamot model, vocabulary and shortlist".into()));
            }
        };
        let translator = Translator { engine, source: files.source.clone(), target: files.target.clone(), dir: files.dir.clone() };
        // A model that loads but produces nothing is as broken as one that does not load.
        if translator.translate("Hello.").trim().is_empty() {
            return Err(model_err(&files.dir, "translates a test sentence to nothing".into()));
        }
        Ok(translator)
    }

    /// Translates one sentence (or a short passage; text past the model's window of 127 tokens
    /// is split at sentence ends, then hard-wrapped, as Marian does).
    pub fn translate(&self, text: &str) -> String {
        if text.trim().is_empty() {
            return String::new();
        }
        self.engine.translate_long(text.trim()).trim().to_owned()
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    pub fn target(&self) -> &str {
        &self.target
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Every usable model of a models folder, by target language (all translate from English).
#[derive(Clone, Default)]
pub struct TranslationModels {
    by_target: BTreeMap<String, Arc<Translator>>,
}

/// A model folder that is there but cannot be used, and why.
#[derive(Debug)]
pub struct Unusable {
    pub dir: PathBuf,
    pub error: String,
}

impl TranslationModels {
    /// No models: the server translates to no language but English (Whisper's own task).
    pub fn none() -> TranslationModels {
        TranslationModels::default()
    }

    /// Loads every `translation/en-xx/` model of `models_dir` whose target is one of `wanted`.
    /// Folders that are there but broken are returned beside the models, each with its reason,
    /// so the caller can say so at start-up; they are not offered to clients.
    pub fn load(models_dir: &Path, wanted: &[&str]) -> (TranslationModels, Vec<Unusable>) {
        let mut models = TranslationModels::default();
        let mut unusable = Vec::new();
        for found in layout::scan(models_dir) {
            match found {
                Ok(files) if files.source == "en" && wanted.contains(&files.target.as_str()) => match Translator::load(&files) {
                    Ok(t) => {
                        models.by_target.insert(files.target.clone(), Arc::new(t));
                    }
                    Err(e) => unusable.push(Unusable { dir: files.dir.clone(), error: e.to_string() }),
                },
                Ok(files) => unusable.push(Unusable {
                    dir: files.dir.clone(),
                    error: format!(
                        "{}-{} is not a pair this server uses (it translates from English into: {})",
                        files.source,
                        files.target,
                        wanted.join(", ")
                    ),
                }),
                Err(problem) => unusable.push(problem),
            }
        }
        (models, unusable)
    }

    /// Target languages with a model, in alphabetical order.
    pub fn targets(&self) -> Vec<String> {
        self.by_target.keys().cloned().collect()
    }

    /// The English→`target` model.
    pub fn get(&self, target: &str) -> Option<Arc<Translator>> {
        self.by_target.get(target).cloned()
    }
}
