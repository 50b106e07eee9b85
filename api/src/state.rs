//! What the HTTP edge needs from the rest of Scribe, in one value the binary builds at start-up:
//! the write side (event store, job actors, media storage, address guard), the read models, and
//! the edge's own settings (limits, rate limit). What jobs cost and the longest media accepted
//! are the billing saga's (`scribe_actors::billing`), reached through `ApiState::billing`.

use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use scribe_actors::billing::Billing;
use scribe_actors::jobs::Jobs;
use scribe_actors::media::{AddressGuard, MediaStore};
use scribe_actors::pipeline::DispatchCounts;
use scribe_actors::recognition_feed::RecognitionFeed;
use scribe_actors::runtime::Services;
use scribe_actors::speech_model::SpeechModels;
use scribe_domain::capabilities::Capabilities;
use scribe_domain::languages::AUTO_DETECT_WHISPER;
use scribe_eventstore::EventStore;
use scribe_projections::ReadModels;

use crate::connections::{ConnectionLimits, OpenConnections};

/// The largest upload of `POST /jobs/upload-media` (the spec's 6 GB).
pub const MAX_UPLOAD_BYTES: u64 = 6_000_000_000;
/// The largest JSON (or any non-upload) request body.
pub const MAX_JSON_BODY_BYTES: u64 = 1 << 20;
/// Below the official `openai` packages' 10-minute timeout, so that their clients hear the job's
/// id rather than time out (and upload again).
pub const DEFAULT_OPENAI_WAIT: Duration = Duration::from_secs(9 * 60);

/// The edge's settings. `Default` gives the values the service ships with.
#[derive(Debug, Clone)]
pub struct ApiSettings {
    /// Largest upload, in bytes.
    pub max_upload_bytes: u64,
    /// Largest request body of every other endpoint, in bytes.
    pub max_json_body_bytes: u64,
    /// Requests per second allowed per API key, sustained.
    pub rate_per_second: NonZeroU32,
    /// Requests per API key allowed in a burst above the sustained rate.
    pub rate_burst: NonZeroU32,
    /// Failed authentications (an unknown or empty apiKey) allowed per client address per
    /// minute, sustained; past the burst the address gets 429.
    pub auth_failures_per_minute: NonZeroU32,
    /// Failed authentications allowed per client address in a burst.
    pub auth_failures_burst: NonZeroU32,
    /// How long a request that wrote something waits for the read models to show it.
    pub read_your_writes_timeout: Duration,
    /// The address clients reach this server at, without the `/api` prefix (absolute links, such
    /// as export-stl's `downloadUrl`, start with it).
    pub public_url: String,
    /// How long an export-stl download link works.
    pub download_link_ttl: Duration,
    /// Bytes of rendered exports kept in memory.
    pub export_cache_bytes: u64,
    /// How long a claim on a manual task lasts; every save renews it.
    pub task_lease: Duration,
    /// How long a task's signed media link works.
    pub media_link_ttl: Duration,
    /// What this server's models can do: direct jobs it could not finish are refused at
    /// submission, and `GET /capabilities` shows it.
    pub capabilities: Arc<Capabilities>,
    /// How long a finished job's media and documents are kept (`--retention`); a job's own
    /// `deleteAfterSeconds` may make it shorter. `None`: kept until deleted.
    pub retention: Option<Duration>,
    /// How long slow clients may hold a connection, and how many are served at once.
    pub connections: ConnectionLimits,
    /// How long an OpenAI-door request waits for its job (`--openai-wait`) before it answers
    /// 504 with the job's id.
    pub openai_wait: Duration,
    /// Whether jobs that leave `speakerChannels` out are diarized by audio channel
    /// (`--speaker-channels`; the ASR workers apply it, `GET /capabilities` shows it).
    pub speaker_channels: bool,
}

impl ApiSettings {
    /// The retention in whole seconds, as the domain's retention rule takes it.
    pub fn retention_s(&self) -> Option<u64> {
        self.retention.map(|d| d.as_secs())
    }
}

impl Default for ApiSettings {
    fn default() -> Self {
        ApiSettings {
            max_upload_bytes: MAX_UPLOAD_BYTES,
            max_json_body_bytes: MAX_JSON_BODY_BYTES,
            rate_per_second: NonZeroU32::new(20).expect("non-zero"),
            rate_burst: NonZeroU32::new(50).expect("non-zero"),
            auth_failures_per_minute: NonZeroU32::new(60).expect("non-zero"),
            auth_failures_burst: NonZeroU32::new(100).expect("non-zero"),
            read_your_writes_timeout: Duration::from_secs(2),
            public_url: "http://127.0.0.1:8080".to_owned(),
            download_link_ttl: Duration::from_secs(3600),
            export_cache_bytes: 128 << 20,
            task_lease: Duration::from_secs(2 * 3600),
            media_link_ttl: Duration::from_secs(6 * 3600),
            // A multilingual speech model and no text translation models: English targets only.
            capabilities: Arc::new(Capabilities::new(true, &AUTO_DETECT_WHISPER, &[])),
            retention: None,
            connections: ConnectionLimits::default(),
            openai_wait: DEFAULT_OPENAI_WAIT,
            speaker_channels: false,
        }
    }
}

/// Handles shared by every request.
#[derive(Clone)]
pub struct ApiState {
    /// This node's name (see `scribe_actors::runtime::Services::node`).
    pub node: String,
    pub data_dir: PathBuf,
    pub store: Arc<dyn EventStore>,
    pub jobs: Jobs,
    pub media: MediaStore,
    pub guard: AddressGuard,
    /// How new jobs are paid for: every door submits through it.
    pub billing: Billing,
    pub read: ReadModels,
    /// ASR tasks waiting for a worker (shown by `/metrics`).
    pub asr_queue: Arc<AtomicUsize>,
    /// The pipeline's dispatches per stage (shown by `/metrics`).
    pub pipeline_dispatches: DispatchCounts,
    pub settings: ApiSettings,
    /// Live transcription sessions (the real-time door).
    pub live: scribe_actors::live::LiveSessions,
    /// The installed speech models (the OpenAI door's `model`).
    pub models: Arc<SpeechModels>,
    /// Recognised text of jobs in progress (the OpenAI door's streams).
    pub feed: RecognitionFeed,
    /// The connections the server accepted through [`crate::connections::GuardedAcceptor`], for
    /// the edge to mark requests in flight (empty when requests come another way, as in tests).
    pub connections: OpenConnections,
}

impl ApiState {
    /// The edge over a running write side and its read models.
    pub fn new(services: &Services, read: ReadModels, settings: ApiSettings) -> ApiState {
        ApiState {
            node: services.node.clone(),
            data_dir: services.data_dir.clone(),
            store: services.store.clone(),
            jobs: services.jobs.clone(),
            media: services.media.clone(),
            guard: services.guard,
            billing: services.billing.clone(),
            read,
            asr_queue: services.asr_queue.clone(),
            live: services.live.clone(),
            models: services.models.clone(),
            feed: services.feed.clone(),
            pipeline_dispatches: services.pipeline_dispatches.clone(),
            settings,
            connections: OpenConnections::default(),
        }
    }

    /// Waits (bounded) until the read models show the write at `position`, so that the client's
    /// next status or list call sees it. A timeout is logged, not an error: the write is durable.
    pub async fn settle(&self, position: Option<u64>) {
        let Some(position) = position else { return };
        if !self.read.wait_for(position, self.settings.read_your_writes_timeout).await {
            tracing::warn!(position, "read models did not catch up in time; the next read may not show this write yet");
        }
    }
}
