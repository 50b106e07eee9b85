//! The media actor: fetches a job's `sourceUrl` into the media store and probes stored media for
//! its duration (the billing saga then applies the media-length rule and charges a URL job for
//! it), then records the outcome on the job (or fails it with a message that says why). It also
//! prepares the waveform peaks of media about to be processed, for the editor.
//!
//! Each request runs as its own task, so a slow download never holds up a probe. Downloads run
//! at most `max_downloads` at a time, shared fairly between accounts ([`FairQueue`]): the next
//! slot goes to the account with the fewest downloads running, and one account may hold every
//! slot but one, so another account's URL starts at once even while the first account's slow
//! servers drip (each download also has an overall deadline, see [`crate::media::FetchConfig`]).
//! A job deleted while its media downloads has its download stopped and its files removed.
//! Media longer than the operator's `--max-duration` is refused at probe, before a URL job is
//! charged, in the same append as its probed length (an upload that long is refused by the
//! billing saga before it becomes a job).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use scribe_domain::ids::{JobId, UserName};
use scribe_domain::job::{JobCommand, JobRefusal, StoredMedia};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::billing::Billing;
use crate::clock::now_ms;
use crate::command::CommandError;
use crate::fair_queue::FairQueue;
use crate::jobs::{Jobs, job_span};
use crate::media::{Fetcher, MediaStore, relative};
use crate::worker::{StageDone, fail_and_report, report};

pub enum MediaMsg {
    Fetch {
        job_id: JobId,
        owner: UserName,
        url: String,
        done: StageDone,
    },
    Probe {
        job_id: JobId,
        path: PathBuf,
        done: StageDone,
    },
    /// The job's media is ready for processing: compute its waveform peaks for the editor now
    /// (unless they are cached), so its first opening does not wait for them. Best effort: no
    /// stage waits for it, and the peaks endpoint computes them itself when they are missing.
    PreparePeaks {
        job_id: JobId,
        path: PathBuf,
    },
    /// The job was deleted: stop its download (or take it out of the line).
    Cancel(JobId),
    /// A download of this account ended; its slot goes to the next in line.
    DownloadEnded {
        owner: UserName,
        job_id: JobId,
    },
}

/// A download waiting for a slot.
struct FetchTask {
    job_id: JobId,
    url: String,
    done: StageDone,
}

pub struct MediaActor;

#[derive(Clone)]
pub struct MediaArgs {
    pub jobs: Jobs,
    pub store: MediaStore,
    pub fetcher: Fetcher,
    pub data_dir: PathBuf,
    pub max_downloads: usize,
    /// The media-length rule and the charge of a URL job, once its duration is known.
    pub billing: Billing,
}

pub struct MediaState {
    jobs: Jobs,
    store: MediaStore,
    fetcher: Arc<Fetcher>,
    data_dir: PathBuf,
    max_downloads: usize,
    /// Downloads waiting per account, and how many each account runs.
    downloads: FairQueue<UserName, FetchTask>,
    /// Running downloads, to stop one whose job is deleted.
    running: HashMap<JobId, CancellationToken>,
    billing: Billing,
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
            max_downloads: args.max_downloads.max(1),
            // Every slot but one: another account's download can always start.
            downloads: FairQueue::new(args.max_downloads.saturating_sub(1).max(1)),
            running: HashMap::new(),
            billing: args.billing,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<MediaMsg>,
        msg: MediaMsg,
        state: &mut MediaState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            MediaMsg::Fetch { job_id, owner, url, done } => {
                state.downloads.push(owner, FetchTask { job_id, url, done });
            }
            MediaMsg::DownloadEnded { owner, job_id } => {
                state.downloads.finished(&owner);
                state.running.remove(&job_id);
            }
            MediaMsg::Cancel(job_id) => {
                if let Some(token) = state.running.remove(&job_id) {
                    token.cancel();
                }
                for task in state.downloads.remove_waiting(|t| t.job_id == job_id) {
                    job_span(&task.job_id).in_scope(|| tracing::info!("download withdrawn: the job was deleted"));
                    report(task.done);
                }
            }
            MediaMsg::PreparePeaks { job_id, path } => {
                let store = state.store.clone();
                tokio::spawn(
                    async move {
                        match store.prepare_peaks(&path).await {
                            Ok(true) => tracing::debug!("waveform peaks prepared"),
                            Ok(false) => {}
                            // Undecodable media fails its processing stage with its own message;
                            // the editor then draws no waveform.
                            Err(e) => tracing::info!(error = %e, "waveform peaks not prepared"),
                        }
                    }
                    .instrument(job_span(&job_id)),
                );
            }
            MediaMsg::Probe { job_id, path, done } => {
                let (jobs, store, billing) = (state.jobs.clone(), state.store.clone(), state.billing.clone());
                let span = done.span();
                tokio::spawn(
                    async move {
                        // Recorded meanwhile (by an earlier run of this stage): nothing to do.
                        if let Ok((job, _)) = jobs.state(&job_id).await
                            && job.duration_ms.is_some()
                        {
                            return report(done);
                        }
                        let duration_ms = match store.probe(&path).await {
                            Ok(duration_ms) => duration_ms,
                            Err(e) => return fail_and_report(&jobs, done, e.to_string()),
                        };
                        // Too long, or (a URL job, paid for now that its duration is known, before
                        // any transcription starts) a balance that does not cover it: the job fails.
                        let fails_with = match billing.charge_probed(&job_id, duration_ms).await {
                            Ok(fails_with) => fails_with,
                            Err(e) => {
                                tracing::warn!(error = %e, "charging a URL job; the stage runs again");
                                return report(done);
                            }
                        };
                        // The length, and the refusal if any, in one append: the job shows the probed
                        // length, and no stage starts on refused media.
                        let cmd = JobCommand::RecordMediaProbed { duration_ms, fails_with, at_ms: now_ms() };
                        match jobs.execute(&job_id, cmd).await {
                            Ok(_) => {}
                            // The edge recorded the upload's duration in the meantime: the job has
                            // what it needs.
                            Err(CommandError::Refused(JobRefusal::AlreadyRecorded(what))) => {
                                tracing::debug!(what, "media duration already recorded")
                            }
                            Err(e) => tracing::warn!(error = %e, "recording probed media"),
                        }
                        report(done);
                    }
                    .instrument(span),
                );
            }
        }
        state.start_downloads(&myself);
        Ok(())
    }
}

impl MediaState {
    /// Starts waiting downloads while slots are free, fairly between accounts.
    fn start_downloads(&mut self, myself: &ActorRef<MediaMsg>) {
        while self.downloads.running() < self.max_downloads {
            let Some((owner, FetchTask { job_id, url, done })) = self.downloads.start_next() else { break };
            let cancel = CancellationToken::new();
            self.running.insert(job_id.clone(), cancel.clone());
            let (jobs, store, fetcher, data_dir, me) =
                (self.jobs.clone(), self.store.clone(), self.fetcher.clone(), self.data_dir.clone(), myself.clone());
            let span = done.span();
            tokio::spawn(
                async move {
                    // The URL may carry credentials (a signed link, someone's apiKey): log it without.
                    tracing::info!(url = %redacted(&url), %owner, "fetching media");
                    let fetched = tokio::select! {
                        fetched = fetcher.fetch_to_store(&url, &store, job_id.as_str()) => Some(fetched),
                        () = cancel.cancelled() => None,
                    };
                    match fetched {
                        // Dropping the download removed its temp file; anything committed goes too.
                        None => {
                            tracing::info!("download stopped: the job was deleted");
                            store.remove_files_of_deleted(job_id.as_str()).await;
                            report(done);
                        }
                        Some(Ok(stored)) => {
                            let media = StoredMedia { path: relative(&data_dir, &stored.path), bytes: stored.size };
                            match jobs.execute(&job_id, JobCommand::RecordMediaStored { media, at_ms: now_ms() }).await
                            {
                                Ok(_) => {}
                                Err(CommandError::Refused(JobRefusal::Deleted)) => {
                                    store.remove_files_of_deleted(job_id.as_str()).await
                                }
                                Err(e) => tracing::warn!(error = %e, "recording fetched media"),
                            }
                            report(done);
                        }
                        Some(Err(e)) => {
                            tracing::info!(error = %e, "media fetch failed");
                            fail_and_report(&jobs, done, format!("Could not fetch the media from sourceUrl: {e}"));
                        }
                    }
                    let _ = me.cast(MediaMsg::DownloadEnded { owner, job_id });
                }
                .instrument(span),
            );
        }
    }
}

/// `url` for a log line: without user name, password or query values, which may be secrets.
pub fn redacted(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else { return "(not a URL)".to_owned() };
    if !parsed.username().is_empty() {
        let _ = parsed.set_username("REDACTED");
    }
    if parsed.password().is_some() {
        let _ = parsed.set_password(Some("REDACTED"));
    }
    if parsed.query().is_some() {
        let names: Vec<String> = parsed.query_pairs().map(|(name, _)| name.into_owned()).collect();
        parsed.query_pairs_mut().clear().extend_pairs(names.iter().map(|n| (n.as_str(), "REDACTED")));
    }
    parsed.set_fragment(None);
    parsed.to_string()
}

#[cfg(test)]
mod tests {
    use super::redacted;

    #[test]
    fn logged_urls_keep_no_secrets() {
        assert_eq!(
            redacted("https://bob:pw@example.com/a.mp3?apiKey=sk_123&X-Amz-Signature=abc#t"),
            "https://REDACTED:REDACTED@example.com/a.mp3?apiKey=REDACTED&X-Amz-Signature=REDACTED"
        );
        assert_eq!(redacted("https://example.com/a.mp3"), "https://example.com/a.mp3");
        assert_eq!(redacted("sk_123 not a url"), "(not a URL)");
    }
}
