//! The speech model, held in memory while there is work for it.
//!
//! Whisper's weights take hundreds of MB and load in a second or two. An idle server has no use
//! for them, so after `keep_alive` without a transcription they are released, and the next job
//! loads them again (as Ollama does with its models). `scribe serve` loads the model once at
//! start, so a missing or broken model stops the server then, not at the first job.

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
    pub fn models_dir(&self) -> std::path::PathBuf {
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
