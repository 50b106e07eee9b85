//! The pipeline supervises its workers: a worker that dies is started again, and the stages it
//! had (queued or in its mailbox) run again, so every job still ends `DONE` or `ERROR` with an
//! `errorMsg`. With the real write side (SQLite event store, job actors, the tiny.en model) and
//! real speech; the ASR worker is killed while one job is being transcribed and another waits in
//! its queue.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::{jfk, models_dir};
use scribe_actors::callbacks::CallbackSettings;
use scribe_actors::runtime::{RuntimeSettings, Services, open_event_store};
use scribe_actors::speech_model::{SpeechModel, SpeechModels};
use scribe_domain::account::Prices;
use scribe_domain::ids::{JobId, UserName};
use scribe_domain::job::{JobCommand, JobState, StoredMedia};
use scribe_domain::kinds::JobStatus;
use scribe_domain::requests::JobParams;
use scribe_whisper::engine::EngineConfig;

const SETTLE: Duration = Duration::from_secs(600);

async fn start(data_dir: &Path) -> Services {
    let store = open_event_store(data_dir).unwrap();
    let config = EngineConfig {
        model_dir: models_dir().join("whisper-tiny.en"),
        vad_path: None,
        threads: None,
        compute_type: scribe_whisper::ComputeType::Float16,
        device: Default::default(),
    };
    let settings = RuntimeSettings {
        data_dir: data_dir.to_owned(),
        node_dir: data_dir.to_owned(),
        cluster: None,
        allow_private_urls: true,
        asr_workers: 1,
        max_downloads: 2,
        download_deadline: Duration::from_secs(600),
        max_duration: None,
        job_idle: Duration::from_secs(60),
        models: Arc::new(SpeechModels::single(SpeechModel::new(config, Duration::from_secs(60), None))),
        text_models: Default::default(),
        callbacks: CallbackSettings::default(),
        prices: Prices::default(),
        retention: None,
        live: Default::default(),
        speaker_channels: false,
    };
    Services::start(store, settings).await.unwrap()
}

/// Records an upload of the JFK clip the way the edge does: file in the media folder, one command.
async fn submit_upload(services: &Services, data_dir: &Path, id: &str) -> JobId {
    let job_id = JobId::parse(id).unwrap();
    let relative = format!("media/{id}.wav");
    std::fs::create_dir_all(data_dir.join("media")).unwrap();
    let bytes = std::fs::copy(jfk(), data_dir.join(&relative)).unwrap();
    let request = JobParams { language: Some("en".into()), ..JobParams::default() }.validate().unwrap();
    let cmd = JobCommand::SubmitUpload {
        job_id: job_id.clone(),
        owner: UserName::parse("ann").unwrap(),
        at_ms: 1_763_769_600_000,
        request,
        filename: "jfk.wav".into(),
        media: StoredMedia { path: relative, bytes },
        duration_ms: 11_000,
        awaited_on: None,
    };
    services.jobs.execute(&job_id, cmd).await.unwrap();
    job_id
}

async fn state(services: &Services, job_id: &JobId) -> JobState {
    services.jobs.state(job_id).await.unwrap().0
}

async fn wait_until(what: &str, timeout: Duration, mut done: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !done().await {
        assert!(Instant::now() < deadline, "{what} did not happen within {timeout:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_asr_worker_is_restarted_and_its_queued_job_still_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let services = start(dir.path()).await;
    let first = submit_upload(&services, dir.path(), "0192f6a4-7c1e-7d2a-9a55-000000000001").await;
    let second = submit_upload(&services, dir.path(), "0192f6a4-7c1e-7d2a-9a55-000000000002").await;

    // One worker: the first job is being transcribed, the second waits in the worker's queue.
    wait_until("the second job queued behind the first", Duration::from_secs(60), async || {
        services.asr_queue.load(Ordering::Relaxed) == 1
    })
    .await;
    let before = services.workers().await.unwrap().asr;
    before.get_cell().kill();

    // The pipeline starts a new worker, and the queued job runs on it.
    wait_until("a new ASR worker", Duration::from_secs(10), async || {
        services.workers().await.is_ok_and(|w| w.asr.get_id() != before.get_id())
    })
    .await;
    for job_id in [&first, &second] {
        wait_until("the job ending", SETTLE, async || {
            state(&services, job_id).await.status().is_some_and(JobStatus::is_terminal)
        })
        .await;
        let ended = state(&services, job_id).await;
        match ended.status() {
            Some(JobStatus::Done) => assert!(ended.transcript.is_some(), "{ended:?}"),
            Some(JobStatus::Error) => assert!(ended.error_msg.as_deref().is_some_and(|m| !m.is_empty()), "{ended:?}"),
            other => panic!("{job_id} ended {other:?}"),
        }
    }
    assert_eq!(
        state(&services, &second).await.status(),
        Some(JobStatus::Done),
        "the queued job ran again on the new worker"
    );
    services.stop();
}
