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
use std::sync::{Arc, Mutex, mpsc};

use fxtranslate::engine::Engine;
use fxtranslate::shortlist::Shortlist;

pub use layout::{ModelFiles, TRANSLATION_DIR};

/// Why a translation model could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TranslateError {
    #[error("translation model {}: {reason}", path.display())]
    Model { path: PathBuf, reason: String },
    #[error(
        "no translation model from English into '{target}' is installed (translation/en-{target}/ in the models folder)"
    )]
    NoModel { target: String },
    #[error("the translation thread has stopped")]
    Stopped,
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
                    let shortlist =
                        Shortlist::load(path).map_err(|e| model_err(path, format!("cannot be read: {e}")))?;
                    engine.with_shortlist(shortlist)
                }
                None => engine,
            })
        });
        let engine = match loaded {
            Ok(result) => result?,
            Err(_) => {
                return Err(model_err(
                    &files.dir,
                    "its files are not a Bergamot model, vocabulary and shortlist".into(),
                ));
            }
        };
        let translator =
            Translator { engine, source: files.source.clone(), target: files.target.clone(), dir: files.dir.clone() };
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

/// Every usable model of a models folder (all translate from English), behind one worker
/// thread that owns them.
///
/// fxtranslate's engine holds its packed SIMD weights through raw pointers: shareable between
/// threads (`Sync`) but meant to be created, used and dropped by one owner (not `Send`). So the
/// engines live on a thread of their own, loaded there and dropped there when the last handle
/// goes; a handle (cheap to clone, `Send + Sync`) sends it sentences and waits for the answer.
#[derive(Clone, Default)]
pub struct TranslationModels {
    targets: Vec<String>,
    worker: Option<Arc<Mutex<mpsc::Sender<Request>>>>,
}

/// A model folder that is there but cannot be used, and why.
#[derive(Debug)]
pub struct Unusable {
    pub dir: PathBuf,
    pub error: String,
}

/// Sentences to translate into `target`, and where to send the translations.
struct Request {
    target: String,
    sentences: Vec<String>,
    reply: mpsc::Sender<Vec<String>>,
}

impl TranslationModels {
    /// No models: the server translates to no language but English (Whisper's own task).
    pub fn none() -> TranslationModels {
        TranslationModels::default()
    }

    /// Loads every `translation/en-xx/` model of `models_dir` whose target is one of `wanted`,
    /// on the worker thread. Folders that are there but broken are returned beside the models,
    /// each with its reason, so the caller can say so at start-up; they are not offered.
    pub fn load(models_dir: &Path, wanted: &[&str]) -> (TranslationModels, Vec<Unusable>) {
        let (loaded_tx, loaded_rx) = mpsc::channel();
        let (requests_tx, requests_rx) = mpsc::channel::<Request>();
        let models_dir = models_dir.to_owned();
        let wanted: Vec<String> = wanted.iter().map(|s| (*s).to_owned()).collect();
        let spawned = std::thread::Builder::new().name("scribe-translate".into()).spawn(move || {
            let (engines, unusable) = load_engines(&models_dir, &wanted);
            let targets: Vec<String> = engines.keys().cloned().collect();
            if loaded_tx.send((targets, unusable)).is_err() || engines.is_empty() {
                return;
            }
            // Serves until every handle is dropped; the engines are dropped here, where they were made.
            for request in requests_rx {
                let out = match engines.get(&request.target) {
                    Some(t) => request.sentences.iter().map(|s| t.translate(s)).collect(),
                    None => Vec::new(),
                };
                let _ = request.reply.send(out);
            }
        });
        if let Err(e) = spawned {
            let error = format!("the translation thread could not start: {e}");
            return (TranslationModels::none(), vec![Unusable { dir: PathBuf::new(), error }]);
        }
        let (targets, unusable) = loaded_rx.recv().unwrap_or_default();
        let worker = (!targets.is_empty()).then(|| Arc::new(Mutex::new(requests_tx)));
        (TranslationModels { targets, worker }, unusable)
    }

    /// Target languages with a model, in alphabetical order.
    pub fn targets(&self) -> Vec<String> {
        self.targets.clone()
    }

    /// Whether there is a model into `target`.
    pub fn has(&self, target: &str) -> bool {
        self.targets.iter().any(|t| t == target)
    }

    /// Translates each of `sentences` from English into `target` (one output per input, in
    /// order). Blocks until done: call it from a blocking thread.
    pub fn translate(&self, target: &str, sentences: Vec<String>) -> Result<Vec<String>, TranslateError> {
        let missing = || TranslateError::NoModel { target: target.to_owned() };
        let worker = self.worker.as_ref().filter(|_| self.has(target)).ok_or_else(missing)?;
        let expected = sentences.len();
        let (reply, answer) = mpsc::channel();
        let request = Request { target: target.to_owned(), sentences, reply };
        worker.lock().map_err(|_| TranslateError::Stopped)?.send(request).map_err(|_| TranslateError::Stopped)?;
        let out = answer.recv().map_err(|_| TranslateError::Stopped)?;
        if out.len() != expected {
            return Err(missing());
        }
        Ok(out)
    }
}

/// Loads the wanted models found in `models_dir`, by target.
fn load_engines(models_dir: &Path, wanted: &[String]) -> (BTreeMap<String, Translator>, Vec<Unusable>) {
    let mut engines = BTreeMap::new();
    let mut unusable = Vec::new();
    for found in layout::scan(models_dir) {
        match found {
            Ok(files) if files.source == "en" && wanted.contains(&files.target) => match Translator::load(&files) {
                Ok(t) => {
                    engines.insert(files.target.clone(), t);
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
    (engines, unusable)
}
