//! The speech models, each held in memory while there is work for it, and the set of them a
//! server offers ([`SpeechModels`]: the default and every model folder installed beside it).
//!
//! Whisper's weights take hundreds of MB and load in a second or two. An idle server has no use
//! for them, so after `keep_alive` without a transcription they are released, and the next job
//! loads them again (as Ollama does with its models). `scribe serve` loads the model once at
//! start, so a missing or broken model stops the server then, not at the first job.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use scribe_whisper::engine::EngineConfig;
use scribe_whisper::engine::{Engine, EngineError};

/// The model: loaded, or ready to load.
pub struct SpeechModel {
    config: EngineConfig,
    keep_alive: Duration,
    slot: Mutex<Slot>,
}

struct Slot {
    engine: Option<Arc<Engine>>,
    /// Transcriptions using the engine now.
    users: usize,
    /// When the last user finished.
    idle_since: Instant,
}

/// The engine for one transcription; the model stays loaded while any lease lives.
pub struct EngineLease {
    model: Arc<SpeechModel>,
    engine: Arc<Engine>,
}

impl SpeechModel {
    /// A model loaded from `config`; `loaded` is an engine already loaded from it (kept for
    /// `keep_alive` like any other).
    pub fn new(config: EngineConfig, keep_alive: Duration, loaded: Option<Arc<Engine>>) -> Arc<SpeechModel> {
        let model = Arc::new(SpeechModel {
            config,
            keep_alive,
            slot: Mutex::new(Slot { engine: loaded, users: 0, idle_since: Instant::now() }),
        });
        model.release_when_idle();
        model
    }

    /// The engine, loading the model first if it was released. Blocks while loading: call it
    /// from a blocking thread.
    pub fn lease(self: &Arc<Self>) -> Result<EngineLease, EngineError> {
        let mut slot = self.slot.lock().expect("the model lock");
        let engine = match &slot.engine {
            Some(engine) => engine.clone(),
            None => {
                tracing::info!(model = %self.config.model_dir.display(), "loading the speech model");
                let engine = Arc::new(Engine::load(&self.config)?);
                slot.engine = Some(engine.clone());
                engine
            }
        };
        slot.users += 1;
        Ok(EngineLease { model: self.clone(), engine })
    }

    /// The models folder: where the VAD weights are, else the parent of the Whisper folder.
    /// Other models (speaker diarization) are found there.
    pub fn models_dir(&self) -> PathBuf {
        let dir = match &self.config.vad_path {
            Some(vad) => vad.parent(),
            None => self.config.model_dir.parent(),
        };
        dir.map(|d| d.to_path_buf()).unwrap_or_default()
    }

    /// Whether the weights are in memory now.
    pub fn is_loaded(&self) -> bool {
        self.slot.lock().expect("the model lock").engine.is_some()
    }

    /// After `keep_alive`, releases the engine if nobody used it in the meantime.
    fn release_when_idle(self: &Arc<Self>) {
        let model = Arc::downgrade(self);
        let wait = self.keep_alive;
        let check = move || {
            let Some(model) = model.upgrade() else { return };
            let mut slot = model.slot.lock().expect("the model lock");
            if slot.users == 0 && slot.engine.is_some() && slot.idle_since.elapsed() >= wait {
                slot.engine = None;
                tracing::info!(idle = ?wait, "released the speech model");
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    tokio::time::sleep(wait).await;
                    check();
                });
            }
            Err(_) => {
                std::thread::spawn(move || {
                    std::thread::sleep(wait);
                    check();
                });
            }
        }
    }
}

impl EngineLease {
    /// The engine itself, to hand to blocking work while this lease keeps the model loaded.
    pub fn shared(&self) -> Arc<Engine> {
        self.engine.clone()
    }
}

impl std::ops::Deref for EngineLease {
    type Target = Engine;
    fn deref(&self) -> &Engine {
        &self.engine
    }
}

impl Drop for EngineLease {
    fn drop(&mut self) {
        let mut slot = self.model.slot.lock().expect("the model lock");
        slot.users -= 1;
        if slot.users == 0 {
            slot.idle_since = Instant::now();
            drop(slot);
            self.model.release_when_idle();
        }
    }
}

/// An installed speech model, as `GET /v1/models` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledModel {
    /// Its folder's name (`whisper-base`, `whisper-tiny.en`, an operator's own).
    pub name: String,
    /// Whether it knows languages other than English (and can translate).
    pub multilingual: bool,
    /// The Whisper language codes its vocabulary has a token for.
    pub languages: Vec<String>,
    /// When its folder was made (seconds since 1970), as OpenAI's `created`.
    pub created_s: u64,
    /// How its model.bin stores the weights ("float16", "int8", "int8+float16", "float32"); it
    /// runs at the server's compute type whatever they are.
    pub weights: String,
}

/// Every speech model the server can run: the default (`--model-dir`) and each model folder
/// found in the models folder (a folder with a `model.bin`: CTranslate2's Whisper layout, as
/// faster-whisper models ship). A folder the engine cannot run is left out at start-up with a
/// warning naming the file and what is wrong. Each loads when a job first needs it and is released when idle
/// like the default.
pub struct SpeechModels {
    default: (InstalledModel, Arc<SpeechModel>),
    others: Vec<(InstalledModel, Arc<SpeechModel>)>,
}

/// OpenAI's name for its Whisper model: clients that hard-code it get the default model.
pub const OPENAI_DEFAULT_ALIAS: &str = "whisper-1";

impl SpeechModels {
    /// The default model (already made, usually loaded) and the other model folders of
    /// `models_dir`. A folder whose tokenizer cannot be read is reported and left out.
    pub fn discover(default: Arc<SpeechModel>, models_dir: &Path) -> SpeechModels {
        let keep_alive = default.keep_alive;
        let default_entry = describe_default(&default);
        let mut others = Vec::new();
        let mut folders: Vec<PathBuf> = std::fs::read_dir(models_dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("model.bin").is_file())
            .collect();
        folders.sort();
        for dir in folders {
            if same_folder(&dir, &default.config.model_dir) {
                continue;
            }
            match describe(&dir) {
                Ok(entry) if entry.name == default_entry.name || entry.name == OPENAI_DEFAULT_ALIAS => {
                    tracing::warn!(dir = %dir.display(), "speech model folder not offered: its name is taken");
                }
                Ok(entry) => {
                    let config = EngineConfig { model_dir: dir, ..default.config.clone() };
                    others.push((entry, SpeechModel::new(config, keep_alive, None)));
                }
                Err(e) => tracing::warn!(dir = %dir.display(), error = %e, "speech model folder not offered"),
            }
        }
        SpeechModels { default: (default_entry, default), others }
    }

    /// Only the default model.
    pub fn single(default: Arc<SpeechModel>) -> SpeechModels {
        SpeechModels { default: (describe_default(&default), default), others: Vec::new() }
    }

    pub fn default_model(&self) -> &Arc<SpeechModel> {
        &self.default.1
    }

    /// The default model's entry.
    pub fn default_entry(&self) -> &InstalledModel {
        &self.default.0
    }

    /// The model called `name` (`whisper-1` is the default).
    pub fn get(&self, name: &str) -> Option<(&InstalledModel, &Arc<SpeechModel>)> {
        if name == OPENAI_DEFAULT_ALIAS || name == self.default.0.name {
            return Some((&self.default.0, &self.default.1));
        }
        self.others.iter().find(|(e, _)| e.name == name).map(|(e, m)| (e, m))
    }

    /// The precision every model runs at.
    pub fn compute_type(&self) -> scribe_whisper::ComputeType {
        self.default.1.config.compute_type
    }

    /// The processor every model runs on.
    pub fn device(&self) -> scribe_whisper::DeviceChoice {
        self.default.1.config.device
    }

    /// Every model, the default first.
    pub fn list(&self) -> Vec<&InstalledModel> {
        std::iter::once(&self.default.0).chain(self.others.iter().map(|(e, _)| e)).collect()
    }
}

/// The default model's entry; one whose tokenizer cannot be read is still offered (it loaded at
/// start), as English-only, the least it can do.
fn describe_default(default: &SpeechModel) -> InstalledModel {
    describe(&default.config.model_dir).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "cannot describe the default speech model");
        InstalledModel {
            name: folder_name(&default.config.model_dir),
            multilingual: false,
            languages: vec!["en".into()],
            created_s: 0,
            weights: String::new(),
        }
    })
}

fn folder_name(dir: &Path) -> String {
    dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "whisper".into())
}

fn same_folder(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// What a model folder offers, read from its tokenizer (the weights are not loaded). English-only
/// Whisper vocabularies have one token fewer before the special tokens, so their
/// `<|startoftranscript|>` is 50257 where a multilingual one's is 50258; only a multilingual
/// model uses its language tokens `<|xx|>`.
fn describe(dir: &Path) -> Result<InstalledModel, String> {
    // The engine's own check (model.bin's header, config.json, the vocabulary): a model it
    // cannot run is not offered.
    let summary = scribe_whisper::engine::inspect_model(dir).map_err(|e| e.to_string())?;
    let path = dir.join("tokenizer.json");
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let tokenizer: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
    let added: Vec<(&str, u64)> = tokenizer
        .get("added_tokens")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| Some((t.get("content")?.as_str()?, t.get("id")?.as_u64()?)))
        .collect();
    let start = added.iter().find(|(content, _)| *content == "<|startoftranscript|>").map(|(_, id)| *id);
    let start =
        start.ok_or_else(|| format!("{}: no <|startoftranscript|> token: not a Whisper tokenizer", path.display()))?;
    let tokens: HashSet<&str> = added.iter().map(|(content, _)| *content).collect();
    let found: Vec<String> = scribe_domain::languages::WHISPER_LANGUAGES
        .iter()
        .filter(|code| tokens.contains(format!("<|{code}|>").as_str()))
        .map(|code| (*code).to_owned())
        .collect();
    let multilingual = start >= 50258 && found.len() > 1;
    let languages = if multilingual { found } else { vec!["en".to_owned()] };
    let created_s = std::fs::metadata(dir)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    Ok(InstalledModel { name: folder_name(dir), multilingual, languages, created_s, weights: summary.weights })
}
