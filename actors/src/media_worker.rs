//! The media actor: fetches a job's `sourceUrl` into the media store and probes stored media for
//! its duration (charging a URL job for it), then records the outcome on the job (or fails it
//! with a message that says why).
//!
//! Each request runs as its own task, so a slow download never holds up a probe; downloads run
//! at most `max_downloads` at a time.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use scribe_domain::account::Prices;
use scribe_domain::ids::JobId;
use scribe_domain::job::{JobCommand, StoredMedia};
use tokio::sync::Semaphore;

use crate::billing::{ChargeError, charge_url_job};
use crate::clock::now_ms;
use crate::eventstore::EventStore;
use crate::jobs::Jobs;
use crate::media::{Fetcher, MediaStore};
use crate::pipeline::{StageDone, fail_and_report, report};

pub enum MediaMsg {
    Fetch { job_id: JobId, url: String, filename: String, done: StageDone },
    Probe { job_id: JobId, path: PathBuf, done: StageDone },
}

pub struct MediaActor;

pub struct MediaArgs {
    pub jobs: Jobs,
    pub store: MediaStore,
    pub fetcher: Fetcher,
    pub data_dir: PathBuf,
    pub max_downloads: usize,
    /// For charging URL jobs once their duration is known.
    pub event_store: Arc<dyn EventStore>,
    pub prices: Prices,
}

pub struct MediaState {
    jobs: Jobs,
    store: MediaStore,
    fetcher: Arc<Fetcher>,
    data_dir: PathBuf,
    downloads: Arc<Semaphore>,
    event_store: Arc<dyn EventStore>,
    prices: Prices,
}

impl Actor for MediaActor {
    type Msg = MediaMsg;
    type State = MediaState;
    type Arguments = MediaArgs;

    async fn pre_start(&self, _: ActorRef<MediaMsg>, args: MediaArgs) -> Result<MediaState, ActorProcessingErr> {
        Ok(MediaState {
            jobs: args.jobs,
            store: args.store,
            fetcher: Arc::new(args.fetcher),
            data_dir: args.data_dir,
            downloads: Arc::new(Semaphore::new(args.max_downloads.max(1))),
            event_store: args.event_store,
            prices: args.prices,
        })
    }

    async fn handle(&self, _: ActorRef<MediaMsg>, msg: MediaMsg, state: &mut MediaState) -> Result<(), ActorProcessingErr> {
        match msg {
            MediaMsg::Fetch { job_id, url, filename: _, done } => {
                let (jobs, store, fetcher, data_dir, permits) =
                    (state.jobs.clone(), state.store.clone(), state.fetcher.clone(), state.data_dir.clone(), state.downloads.clone());
                tokio::spawn(async move {
                    let _permit = permits.acquire_owned().await;
                    tracing::info!(%job_id, %url, "fetching media");
                    match fetcher.fetch_to_store(&url, &store, job_id.as_str()).await {
                        Ok(stored) => {
                            let media = StoredMedia { path: relative(&data_dir, &stored.path), bytes: stored.size };
                            if let Err(e) = jobs.execute(&job_id, JobCommand::RecordMediaStored { media, at_ms: now_ms() }).await {
                                tracing::warn!(%job_id, error = %e, "recording fetched media");
                            }
                            report(done);
                        }
                        Err(e) => {
                            tracing::info!(%job_id, error = %e, "media fetch failed");
                            fail_and_report(&jobs, done, format!("Could not fetch the media from sourceUrl: {e}"));
                        }
                    }
                });
            }
            MediaMsg::Probe { job_id, path, done } => {
                let (jobs, event_store, prices) = (state.jobs.clone(), state.event_store.clone(), state.prices);
                tokio::spawn(async move {
                    let probed = tokio::task::spawn_blocking(move || scribe_whisper::audio::probe(&path)).await;
                    match probed {
                        Ok(Ok(info)) => {
                            let duration_ms = (info.duration_s * 1000.0).round().max(0.0) as u64;
                            // A URL job is paid for now that its duration is known, before any
                            // transcription starts.
                            let charged = match jobs.state(&job_id).await {
                                Ok((job, _)) => charge_url_job(event_store.as_ref(), &prices, &job_id, &job, duration_ms).await,
                                Err(e) => Err(ChargeError::Store(e.to_string())),
                            };
                            match charged {
                                Ok(()) => {}
                                Err(ChargeError::Insufficient(msg)) => return fail_and_report(&jobs, done, msg),
                                Err(ChargeError::Store(e)) => {
                                    tracing::warn!(%job_id, error = %e, "charging a URL job; the stage runs again");
                                    return report(done);
                                }
                            }
                            if let Err(e) = jobs.execute(&job_id, JobCommand::RecordMediaProbed { duration_ms, at_ms: now_ms() }).await {
                                tracing::warn!(%job_id, error = %e, "recording probed media");
                            }
                            report(done);
                        }
                        Ok(Err(e)) => fail_and_report(&jobs, done, e.to_string()),
                        Err(e) => fail_and_report(&jobs, done, format!("Inspecting the media failed unexpectedly: {e}")),
                    }
                });
            }
        }
        Ok(())
    }
}

/// `path` relative to the data directory, as events record it.
pub fn relative(data_dir: &Path, path: &Path) -> String {
    path.strip_prefix(data_dir).unwrap_or(path).to_string_lossy().into_owned()
}
