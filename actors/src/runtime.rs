//! Starts Scribe's write side in one process: the event store, the job actors, the media, ASR,
//! callback, refund and retention actors, and the pipeline that drives jobs from one stage to the next. The HTTP edge and the
//! projections are started beside it by the binary.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use ractor::{Actor, ActorRef};

use scribe_domain::account::Prices;
use scribe_domain::job::MaxDuration;
use scribe_eventstore::{EventStore, SqliteEventStore};
use scribe_translate::TranslationModels;

use crate::asr::AsrArgs;
use crate::billing::{Billing, RefundActor, RefundMsg};
use crate::callbacks::{CallbackArgs, CallbackSettings};
use crate::checkpoint::CheckpointFile;
use crate::cluster::ClusterSettings;
use crate::jobs::Jobs;
use crate::live::{LiveSessions, LiveSettings, PartialsModel};
use crate::media::{AddressGuard, FetchConfig, Fetcher, MediaStore};
use crate::media_worker::MediaArgs;
use crate::pipeline::{DispatchCounts, Pipeline, PipelineArgs, PipelineMsg, WorkerArgs, WorkerRefs};
use crate::recognition_feed::RecognitionFeed;
use crate::retention::{RetentionActor, RetentionArgs, RetentionMsg};
use crate::speech_model::SpeechModels;

/// What the write side needs to start.
pub struct RuntimeSettings {
    /// Where job files live (`media/`, `transcripts/`; event paths are relative to it): the
    /// data directory by default, or the `--media-dir` that every node of a cluster mounts.
    pub data_dir: PathBuf,
    /// This node's own directory (the data directory): the pipeline's and the refund reactor's
    /// checkpoints.
    pub node_dir: PathBuf,
    /// Set when several nodes share the event store: work is claimed before it runs, and the
    /// media directory is shared (see `cluster`).
    pub cluster: Option<ClusterSettings>,
    /// Let `sourceUrl`/`callbackUrl` reach loopback and private addresses.
    pub allow_private_urls: bool,
    /// Recognitions run at once.
    pub asr_workers: usize,
    /// Downloads run at once (shared fairly between accounts).
    pub max_downloads: usize,
    /// Longest a whole `sourceUrl` download may take.
    pub download_deadline: Duration,
    /// Longest media accepted (`--max-duration`): a longer upload is refused, a longer URL job
    /// fails at probe. `None`: no limit.
    pub max_duration: Option<Duration>,
    /// How long an idle job actor lives.
    pub job_idle: Duration,
    /// The speech models (shared by every ASR worker, each loaded while there is work); live
    /// sessions use the default, and `live.partials_model` for partials if the operator named one.
    pub models: Arc<SpeechModels>,
    /// English→xx text translation models (`translation/en-xx/` of the models folder).
    pub text_models: TranslationModels,
    /// Callback timeout and retry schedule (`CallbackSettings::default()`: retries for 26 h).
    pub callbacks: CallbackSettings,
    /// What jobs cost (`--price-*-per-minute`); see `billing`.
    pub prices: Prices,
    /// How long finished jobs' media and documents are kept (`--retention`); `None`: until
    /// deleted, unless a job asked for less (`deleteAfterSeconds`).
    pub retention: Option<Duration>,
    /// Bounds of live sessions (`--live-sessions`, ...).
    pub live: LiveSettings,
    /// Diarize jobs that leave `speakerChannels` out by audio channel (`--speaker-channels`).
    pub speaker_channels: bool,
}

/// Handles to the running write side.
#[derive(Clone)]
pub struct Services {
    /// This node's name: the cluster node's, or `live::LOCAL_NODE` on a single node.
    pub node: String,
    pub data_dir: PathBuf,
    pub store: Arc<dyn EventStore>,
    pub jobs: Jobs,
    pub media: MediaStore,
    pub guard: AddressGuard,
    /// How every new job is paid for (prices and the longest media accepted are set here only).
    pub billing: Billing,
    /// ASR tasks waiting for a worker.
    pub asr_queue: Arc<AtomicUsize>,
    /// The pipeline's dispatches per stage.
    pub pipeline_dispatches: DispatchCounts,
    /// Live transcription sessions (the real-time door opens them here).
    pub live: LiveSessions,
    /// The speech models jobs can choose (the OpenAI door's `model`).
    pub models: Arc<SpeechModels>,
    /// Text of recognitions in progress, for the OpenAI door's streamed answers.
    pub feed: RecognitionFeed,
    actors: Actors,
}

#[derive(Clone)]
struct Actors {
    /// Also stops its workers (media, ASR, callbacks) when it stops.
    pipeline: ActorRef<PipelineMsg>,
    refunds: ActorRef<RefundMsg>,
    retention: ActorRef<RetentionMsg>,
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Store(#[from] scribe_eventstore::StoreError),
    #[error(transparent)]
    Media(#[from] crate::media::MediaError),
    #[error("an actor did not start: {0}")]
    Spawn(#[from] ractor::SpawnErr),
    #[error("--live-partials-model {name}: no such speech model is installed (installed: {installed})")]
    NoPartialsModel { name: String, installed: String },
}

/// The installed model the operator named for live partials, if any.
fn partials_model(settings: &RuntimeSettings) -> Result<Option<PartialsModel>, StartError> {
    let Some(name) = &settings.live.partials_model else { return Ok(None) };
    let Some((entry, model)) = settings.models.get(name) else {
        let installed = settings.models.list().iter().map(|m| m.name.as_str()).collect::<Vec<_>>().join(", ");
        return Err(StartError::NoPartialsModel { name: name.clone(), installed });
    };
    Ok(Some(PartialsModel { name: entry.name.clone(), languages: entry.languages.clone(), model: model.clone() }))
}

/// Opens the embedded SQLite event store in `data_dir`.
pub fn open_event_store(data_dir: &std::path::Path) -> Result<Arc<dyn EventStore>, StartError> {
    std::fs::create_dir_all(data_dir).map_err(|e| scribe_eventstore::StoreError::Backend {
        action: "creating the data directory",
        source: Box::new(e),
    })?;
    Ok(Arc::new(SqliteEventStore::open_in(data_dir)?))
}

impl Services {
    /// Starts every actor on `store`. Unfinished jobs resume once the pipeline has read the log.
    pub async fn start(store: Arc<dyn EventStore>, settings: RuntimeSettings) -> Result<Services, StartError> {
        let media = match settings.cluster {
            Some(_) => MediaStore::open_shared(&settings.data_dir).await?,
            None => MediaStore::open(&settings.data_dir).await?,
        };
        let jobs = Jobs::start(store.clone(), settings.job_idle).await?;
        let billing = Billing::new(store.clone(), jobs.clone(), settings.prices, MaxDuration(settings.max_duration));
        let fetch = FetchConfig {
            allow_private: settings.allow_private_urls,
            deadline: settings.download_deadline,
            ..FetchConfig::default()
        };
        let refund_checkpoint = Some(CheckpointFile::new(&settings.node_dir, "refunds"));
        let (refunds, _) = Actor::spawn(None, RefundActor, (store.clone(), refund_checkpoint)).await?;
        let retention_args = RetentionArgs {
            store: store.clone(),
            jobs: jobs.clone(),
            media: media.clone(),
            retention: settings.retention,
            checkpoint: Some(CheckpointFile::new(&settings.node_dir, "retention")),
        };
        let (retention, _) = Actor::spawn(None, RetentionActor, retention_args).await?;
        let node = settings.cluster.as_ref().map_or(crate::live::LOCAL_NODE.to_owned(), |c| c.node.clone());
        let partials = partials_model(&settings)?;
        let live = LiveSessions::new(
            settings.models.default_model().clone(),
            store.clone(),
            jobs.clone(),
            media.clone(),
            settings.data_dir.clone(),
            node.clone(),
            billing.clone(),
            settings.live.clone(),
            partials,
        );
        let asr_queue = Arc::new(AtomicUsize::new(0));
        let feed = RecognitionFeed::default();
        let pipeline_dispatches = DispatchCounts::default();
        // The media, ASR and callback workers are the pipeline's supervised children: it starts
        // them, and starts one again if it dies.
        let workers = WorkerArgs {
            media: MediaArgs {
                jobs: jobs.clone(),
                store: media.clone(),
                fetcher: Fetcher::new(fetch),
                data_dir: settings.data_dir.clone(),
                max_downloads: settings.max_downloads,
                billing: billing.clone(),
            },
            asr: AsrArgs {
                models: settings.models.clone(),
                feed: feed.clone(),
                text_models: settings.text_models,
                jobs: jobs.clone(),
                store: store.clone(),
                media: media.clone(),
                data_dir: settings.data_dir.clone(),
                workers: settings.asr_workers,
                queue_gauge: asr_queue.clone(),
                speaker_channels: settings.speaker_channels,
            },
            callbacks: CallbackArgs {
                jobs: jobs.clone(),
                store: store.clone(),
                guard: AddressGuard::new(settings.allow_private_urls),
                settings: settings.callbacks,
                cluster: settings.cluster.clone(),
            },
        };
        let (pipeline, _) = Actor::spawn(
            None,
            Pipeline,
            PipelineArgs {
                store: store.clone(),
                jobs: jobs.clone(),
                workers,
                data_dir: settings.data_dir.clone(),
                cluster: settings.cluster.clone(),
                checkpoint: Some(CheckpointFile::new(&settings.node_dir, "pipeline")),
                dispatches: pipeline_dispatches.clone(),
            },
        )
        .await?;
        Ok(Services {
            node,
            data_dir: settings.data_dir,
            store,
            jobs,
            media,
            guard: AddressGuard::new(settings.allow_private_urls),
            billing,
            asr_queue,
            pipeline_dispatches,
            live,
            models: settings.models,
            feed,
            actors: Actors { pipeline, refunds, retention },
        })
    }

    /// The pipeline's workers as they run now (a dead one is replaced by a new actor).
    pub async fn workers(&self) -> Result<WorkerRefs, ractor::RactorErr<PipelineMsg>> {
        ractor::call!(self.actors.pipeline, PipelineMsg::Workers)
    }

    /// Stops the actors. Appends already under way finish first (each is one SQLite
    /// transaction); work not yet recorded resumes on the next start.
    pub fn stop(&self) {
        self.actors.pipeline.stop(None);
        self.actors.refunds.stop(None);
        self.actors.retention.stop(None);
        self.jobs.stop();
    }
}
