//! Service configuration: one value per setting, taken from the command line, else the
//! environment (`SCRIBE_*`), else a TOML file, else the embedded default. With no configuration
//! at all, `scribe serve` listens on 127.0.0.1:8080 and keeps everything under `./data`.
//!
//! clap reads the command line and the environment; figment layers what clap was given over the
//! TOML file over the defaults ([`Layered`]), so each setting is named once per layer and merged
//! in one place.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use figment::Figment;
use figment::providers::{Format, Serialized, Toml};
use scribe_actors::callbacks::CallbackSettings;
use scribe_actors::live::LiveSettings;
use scribe_api::connections::ConnectionLimits;
use scribe_domain::account::Prices;
use scribe_eventstore::StoreLocation;
use scribe_whisper::{ComputeType, DeviceChoice};
use serde::{Deserialize, Serialize, Serializer};

/// How long an idle server keeps the speech model in memory.
pub const DEFAULT_MODEL_KEEP_ALIVE: Duration = Duration::from_secs(300);

/// Settings given on the command line or in the environment; `None` means "not given here".
#[derive(clap::Args, Serialize, Debug, Clone, Default)]
pub struct ServeArgs {
    /// TOML file with any of the settings below (keys as the long flags, with `_` for `-`).
    #[arg(long, env = "SCRIBE_CONFIG")]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// Address to listen on.
    #[arg(long, env = "SCRIBE_BIND")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bind: Option<IpAddr>,
    /// Port to listen on.
    #[arg(long, env = "SCRIBE_PORT")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Directory for the event store, media and transcripts.
    #[arg(long, env = "SCRIBE_DATA_DIR")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<PathBuf>,
    /// Event store: `postgres://user:password@host/db` (PostgreSQL) or `esdb://host:2113` /
    /// `kurrentdb://...` (KurrentDB); default: the SQLite file `events.sqlite3` in the data directory.
    #[arg(long, env = "SCRIBE_EVENT_STORE")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_store: Option<String>,
    /// Allow sourceUrl and callbackUrl to point at loopback, private and link-local addresses.
    #[arg(long, env = "SCRIBE_ALLOW_PRIVATE_URLS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_private_urls: Option<bool>,
    /// Directory holding the models installed by `ops/setup.sh`.
    #[arg(long, env = "SCRIBE_MODELS_DIR")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub models_dir: Option<PathBuf>,
    /// Whisper model directory (default: `<models-dir>/whisper-base`): any CTranslate2
    /// (faster-whisper) Whisper model, e.g. a downloaded large-v3-turbo. `--model` for short.
    #[arg(long, alias = "model", env = "SCRIBE_MODEL_DIR")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_dir: Option<PathBuf>,
    /// Precision the speech models run at, whatever their files store: float32, float16 or
    /// int8 (default: int8, measured the fastest at equal accuracy here; see the README).
    #[arg(long, env = "SCRIBE_COMPUTE_TYPE")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compute_type: Option<ComputeType>,
    /// The processor speech recognition runs on: cpu (the default), vulkan or vulkan:N, wgpu, cuda
    /// or cuda:N (GPU builds only: `--features wgpu` / `cuda`), flex (burn's CPU backend, for
    /// checking the GPU path). A GPU runs in float16 by default (float32 on request, and on flex).
    #[arg(long, env = "SCRIBE_DEVICE")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceChoice>,
    /// Number of transcriptions run at once (each uses every core).
    #[arg(long, env = "SCRIBE_ASR_WORKERS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asr_workers: Option<usize>,
    /// Public base URL of this server, used in signed download links (default: http://bind:port).
    #[arg(long, env = "SCRIBE_PUBLIC_URL")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public_url: Option<String>,
    /// Longest waits before the callback retries, comma-separated; the last one repeats
    /// (default: 10s,30s,1m,5m,15m,1h). Each real wait is drawn between zero and that value.
    #[arg(long, env = "SCRIBE_CALLBACK_RETRIES", value_delimiter = ',', value_parser = humantime::parse_duration)]
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "humantime_list")]
    pub callback_retries: Option<Vec<Duration>>,
    /// How long the speech model stays in memory with no transcription to do (default: 5m;
    /// `0s` releases it after every job).
    #[arg(long, env = "SCRIBE_MODEL_KEEP_ALIVE", value_parser = humantime::parse_duration)]
    #[serde(skip_serializing_if = "Option::is_none", with = "humantime_serde")]
    pub model_keep_alive: Option<Duration>,
    /// How long after a job ends its callback is still retried (default: 26h).
    #[arg(long, env = "SCRIBE_CALLBACK_MAX_AGE", value_parser = humantime::parse_duration)]
    #[serde(skip_serializing_if = "Option::is_none", with = "humantime_serde")]
    pub callback_max_age: Option<Duration>,
    /// Requests per second each API key may make, sustained (default: 20); past it, HTTP 429.
    #[arg(long, env = "SCRIBE_RATE_PER_SECOND")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_per_second: Option<NonZeroU32>,
    /// Requests each API key may make in a burst above that rate (default: 50).
    #[arg(long, env = "SCRIBE_RATE_BURST")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_burst: Option<NonZeroU32>,
    /// Failed authentications (an unknown or empty apiKey) each client address may make per
    /// minute, sustained (default: 60); past the burst, HTTP 429. The address is the TCP peer:
    /// X-Forwarded-For is not trusted.
    #[arg(long, env = "SCRIBE_AUTH_FAILURES_PER_MINUTE")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth_failures_per_minute: Option<NonZeroU32>,
    /// Failed authentications each client address may make in a burst (default: 100).
    #[arg(long, env = "SCRIBE_AUTH_FAILURES_BURST")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth_failures_burst: Option<NonZeroU32>,
    /// How long a transcriber's or translator's claim on a task lasts; every save renews it
    /// (default: 2h). When it runs out the task returns to the queue with its saved draft.
    #[arg(long, env = "SCRIBE_TASK_LEASE", value_parser = humantime::parse_duration)]
    #[serde(skip_serializing_if = "Option::is_none", with = "humantime_serde")]
    pub task_lease: Option<Duration>,
    /// Longest a whole sourceUrl download may take, redirects included (default: 30m). A slower
    /// server fails its job with an errorMsg saying how much it sent in that time.
    #[arg(long, env = "SCRIBE_DOWNLOAD_DEADLINE", value_parser = humantime::parse_duration)]
    #[serde(skip_serializing_if = "Option::is_none", with = "humantime_serde")]
    pub download_deadline: Option<Duration>,
    /// Longest media accepted, e.g. `4h` (default: no limit). A longer upload is refused (HTTP
    /// 400 on `file`, nothing charged); a longer sourceUrl fails its job when it is probed, with
    /// an errorMsg giving the limit and the length.
    #[arg(long, env = "SCRIBE_MAX_DURATION", value_parser = humantime::parse_duration)]
    #[serde(skip_serializing_if = "Option::is_none", with = "humantime_serde")]
    pub max_duration: Option<Duration>,
    /// Price of machine transcription (`direct` jobs), in cents per started minute of audio
    /// (default: 10). 0 with the two below makes everything free.
    #[arg(long, env = "SCRIBE_PRICE_DIRECT_PER_MINUTE")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price_direct_per_minute: Option<u64>,
    /// Price of human transcription (`perfect` jobs), in cents per started minute (default: 150).
    #[arg(long, env = "SCRIBE_PRICE_PERFECT_PER_MINUTE")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price_perfect_per_minute: Option<u64>,
    /// Added for `translatedSubtitles` (machine translation of direct jobs, human translation of
    /// perfect ones), in cents per started minute (default: 50).
    #[arg(long, env = "SCRIBE_PRICE_TRANSLATION_PER_MINUTE")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price_translation_per_minute: Option<u64>,
    /// How long finished jobs' media and transcripts are kept, e.g. `30d` (default: until the
    /// owner deletes them). A job may ask for less with `deleteAfterSeconds`. An expired job
    /// answers 410; its history (`scribe replay`) keeps every event, `JobExpired` last.
    #[arg(long, env = "SCRIBE_RETENTION", value_parser = humantime::parse_duration)]
    #[serde(skip_serializing_if = "Option::is_none", with = "humantime_serde")]
    pub retention: Option<Duration>,
    /// Directory for job files (media, transcripts, documents) and the download-link key. Every
    /// node sharing one event store must mount the same one (default: the data directory).
    #[arg(long, env = "SCRIBE_MEDIA_DIR")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media_dir: Option<PathBuf>,
    /// When nodes share an event store: how long a node's claim on a job's work lasts unless
    /// renewed (default: 30s). A dead node's work continues on another node after this.
    #[arg(long, env = "SCRIBE_CLAIM_LEASE", value_parser = humantime::parse_duration)]
    #[serde(skip_serializing_if = "Option::is_none", with = "humantime_serde")]
    pub claim_lease: Option<Duration>,
    /// Longest a request's line and headers may take to arrive, from the connection's opening
    /// (or a later request's first byte); slower connections are closed (default: 30s).
    #[arg(long, env = "SCRIBE_HEADER_READ_TIMEOUT", value_parser = humantime::parse_duration)]
    #[serde(skip_serializing_if = "Option::is_none", with = "humantime_serde")]
    pub header_read_timeout: Option<Duration>,
    /// Longest a keep-alive connection may stay silent between requests (default: 60s).
    #[arg(long, env = "SCRIBE_IDLE_TIMEOUT", value_parser = humantime::parse_duration)]
    #[serde(skip_serializing_if = "Option::is_none", with = "humantime_serde")]
    pub idle_timeout: Option<Duration>,
    /// Longest a request body may go without sending a byte; the request then ends with 408
    /// (default: 60s). Slow uploads that keep moving are never cut.
    #[arg(long, env = "SCRIBE_BODY_TIMEOUT", value_parser = humantime::parse_duration)]
    #[serde(skip_serializing_if = "Option::is_none", with = "humantime_serde")]
    pub body_timeout: Option<Duration>,
    /// Connections served at once (default: 512); more wait in the listen queue until one closes.
    #[arg(long, env = "SCRIBE_MAX_CONNECTIONS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_connections: Option<usize>,
    /// Live transcription sessions at once on this server (default: 4); one more is refused
    /// with close code 1013.
    #[arg(long, env = "SCRIBE_LIVE_SESSIONS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live_sessions: Option<usize>,
    /// Live sessions at once per account (default: 2).
    #[arg(long, env = "SCRIBE_LIVE_SESSIONS_PER_ACCOUNT")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live_sessions_per_account: Option<usize>,
    /// A live session that sends no audio for this long is closed (default: 30s).
    #[arg(long, env = "SCRIBE_LIVE_IDLE_TIMEOUT", value_parser = humantime::parse_duration)]
    #[serde(skip_serializing_if = "Option::is_none", with = "humantime_serde")]
    pub live_idle_timeout: Option<Duration>,
    /// The pause that ends a live utterance and sends its final (default: 500ms; 200ms to 5s).
    /// Longer reads better (fewer sentences cut at a breath) and puts the difference on every
    /// final's latency. A pause after words that stop mid-sentence is held to 1s either way.
    #[arg(long, env = "SCRIBE_LIVE_PAUSE", value_parser = humantime::parse_duration)]
    #[serde(skip_serializing_if = "Option::is_none", with = "humantime_serde")]
    pub live_pause: Option<Duration>,
    /// An installed speech model (a folder name of the models directory, e.g. whisper-tiny.en)
    /// that decodes live sessions' partials in the languages it knows; finals stay with the
    /// default model (default: the default model decodes both).
    #[arg(long, env = "SCRIBE_LIVE_PARTIALS_MODEL")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live_partials_model: Option<String>,
    /// How long an OpenAI-API request waits for its job before answering 504 with the job's id
    /// (default: 9m, below the openai packages' 10-minute timeout). The job goes on.
    #[arg(long, env = "SCRIBE_OPENAI_WAIT", value_parser = humantime::parse_duration)]
    #[serde(skip_serializing_if = "Option::is_none", with = "humantime_serde")]
    pub openai_wait: Option<Duration>,
    /// Diarize jobs that leave `speakerChannels` out by audio channel, each channel one speaker
    /// (stereo call recordings, one party per channel) (default: false, by voice). A job's own
    /// `speakerChannels` or `numberOfSpeakers` still decides for it.
    #[arg(long, env = "SCRIBE_SPEAKER_CHANNELS")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speaker_channels: Option<bool>,
}

/// Every setting as the layers leave it: the defaults, under the TOML file, under what clap read
/// from the command line and the environment. `None`: not set anywhere, and no default.
#[derive(Serialize, Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct Layered {
    bind: IpAddr,
    port: u16,
    data_dir: PathBuf,
    event_store: Option<String>,
    allow_private_urls: bool,
    models_dir: Option<PathBuf>,
    model_dir: Option<PathBuf>,
    compute_type: Option<ComputeType>,
    device: Option<DeviceChoice>,
    asr_workers: usize,
    public_url: Option<String>,
    callback_retries: Vec<humantime_serde::Serde<Duration>>,
    #[serde(with = "humantime_serde")]
    callback_max_age: Duration,
    #[serde(with = "humantime_serde")]
    model_keep_alive: Duration,
    rate_per_second: NonZeroU32,
    rate_burst: NonZeroU32,
    auth_failures_per_minute: NonZeroU32,
    auth_failures_burst: NonZeroU32,
    #[serde(with = "humantime_serde")]
    task_lease: Duration,
    #[serde(with = "humantime_serde")]
    download_deadline: Duration,
    #[serde(with = "humantime_serde")]
    max_duration: Option<Duration>,
    price_direct_per_minute: u64,
    price_perfect_per_minute: u64,
    price_translation_per_minute: u64,
    #[serde(with = "humantime_serde")]
    retention: Option<Duration>,
    media_dir: Option<PathBuf>,
    #[serde(with = "humantime_serde")]
    claim_lease: Duration,
    #[serde(with = "humantime_serde")]
    header_read_timeout: Duration,
    #[serde(with = "humantime_serde")]
    idle_timeout: Duration,
    #[serde(with = "humantime_serde")]
    body_timeout: Duration,
    max_connections: usize,
    live_sessions: usize,
    live_sessions_per_account: usize,
    #[serde(with = "humantime_serde")]
    live_idle_timeout: Duration,
    #[serde(with = "humantime_serde")]
    live_pause: Duration,
    live_partials_model: Option<String>,
    #[serde(with = "humantime_serde")]
    openai_wait: Duration,
    speaker_channels: bool,
}

impl Default for Layered {
    fn default() -> Self {
        let api = scribe_api::ApiSettings::default();
        let callbacks = CallbackSettings::default();
        let connections = ConnectionLimits::default();
        let prices = Prices::default();
        let live = LiveSettings::default();
        Layered {
            bind: IpAddr::from([127, 0, 0, 1]),
            port: 8080,
            data_dir: PathBuf::from("data"),
            event_store: None,
            allow_private_urls: false,
            models_dir: None,
            model_dir: None,
            compute_type: None,
            device: None,
            asr_workers: 1,
            public_url: None,
            callback_retries: callbacks.schedule.into_iter().map(Into::into).collect(),
            callback_max_age: callbacks.max_age,
            model_keep_alive: DEFAULT_MODEL_KEEP_ALIVE,
            rate_per_second: api.rate_per_second,
            rate_burst: api.rate_burst,
            auth_failures_per_minute: api.auth_failures_per_minute,
            auth_failures_burst: api.auth_failures_burst,
            task_lease: api.task_lease,
            download_deadline: scribe_actors::media::fetch::DEFAULT_DOWNLOAD_DEADLINE,
            max_duration: None,
            price_direct_per_minute: prices.direct_per_minute,
            price_perfect_per_minute: prices.perfect_per_minute,
            price_translation_per_minute: prices.translation_per_minute,
            retention: None,
            media_dir: None,
            claim_lease: scribe_actors::cluster::DEFAULT_CLAIM_LEASE,
            header_read_timeout: connections.header_read_timeout,
            idle_timeout: connections.idle_timeout,
            body_timeout: connections.body_timeout,
            max_connections: connections.max_connections,
            live_sessions: live.max_sessions,
            live_sessions_per_account: live.max_per_account,
            live_idle_timeout: live.idle_timeout,
            live_pause: live.pause,
            live_partials_model: live.partials_model,
            openai_wait: api.openai_wait,
            speaker_channels: false,
        }
    }
}

impl Layered {
    /// The defaults, then the TOML file at `config_file` if one is named, then `given` (the
    /// settings clap read; unset ones are left out of its serialized form).
    fn from(config_file: Option<&Path>, given: &impl Serialize) -> anyhow::Result<Layered> {
        let mut figment = Figment::from(Serialized::defaults(Layered::default()));
        if let Some(path) = config_file {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("cannot read config file {}", path.display()))?;
            figment = figment.merge(Toml::string(&text));
        }
        figment.merge(Serialized::defaults(given)).extract().with_context(|| match config_file {
            Some(path) => format!("invalid configuration (config file {})", path.display()),
            None => "invalid configuration".to_owned(),
        })
    }
}

/// Resolved configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub bind: IpAddr,
    pub port: u16,
    pub data_dir: PathBuf,
    /// Where the event log lives (the embedded SQLite file unless `--event-store` says otherwise).
    pub event_store: StoreLocation,
    pub allow_private_urls: bool,
    pub models_dir: PathBuf,
    pub model_dir: PathBuf,
    /// Precision every speech model runs at.
    pub compute_type: ComputeType,
    /// The processor speech recognition runs on.
    pub device: DeviceChoice,
    pub asr_workers: usize,
    /// Base URL clients reach this server at; `None`: the address it listens on.
    pub public_url: Option<String>,
    /// How callbacks are retried.
    pub callbacks: CallbackSettings,
    /// How long the speech model stays loaded while idle.
    pub model_keep_alive: Duration,
    /// Rate limit per API key: sustained requests per second, and burst.
    pub rate_per_second: NonZeroU32,
    pub rate_burst: NonZeroU32,
    /// Failed authentications per client address: sustained per minute, and burst.
    pub auth_failures_per_minute: NonZeroU32,
    pub auth_failures_burst: NonZeroU32,
    /// How long a claim on a manual task lasts.
    pub task_lease: Duration,
    /// Longest a whole sourceUrl download may take.
    pub download_deadline: Duration,
    /// Longest media accepted; `None`: no limit.
    pub max_duration: Option<Duration>,
    /// What jobs cost, in cents per started minute.
    pub prices: Prices,
    /// How long finished jobs' files are kept; `None`: until deleted.
    pub retention: Option<Duration>,
    /// Where job files live (the data directory unless `--media-dir` says otherwise).
    pub media_dir: PathBuf,
    /// How long a node's claim on a job's work lasts (several nodes on one store).
    pub claim_lease: Duration,
    /// How long slow clients may hold a connection, and how many are served at once.
    pub connections: ConnectionLimits,
    /// Bounds of live sessions.
    pub live: LiveSettings,
    /// How long an OpenAI-API request waits for its job.
    pub openai_wait: Duration,
    /// Diarize jobs that leave `speakerChannels` out by audio channel.
    pub speaker_channels: bool,
}

impl Config {
    /// Whether other nodes may share this event store (anything but the embedded SQLite file):
    /// then work is claimed before it runs.
    pub fn shared_store(&self) -> bool {
        !matches!(self.event_store, StoreLocation::Embedded(_))
    }
}

impl Config {
    /// Resolves every setting: command line, then environment (both through clap), then the
    /// TOML file, then the default.
    pub fn resolve(args: &ServeArgs) -> anyhow::Result<Config> {
        let layered = Layered::from(args.config.as_deref(), args)?;
        let connections = ConnectionLimits {
            header_read_timeout: layered.header_read_timeout,
            idle_timeout: layered.idle_timeout,
            body_timeout: layered.body_timeout,
            max_connections: layered.max_connections,
        };
        check_connection_limits(&connections)?;
        if layered.claim_lease < Duration::from_secs(1) {
            anyhow::bail!("--claim-lease must be at least 1s (it is renewed every third of it)");
        }
        if !(Duration::from_millis(200)..=Duration::from_secs(5)).contains(&layered.live_pause) {
            anyhow::bail!(
                "--live-pause must be from 200ms to 5s (it is {})",
                humantime::format_duration(layered.live_pause)
            );
        }
        let event_store = StoreLocation::from_setting(layered.event_store.as_deref(), &layered.data_dir)?;
        let models_dir = layered.models_dir.unwrap_or_else(default_models_dir);
        let device = layered.device.unwrap_or_default();
        Ok(Config {
            bind: layered.bind,
            port: layered.port,
            event_store,
            media_dir: layered.media_dir.unwrap_or_else(|| layered.data_dir.clone()),
            data_dir: layered.data_dir,
            allow_private_urls: layered.allow_private_urls,
            model_dir: layered.model_dir.unwrap_or_else(|| models_dir.join("whisper-base")),
            compute_type: layered.compute_type.unwrap_or_else(|| default_compute_type(device)),
            device,
            models_dir,
            asr_workers: layered.asr_workers.max(1),
            public_url: layered.public_url.map(|u| u.trim_end_matches('/').to_string()),
            callbacks: CallbackSettings {
                schedule: layered.callback_retries.into_iter().map(|d| d.into_inner()).collect(),
                max_age: layered.callback_max_age,
                ..CallbackSettings::default()
            },
            model_keep_alive: layered.model_keep_alive,
            rate_per_second: layered.rate_per_second,
            rate_burst: layered.rate_burst,
            auth_failures_per_minute: layered.auth_failures_per_minute,
            auth_failures_burst: layered.auth_failures_burst,
            task_lease: layered.task_lease,
            download_deadline: layered.download_deadline,
            max_duration: layered.max_duration,
            prices: Prices {
                direct_per_minute: layered.price_direct_per_minute,
                perfect_per_minute: layered.price_perfect_per_minute,
                translation_per_minute: layered.price_translation_per_minute,
            },
            retention: layered.retention,
            claim_lease: layered.claim_lease,
            connections,
            live: LiveSettings {
                max_sessions: layered.live_sessions,
                max_per_account: layered.live_sessions_per_account.max(1),
                idle_timeout: layered.live_idle_timeout.max(Duration::from_secs(1)),
                pause: layered.live_pause,
                partials_model: layered.live_partials_model,
            },
            openai_wait: layered.openai_wait,
            speaker_channels: layered.speaker_channels,
        })
    }
}

/// None of the connection limits may be zero.
fn check_connection_limits(limits: &ConnectionLimits) -> anyhow::Result<()> {
    for (name, value) in [
        ("--header-read-timeout", limits.header_read_timeout),
        ("--idle-timeout", limits.idle_timeout),
        ("--body-timeout", limits.body_timeout),
    ] {
        if value.is_zero() {
            anyhow::bail!("{name} must be more than 0s");
        }
    }
    if limits.max_connections == 0 {
        anyhow::bail!("--max-connections must be at least 1");
    }
    Ok(())
}

/// Where the operator's tools (`replay`, `keys`, `balance`, `rebuild`) find the event store: the
/// same settings as `scribe serve`, from the same places (flag, environment, TOML file).
#[derive(clap::Args, Serialize, Debug, Clone, Default)]
pub struct StoreArgs {
    /// TOML file of `scribe serve` (only `data_dir` and `event_store` are read here).
    #[arg(long, env = "SCRIBE_CONFIG")]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// Data directory (default: ./data).
    #[arg(long, env = "SCRIBE_DATA_DIR")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<PathBuf>,
    /// Event store URL (postgres://..., esdb://...); default: the SQLite file in the data directory.
    #[arg(long, env = "SCRIBE_EVENT_STORE")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_store: Option<String>,
}

impl StoreArgs {
    /// The data directory and the event store these settings name.
    pub fn resolve(&self) -> anyhow::Result<(PathBuf, StoreLocation)> {
        let layered = Layered::from(self.config.as_deref(), self)?;
        let location = StoreLocation::from_setting(layered.event_store.as_deref(), &layered.data_dir)?;
        Ok((layered.data_dir, location))
    }
}

/// `./models`, where `ops/setup.sh` installs the models unless told otherwise.
pub fn default_models_dir() -> PathBuf {
    std::env::var_os("SCRIBE_MODELS_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("models"))
}

/// The compute type when none is set: int8 on the CPU (measured the fastest at equal accuracy),
/// float16 on a GPU (as CTranslate2 on one: half the weight bytes, and the arithmetic GPUs are
/// fastest at), float32 on flex (burn's CPU backend, which checks the GPU path's numerics).
pub fn default_compute_type(device: DeviceChoice) -> ComputeType {
    match device {
        DeviceChoice::Cpu => ComputeType::default(),
        d if d.is_gpu() => ComputeType::Float16,
        _ => ComputeType::Float32,
    }
}

/// Writes a list of durations in humantime's words, as the TOML file gives them.
fn humantime_list<S: Serializer>(list: &Option<Vec<Duration>>, serializer: S) -> Result<S::Ok, S::Error> {
    let words: Option<Vec<humantime_serde::Serde<Duration>>> =
        list.as_ref().map(|list| list.iter().copied().map(Into::into).collect());
    words.serialize(serializer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_listen_on_loopback_8080_with_data_dir() {
        let c = Config::resolve(&ServeArgs::default()).unwrap();
        assert_eq!(c.bind, IpAddr::from([127, 0, 0, 1]));
        assert_eq!(c.port, 8080);
        assert_eq!(c.data_dir, PathBuf::from("data"));
        assert!(!c.allow_private_urls);
        assert_eq!(c.public_url, None);
        assert_eq!(c.callbacks, CallbackSettings::default());
        assert_eq!(c.event_store, StoreLocation::Embedded(PathBuf::from("data")));
        assert_eq!(c.media_dir, PathBuf::from("data"));
        assert!(!c.shared_store());
    }

    #[test]
    fn the_media_dir_and_claim_lease_come_from_the_flag_else_the_file() {
        let dir = std::env::temp_dir().join(format!("scribe-config-media-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("scribe.toml");
        std::fs::write(
            &file,
            "media_dir = \"/mnt/scribe\"\nclaim_lease = \"1m\"\nevent_store = \"postgres://scribe@db/scribe\"\n",
        )
        .unwrap();
        let c = Config::resolve(&ServeArgs { config: Some(file.clone()), ..Default::default() }).unwrap();
        assert_eq!((c.media_dir.clone(), c.claim_lease), (PathBuf::from("/mnt/scribe"), Duration::from_secs(60)));
        assert!(c.shared_store());
        let args = ServeArgs { config: Some(file.clone()), media_dir: Some("/srv/m".into()), ..Default::default() };
        assert_eq!(Config::resolve(&args).unwrap().media_dir, PathBuf::from("/srv/m"));
        let short = ServeArgs { claim_lease: Some(Duration::from_millis(10)), ..Default::default() };
        assert!(format!("{:#}", Config::resolve(&short).unwrap_err()).contains("--claim-lease"));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_event_store_comes_from_the_flag_else_the_file() {
        let dir = std::env::temp_dir().join(format!("scribe-config-store-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("scribe.toml");
        std::fs::write(&file, "event_store = \"postgres://scribe@db/scribe\"\ndata_dir = \"/srv/scribe\"\n").unwrap();
        let c = Config::resolve(&ServeArgs { config: Some(file.clone()), ..Default::default() }).unwrap();
        assert_eq!(c.event_store, StoreLocation::Postgres("postgres://scribe@db/scribe".into()));
        let args = ServeArgs {
            config: Some(file.clone()),
            event_store: Some("esdb://es:2113?tls=false".into()),
            ..Default::default()
        };
        assert_eq!(
            Config::resolve(&args).unwrap().event_store,
            StoreLocation::KurrentDb("esdb://es:2113?tls=false".into())
        );
        let tools = StoreArgs { config: Some(file.clone()), ..Default::default() };
        assert_eq!(
            tools.resolve().unwrap(),
            (PathBuf::from("/srv/scribe"), StoreLocation::Postgres("postgres://scribe@db/scribe".into()))
        );
        let bad = ServeArgs { event_store: Some("redis://x".into()), ..Default::default() };
        let error = Config::resolve(&bad).unwrap_err();
        assert!(format!("{error:#}").contains("postgres://"), "{error:#}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_callback_schedule_is_configurable() {
        let dir = std::env::temp_dir().join(format!("scribe-config-cb-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("scribe.toml");
        std::fs::write(&file, "callback_retries = [\"1s\", \"1m\"]\ncallback_max_age = \"2h\"\n").unwrap();
        let c = Config::resolve(&ServeArgs { config: Some(file.clone()), ..Default::default() }).unwrap();
        assert_eq!(c.callbacks.schedule, vec![Duration::from_secs(1), Duration::from_secs(60)]);
        assert_eq!(c.callbacks.max_age, Duration::from_secs(7200));
        let args = ServeArgs {
            config: Some(file),
            callback_retries: Some(vec![Duration::from_millis(500)]),
            ..Default::default()
        };
        assert_eq!(Config::resolve(&args).unwrap().callbacks.schedule, vec![Duration::from_millis(500)]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn flags_override_the_file_and_the_file_overrides_defaults() {
        let dir = std::env::temp_dir().join(format!("scribe-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("scribe.toml");
        std::fs::write(&file, "port = 9000\ndata_dir = \"/srv/scribe\"\nallow_private_urls = true\n").unwrap();
        let args = ServeArgs { config: Some(file.clone()), port: Some(9100), ..Default::default() };
        let c = Config::resolve(&args).unwrap();
        assert_eq!(c.port, 9100);
        assert_eq!(c.data_dir, PathBuf::from("/srv/scribe"));
        assert!(c.allow_private_urls);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_connection_limits_come_from_the_flag_else_the_file_else_the_defaults() {
        assert_eq!(Config::resolve(&ServeArgs::default()).unwrap().connections, ConnectionLimits::default());
        let dir = std::env::temp_dir().join(format!("scribe-config-conn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("scribe.toml");
        std::fs::write(
            &file,
            "header_read_timeout = \"5s\"\nidle_timeout = \"1m\"\nbody_timeout = \"2m\"\nmax_connections = 64\n",
        )
        .unwrap();
        let c = Config::resolve(&ServeArgs { config: Some(file.clone()), ..Default::default() }).unwrap();
        let from_file = ConnectionLimits {
            header_read_timeout: Duration::from_secs(5),
            idle_timeout: Duration::from_secs(60),
            body_timeout: Duration::from_secs(120),
            max_connections: 64,
        };
        assert_eq!(c.connections, from_file);
        let args = ServeArgs {
            config: Some(file),
            max_connections: Some(8),
            body_timeout: Some(Duration::from_secs(9)),
            ..Default::default()
        };
        let c = Config::resolve(&args).unwrap();
        assert_eq!((c.connections.max_connections, c.connections.body_timeout), (8, Duration::from_secs(9)));
        let zero = ServeArgs { idle_timeout: Some(Duration::ZERO), ..Default::default() };
        assert!(format!("{:#}", Config::resolve(&zero).unwrap_err()).contains("--idle-timeout"));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_prices_come_from_the_flag_else_the_file_else_the_defaults() {
        assert_eq!(Config::resolve(&ServeArgs::default()).unwrap().prices, Prices::default());
        let dir = std::env::temp_dir().join(format!("scribe-config-prices-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("scribe.toml");
        std::fs::write(&file, "price_direct_per_minute = 4\nprice_translation_per_minute = 0\n").unwrap();
        let c = Config::resolve(&ServeArgs { config: Some(file.clone()), ..Default::default() }).unwrap();
        assert_eq!(c.prices, Prices { direct_per_minute: 4, perfect_per_minute: 150, translation_per_minute: 0 });
        let args = ServeArgs { config: Some(file), price_direct_per_minute: Some(7), ..Default::default() };
        assert_eq!(Config::resolve(&args).unwrap().prices.direct_per_minute, 7);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_device_comes_from_the_flag_else_the_file_else_the_cpu_and_sets_the_default_compute_type() {
        let c = Config::resolve(&ServeArgs::default()).unwrap();
        assert_eq!((c.device, c.compute_type), (DeviceChoice::Cpu, ComputeType::Int8));
        let dir = std::env::temp_dir().join(format!("scribe-config-device-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("scribe.toml");
        std::fs::write(&file, "device = \"vulkan:1\"\n").unwrap();
        let c = Config::resolve(&ServeArgs { config: Some(file.clone()), ..Default::default() }).unwrap();
        assert_eq!((c.device, c.compute_type), (DeviceChoice::Vulkan(Some(1)), ComputeType::Float16));
        let args = ServeArgs { config: Some(file.clone()), device: Some(DeviceChoice::Cpu), ..Default::default() };
        assert_eq!(Config::resolve(&args).unwrap().device, DeviceChoice::Cpu);
        std::fs::write(&file, "device = \"gpu\"\n").unwrap();
        let err =
            format!("{:#}", Config::resolve(&ServeArgs { config: Some(file), ..Default::default() }).unwrap_err());
        assert!(err.contains("unknown device"), "{err}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn channels_as_speakers_come_from_the_flag_else_the_file_else_off() {
        assert!(!Config::resolve(&ServeArgs::default()).unwrap().speaker_channels);
        let dir = std::env::temp_dir().join(format!("scribe-config-channels-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("scribe.toml");
        std::fs::write(&file, "speaker_channels = true\n").unwrap();
        assert!(
            Config::resolve(&ServeArgs { config: Some(file.clone()), ..Default::default() }).unwrap().speaker_channels
        );
        let args = ServeArgs { config: Some(file), speaker_channels: Some(false), ..Default::default() };
        assert!(!Config::resolve(&args).unwrap().speaker_channels);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_live_pause_comes_from_the_flag_else_the_file_else_half_a_second_and_is_bounded() {
        assert_eq!(Config::resolve(&ServeArgs::default()).unwrap().live.pause, Duration::from_millis(500));
        let dir = std::env::temp_dir().join(format!("scribe-config-pause-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("scribe.toml");
        std::fs::write(&file, "live_pause = \"700ms\"\n").unwrap();
        let from_file = Config::resolve(&ServeArgs { config: Some(file.clone()), ..Default::default() }).unwrap();
        assert_eq!(from_file.live.pause, Duration::from_millis(700));
        let args = ServeArgs { config: Some(file), live_pause: Some(Duration::from_secs(1)), ..Default::default() };
        assert_eq!(Config::resolve(&args).unwrap().live.pause, Duration::from_secs(1));
        for outside in [Duration::from_millis(100), Duration::from_secs(6)] {
            let err = Config::resolve(&ServeArgs { live_pause: Some(outside), ..Default::default() }).unwrap_err();
            assert!(format!("{err:#}").contains("--live-pause must be from 200ms to 5s"), "{err:#}");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn unknown_keys_in_the_file_are_an_error() {
        let dir = std::env::temp_dir().join(format!("scribe-config-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("scribe.toml");
        std::fs::write(&file, "prot = 9000\n").unwrap();
        let err = Config::resolve(&ServeArgs { config: Some(file), ..Default::default() }).unwrap_err();
        assert!(format!("{err:#}").contains("prot"), "{err:#}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
