//! Sharing the work of one event store between several `scribe serve` nodes.
//!
//! Every node follows the whole log with its own pipeline, so every node sees every job. Before
//! a node runs a job's machine work it claims the stage on the job's stream (see
//! `scribe_domain::job::work_claim`): the append expects the version the node decided on, so
//! exactly one node wins, and the others wait until the job moves on or the winner's lease runs
//! out (a dead node's work continues elsewhere). The [`ClaimGate`] is the pipeline's side of
//! this: it decides whether a job's stage may start here, claims it when it is free, renews the
//! claims of the work running here, and takes no more recognitions than this node has workers
//! for, so idle nodes get the rest.
//!
//! A single node on the embedded SQLite store runs without a gate: nobody else can share it.

use std::collections::{HashSet, VecDeque};
use std::path::Path;
use std::time::Duration;

use ractor::DerivedActorRef;
use scribe_domain::ids::JobId;
use scribe_domain::job::work_claim::{CLAIMED_STAGES, ClaimStatus};
use scribe_domain::job::{JobCommand, JobRefusal, JobState, MediaSource, Stage};

use tracing::Instrument;

use crate::clock::now_ms;
use crate::command::CommandError;
use crate::jobs::{Jobs, job_span};

/// How long a claim lasts unless renewed (`--claim-lease`).
pub const DEFAULT_CLAIM_LEASE: Duration = Duration::from_secs(30);

/// The file in a node's data directory that holds its name.
const NODE_ID_FILE: &str = "node-id";

/// This node's part in a cluster.
#[derive(Debug, Clone)]
pub struct ClusterSettings {
    /// The node's name in claims: stable across restarts of the node (kept in its data
    /// directory), so a restarted node takes its own unfinished claims back at once.
    pub node: String,
    /// How long a claim lasts; the holder renews it every third of that.
    pub lease: Duration,
    /// Recognitions this node runs at once (its ASR workers): it claims no more than that.
    pub asr_slots: usize,
}

/// The node's name, from `<data_dir>/node-id`, created on first start as `<hostname>-<random>`.
pub fn node_id(data_dir: &Path) -> std::io::Result<String> {
    let path = data_dir.join(NODE_ID_FILE);
    match std::fs::read_to_string(&path) {
        Ok(id) if !id.trim().is_empty() => return Ok(id.trim().to_owned()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let host: String = host.trim().chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').take(40).collect();
    let random = &uuid::Uuid::new_v4().simple().to_string()[..8];
    let id = if host.is_empty() { random.to_owned() } else { format!("{host}-{random}") };
    std::fs::create_dir_all(data_dir)?;
    let temp = data_dir.join(format!("{NODE_ID_FILE}.tmp"));
    std::fs::write(&temp, format!("{id}\n"))?;
    std::fs::File::open(&temp)?.sync_all()?;
    std::fs::rename(&temp, &path)?;
    Ok(id)
}

/// What the pipeline does with a job's stage, as the gate says.
#[derive(Debug, PartialEq, Eq)]
pub enum Admission {
    /// This node holds the stage (or the stage needs no claim): run it.
    Run,
    /// Not now: a claim is under way, another node holds it, or no worker is free.
    Wait,
}

/// What the gate tells the pipeline about the claims it makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimNotice {
    /// A claim's append ended; `look_again`: the job may have moved on without a new event
    /// reaching the pipeline (a refused claim brings nothing through the log).
    Settled { job_id: JobId, look_again: bool },
    /// Look at the job's stage again (another node's lease ends, or a claim failed).
    LookAgain { job_id: JobId, stage: Stage },
}

/// The pipeline's claims on the work it runs. See the module documentation.
pub struct ClaimGate {
    settings: ClusterSettings,
    /// Where the gate's notices go (the pipeline).
    pipeline: DerivedActorRef<ClaimNotice>,
    /// Jobs whose claim is being appended.
    claiming: HashSet<JobId>,
    /// Jobs waiting for a free recognition worker on this node, oldest first.
    backlog: VecDeque<JobId>,
}

impl ClaimGate {
    pub fn new(settings: ClusterSettings, pipeline: DerivedActorRef<ClaimNotice>) -> ClaimGate {
        ClaimGate { settings, pipeline, claiming: HashSet::new(), backlog: VecDeque::new() }
    }

    pub fn settings(&self) -> &ClusterSettings {
        &self.settings
    }

    /// Whether the job's `stage` may run here now. When it is free, starts a claim (the pipeline
    /// hears back with [`ClaimNotice::Settled`], and the claim itself arrives through the log); when
    /// another node holds it, asks the pipeline to look again when that lease ends.
    /// `recognitions` is how many recognitions this node runs now.
    pub fn admit(
        &mut self,
        jobs: &Jobs,
        job_id: &JobId,
        state: &JobState,
        stage: Stage,
        recognitions: usize,
    ) -> Admission {
        let upload_waiting = stage == Stage::StoreMedia
            && !matches!(state.submission.as_ref().map(|s| &s.source), Some(MediaSource::Url { .. }));
        if upload_waiting || !CLAIMED_STAGES.contains(&stage) {
            // Nothing to run (the upload's own append records its file), or a single append
            // that the domain refuses to repeat: no claim needed.
            return Admission::Run;
        }
        let now = now_ms();
        match state.claim_status(&self.settings.node, now) {
            ClaimStatus::Mine { .. } => Admission::Run,
            ClaimStatus::Other { node, until_ms } => {
                job_span(job_id).in_scope(|| tracing::debug!(?stage, %node, "stage held by another node"));
                recheck_at(&self.pipeline, job_id, stage, until_ms);
                Admission::Wait
            }
            ClaimStatus::Free => {
                if self.claiming.contains(job_id) {
                    return Admission::Wait;
                }
                if is_recognition(stage) && recognitions + self.claiming_recognitions() >= self.settings.asr_slots {
                    if !self.backlog.contains(job_id) {
                        self.backlog.push_back(job_id.clone());
                    }
                    return Admission::Wait;
                }
                self.claiming.insert(job_id.clone());
                self.claim(jobs, job_id, stage, now);
                Admission::Wait
            }
        }
    }

    /// A claim's append ended; on a refusal or failure the pipeline looks again later.
    pub fn settled(&mut self, job_id: &JobId) {
        self.claiming.remove(job_id);
    }

    /// The jobs waiting for a recognition worker, to be offered again (a worker came free).
    pub fn take_backlog(&mut self) -> Vec<JobId> {
        self.backlog.drain(..).collect()
    }

    /// Renews the claims of the work running here whose lease is a third gone. A callback
    /// waiting for its next attempt is held until that attempt is due plus a lease.
    pub fn renew<'a>(&self, jobs: &Jobs, running: impl Iterator<Item = (&'a JobId, &'a JobState, Stage)>) {
        let lease = millis(self.settings.lease);
        let now = now_ms();
        for (job_id, state, stage) in running {
            // Our own claim on this stage, even one that ran out while we were slow (if nobody
            // took it meanwhile, the renewal is accepted; else the domain refuses it).
            let until_ms = match &state.claim {
                Some(c) if c.node == self.settings.node && c.stage == stage && state.stage() == stage => c.until_ms,
                _ => continue,
            };
            let mut until = now + lease;
            if stage == Stage::DeliverCallback {
                until = until.max(state.callback.next_attempt_at_ms.unwrap_or(0).saturating_add(lease));
            }
            if until_ms >= now + lease * 2 / 3 && until_ms >= until.saturating_sub(lease / 3) {
                continue; // plenty left
            }
            let (jobs, job_id, node) = (jobs.clone(), job_id.clone(), self.settings.node.clone());
            let span = job_span(&job_id);
            tokio::spawn(
                async move {
                    let cmd = JobCommand::ClaimWork { stage, node, until_ms: until, at_ms: now_ms() };
                    match jobs.execute(&job_id, cmd).await {
                        Ok(_) => {}
                        // The job moved on meanwhile: nothing left to hold.
                        Err(CommandError::Refused(JobRefusal::OutOfOrder(_) | JobRefusal::Deleted)) => {}
                        Err(e) => tracing::warn!(?stage, error = %e, "renewing the claim on a job's work"),
                    }
                }
                .instrument(span),
            );
        }
    }

    fn claiming_recognitions(&self) -> usize {
        // Claims are short appends; counting every one keeps the node from over-claiming.
        self.claiming.len()
    }

    fn claim(&self, jobs: &Jobs, job_id: &JobId, stage: Stage, now: u64) {
        let (pipeline, jobs, job_id) = (self.pipeline.clone(), jobs.clone(), job_id.clone());
        let span = job_span(&job_id);
        let cmd = JobCommand::ClaimWork {
            stage,
            node: self.settings.node.clone(),
            until_ms: now + millis(self.settings.lease),
            at_ms: now,
        };
        tokio::spawn(
            async move {
                // Whether the pipeline should look at the job again at once: the claim's own event
                // brings a won claim back through the log, but a refused one brings nothing.
                let mut look_again = false;
                match jobs.execute(&job_id, cmd).await {
                    Ok(_) => tracing::debug!(?stage, "claimed"),
                    Err(CommandError::Refused(JobRefusal::WorkHeldByOther { node, until_ms })) => {
                        tracing::debug!(?stage, %node, "another node claimed the stage first");
                        recheck_at(&pipeline, &job_id, stage, until_ms);
                    }
                    Err(CommandError::Refused(refusal)) => {
                        // The job moved on while the claim was made (an upload records its file and
                        // duration in one append): its next stage may be waiting for this claim to end.
                        tracing::debug!(?stage, %refusal, "claim not needed");
                        look_again = true;
                    }
                    Err(e) => {
                        tracing::warn!(?stage, error = %e, "claiming a job's work; trying again shortly");
                        recheck_at(&pipeline, &job_id, stage, now_ms() + 2_000);
                    }
                }
                let _ = pipeline.send_message(ClaimNotice::Settled { job_id, look_again });
            }
            .instrument(span),
        );
    }
}

/// Whether `stage` runs on a recognition worker.
pub fn is_recognition(stage: Stage) -> bool {
    matches!(stage, Stage::Transcribe | Stage::Translate)
}

/// Asks the pipeline to look at the job again just after `until_ms`.
fn recheck_at(pipeline: &DerivedActorRef<ClaimNotice>, job_id: &JobId, stage: Stage, until_ms: u64) {
    let wait = Duration::from_millis(until_ms.saturating_sub(now_ms()) + 100);
    let (pipeline, job_id) = (pipeline.clone(), job_id.clone());
    tokio::spawn(async move {
        tokio::time::sleep(wait).await;
        // A stopped pipeline reads the log again when it starts: nothing to look at.
        let _ = pipeline.send_message(ClaimNotice::LookAgain { job_id, stage });
    });
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
