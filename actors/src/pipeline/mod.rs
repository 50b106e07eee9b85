//! The job pipeline: a process manager that follows the whole event log and starts the next
//! stage of every unfinished job — fetch the media, probe it, transcribe it (and have the media
//! worker prepare its waveform peaks for the editor meanwhile), complete it.
//!
//! It holds the state of unfinished jobs only (folded from their events with the pure domain
//! `evolve`), so memory follows the work in flight. It folds a whole append before it decides
//! what a job needs next (see `appends`): an upload's append records its file and duration with
//! the submission, so the upload's first dispatch is its recognition ([`DispatchCounts`] counts
//! the dispatches). On start it reads the log from the beginning without acting; once it has
//! caught up with the head it dispatches every job that is still waiting, which is how a crash
//! loses no accepted job: the log says where each job was. Workers report back through the job
//! actors (commands); the job actor refuses anything already recorded, so a stage run twice
//! after a crash appends nothing twice.
//!
//! The pipeline supervises its workers (media, ASR, callbacks): they are its linked children, and
//! one that dies is started again. No stage is left "in flight" by a worker that vanished: the
//! [`StageDone`] handed with each stage (the workers' contract, see `worker`) reports the stage
//! lost when it is dropped unreported (the worker's task panicked, the worker died with the stage
//! in its queue or mailbox), and the pipeline then runs the stage again, up to
//! `MAX_STAGE_ATTEMPTS` times before failing the job.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorCell, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use scribe_domain::ids::{JobId, job_id_of_stream};
use scribe_domain::job::{JobAggregate, JobCommand, JobEvent, JobState, MediaSource, Stage};
use scribe_domain::{Aggregate, VersionedEvent};
use scribe_eventstore::{EventStore, RecordedEvent};
use tracing::Instrument;

use crate::asr::{AsrActor, AsrArgs, AsrMsg, AsrTask, TaskKind};
use crate::callbacks::{CallbackActor, CallbackArgs, CallbackMsg};
use crate::checkpoint::{self, CheckpointFile, PipelineCheckpoint};
use crate::clock::now_ms;
use crate::cluster::{Admission, ClaimGate, ClaimNotice, ClusterSettings, is_recognition};
use crate::jobs::{Jobs, job_span};
use crate::media_worker::{MediaActor, MediaArgs, MediaMsg};
use crate::worker::{StageDone, StageReport, report};

mod appends;
mod dispatches;

use appends::follow_appends;
pub use dispatches::{DISPATCHED_STAGES, DispatchCounts};

/// How often a stage is started again when its worker ended without moving the job on.
const MAX_STAGE_ATTEMPTS: u32 = 3;

/// How long after a worker's report the pipeline checks that its outcome was recorded.
const RECHECK_AFTER: Duration = Duration::from_secs(5);

/// How long after a worker lost a stage the pipeline looks at the job again (time for a dead
/// worker to be started again first).
const RECHECK_LOST_AFTER: Duration = Duration::from_millis(500);

/// How long the pipeline waits before starting a dead worker again when the first try failed.
const RESTART_BACKOFF: Duration = Duration::from_secs(1);

/// How often leases on manual tasks are checked for expiry. An expired lease already lets
/// others claim the task; the sweep records the expiry in the job's history.
pub const LEASE_SWEEP_EVERY: Duration = Duration::from_secs(5);

pub enum PipelineMsg {
    /// The next events of the log, as the store delivered them together (whole appends).
    Events(Vec<RecordedEvent>),
    /// The subscription ended with an error; resubscribe after the last seen position.
    SubscriptionLost(String),
    /// A worker's report on the stage it was given (see `worker`).
    Worker(StageReport),
    /// Start a worker that died and could not be started again at once.
    RestartWorker(WorkerKind),
    /// The workers currently running (for operators and tests).
    Workers(RpcReplyPort<WorkerRefs>),
    /// See whether a job whose worker finished has moved on.
    Recheck(JobId, Stage),
    /// Record the expiry of task leases that ran out.
    SweepLeases,
    /// What the claim gate says about a claim on a job's work (cluster nodes only; see `cluster`).
    Claims(ClaimNotice),
    /// Renew the claims on the work running here, and offer waiting recognitions again.
    RenewClaims,
    /// Write the checkpoint (see `checkpoint`), if the pipeline moved since the last one.
    SaveCheckpoint,
}

impl From<StageReport> for PipelineMsg {
    fn from(report: StageReport) -> PipelineMsg {
        PipelineMsg::Worker(report)
    }
}

impl TryFrom<PipelineMsg> for StageReport {
    type Error = ();

    fn try_from(msg: PipelineMsg) -> Result<StageReport, ()> {
        match msg {
            PipelineMsg::Worker(report) => Ok(report),
            _ => Err(()),
        }
    }
}

impl From<ClaimNotice> for PipelineMsg {
    fn from(notice: ClaimNotice) -> PipelineMsg {
        PipelineMsg::Claims(notice)
    }
}

impl TryFrom<PipelineMsg> for ClaimNotice {
    type Error = ();

    fn try_from(msg: PipelineMsg) -> Result<ClaimNotice, ()> {
        match msg {
            PipelineMsg::Claims(notice) => Ok(notice),
            _ => Err(()),
        }
    }
}

pub struct Pipeline;

pub struct PipelineArgs {
    pub store: Arc<dyn EventStore>,
    pub jobs: Jobs,
    /// How to start each worker (again, after it died).
    pub workers: WorkerArgs,
    pub data_dir: PathBuf,
    /// Set when several nodes share the event store: work is claimed before it runs.
    pub cluster: Option<ClusterSettings>,
    /// Where the pipeline keeps its checkpoint; `None`: it reads the log from the start.
    pub checkpoint: Option<CheckpointFile>,
    /// Counted on every dispatch, for `/metrics`.
    pub dispatches: DispatchCounts,
}

/// The start arguments of the pipeline's workers, kept to start a dead one again.
#[derive(Clone)]
pub struct WorkerArgs {
    pub media: MediaArgs,
    pub asr: AsrArgs,
    pub callbacks: CallbackArgs,
}

/// The pipeline's workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerKind {
    Media,
    Asr,
    Callbacks,
}

impl WorkerKind {
    /// The worker that does the work of `stage`, if a worker does it.
    fn of_stage(stage: Stage) -> Option<WorkerKind> {
        match stage {
            Stage::StoreMedia | Stage::ProbeMedia => Some(WorkerKind::Media),
            Stage::Transcribe | Stage::Translate => Some(WorkerKind::Asr),
            Stage::DeliverCallback => Some(WorkerKind::Callbacks),
            _ => None,
        }
    }
}

/// The running workers.
#[derive(Clone)]
pub struct WorkerRefs {
    pub media: ActorRef<MediaMsg>,
    pub asr: ActorRef<AsrMsg>,
    pub callbacks: ActorRef<CallbackMsg>,
}

impl WorkerRefs {
    fn kind_of(&self, cell: &ActorCell) -> Option<WorkerKind> {
        let id = cell.get_id();
        if id == self.media.get_id() {
            Some(WorkerKind::Media)
        } else if id == self.asr.get_id() {
            Some(WorkerKind::Asr)
        } else if id == self.callbacks.get_id() {
            Some(WorkerKind::Callbacks)
        } else {
            None
        }
    }
}

pub struct PipelineState {
    args: PipelineArgs,
    workers: WorkerRefs,
    /// Unfinished jobs, as their events say.
    open: HashMap<JobId, JobState>,
    /// The stage each job was last sent to a worker for, while the worker runs.
    in_flight: HashMap<JobId, Stage>,
    /// Attempts per job at its current stage.
    attempts: HashMap<JobId, (Stage, u32)>,
    /// Last log position folded in.
    position: u64,
    /// Head of the log when the pipeline started; nothing is dispatched before reaching it.
    start_head: u64,
    live: bool,
    /// Translations whose source job was deleted, to fail once live.
    orphaned: Vec<JobId>,
    /// Claims on work, when this node shares the store with others.
    claims: Option<ClaimGate>,
    /// The stream version folded into each open job (to skip what a checkpoint already holds).
    versions: HashMap<JobId, u64>,
    /// Position of the last checkpoint written.
    saved_position: u64,
    /// Jobs being finished for a process of this node that is gone: live jobs whose interrupted
    /// session is finished (see `live::recording::recover`), jobs whose waiting request died.
    recovering: std::collections::HashSet<JobId>,
    /// When this pipeline started: a live session or a waiting request of a job submitted
    /// before then is gone.
    started_ms: u64,
}

impl Actor for Pipeline {
    type Msg = PipelineMsg;
    type State = PipelineState;
    type Arguments = PipelineArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<PipelineMsg>,
        args: PipelineArgs,
    ) -> Result<PipelineState, ActorProcessingErr> {
        let start_head = args.store.head_position().await?;
        let cell = myself.get_cell();
        let workers = WorkerRefs {
            media: spawn_media(&args.workers, &cell).await?,
            asr: spawn_asr(&args.workers, &cell).await?,
            callbacks: spawn_callbacks(&args.workers, &cell).await?,
        };
        // A checkpoint past the head belongs to another log (the store was replaced): ignore it.
        let saved: PipelineCheckpoint = args
            .checkpoint
            .as_ref()
            .and_then(CheckpointFile::load)
            .filter(|c: &PipelineCheckpoint| c.position <= start_head)
            .unwrap_or_default();
        let (mut open, mut versions) = (HashMap::new(), HashMap::new());
        for (job_id, job, version) in checkpoint::restore_jobs(args.store.as_ref(), &saved.open).await? {
            open.insert(job_id.clone(), job);
            versions.insert(job_id, version);
        }
        tracing::info!(
            position = saved.position,
            head = start_head,
            jobs = open.len(),
            "pipeline starts from its checkpoint"
        );
        follow_appends(
            args.store.clone(),
            saved.position,
            myself.clone(),
            PipelineMsg::Events,
            PipelineMsg::SubscriptionLost,
        );
        myself.send_interval(LEASE_SWEEP_EVERY, || PipelineMsg::SweepLeases);
        if args.checkpoint.is_some() {
            myself.send_interval(checkpoint::SAVE_EVERY, || PipelineMsg::SaveCheckpoint);
        }
        let live = start_head <= saved.position;
        if live {
            // Nothing after the checkpoint: resume every unfinished job now.
            tracing::info!(
                jobs = open.len(),
                "pipeline caught up with the log (at its checkpoint); resuming unfinished jobs"
            );
            for (job_id, job) in &open {
                let (job_id, stage) = (job_id.clone(), job.stage());
                let _ = myself.cast(PipelineMsg::Recheck(job_id, stage));
            }
        }
        let claims = args.cluster.clone().map(|settings| ClaimGate::new(settings, myself.get_derived()));
        if let Some(gate) = &claims {
            myself.send_interval(gate.settings().lease / 3, || PipelineMsg::RenewClaims);
        }
        Ok(PipelineState {
            args,
            workers,
            open,
            in_flight: HashMap::new(),
            attempts: HashMap::new(),
            position: saved.position,
            start_head,
            live,
            orphaned: Vec::new(),
            claims,
            versions,
            saved_position: saved.position,
            recovering: Default::default(),
            started_ms: now_ms(),
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<PipelineMsg>,
        msg: PipelineMsg,
        state: &mut PipelineState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            PipelineMsg::Events(events) => {
                // Every event first, then one decision per job: an append is folded whole.
                let mut touched: Vec<JobId> = Vec::new();
                for event in &events {
                    state.position = event.position;
                    if let Some(job_id) = state.fold(event)
                        && state.live
                        && !touched.contains(&job_id)
                    {
                        touched.push(job_id);
                    }
                }
                if !state.live && state.position >= state.start_head {
                    state.live = true;
                    let waiting: Vec<JobId> = state.open.keys().cloned().collect();
                    tracing::info!(jobs = waiting.len(), "pipeline caught up with the log; resuming unfinished jobs");
                    for job_id in waiting {
                        state.dispatch(&myself, &job_id).await;
                    }
                } else {
                    for job_id in touched {
                        state.dispatch(&myself, &job_id).await;
                    }
                }
                if state.live {
                    state.fail_orphaned_translations();
                }
            }
            PipelineMsg::SweepLeases => {
                if state.live {
                    state.sweep_leases();
                }
            }
            PipelineMsg::Worker(StageReport::Done(job_id, stage)) => {
                if state.in_flight.get(&job_id) == Some(&stage) {
                    state.in_flight.remove(&job_id);
                    if is_recognition(stage) {
                        state.offer_backlog(&myself).await;
                    }
                    // The worker's outcome reaches us as an event through the log, usually a few
                    // milliseconds after this report. Look again later: if the job has still not
                    // moved on, the worker could not record its outcome, and the stage runs again.
                    drop(myself.send_after(RECHECK_AFTER, move || PipelineMsg::Recheck(job_id, stage)));
                }
            }
            PipelineMsg::Worker(StageReport::Lost(job_id, stage)) => {
                if state.in_flight.get(&job_id) == Some(&stage) {
                    state.in_flight.remove(&job_id);
                    job_span(&job_id).in_scope(|| {
                        tracing::error!(?stage, "the worker of a stage ended without a report; the stage runs again")
                    });
                    drop(myself.send_after(RECHECK_LOST_AFTER, move || PipelineMsg::Recheck(job_id, stage)));
                }
            }
            PipelineMsg::Recheck(job_id, stage) | PipelineMsg::Claims(ClaimNotice::LookAgain { job_id, stage }) => {
                let stuck = state.open.get(&job_id).map(JobState::stage) == Some(stage);
                if stuck && !state.in_flight.contains_key(&job_id) {
                    state.dispatch(&myself, &job_id).await;
                }
            }
            PipelineMsg::RestartWorker(kind) => state.restart(&myself, kind).await,
            PipelineMsg::Workers(reply) => {
                let _ = reply.send(state.workers.clone());
            }
            PipelineMsg::Claims(ClaimNotice::Settled { job_id, look_again }) => {
                if let Some(gate) = &mut state.claims {
                    gate.settled(&job_id);
                }
                if look_again && state.live {
                    state.dispatch(&myself, &job_id).await;
                }
            }
            PipelineMsg::RenewClaims => {
                if let Some(gate) = &state.claims {
                    let running =
                        state.in_flight.iter().filter_map(|(id, stage)| Some((id, state.open.get(id)?, *stage)));
                    gate.renew(&state.args.jobs, running);
                }
                if state.live {
                    state.offer_backlog(&myself).await;
                }
            }
            PipelineMsg::SaveCheckpoint => {
                // Only once live: before that, translations to fail may still be pending.
                if let (Some(file), true) =
                    (&state.args.checkpoint, state.live && state.position > state.saved_position)
                {
                    let open = state.versions.iter().map(|(id, v)| (id.to_string(), *v)).collect();
                    file.save(&PipelineCheckpoint { position: state.position, open }).await;
                    state.saved_position = state.position;
                }
            }
            PipelineMsg::SubscriptionLost(reason) => {
                tracing::error!(%reason, position = state.position, "log subscription lost; resubscribing");
                tokio::time::sleep(Duration::from_millis(500)).await;
                follow_appends(
                    state.args.store.clone(),
                    state.position,
                    myself,
                    PipelineMsg::Events,
                    PipelineMsg::SubscriptionLost,
                );
            }
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<PipelineMsg>,
        event: SupervisionEvent,
        state: &mut PipelineState,
    ) -> Result<(), ActorProcessingErr> {
        let (cell, why) = match &event {
            SupervisionEvent::ActorFailed(cell, error) => (cell, format!("failed: {error}")),
            SupervisionEvent::ActorTerminated(cell, _, reason) => {
                (cell, format!("stopped: {}", reason.as_deref().unwrap_or("no reason given")))
            }
            _ => return Ok(()),
        };
        if let Some(kind) = state.workers.kind_of(cell) {
            tracing::error!(worker = ?kind, %why, "a pipeline worker died; starting it again");
            state.restart(&myself, kind).await;
        }
        Ok(())
    }

    async fn post_stop(&self, myself: ActorRef<PipelineMsg>, _: &mut PipelineState) -> Result<(), ActorProcessingErr> {
        myself.stop_children(None);
        Ok(())
    }
}

async fn spawn_media(args: &WorkerArgs, supervisor: &ActorCell) -> Result<ActorRef<MediaMsg>, ractor::SpawnErr> {
    Ok(Actor::spawn_linked(None, MediaActor, args.media.clone(), supervisor.clone()).await?.0)
}

async fn spawn_asr(args: &WorkerArgs, supervisor: &ActorCell) -> Result<ActorRef<AsrMsg>, ractor::SpawnErr> {
    Ok(Actor::spawn_linked(None, AsrActor, args.asr.clone(), supervisor.clone()).await?.0)
}

async fn spawn_callbacks(args: &WorkerArgs, supervisor: &ActorCell) -> Result<ActorRef<CallbackMsg>, ractor::SpawnErr> {
    Ok(Actor::spawn_linked(None, CallbackActor, args.callbacks.clone(), supervisor.clone()).await?.0)
}

impl PipelineState {
    /// Starts the worker `kind` again, then hands it every job waiting at one of its stages.
    async fn restart(&mut self, myself: &ActorRef<PipelineMsg>, kind: WorkerKind) {
        let cell = myself.get_cell();
        let started = match kind {
            WorkerKind::Media => spawn_media(&self.args.workers, &cell).await.map(|r| self.workers.media = r),
            WorkerKind::Asr => spawn_asr(&self.args.workers, &cell).await.map(|r| self.workers.asr = r),
            WorkerKind::Callbacks => {
                spawn_callbacks(&self.args.workers, &cell).await.map(|r| self.workers.callbacks = r)
            }
        };
        if let Err(error) = started {
            tracing::error!(worker = ?kind, %error, "a pipeline worker could not be started again; trying again shortly");
            drop(myself.send_after(RESTART_BACKOFF, move || PipelineMsg::RestartWorker(kind)));
            return;
        }
        if !self.live {
            return; // jobs are dispatched once the log is caught up with
        }
        let waiting: Vec<JobId> = self
            .open
            .iter()
            .filter(|(id, s)| WorkerKind::of_stage(s.stage()) == Some(kind) && !self.in_flight.contains_key(*id))
            .map(|(id, _)| id.clone())
            .collect();
        for job_id in waiting {
            self.dispatch(myself, &job_id).await;
        }
    }

    /// Folds a job event into the open jobs; returns the job it concerned.
    fn fold(&mut self, recorded: &RecordedEvent) -> Option<JobId> {
        let job_id = job_id_of_stream(&recorded.stream)?;
        let event = match JobEvent::decode(&recorded.data) {
            Ok(e) => e,
            Err(e) => {
                tracing::error!(stream = %recorded.stream, position = recorded.position, error = %e, "skipping unreadable job event");
                return None;
            }
        };
        // Work under way for a deleted job stops, and leaves no file behind; so does the work of
        // a job failed from outside (the OpenAI door's client went away), which nobody awaits.
        let stop = match &event {
            JobEvent::JobDeleted { .. } => true,
            JobEvent::JobFailed { .. } => self.in_flight.contains_key(&job_id),
            _ => false,
        };
        if stop && self.live {
            let media = self.workers.media.cast(MediaMsg::Cancel(job_id.clone())).err().map(|e| e.to_string());
            let asr = self.workers.asr.cast(AsrMsg::Cancel(job_id.clone())).err().map(|e| e.to_string());
            for error in media.into_iter().chain(asr) {
                job_span(&job_id).in_scope(|| tracing::error!(%error, "telling a worker to stop the work of a job"));
            }
        }
        if let JobEvent::JobDeleted { .. } = &event {
            // Translations being made from this job lose their source: they fail (and are refunded).
            self.orphaned
                .extend(self.open.iter().filter(|(_, s)| is_translation_of(s, &job_id)).map(|(id, _)| id.clone()));
        }
        if self.versions.get(&job_id).is_some_and(|v| recorded.version <= *v) {
            return None; // already in the state restored from the checkpoint
        }
        let known = self.open.remove(&job_id);
        // A job we dropped as finished only gets bookkeeping events after that; ignore them.
        let state = match known {
            Some(s) => s,
            None if recorded.version == 0 => JobState::default(),
            None => return None,
        };
        let state = JobAggregate::evolve(state, &event);
        match state.stage() {
            Stage::Finished | Stage::Deleted => {
                self.in_flight.remove(&job_id);
                self.attempts.remove(&job_id);
                self.versions.remove(&job_id);
            }
            _ => {
                self.open.insert(job_id.clone(), state);
                self.versions.insert(job_id.clone(), recorded.version);
            }
        }
        Some(job_id)
    }

    /// Starts the work the job's stage calls for, unless it is already running.
    async fn dispatch(&mut self, myself: &ActorRef<PipelineMsg>, job_id: &JobId) {
        if self.fail_lost_request(job_id) {
            return;
        }
        let Some(state) = self.open.get(job_id) else { return };
        let stage = state.stage();
        if self.in_flight.get(job_id) == Some(&stage) {
            return;
        }
        if stage == Stage::Live {
            self.recover_live(job_id);
            return;
        }
        if !DISPATCHED_STAGES.contains(&stage) {
            return;
        }
        if let Some(gate) = &mut self.claims {
            let recognitions = self.in_flight.values().filter(|s| is_recognition(**s)).count();
            if gate.admit(&self.args.jobs, job_id, state, stage, recognitions) == Admission::Wait {
                return;
            }
        }
        let attempts = self.attempts.entry(job_id.clone()).or_insert((stage, 0));
        if attempts.0 != stage {
            *attempts = (stage, 0);
        }
        attempts.1 += 1;
        let span = job_span(job_id);
        if attempts.1 > MAX_STAGE_ATTEMPTS {
            span.in_scope(|| tracing::error!(?stage, "stage kept failing without a recorded outcome; failing the job"));
            let jobs = self.args.jobs.clone();
            let job_id = job_id.clone();
            let pipeline = myself.clone();
            tokio::spawn(
                async move {
                    let msg = format!(
                        "Processing failed repeatedly at the {} stage; please resubmit the job",
                        stage_name(stage)
                    );
                    let failed = jobs.execute(&job_id, JobCommand::Fail { error_msg: msg, at_ms: now_ms() }).await;
                    if let Err(error) = failed {
                        // Not recorded: look again later, which tries to fail the job once more.
                        tracing::error!(?stage, %error, "recording the failure of a job that kept failing; trying again");
                        drop(pipeline.send_after(RECHECK_AFTER, move || PipelineMsg::Recheck(job_id, stage)));
                    }
                }
                .instrument(span),
            );
            return;
        }
        self.in_flight.insert(job_id.clone(), stage);
        self.args.dispatches.record(stage);
        span.in_scope(|| tracing::debug!(?stage, attempt = attempts.1, "stage dispatched"));
        let submission = state.submission.as_ref().expect("an open job was submitted");
        let done = StageDone::new(myself.get_derived(), job_id.clone(), stage);
        // A cast to a worker that just died fails; the stage in the message is dropped with it,
        // which reports it lost, and it runs again once the worker is back.
        match stage {
            Stage::StoreMedia => match &submission.source {
                MediaSource::Url { source_url, .. } => {
                    let sent = self.workers.media.cast(MediaMsg::Fetch {
                        job_id: job_id.clone(),
                        owner: submission.owner.clone(),
                        url: source_url.as_str().to_owned(),
                        done,
                    });
                    log_unsent(job_id, stage, sent.err());
                }
                // An upload records its file in the append that submits it, which the pipeline
                // folds whole: one here was recorded without it (a log cut between its events).
                // Nothing can fetch it; the stage does not move on, and the job fails after
                // `MAX_STAGE_ATTEMPTS`.
                _ => {
                    self.in_flight.remove(job_id);
                    report(done);
                }
            },
            Stage::ProbeMedia => {
                let path = self.args.data_dir.join(&state.media.as_ref().expect("media before probe").path);
                let sent = self.workers.media.cast(MediaMsg::Probe { job_id: job_id.clone(), path, done });
                log_unsent(job_id, stage, sent.err());
            }
            Stage::Transcribe | Stage::Translate => {
                let kind = if stage == Stage::Transcribe { TaskKind::Transcribe } else { TaskKind::Translate };
                let media_path = self.args.data_dir.join(&state.media.as_ref().expect("media before ASR").path);
                // The media is ready for processing: its waveform peaks are made beside the
                // recognition, so the editor's first opening finds them.
                if self.attempts.get(job_id).is_some_and(|(_, attempt)| *attempt == 1) {
                    let peaks = MediaMsg::PreparePeaks { job_id: job_id.clone(), path: media_path.clone() };
                    if let Err(error) = self.workers.media.cast(peaks) {
                        span.in_scope(|| tracing::warn!(%error, "asking for the waveform peaks"));
                    }
                }
                let task = AsrTask { job_id: job_id.clone(), kind, media_path, state: state.clone(), done };
                let sent = self.workers.asr.cast(AsrMsg::Enqueue(Box::new(task)));
                log_unsent(job_id, stage, sent.err());
            }
            Stage::Complete | Stage::OpenTask => {
                let jobs = self.args.jobs.clone();
                let cmd = if stage == Stage::Complete {
                    JobCommand::Complete { at_ms: now_ms() }
                } else {
                    JobCommand::OpenTask { at_ms: now_ms() }
                };
                tokio::spawn(
                    async move {
                        if let Err(e) = jobs.execute(&done.job_id, cmd).await {
                            tracing::warn!(error = %e, ?stage, "recording the next step of a job");
                        }
                        report(done);
                    }
                    .instrument(span),
                );
            }
            // Reported done only once delivered or abandoned, so it is dispatched once per run.
            Stage::DeliverCallback => {
                let sent = self.workers.callbacks.cast(CallbackMsg::Deliver { job_id: job_id.clone(), done });
                log_unsent(job_id, stage, sent.err());
            }
            _ => unreachable!("filtered above"),
        }
    }
}

impl PipelineState {
    /// Finishes a live job whose session this node ran before it stopped: no session can be
    /// recording it any more. Live jobs of other nodes, or submitted since this start, are left
    /// to their sessions.
    fn recover_live(&mut self, job_id: &JobId) {
        let Some(state) = self.open.get(job_id) else { return };
        let Some(submission) = &state.submission else { return };
        let MediaSource::Live { node, .. } = &submission.source else { return };
        if node != self.this_node()
            || submission.created_ms >= self.started_ms
            || !self.recovering.insert(job_id.clone())
        {
            return;
        }
        let (jobs, media, data_dir) =
            (self.args.jobs.clone(), self.args.workers.media.store.clone(), self.args.data_dir.clone());
        let (job_id, state) = (job_id.clone(), state.clone());
        tokio::spawn(async move { crate::live::recording::recover(&jobs, &media, &data_dir, &job_id, &state).await });
    }

    /// Fails a job whose answer a request held by this node's previous process was waiting for:
    /// nobody will receive it (an OpenAI client retries with a new request, a new job), so the
    /// work stops and the job is refunded. True when the job is being failed.
    fn fail_lost_request(&mut self, job_id: &JobId) -> bool {
        let Some(state) = self.open.get(job_id) else { return false };
        if !state.request_lost_to_restart(self.this_node(), self.started_ms) {
            return false;
        }
        if !self.recovering.insert(job_id.clone()) {
            return true;
        }
        let jobs = self.args.jobs.clone();
        let job_id = job_id.clone();
        let span = job_span(&job_id);
        tokio::spawn(
            async move {
                let error_msg = scribe_domain::job::LOST_TO_RESTART.to_owned();
                match jobs.execute(&job_id, JobCommand::Fail { error_msg, at_ms: now_ms() }).await {
                    Ok(_) => tracing::info!(
                        "the request waiting for the job died with the last run: job stopped and refunded"
                    ),
                    Err(e) => tracing::warn!(error = %e, "failing a job whose waiting request died with the last run"),
                }
            }
            .instrument(span),
        );
        true
    }

    /// The name live jobs give the node that runs their session.
    fn this_node(&self) -> &str {
        self.args.cluster.as_ref().map_or(crate::live::LOCAL_NODE, |c| c.node.as_str())
    }

    /// Offers the jobs waiting for a recognition worker on this node again (cluster nodes).
    async fn offer_backlog(&mut self, myself: &ActorRef<PipelineMsg>) {
        let Some(gate) = &mut self.claims else { return };
        for job_id in gate.take_backlog() {
            self.dispatch(myself, &job_id).await;
        }
    }

    /// Fails every translation whose source job was deleted.
    fn fail_orphaned_translations(&mut self) {
        for job_id in std::mem::take(&mut self.orphaned) {
            let jobs = self.args.jobs.clone();
            let span = job_span(&job_id);
            tokio::spawn(
                async move {
                    let error_msg = "The source job was deleted before the translation was finished".to_owned();
                    if let Err(e) = jobs.execute(&job_id, JobCommand::Fail { error_msg, at_ms: now_ms() }).await {
                        tracing::warn!(error = %e, "failing a translation whose source was deleted");
                    }
                }
                .instrument(span),
            );
        }
    }

    /// Records the expiry of every task lease that ran out.
    fn sweep_leases(&self) {
        let now = now_ms();
        for (job_id, state) in &self.open {
            for task in
                state.tasks.iter().filter(|t| t.is_open() && t.lease.as_ref().is_some_and(|l| l.is_expired(now)))
            {
                let jobs = self.args.jobs.clone();
                let (job_id, task_id) = (job_id.clone(), task.task_id.clone());
                let span = job_span(&job_id);
                tokio::spawn(
                    async move {
                        match jobs.execute(&job_id, JobCommand::ExpireLease { task_id, at_ms: now_ms() }).await {
                            // Claimed again or submitted in the meantime: nothing to record.
                            Ok(_) | Err(crate::command::CommandError::Refused(_)) => {}
                            Err(e) => tracing::warn!(error = %e, "recording an expired task lease"),
                        }
                    }
                    .instrument(span),
                );
            }
        }
    }
}

/// Whether `state` is a translation made from the job `source`.
fn is_translation_of(state: &JobState, source: &JobId) -> bool {
    matches!(&state.submission, Some(s) if matches!(&s.source, MediaSource::Job { source_job_id, .. } if source_job_id == source))
}

/// Logs a stage that could not be handed to its worker (the worker is dead; the stage was
/// reported lost when the message was dropped).
fn log_unsent<E: std::fmt::Display>(job_id: &JobId, stage: Stage, error: Option<E>) {
    if let Some(error) = error {
        job_span(job_id).in_scope(|| {
            tracing::warn!(?stage, %error, "a stage could not be handed to its worker; it runs again once the worker is back")
        });
    }
}

fn stage_name(stage: Stage) -> &'static str {
    match stage {
        Stage::StoreMedia => "media download",
        Stage::ProbeMedia => "media inspection",
        Stage::Transcribe => "transcription",
        Stage::Translate => "translation",
        Stage::Complete => "completion",
        Stage::OpenTask => "task opening",
        _ => "processing",
    }
}
