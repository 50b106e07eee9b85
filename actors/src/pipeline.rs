//! The job pipeline: a process manager that follows the whole event log and starts the next
//! stage of every unfinished job — fetch the media, probe it, transcribe it, complete it.
//!
//! It holds the state of unfinished jobs only (folded from their events with the pure domain
//! `evolve`), so memory follows the work in flight. On start it reads the log from the
//! beginning without acting; once it has caught up with the head it dispatches every job that is
//! still waiting, which is how a crash loses no accepted job: the log says where each job was.
//! Workers report back through the job actors (commands); the job actor refuses anything already
//! recorded, so a stage run twice after a crash appends nothing twice.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use scribe_domain::ids::{JobId, job_id_of_stream};
use scribe_domain::job::{JobAggregate, JobCommand, JobEvent, JobState, MediaSource, Stage};
use scribe_domain::{Aggregate, VersionedEvent};

use crate::asr::{AsrMsg, AsrTask, TaskKind};
use crate::callbacks::CallbackMsg;
use crate::clock::now_ms;
use crate::eventstore::{EventStore, RecordedEvent, follow_log};
use crate::jobs::Jobs;
use crate::media_worker::MediaMsg;

/// How often a stage is started again when its worker ended without moving the job on.
const MAX_STAGE_ATTEMPTS: u32 = 3;

/// How long after a worker's report the pipeline checks that its outcome was recorded.
const RECHECK_AFTER: Duration = Duration::from_secs(5);

/// How often leases on manual tasks are checked for expiry. An expired lease already lets
/// others claim the task; the sweep records the expiry in the job's history.
pub const LEASE_SWEEP_EVERY: Duration = Duration::from_secs(5);

pub enum PipelineMsg {
    /// The next event of the log.
    Event(RecordedEvent),
    /// The subscription ended with an error; resubscribe after the last seen position.
    SubscriptionLost(String),
    /// A worker finished the stage it was given (whatever the outcome).
    StageDone(JobId, Stage),
    /// See whether a job whose worker finished has moved on.
    Recheck(JobId, Stage),
    /// Record the expiry of task leases that ran out.
    SweepLeases,
}

pub struct Pipeline;

pub struct PipelineArgs {
    pub store: Arc<dyn EventStore>,
    pub jobs: Jobs,
    pub media: ActorRef<MediaMsg>,
    pub asr: ActorRef<AsrMsg>,
    pub callbacks: ActorRef<CallbackMsg>,
    pub data_dir: PathBuf,
}

pub struct PipelineState {
    args: PipelineArgs,
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
}

impl Actor for Pipeline {
    type Msg = PipelineMsg;
    type State = PipelineState;
    type Arguments = PipelineArgs;

    async fn pre_start(&self, myself: ActorRef<PipelineMsg>, args: PipelineArgs) -> Result<PipelineState, ActorProcessingErr> {
        let start_head = args.store.head_position().await?;
        follow_log(args.store.clone(), 0, myself.clone(), PipelineMsg::Event, PipelineMsg::SubscriptionLost);
        myself.send_interval(LEASE_SWEEP_EVERY, || PipelineMsg::SweepLeases);
        Ok(PipelineState {
            args,
            open: HashMap::new(),
            in_flight: HashMap::new(),
            attempts: HashMap::new(),
            position: 0,
            start_head,
            live: start_head == 0,
            orphaned: Vec::new(),
        })
    }

    async fn handle(&self, myself: ActorRef<PipelineMsg>, msg: PipelineMsg, state: &mut PipelineState) -> Result<(), ActorProcessingErr> {
        match msg {
            PipelineMsg::Event(event) => {
                state.position = event.position;
                let job = state.fold(&event);
                if !state.live && state.position >= state.start_head {
                    state.live = true;
                    let waiting: Vec<JobId> = state.open.keys().cloned().collect();
                    tracing::info!(jobs = waiting.len(), "pipeline caught up with the log; resuming unfinished jobs");
                    for job_id in waiting {
                        state.dispatch(&myself, &job_id).await;
                    }
                } else if state.live {
                    if let Some(job_id) = job {
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
            PipelineMsg::StageDone(job_id, stage) => {
                if state.in_flight.get(&job_id) == Some(&stage) {
                    state.in_flight.remove(&job_id);
                    // The worker's outcome reaches us as an event through the log, usually a few
                    // milliseconds after this report. Look again later: if the job has still not
                    // moved on, the worker could not record its outcome, and the stage runs again.
                    let _ = myself.send_after(RECHECK_AFTER, move || PipelineMsg::Recheck(job_id, stage));
                }
            }
            PipelineMsg::Recheck(job_id, stage) => {
                let stuck = state.open.get(&job_id).map(JobState::stage) == Some(stage);
                if stuck && !state.in_flight.contains_key(&job_id) {
                    state.dispatch(&myself, &job_id).await;
                }
            }
            PipelineMsg::SubscriptionLost(reason) => {
                tracing::error!(%reason, position = state.position, "log subscription lost; resubscribing");
                tokio::time::sleep(Duration::from_millis(500)).await;
                follow_log(state.args.store.clone(), state.position, myself, PipelineMsg::Event, PipelineMsg::SubscriptionLost);
            }
        }
        Ok(())
    }
}


impl PipelineState {
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
        if let JobEvent::JobDeleted { .. } = &event {
            // Translations being made from this job lose their source: they fail (and are refunded).
            self.orphaned.extend(self.open.iter().filter(|(_, s)| is_translation_of(s, &job_id)).map(|(id, _)| id.clone()));
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
            }
            _ => {
                self.open.insert(job_id.clone(), state);
            }
        }
        Some(job_id)
    }

    /// Starts the work the job's stage calls for, unless it is already running.
    async fn dispatch(&mut self, myself: &ActorRef<PipelineMsg>, job_id: &JobId) {
        let Some(state) = self.open.get(job_id) else { return };
        let stage = state.stage();
        if self.in_flight.get(job_id) == Some(&stage) {
            return;
        }
        if !matches!(stage, Stage::StoreMedia | Stage::ProbeMedia | Stage::Transcribe | Stage::Translate | Stage::Complete | Stage::OpenTask | Stage::DeliverCallback) {
            return;
        }
        let attempts = self.attempts.entry(job_id.clone()).or_insert((stage, 0));
        if attempts.0 != stage {
            *attempts = (stage, 0);
        }
        attempts.1 += 1;
        if attempts.1 > MAX_STAGE_ATTEMPTS {
            tracing::error!(%job_id, ?stage, "stage kept failing without a recorded outcome; failing the job");
            let jobs = self.args.jobs.clone();
            let job_id = job_id.clone();
            tokio::spawn(async move {
                let msg = format!("Processing failed repeatedly at the {} stage; please resubmit the job", stage_name(stage));
                let _ = jobs.execute(&job_id, JobCommand::Fail { error_msg: msg, at_ms: now_ms() }).await;
            });
            return;
        }
        self.in_flight.insert(job_id.clone(), stage);
        let submission = state.submission.as_ref().expect("an open job was submitted");
        let done = (myself.clone(), job_id.clone(), stage);
        match stage {
            Stage::StoreMedia => match &submission.source {
                MediaSource::Url { source_url, filename } => {
                    let _ = self.args.media.cast(MediaMsg::Fetch {
                        job_id: job_id.clone(),
                        url: source_url.as_str().to_owned(),
                        filename: filename.clone(),
                        done,
                    });
                }
                // An upload is recorded in one append with its file (JobSubmitted + MediaStored):
                // its MediaStored event is the next one in the log, so there is nothing to do.
                _ => {
                    self.in_flight.remove(job_id);
                }
            },
            Stage::ProbeMedia => {
                let path = self.args.data_dir.join(&state.media.as_ref().expect("media before probe").path);
                let _ = self.args.media.cast(MediaMsg::Probe { job_id: job_id.clone(), path, done });
            }
            Stage::Transcribe | Stage::Translate => {
                let kind = if stage == Stage::Transcribe { TaskKind::Transcribe } else { TaskKind::Translate };
                let task = AsrTask {
                    job_id: job_id.clone(),
                    kind,
                    media_path: self.args.data_dir.join(&state.media.as_ref().expect("media before ASR").path),
                    state: state.clone(),
                    done,
                };
                let _ = self.args.asr.cast(AsrMsg::Enqueue(Box::new(task)));
            }
            Stage::Complete | Stage::OpenTask => {
                let jobs = self.args.jobs.clone();
                let cmd = if stage == Stage::Complete { JobCommand::Complete { at_ms: now_ms() } } else { JobCommand::OpenTask { at_ms: now_ms() } };
                tokio::spawn(async move {
                    if let Err(e) = jobs.execute(&done.1, cmd).await {
                        tracing::warn!(job_id = %done.1, error = %e, ?stage, "recording the next step of a job");
                    }
                    report(done);
                });
            }
            // Reported done only once delivered or abandoned, so it is dispatched once per run.
            Stage::DeliverCallback => {
                let _ = self.args.callbacks.cast(CallbackMsg::Deliver { job_id: job_id.clone(), done });
            }
            _ => unreachable!("filtered above"),
        }
    }
}

impl PipelineState {
    /// Fails every translation whose source job was deleted.
    fn fail_orphaned_translations(&mut self) {
        for job_id in std::mem::take(&mut self.orphaned) {
            let jobs = self.args.jobs.clone();
            tokio::spawn(async move {
                let error_msg = "The source job was deleted before the translation was finished".to_owned();
                if let Err(e) = jobs.execute(&job_id, JobCommand::Fail { error_msg, at_ms: now_ms() }).await {
                    tracing::warn!(%job_id, error = %e, "failing a translation whose source was deleted");
                }
            });
        }
    }

    /// Records the expiry of every task lease that ran out.
    fn sweep_leases(&self) {
        let now = now_ms();
        for (job_id, state) in &self.open {
            for task in state.tasks.iter().filter(|t| t.is_open() && t.lease.as_ref().is_some_and(|l| l.is_expired(now))) {
                let jobs = self.args.jobs.clone();
                let (job_id, task_id) = (job_id.clone(), task.task_id.clone());
                tokio::spawn(async move {
                    match jobs.execute(&job_id, JobCommand::ExpireLease { task_id, at_ms: now_ms() }).await {
                        // Claimed again or submitted in the meantime: nothing to record.
                        Ok(_) | Err(crate::command::CommandError::Refused(_)) => {}
                        Err(e) => tracing::warn!(%job_id, error = %e, "recording an expired task lease"),
                    }
                });
            }
        }
    }
}

/// Whether `state` is a translation made from the job `source`.
fn is_translation_of(state: &JobState, source: &JobId) -> bool {
    matches!(&state.submission, Some(s) if matches!(&s.source, MediaSource::Job { source_job_id, .. } if source_job_id == source))
}

/// Who to tell when a stage's work ends: the pipeline, the job and the stage.
pub type StageDone = (ActorRef<PipelineMsg>, JobId, Stage);

/// Tells the pipeline a stage's work ended.
pub fn report((pipeline, job_id, stage): StageDone) {
    let _ = pipeline.cast(PipelineMsg::StageDone(job_id, stage));
}

/// Records the job as failed with `error_msg`, then reports the stage done.
pub fn fail_and_report(jobs: &Jobs, done: StageDone, error_msg: String) {
    let jobs = jobs.clone();
    tokio::spawn(async move {
        if let Err(e) = jobs.execute(&done.1, JobCommand::Fail { error_msg, at_ms: now_ms() }).await {
            tracing::warn!(job_id = %done.1, error = %e, "recording job failure");
        }
        report(done);
    });
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
