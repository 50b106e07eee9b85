//! Service configuration: one value per setting, taken from the command line, else the
//! environment (`SCRIBE_*`), else a TOML file, else the embedded default. With no configuration
//! at all, `scribe serve` listens on 127.0.0.1:8080 and keeps everything under `./data`.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use scribe_actors::callbacks::CallbackSettings;
use scribe_actors::eventstore::StoreLocation;
use scribe_api::connections::ConnectionLimits;
use scribe_domain::account::Prices;
use serde::Deserialize;

/// How long an idle server keeps the speech model in memory.
pub const DEFAULT_MODEL_KEEP_ALIVE: Duration = Duration::from_secs(300);

/// Settings given on the command line or in the environment; `None` means "not given here".
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ServeArgs {
    /// TOML file with any of the settings below (keys as the long flags, with `_` for `-`).
    #[arg(long, env = "SCRIBE_CONFIG")]
    pub config: Option<PathBuf>,
    /// Address to listen on.
    #[arg(long, env = "SCRIBE_BIND")]
    pub bind: Option<IpAddr>,
    /// Port to listen on.
    #[arg(long, env = "SCRIBE_PORT")]
    pub port: Option<u16>,
    /// Directory for the event store, media and transcripts.
    #[arg(long, env = "SCRIBE_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Event store: `postgres://user:password@host/db` (PostgreSQL) or `esdb://host:2113` /
    /// `kurrentdb://...` (KurrentDB); default: the SQLite file `events.sqlite3` in the data directory.
    #[arg(long, env = "SCRIBE_EVENT_STORE")]
    pub event_store: Option<String>,
    /// Allow sourceUrl and callbackUrl to point at loopback, private and link-local addresses.
    #[arg(long, env = "SCRIBE_ALLOW_PRIVATE_URLS")]
    pub allow_private_urls: Option<bool>,
    /// Directory holding the models installed by `ops/setup.sh`.
    #[arg(long, env = "SCRIBE_MODELS_DIR")]
    pub models_dir: Option<PathBuf>,
    /// Whisper model directory (default: `<models-dir>/whisper-base`).
    #[arg(long, env = "SCRIBE_MODEL_DIR")]
    pub model_dir: Option<PathBuf>,
    /// Number of transcriptions run at once (each uses every core).
    #[arg(long, env = "SCRIBE_ASR_WORKERS")]
    pub asr_workers: Option<usize>,
    /// Public base URL of this server, used in signed download links (default: http://bind:port).
    #[arg(long, env = "SCRIBE_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Longest waits before the callback retries, comma-separated; the last one repeats
    /// (default: 10s,30s,1m,5m,15m,1h). Each real wait is drawn between zero and that value.
    #[arg(long, env = "SCRIBE_CALLBACK_RETRIES", value_delimiter = ',', value_parser = humantime::parse_duration)]
    pub callback_retries: Option<Vec<Duration>>,
    /// How long the speech model stays in memory with no transcription to do (default: 5m;
    /// `0s` releases it after every job).
    #[arg(long, env = "SCRIBE_MODEL_KEEP_ALIVE", value_parser = humantime::parse_duration)]
    pub model_keep_alive: Option<Duration>,
    /// How long after a job ends its callback is still retried (default: 26h).
    #[arg(long, env = "SCRIBE_CALLBACK_MAX_AGE", value_parser = humantime::parse_duration)]
    pub callback_max_age: Option<Duration>,
    /// Requests per second each API key may make, sustained (default: 20); past it, HTTP 429.
    #[arg(long, env = "SCRIBE_RATE_PER_SECOND")]
    pub rate_per_second: Option<NonZeroU32>,
    /// Requests each API key may make in a burst above that rate (default: 50).
    #[arg(long, env = "SCRIBE_RATE_BURST")]
    pub rate_burst: Option<NonZeroU32>,
    /// Failed authentications (an unknown or empty apiKey) each client address may make per
    /// minute, sustained (default: 60); past the burst, HTTP 429. The address is the TCP peer:
    /// X-Forwarded-For is not trusted.
    #[arg(long, env = "SCRIBE_AUTH_FAILURES_PER_MINUTE")]
    pub auth_failures_per_minute: Option<NonZeroU32>,
    /// Failed authentications each client address may make in a burst (default: 100).
    #[arg(long, env = "SCRIBE_AUTH_FAILURES_BURST")]
    pub auth_failures_burst: Option<NonZeroU32>,
    /// How long a transcriber's or translator's claim on a task lasts; every save renews it
    /// (default: 2h). When it runs out the task returns to the queue with its saved draft.
    #[arg(long, env = "SCRIBE_TASK_LEASE", value_parser = humantime::parse_duration)]
    pub task_lease: Option<Duration>,
    /// Longest a whole sourceUrl download may take, redirects included (default: 30m). A slower
    /// server fails its job with an errorMsg saying how much it sent in that time.
    #[arg(long, env = "SCRIBE_DOWNLOAD_DEADLINE", value_parser = humantime::parse_duration)]
    pub download_deadline: Option<Duration>,
    /// Longest media accepted, e.g. `4h` (default: no limit). A longer upload is refused (HTTP
    /// 400 on `file`, nothing charged); a longer sourceUrl fails its job when it is probed, with
    /// an errorMsg giving the limit and the length.
    #[arg(long, env = "SCRIBE_MAX_DURATION", value_parser = humantime::parse_duration)]
    pub max_duration: Option<Duration>,
    /// Price of machine transcription (`direct` jobs), in cents per started minute of audio
    /// (default: 10). 0 with the two below makes everything free.
    #[arg(long, env = "SCRIBE_PRICE_DIRECT_PER_MINUTE")]
    pub price_direct_per_minute: Option<u64>,
    /// Price of human transcription (`perfect` jobs), in cents per started minute (default: 150).
    #[arg(long, env = "SCRIBE_PRICE_PERFECT_PER_MINUTE")]
    pub price_perfect_per_minute: Option<u64>,
    /// Added for `translatedSubtitles` (machine translation of direct jobs, human translation of
    /// perfect ones), in cents per started minute (default: 50).
    #[arg(long, env = "SCRIBE_PRICE_TRANSLATION_PER_MINUTE")]
    pub price_translation_per_minute: Option<u64>,
    /// How long finished jobs' media and transcripts are kept, e.g. `30d` (default: until the
    /// owner deletes them). A job may ask for less with `deleteAfterSeconds`. An expired job
    /// answers 410; its history (`scribe replay`) keeps every event, `JobExpired` last.
    #[arg(long, env = "SCRIBE_RETENTION", value_parser = humantime::parse_duration)]
    pub retention: Option<Duration>,
    /// Directory for job files (media, transcripts, documents) and the download-link key. Every
    /// node sharing one event store must mount the same one (default: the data directory).
    #[arg(long, env = "SCRIBE_MEDIA_DIR")]
    pub media_dir: Option<PathBuf>,
    /// When nodes share an event store: how long a node's claim on a job's work lasts unless
    /// renewed (default: 30s). A dead node's work continues on another node after this.
    #[arg(long, env = "SCRIBE_CLAIM_LEASE", value_parser = humantime::parse_duration)]
    pub claim_lease: Option<Duration>,
    /// Longest a request's line and headers may take to arrive, from the connection's opening
    /// (or a later request's first byte); slower connections are closed (default: 30s).
    #[arg(long, env = "SCRIBE_HEADER_READ_TIMEOUT", value_parser = humantime::parse_duration)]
    pub header_read_timeout: Option<Duration>,
    /// Longest a keep-alive connection may stay silent between requests (default: 60s).
    #[arg(long, env = "SCRIBE_IDLE_TIMEOUT", value_parser = humantime::parse_duration)]
    pub idle_timeout: Option<Duration>,
    /// Longest a request body may go without sending a byte; the request then ends with 408
    /// (default: 60s). Slow uploads that keep moving are never cut.
    #[arg(long, env = "SCRIBE_BODY_TIMEOUT", value_parser = humantime::parse_duration)]
    pub body_timeout: Option<Duration>,
    /// Connections served at once (default: 512); more wait in the listen queue until one closes.
    #[arg(long, env = "SCRIBE_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
}

/// The TOML file's shape: the same settings, all optional.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    bind: Option<IpAddr>,
    port: Option<u16>,
    data_dir: Option<PathBuf>,
    event_store: Option<String>,
    allow_private_urls: Option<bool>,
    models_dir: Option<PathBuf>,
    model_dir: Option<PathBuf>,
    asr_workers: Option<usize>,
    public_url: Option<String>,
    #[serde(default, deserialize_with = "durations")]
    callback_retries: Option<Vec<Duration>>,
    #[serde(default, deserialize_with = "duration")]
    callback_max_age: Option<Duration>,
    #[serde(default, deserialize_with = "duration")]
    model_keep_alive: Option<Duration>,
    rate_per_second: Option<NonZeroU32>,
    rate_burst: Option<NonZeroU32>,
    auth_failures_per_minute: Option<NonZeroU32>,
    auth_failures_burst: Option<NonZeroU32>,
    #[serde(default, deserialize_with = "duration")]
    task_lease: Option<Duration>,
    #[serde(default, deserialize_with = "duration")]
    download_deadline: Option<Duration>,
    #[serde(default, deserialize_with = "duration")]
    max_duration: Option<Duration>,
    price_direct_per_minute: Option<u64>,
    price_perfect_per_minute: Option<u64>,
    price_translation_per_minute: Option<u64>,
    #[serde(default, deserialize_with = "duration")]
    retention: Option<Duration>,
    media_dir: Option<PathBuf>,
    #[serde(default, deserialize_with = "duration")]
    claim_lease: Option<Duration>,
    #[serde(default, deserialize_with = "duration")]
    header_read_timeout: Option<Duration>,
    #[serde(default, deserialize_with = "duration")]
    idle_timeout: Option<Duration>,
    #[serde(default, deserialize_with = "duration")]
    body_timeout: Option<Duration>,
    max_connections: Option<usize>,
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
        let file = match &args.config {
            Some(path) => read_file(path)?,
            None => FileConfig::default(),
        };
        let connections = connection_limits(args, &file)?;
        let prices = prices(args, &file);
        let bind = args.bind.or(file.bind).unwrap_or(IpAddr::from([127, 0, 0, 1]));
        let port = args.port.or(file.port).unwrap_or(8080);
        let data_dir = args.data_dir.clone().or(file.data_dir).unwrap_or_else(|| PathBuf::from("data"));
        let event_store =
            StoreLocation::from_setting(args.event_store.as_deref().or(file.event_store.as_deref()), &data_dir)?;
        let media_dir = args.media_dir.clone().or(file.media_dir).unwrap_or_else(|| data_dir.clone());
        let claim_lease = args.claim_lease.or(file.claim_lease).unwrap_or(scribe_actors::cluster::DEFAULT_CLAIM_LEASE);
        if claim_lease < Duration::from_secs(1) {
            anyhow::bail!("--claim-lease must be at least 1s (it is renewed every third of it)");
        }
        let models_dir = args.models_dir.clone().or(file.models_dir).unwrap_or_else(default_models_dir);
        let model_dir = args.model_dir.clone().or(file.model_dir).unwrap_or_else(|| models_dir.join("whisper-base"));
        let asr_workers = args.asr_workers.or(file.asr_workers).unwrap_or(1).max(1);
        let public_url = args.public_url.clone().or(file.public_url);
        let defaults = scribe_api::ApiSettings::default();
        let mut callbacks = CallbackSettings::default();
        if let Some(schedule) = args.callback_retries.clone().or(file.callback_retries) {
            callbacks.schedule = schedule;
        }
        if let Some(max_age) = args.callback_max_age.or(file.callback_max_age) {
            callbacks.max_age = max_age;
        }
        Ok(Config {
            bind,
            port,
            data_dir,
            event_store,
            allow_private_urls: args.allow_private_urls.or(file.allow_private_urls).unwrap_or(false),
            models_dir,
            model_dir,
            asr_workers,
            public_url: public_url.map(|u| u.trim_end_matches('/').to_string()),
            callbacks,
            model_keep_alive: args.model_keep_alive.or(file.model_keep_alive).unwrap_or(DEFAULT_MODEL_KEEP_ALIVE),
            rate_per_second: args.rate_per_second.or(file.rate_per_second).unwrap_or(defaults.rate_per_second),
            rate_burst: args.rate_burst.or(file.rate_burst).unwrap_or(defaults.rate_burst),
            auth_failures_per_minute: args
                .auth_failures_per_minute
                .or(file.auth_failures_per_minute)
                .unwrap_or(defaults.auth_failures_per_minute),
            auth_failures_burst: args
                .auth_failures_burst
                .or(file.auth_failures_burst)
                .unwrap_or(defaults.auth_failures_burst),
            task_lease: args.task_lease.or(file.task_lease).unwrap_or(defaults.task_lease),
            download_deadline: args
                .download_deadline
                .or(file.download_deadline)
                .unwrap_or(scribe_actors::media::fetch::DEFAULT_DOWNLOAD_DEADLINE),
            max_duration: args.max_duration.or(file.max_duration),
            prices,
            retention: args.retention.or(file.retention),
            media_dir,
            claim_lease,
            connections,
        })
    }
}

/// The prices: each from the flag, else the file, else the default.
fn prices(args: &ServeArgs, file: &FileConfig) -> Prices {
    let defaults = Prices::default();
    Prices {
        direct_per_minute: args
            .price_direct_per_minute
            .or(file.price_direct_per_minute)
            .unwrap_or(defaults.direct_per_minute),
        perfect_per_minute: args
            .price_perfect_per_minute
            .or(file.price_perfect_per_minute)
            .unwrap_or(defaults.perfect_per_minute),
        translation_per_minute: args
            .price_translation_per_minute
            .or(file.price_translation_per_minute)
            .unwrap_or(defaults.translation_per_minute),
    }
}

/// The connection limits: each from the flag, else the file, else the default; none may be zero.
fn connection_limits(args: &ServeArgs, file: &FileConfig) -> anyhow::Result<ConnectionLimits> {
    let defaults = ConnectionLimits::default();
    let limits = ConnectionLimits {
        header_read_timeout: args
            .header_read_timeout
            .or(file.header_read_timeout)
            .unwrap_or(defaults.header_read_timeout),
        idle_timeout: args.idle_timeout.or(file.idle_timeout).unwrap_or(defaults.idle_timeout),
        body_timeout: args.body_timeout.or(file.body_timeout).unwrap_or(defaults.body_timeout),
        max_connections: args.max_connections.or(file.max_connections).unwrap_or(defaults.max_connections),
    };
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
    Ok(limits)
}

/// Where the operator's tools (`replay`, `keys`, `balance`, `rebuild`) find the event store: the
/// same settings as `scribe serve`, from the same places (flag, environment, TOML file).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct StoreArgs {
    /// TOML file of `scribe serve` (only `data_dir` and `event_store` are read here).
    #[arg(long, env = "SCRIBE_CONFIG")]
    pub config: Option<PathBuf>,
    /// Data directory (default: ./data).
    #[arg(long, env = "SCRIBE_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Event store URL (postgres://..., esdb://...); default: the SQLite file in the data directory.
    #[arg(long, env = "SCRIBE_EVENT_STORE")]
    pub event_store: Option<String>,
}

impl StoreArgs {
    /// The data directory and the event store these settings name.
    pub fn resolve(&self) -> anyhow::Result<(PathBuf, StoreLocation)> {
        let file = match &self.config {
            Some(path) => read_file(path)?,
            None => FileConfig::default(),
        };
        let data_dir = self.data_dir.clone().or(file.data_dir).unwrap_or_else(|| PathBuf::from("data"));
        let location =
            StoreLocation::from_setting(self.event_store.as_deref().or(file.event_store.as_deref()), &data_dir)?;
        Ok((data_dir, location))
    }
}

/// `./models`, where `ops/setup.sh` installs the models unless told otherwise.
pub fn default_models_dir() -> PathBuf {
    std::env::var_os("SCRIBE_MODELS_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("models"))
}

/// A TOML duration in humantime's words ("90s", "1h 30m").
fn duration<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    let text = String::deserialize(d)?;
    humantime::parse_duration(&text).map(Some).map_err(serde::de::Error::custom)
}

/// A TOML list of durations.
fn durations<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<Duration>>, D::Error> {
    let texts = Vec::<String>::deserialize(d)?;
    texts
        .iter()
        .map(|t| humantime::parse_duration(t).map_err(serde::de::Error::custom))
        .collect::<Result<_, _>>()
        .map(Some)
}

fn read_file(path: &Path) -> anyhow::Result<FileConfig> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read config file {}", path.display()))?;
    toml::from_str(&text).with_context(|| format!("invalid config file {}", path.display()))
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
