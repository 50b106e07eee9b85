//! Starts Scribe's write side in one process: the event store, the job actors, the media, ASR,
//! callback and refund actors, and the pipeline that drives jobs from one stage to the next. The HTTP edge and the
//! projections are started beside it by the binary.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use ractor::{Actor, ActorRef};

use scribe_domain::account::Prices;
use scribe_translate::TranslationModels;

use crate::asr::{AsrActor, AsrArgs, AsrMsg};
use crate::billing::{RefundActor, RefundMsg};
use crate::callbacks::{CallbackActor, CallbackArgs, CallbackMsg, CallbackSettings};
use crate::eventstore::{EventStore, SqliteEventStore};
use crate::jobs::Jobs;
use crate::media::{AddressGuard, FetchConfig, Fetcher, MediaStore};
use crate::media_worker::{MediaActor, MediaArgs, MediaMsg};
use crate::pipeline::{Pipeline, PipelineArgs, PipelineMsg};
use crate::speech_model::SpeechModel;

/// What the write side needs to start.
pub struct RuntimeSettings {
    pub data_dir: PathBuf,
    /// Let `sourceUrl`/`callbackUrl` reach loopback and private addresses.
    pub allow_private_urls: bool,
    /// Recognitions run at once.
    pub asr_workers: usize,
    /// Downloads run at once.
    pub max_downloads: usize,
    /// How long an idle job actor lives.
    pub job_idle: Duration,
    /// The speech model (shared by every ASR worker, loaded while there is work).
    pub model: Arc<SpeechModel>,
    /// English→xx text translation models (`translation/en-xx/` of the models folder).
    pub text_models: TranslationModels,
    /// Callback timeout and retry schedule (`CallbackSettings::default()`: retries for 26 h).
    pub callbacks: CallbackSettings,
    /// What jobs cost (URL jobs are charged once their media is probed).
    pub prices: Prices,
}

/// Handles to the running write side.
#[derive(Clone)]
pub struct Services {
    pub data_dir: PathBuf,
    pub store: Arc<dyn EventStore>,
    pub jobs: Jobs,
    pub media: MediaStore,
    pub guard: AddressGuard,
    /// ASR tasks waiting for a worker.
    pub asr_queue: Arc<AtomicUsize>,
    actors: Actors,
}

#[derive(Clone)]
struct Actors {
    pipeline: ActorRef<PipelineMsg>,
    media: ActorRef<MediaMsg>,
    asr: ActorRef<AsrMsg>,
    callbacks: ActorRef<CallbackMsg>,
    refunds: ActorRef<RefundMsg>,
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Store(#[from] crate::eventstore::StoreError),
    #[error(transparent)]
    Media(#[from] crate::media::MediaError),
    #[error("an actor did not start: {0}")]
    Spawn(#[from] ractor::SpawnErr),
}

/// Opens the embedded SQLite event store in `data_dir`.
pub fn open_event_store(data_dir: &std::path::Path) -> Result<Arc<dyn EventStore>, StartError> {
    std::fs::create_dir_all(data_dir).map_err(|e| crate::eventstore::StoreError::Backend {
        action: "creating the data directory",
        source: Box::new(e),
    })?;
    Ok(Arc::new(SqliteEventStore::open_in(data_dir)?))
}

impl Services {
    /// Starts every actor on `store`. Unfinished jobs resume once the pipeline has read the log.
    pub async fn start(store: Arc<dyn EventStore>, settings: RuntimeSettings) -> Result<Services, StartError> {
        let media = MediaStore::open(&settings.data_dir).await?;
        let jobs = Jobs::start(store.clone(), settings.job_idle).await?;
        let fetch = FetchConfig { allow_private: settings.allow_private_urls, ..FetchConfig::default() };
        let (media_actor, _) = Actor::spawn(
            None,
            MediaActor,
            MediaArgs {
                jobs: jobs.clone(),
                store: media.clone(),
                fetcher: Fetcher::new(fetch),
                data_dir: settings.data_dir.clone(),
                max_downloads: settings.max_downloads,
                event_store: store.clone(),
                prices: settings.prices,
            },
        )
        .await?;
        let (refunds, _) = Actor::spawn(None, RefundActor, store.clone()).await?;
        let asr_queue = Arc::new(AtomicUsize::new(0));
        let (asr, _) = Actor::spawn(
            None,
            AsrActor,
            AsrArgs {
                model: settings.model,
                text_models: settings.text_models,
                jobs: jobs.clone(),
                store: store.clone(),
                media: media.clone(),
                data_dir: settings.data_dir.clone(),
                workers: settings.asr_workers,
                queue_gauge: asr_queue.clone(),
            },
        )
        .await?;
        let (callbacks, _) = Actor::spawn(
            None,
            CallbackActor,
            CallbackArgs {
                jobs: jobs.clone(),
                store: store.clone(),
                guard: AddressGuard::new(settings.allow_private_urls),
                settings: settings.callbacks,
            },
        )
        .await?;
        let (pipeline, _) = Actor::spawn(
            None,
            Pipeline,
            PipelineArgs {
                store: store.clone(),
                jobs: jobs.clone(),
                media: media_actor.clone(),
                asr: asr.clone(),
                callbacks: callbacks.clone(),
                data_dir: settings.data_dir.clone(),
            },
        )
        .await?;
        Ok(Services {
            data_dir: settings.data_dir,
            store,
            jobs,
            media,
            guard: AddressGuard::new(settings.allow_private_urls),
            asr_queue,
            actors: Actors { pipeline, media: media_actor, asr, callbacks, refunds },
        })
    }

    /// Stops the actors. Appends already under way finish first (each is one SQLite
    /// transaction); work not yet recorded resumes on the next start.
    pub fn stop(&self) {
        self.actors.pipeline.stop(None);
        self.actors.media.stop(None);
        self.actors.asr.stop(None);
        self.actors.callbacks.stop(None);
        self.actors.refunds.stop(None);
        self.jobs.stop();
    }
}
