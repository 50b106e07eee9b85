//! `scribe serve`: wires the event store, the speech engine, the actors, the projections and the
//! HTTP edge into one process, and stops them in order on SIGTERM or Ctrl-C.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use poem::listener::{Acceptor, Listener, TcpListener};
use scribe_actors::accounts;
use scribe_actors::cluster::ClusterSettings;
use scribe_actors::runtime::{RuntimeSettings, Services};
use scribe_actors::speech_model::{SpeechModel, SpeechModels};
use scribe_api::connections::GuardedAcceptor;
use scribe_api::{ApiSettings, ApiState};
use scribe_domain::capabilities::Capabilities;
use scribe_domain::languages::{AUTO_DETECT_WHISPER, DIRECT_TARGET_LANGUAGES};
use scribe_projections::{Projection, ReadModels};
use scribe_translate::TranslationModels;
use scribe_whisper::engine::{Engine, EngineConfig};

use crate::config::{Config, ServeArgs};

/// How long in-flight requests get to finish after a stop signal.
const GRACE: Duration = Duration::from_secs(8);

pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    init_tracing();
    let config = Config::resolve(&args)?;
    let repaired = crate::data_dir::prepare(&config.data_dir)?;
    if !repaired.is_empty() {
        let shown: Vec<String> = repaired.iter().take(5).map(|p| p.display().to_string()).collect();
        let more = if repaired.len() > 5 { format!(" and {} more", repaired.len() - 5) } else { String::new() };
        tracing::warn!(
            count = repaired.len(),
            "the data directory was readable by other users; made owner-only: {}{more}",
            shown.join(", ")
        );
    }

    let (model, multilingual) = load_model(&config).await?;
    let (text_models, capabilities) = load_translation(&config, multilingual).await?;
    let store = config
        .event_store
        .open()
        .await
        .with_context(|| format!("cannot open the event store {}", config.event_store))?;
    if let Some(key) = accounts::first_start(store.as_ref(), accounts::DEFAULT_INITIAL_CREDIT_CENTS).await? {
        println!("Created account '{}'. Its API key, shown only this once:", key.user_name);
        println!("{}", key.api_key);
        println!("Callback signing secret: {}", key.webhook_secret);
    }

    let read = ReadModels::open(&config.data_dir)?;
    let projection = Projection::start(store.clone(), read.clone()).await?;
    let cluster = match config.shared_store() {
        true => {
            let node = scribe_actors::cluster::node_id(&config.data_dir)
                .with_context(|| format!("cannot read or create the node id in {}", config.data_dir.display()))?;
            tracing::info!(%node, media_dir = %config.media_dir.display(), "sharing the event store: work is claimed before it runs");
            Some(ClusterSettings { node, lease: config.claim_lease, asr_slots: config.asr_workers })
        }
        false => None,
    };
    std::fs::create_dir_all(&config.media_dir)
        .with_context(|| format!("cannot create the media directory {}", config.media_dir.display()))?;
    let settings = RuntimeSettings {
        data_dir: config.media_dir.clone(),
        node_dir: config.data_dir.clone(),
        cluster,
        allow_private_urls: config.allow_private_urls,
        asr_workers: config.asr_workers,
        max_downloads: 4,
        download_deadline: config.download_deadline,
        max_duration: config.max_duration,
        job_idle: scribe_actors::jobs::DEFAULT_IDLE,
        callbacks: config.callbacks.clone(),
        prices: config.prices,
        retention: config.retention,
        live: config.live.clone(),
        speaker_channels: config.speaker_channels,
        models: Arc::new(SpeechModels::discover(model, &config.models_dir)),
        text_models,
    };
    let services = Services::start(store, settings).await?;
    let acceptor = TcpListener::bind((config.bind, config.port))
        .into_acceptor()
        .await
        .with_context(|| format!("cannot listen on {}:{}", config.bind, config.port))?;
    let addr = acceptor.local_addr().into_iter().next().and_then(|a| a.as_socket_addr().copied());
    let listening = addr.map_or_else(|| format!("http://{}:{}", config.bind, config.port), |a| format!("http://{a}"));
    // Signed download links point at the configured public URL, else at the address we listen on.
    let public_url = config.public_url.clone().unwrap_or_else(|| listening.clone());
    let api_settings = ApiSettings {
        public_url,
        rate_per_second: config.rate_per_second,
        rate_burst: config.rate_burst,
        auth_failures_per_minute: config.auth_failures_per_minute,
        auth_failures_burst: config.auth_failures_burst,
        task_lease: config.task_lease,
        capabilities,
        retention: config.retention,
        connections: config.connections,
        openai_wait: config.openai_wait,
        speaker_channels: config.speaker_channels,
        ..ApiSettings::default()
    };
    let api_state = ApiState::new(&services, read, api_settings);
    let open_connections = api_state.connections.clone();
    let app = scribe_api::app(api_state);
    println!("scribe listening on {listening} (API under /api, Swagger UI at /api/docs)");
    tracing::info!(data_dir = %config.data_dir.display(), event_store = %config.event_store, model = %config.model_dir.display(), "service started");

    // Slow clients cannot hold connections (head, idle and body timeouts, a cap on connections),
    // and hyper's own refusals (431, 414, malformed requests) answer with the API's error body.
    let guarded = GuardedAcceptor::new(acceptor, config.connections, open_connections);
    poem::Server::new_with_acceptor(scribe_api::refusals::WordedRefusals::new(guarded))
        .run_with_graceful_shutdown(app, stop_signal(), Some(GRACE))
        .await
        .context("the HTTP server failed")?;

    tracing::info!("stopping");
    services.stop();
    projection.stop().await;
    tracing::info!("stopped");
    Ok(())
}

/// Loads the text translation models of `translation/en-xx/` in the models folder (each is
/// checked by translating a sentence), and says what the server can do with them and the speech
/// model. A model folder that cannot be used is reported, not offered; the server still starts.
async fn load_translation(
    config: &Config,
    multilingual: bool,
) -> anyhow::Result<(TranslationModels, Arc<Capabilities>)> {
    let models_dir = config.models_dir.clone();
    let (models, unusable) = tokio::task::spawn_blocking(move || {
        let wanted: Vec<&str> = DIRECT_TARGET_LANGUAGES.iter().copied().filter(|c| *c != "en").collect();
        TranslationModels::load(&models_dir, &wanted)
    })
    .await
    .context("loading the translation models panicked")?;
    for u in &unusable {
        tracing::warn!(dir = %u.dir.display(), error = %u.error, "translation model folder not used");
        eprintln!("warning: translation model folder {} is not used: {}", u.dir.display(), u.error);
    }
    let targets = models.targets();
    let targets: Vec<&str> = targets.iter().map(String::as_str).collect();
    let capabilities = Capabilities::new(multilingual, &AUTO_DETECT_WHISPER, &targets);
    tracing::info!(targets = ?capabilities.target_codes(), "direct translation targets");
    Ok((models, Arc::new(capabilities)))
}

/// Loads the speech model once, so a missing or broken model stops the server now; it stays
/// loaded while there is work (see `--model-keep-alive`). Also says whether it is multilingual.
async fn load_model(config: &Config) -> anyhow::Result<(Arc<SpeechModel>, bool)> {
    let engine_config = EngineConfig {
        model_dir: config.model_dir.clone(),
        vad_path: Some(config.models_dir.join("silero_vad_16k.safetensors")),
        threads: None,
        compute_type: config.compute_type,
        device: config.device,
    };
    let to_load = engine_config.clone();
    let engine = tokio::task::spawn_blocking(move || Engine::load(&to_load))
        .await
        .context("loading the speech engine panicked")?
        .with_context(|| {
            format!(
                "cannot load the speech model from {} (install the models with `bash ops/setup.sh`, or point --model/--models-dir at them)",
                config.model_dir.display()
            )
        })?;
    let multilingual = engine.info().multilingual;
    Ok((SpeechModel::new(engine_config, config.model_keep_alive, Some(Arc::new(engine))), multilingual))
}

/// Resolves on SIGTERM or Ctrl-C.
async fn stop_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("a SIGTERM handler");
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
    tracing::info!("stop signal received; finishing requests in flight");
}

fn init_tracing() {
    use tracing_subscriber::EnvFilter;
    let setting = std::env::var("SCRIBE_LOG").unwrap_or_else(|_| "info".to_owned());
    // symphonia logs every file it cannot read at ERROR; an unreadable upload is the client's
    // mistake, answered with a 400 (and visible in the access log at debug), not a server
    // error. Its lines (every `symphonia*` target) are shown only when SCRIBE_LOG names it.
    let directives = if setting.contains("symphonia") { setting } else { format!("{setting},symphonia=off") };
    let filter = EnvFilter::try_new(&directives).unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}
