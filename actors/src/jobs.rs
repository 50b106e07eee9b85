//! One actor per live job, and the supervisor that finds, starts, restarts and retires them.
//!
//! A `JobActor` owns the stream `job-<jobId>`: it rebuilds the job from its events when it
//! starts, runs every command for that job one at a time through the pure domain `decide`, and
//! appends the result expecting the version it decided on. It stops itself after a quiet spell,
//! so memory is bounded by the jobs in flight, not by the jobs ever made.
//!
//! The `JobSupervisor` keeps the map from job id to actor. A job actor that crashes is simply
//! forgotten; the next command for that job starts a fresh one from its stream, and no other job
//! notices. Callers talk to all of this through the cloneable [`Jobs`] handle.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ractor::rpc::CallResult;
use ractor::{Actor, ActorId, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use scribe_domain::ids::JobId;
use scribe_domain::job::{JobAggregate, JobCommand, JobRefusal, JobState};
use scribe_eventstore::{EventStore, StoreError};
use tracing::Instrument;

use crate::command::{self, CommandError, Executed, Loaded};

pub type JobError = CommandError<JobRefusal>;
pub type JobExecuted = Executed<JobAggregate>;

/// How long an idle job actor lives before it stops.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(60);

/// Attempts at reaching a job's actor before giving up (an actor may stop between lookup and
/// delivery; the next attempt starts a fresh one).
const DELIVERY_ATTEMPTS: usize = 3;

/// How long a caller waits for a job actor (or the supervisor) to answer before it gives up with
/// [`CommandError::TimedOut`]. Commands of one job take turns, each one append: an answer this
/// late means the store or the actor is stuck, and the caller should not hang with it.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The span every log line about one job is written in: `job{job_id=…}`. The job's actor runs
/// each of its messages in it, each worker works on the job in it, and the tasks they spawn
/// carry it on (`Instrument`, `Span::in_scope`).
pub fn job_span(job_id: &JobId) -> tracing::Span {
    tracing::info_span!("job", job_id = %job_id)
}

/// Messages a job actor understands.
#[allow(clippy::large_enum_variant)] // a command travels once, by value, to its job's actor
pub enum JobMsg {
    Execute(JobCommand, RpcReplyPort<Result<JobExecuted, JobError>>),
    State(RpcReplyPort<(JobState, Option<u64>)>),
    IdleTick,
}

struct JobActor;

struct JobActorArgs {
    job_id: JobId,
    store: Arc<dyn EventStore>,
    supervisor: ActorRef<SupervisorMsg>,
    idle: Duration,
}

struct JobActorState {
    job_id: JobId,
    /// [`job_span`], which every message of this job runs in.
    span: tracing::Span,
    stream: String,
    store: Arc<dyn EventStore>,
    loaded: Loaded<JobAggregate>,
    supervisor: ActorRef<SupervisorMsg>,
    idle: Duration,
    last_active: Instant,
}

impl Actor for JobActor {
    type Msg = JobMsg;
    type State = JobActorState;
    type Arguments = JobActorArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<JobMsg>,
        args: JobActorArgs,
    ) -> Result<JobActorState, ActorProcessingErr> {
        let stream = scribe_domain::ids::job_stream(&args.job_id);
        let loaded =
            command::load::<JobAggregate>(args.store.as_ref(), &stream).instrument(job_span(&args.job_id)).await?;
        myself.send_interval(args.idle.max(Duration::from_millis(100)) / 2, || JobMsg::IdleTick);
        Ok(JobActorState {
            span: job_span(&args.job_id),
            job_id: args.job_id,
            stream,
            store: args.store,
            loaded,
            supervisor: args.supervisor,
            idle: args.idle,
            last_active: Instant::now(),
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<JobMsg>,
        msg: JobMsg,
        state: &mut JobActorState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            JobMsg::Execute(cmd, reply) => {
                state.last_active = Instant::now();
                let span = state.span.clone();
                let result = state.execute(cmd).instrument(span).await;
                let _ = reply.send(result);
            }
            JobMsg::State(reply) => {
                state.last_active = Instant::now();
                let _ = reply.send((state.loaded.state.clone(), state.loaded.version));
            }
            JobMsg::IdleTick => {
                if state.last_active.elapsed() >= state.idle {
                    let _entered = state.span.enter();
                    // The supervisor forgets us first, then stops us: a command arriving in between
                    // goes to a fresh actor, which reads the stream anew.
                    let _ = state.supervisor.cast(SupervisorMsg::Retire(state.job_id.clone(), myself.get_id()));
                    state.last_active = Instant::now();
                }
            }
        }
        Ok(())
    }
}

impl JobActorState {
    async fn execute(&mut self, cmd: JobCommand) -> Result<JobExecuted, JobError> {
        let store = self.store.as_ref();
        let mut retries = 0;
        loop {
            match command::append_decision::<JobAggregate>(store, &self.stream, &mut self.loaded, cmd.clone()).await {
                // Another writer (an older actor of this job that had not stopped yet, or another
                // node: several may race for one job's claim) appended first: catch up and decide
                // once more on the newer state.
                Err(CommandError::Store(StoreError::WrongExpectedVersion { .. }))
                    if retries < command::MAX_CONFLICT_RETRIES =>
                {
                    retries += 1;
                    self.loaded = command::catch_up::<JobAggregate>(store, &self.stream, self.loaded.clone()).await?;
                }
                // A refusal decided on a state that other nodes (sharing the store) may have
                // moved on: when the stream grew meanwhile, decide once more on the newer state.
                Err(CommandError::Refused(refusal)) if retries < command::MAX_CONFLICT_RETRIES => {
                    let before = self.loaded.version;
                    self.loaded = command::catch_up::<JobAggregate>(store, &self.stream, self.loaded.clone()).await?;
                    if self.loaded.version == before {
                        return Err(CommandError::Refused(refusal));
                    }
                    retries += 1;
                }
                other => return other,
            }
        }
    }
}

/// Messages of the supervisor.
pub enum SupervisorMsg {
    Lookup(JobId, RpcReplyPort<Result<ActorRef<JobMsg>, String>>),
    Retire(JobId, ActorId),
}

struct JobSupervisor;

struct SupervisorState {
    store: Arc<dyn EventStore>,
    idle: Duration,
    by_job: HashMap<JobId, ActorRef<JobMsg>>,
    by_actor: HashMap<ActorId, JobId>,
}

impl SupervisorState {
    fn forget(&mut self, actor: ActorId) -> Option<ActorRef<JobMsg>> {
        let job = self.by_actor.remove(&actor)?;
        match self.by_job.get(&job) {
            Some(r) if r.get_id() == actor => self.by_job.remove(&job),
            _ => None,
        }
    }
}

impl Actor for JobSupervisor {
    type Msg = SupervisorMsg;
    type State = SupervisorState;
    type Arguments = (Arc<dyn EventStore>, Duration);

    async fn pre_start(
        &self,
        _: ActorRef<SupervisorMsg>,
        (store, idle): Self::Arguments,
    ) -> Result<SupervisorState, ActorProcessingErr> {
        Ok(SupervisorState { store, idle, by_job: HashMap::new(), by_actor: HashMap::new() })
    }

    async fn handle(
        &self,
        myself: ActorRef<SupervisorMsg>,
        msg: SupervisorMsg,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            SupervisorMsg::Lookup(job_id, reply) => {
                if let Some(existing) = state.by_job.get(&job_id) {
                    let _ = reply.send(Ok(existing.clone()));
                    return Ok(());
                }
                let args = JobActorArgs {
                    job_id: job_id.clone(),
                    store: state.store.clone(),
                    supervisor: myself.clone(),
                    idle: state.idle,
                };
                match Actor::spawn_linked(None, JobActor, args, myself.get_cell()).await {
                    Ok((actor, _)) => {
                        state.by_actor.insert(actor.get_id(), job_id.clone());
                        state.by_job.insert(job_id, actor.clone());
                        let _ = reply.send(Ok(actor));
                    }
                    Err(e) => {
                        let _ = reply.send(Err(format!("job actor for {job_id} did not start: {e}")));
                    }
                }
            }
            SupervisorMsg::Retire(job_id, actor_id) => {
                if let Some(actor) = state.forget(actor_id) {
                    job_span(&job_id).in_scope(|| tracing::debug!("retiring idle job actor"));
                    actor.stop(Some("idle".into()));
                }
            }
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        _: ActorRef<SupervisorMsg>,
        event: SupervisionEvent,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        // Never stop the supervisor because one job failed (ractor's default would).
        match event {
            SupervisionEvent::ActorFailed(cell, err) => {
                if let Some(job) = state.by_actor.get(&cell.get_id()).cloned() {
                    job_span(&job).in_scope(|| {
                        tracing::error!(error = %err, "job actor crashed; the next command restarts it from its stream")
                    });
                }
                state.forget(cell.get_id());
            }
            SupervisionEvent::ActorTerminated(cell, _, _) => {
                state.forget(cell.get_id());
            }
            _ => {}
        }
        Ok(())
    }
}

/// Cloneable handle to the job actors.
#[derive(Clone)]
pub struct Jobs {
    supervisor: ActorRef<SupervisorMsg>,
}

impl Jobs {
    /// Starts the supervisor. Job actors retire after `idle` without messages.
    pub async fn start(store: Arc<dyn EventStore>, idle: Duration) -> Result<Jobs, ractor::SpawnErr> {
        let (supervisor, _) = Actor::spawn(None, JobSupervisor, (store, idle)).await?;
        Ok(Jobs { supervisor })
    }

    /// Runs `cmd` on the job's actor and returns what it appended. A command whose actor does
    /// not answer within [`CALL_TIMEOUT`] is not sent again (it may still be recorded).
    pub async fn execute(&self, job_id: &JobId, cmd: JobCommand) -> Result<JobExecuted, JobError> {
        for _ in 0..DELIVERY_ATTEMPTS {
            let actor = self.actor(job_id).await?;
            match actor.call(|reply| JobMsg::Execute(cmd.clone(), reply), Some(CALL_TIMEOUT)).await {
                Ok(CallResult::Success(result)) => return result,
                Ok(CallResult::Timeout) => return Err(timed_out("job actor")),
                // The actor stopped before answering (retired, or crashed on this command).
                _ => continue,
            }
        }
        Err(CommandError::Unavailable("job actor"))
    }

    /// The job's current state and stream version (`None`: no such stream).
    pub async fn state(&self, job_id: &JobId) -> Result<(JobState, Option<u64>), JobError> {
        for _ in 0..DELIVERY_ATTEMPTS {
            let actor = self.actor(job_id).await?;
            match actor.call(JobMsg::State, Some(CALL_TIMEOUT)).await {
                Ok(CallResult::Success(state)) => return Ok(state),
                Ok(CallResult::Timeout) => return Err(timed_out("job actor")),
                _ => continue,
            }
        }
        Err(CommandError::Unavailable("job actor"))
    }

    async fn actor(&self, job_id: &JobId) -> Result<ActorRef<JobMsg>, JobError> {
        match self.supervisor.call(|reply| SupervisorMsg::Lookup(job_id.clone(), reply), Some(CALL_TIMEOUT)).await {
            Ok(CallResult::Success(Ok(actor))) => Ok(actor),
            Ok(CallResult::Success(Err(reason))) => {
                job_span(job_id).in_scope(|| tracing::error!(%reason, "cannot start job actor"));
                Err(CommandError::Unavailable("job actor"))
            }
            Ok(CallResult::Timeout) => Err(timed_out("job supervisor")),
            _ => Err(CommandError::Unavailable("job supervisor")),
        }
    }

    /// Stops the supervisor and every job actor.
    pub fn stop(&self) {
        self.supervisor.stop(None);
    }
}

fn timed_out(actor: &'static str) -> JobError {
    CommandError::TimedOut { actor, after: CALL_TIMEOUT }
}
