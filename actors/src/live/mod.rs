//! Live transcription: the sessions behind the real-time WebSocket door.
//!
//! [`LiveSessions::open`] admits a session (capacity, a balance that pays its first minute,
//! glossary, the speech model, and for `saveAsJob` its job, recorded through the billing saga)
//! and starts its actor (`session`), which pays each minute through the saga as it starts; the
//! door then only forwards frames in and [`LiveOutput`]s out. The rules (the INIT message, the
//! encodings) are the domain's (`scribe_domain::live`).

mod agreement;
mod capacity;
mod decoder;
mod decodes;
pub mod recording;
mod session;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorRef};
use scribe_domain::glossary::GlossaryAggregate;
use scribe_domain::ids::{JobId, UserName, glossary_stream};
use scribe_domain::kinds::{JobType, TranscriptionType};
use scribe_domain::live::{LiveError, LiveErrorCode, LiveInit, LiveResult};
use scribe_eventstore::EventStore;
use scribe_whisper::utterances::UtteranceParams;
use serde_json::{Value, json};
use tokio::sync::mpsc;

pub use capacity::Capacity;
use decoder::LiveDecoder;
pub use decodes::{DecodeCount, DecodeCounts};
use recording::Recording;
use session::{LiveSessionActor, SessionArgs, SessionMsg};

use crate::billing::{Billing, NewJob, SubmitError};
use crate::command;
use crate::jobs::Jobs;
use crate::media::MediaStore;
use crate::speech_model::{EngineLease, SpeechModel};

/// The node name a saved session's job records on a server that is not part of a cluster.
pub const LOCAL_NODE: &str = "local";

/// The operator's bounds for live sessions.
#[derive(Debug, Clone)]
pub struct LiveSettings {
    /// Sessions at once on this server (`--live-sessions`).
    pub max_sessions: usize,
    /// Sessions at once per account (`--live-sessions-per-account`).
    pub max_per_account: usize,
    /// A session without audio for this long is closed (`--live-idle-timeout`).
    pub idle_timeout: Duration,
    /// The pause that ends an utterance (`--live-pause`; 200 ms to 5 s).
    pub pause: Duration,
    /// The installed speech model that decodes the partials of sessions in a language it knows
    /// (`--live-partials-model`, e.g. `whisper-tiny.en`); `None`: the session's own model.
    pub partials_model: Option<String>,
}

impl Default for LiveSettings {
    fn default() -> Self {
        LiveSettings {
            max_sessions: 4,
            max_per_account: 2,
            idle_timeout: Duration::from_secs(30),
            pause: Duration::from_millis(UtteranceParams::default().min_silence_ms.into()),
            partials_model: None,
        }
    }
}

/// The model that decodes partials when the operator named one, and the languages it knows.
#[derive(Clone)]
pub struct PartialsModel {
    pub name: String,
    pub languages: Vec<String>,
    pub model: Arc<SpeechModel>,
}

/// What a session sends the client, in order; `Close` is always last.
#[derive(Debug, Clone, PartialEq)]
pub enum LiveOutput {
    /// An `Info` message (the object under `message`).
    Info(Value),
    /// A `Warning` message (the object under `message`).
    Warning(Value),
    Error(LiveError),
    Result(LiveResult),
    /// Close the socket with this code and reason.
    Close {
        code: u16,
        reason: String,
    },
}

impl LiveOutput {
    pub(crate) fn info(message: String, fields: Value) -> LiveOutput {
        LiveOutput::Info(with_fields(json!({"type": "Info", "message": message}), fields))
    }

    pub(crate) fn warning(code: &str, message: String, fields: Value) -> LiveOutput {
        LiveOutput::Warning(with_fields(json!({"type": "Warning", "code": code, "message": message}), fields))
    }
}

fn with_fields(mut base: Value, fields: Value) -> Value {
    if let (Some(base), Value::Object(fields)) = (base.as_object_mut(), fields) {
        base.extend(fields);
    }
    base
}

/// A running session, as the door holds it.
pub struct LiveSession {
    pub session_id: JobId,
    actor: ActorRef<SessionMsg>,
    /// What to send the client; ends after `LiveOutput::Close`.
    pub output: mpsc::UnboundedReceiver<LiveOutput>,
}

impl LiveSession {
    /// A binary frame from the client.
    pub fn audio(&self, frame: Vec<u8>) {
        let _ = self.actor.send_message(SessionMsg::Audio(frame));
    }

    /// The client sent END.
    pub fn end(&self) {
        let _ = self.actor.send_message(SessionMsg::End);
    }

    /// The door refuses what the client sent (a frame too large): the session sends `error`,
    /// finalizes what it received and closes with the error's code.
    pub fn fail(&self, error: LiveError) {
        let _ = self.actor.send_message(SessionMsg::Fail(error));
    }

    /// The client went away; the session still finalizes (and saves) what it received.
    pub fn disconnected(&self) {
        let _ = self.actor.send_message(SessionMsg::Disconnected);
    }
}

/// Opens live sessions; one per server, shared by the door.
#[derive(Clone)]
pub struct LiveSessions {
    model: Arc<SpeechModel>,
    store: Arc<dyn EventStore>,
    jobs: Jobs,
    media: MediaStore,
    data_dir: PathBuf,
    /// This server's name in the job of a saved session (see `recording::recover`).
    node: String,
    /// Pays the sessions' minutes and records their jobs.
    billing: Billing,
    settings: LiveSettings,
    capacity: Capacity,
    decodes: DecodeCounts,
    decoder: LiveDecoder,
    partials: Option<PartialsModel>,
}

impl LiveSessions {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        model: Arc<SpeechModel>,
        store: Arc<dyn EventStore>,
        jobs: Jobs,
        media: MediaStore,
        data_dir: PathBuf,
        node: String,
        billing: Billing,
        settings: LiveSettings,
        partials: Option<PartialsModel>,
    ) -> LiveSessions {
        let capacity = Capacity::new(settings.max_sessions, settings.max_per_account);
        let decodes = DecodeCounts::default();
        let decoder = LiveDecoder::start(decodes.clone());
        LiveSessions {
            model,
            store,
            jobs,
            media,
            data_dir,
            node,
            billing,
            settings,
            capacity,
            decodes,
            decoder,
            partials,
        }
    }

    /// The sessions' decodings so far, by kind (`/metrics`).
    pub fn decodes(&self) -> DecodeCounts {
        self.decodes.clone()
    }

    /// Sessions running now.
    pub fn running(&self) -> usize {
        self.capacity.running()
    }

    /// Admits a session of `owner` and starts it. The first output is the `Info` saying which
    /// configuration is in force.
    pub async fn open(&self, owner: UserName, init: LiveInit) -> Result<LiveSession, LiveError> {
        let slot = self.capacity.acquire(&owner)?;
        // Refused before any audio: a balance that cannot pay the first minute.
        let least = self.billing.check_least(&owner, JobType::Direct, TranscriptionType::Transcription).await;
        least.map_err(|e| billing_error(e, 1))?;
        let hotwords = self.glossary_terms(&owner, &init).await?;
        let engine = lease(&self.model).await?;
        // The operator's partials model, for a session with partials in a language it knows
        // (`auto` is not known before the first utterance: the session's model decodes those).
        let partials = self.partials.as_ref().filter(|p| {
            init.output.partials
                && init.language.whisper_code().is_some_and(|code| p.languages.iter().any(|l| l == code))
        });
        let partials_engine = match partials {
            Some(p) => Some(lease(&p.model).await?),
            None => None,
        };
        if engine.vad().is_none() {
            return Err(internal(
                "live sessions need the voice activity model (Silero VAD), which is not installed".into(),
            ));
        }
        let session_id = JobId::parse(&uuid::Uuid::new_v4().to_string()).expect("a UUID is a valid id");
        let recording = match init.output.save_as_job {
            true => Some(self.record(&session_id, &owner, &init).await?),
            false => None,
        };
        let (out, output) = mpsc::unbounded_channel();
        let _ = out.send(LiveOutput::info(
            "Session started".into(),
            json!({
                "sessionId": session_id.as_str(),
                "language": init.language.code(),
                "audioConfig": {"sample_rate": init.audio.sample_rate, "encoding": init.audio.encoding.name()},
                "outputConfig": {"format": "transcription", "partials": init.output.partials, "saveAsJob": init.output.save_as_job, "revisions": init.output.revisions},
                "glossaryId": init.glossary_id.as_ref().map(|g| g.as_str()),
                "jobId": init.output.save_as_job.then(|| session_id.as_str()),
                "partialsModel": partials.map(|p| p.name.as_str()),
            }),
        ));
        let args = SessionArgs {
            session_id: session_id.clone(),
            owner,
            init,
            hotwords,
            engine,
            partials_engine,
            billing: self.billing.clone(),
            decodes: self.decodes.clone(),
            decoder: self.decoder.clone(),
            settings: self.settings.clone(),
            out,
            slot,
            recording,
        };
        let (actor, _) = Actor::spawn(None, LiveSessionActor, args)
            .await
            .map_err(|e| internal(format!("the session could not start: {e}")))?;
        Ok(LiveSession { session_id, actor, output })
    }

    /// Opens the audio file of a `saveAsJob` session and records its job through the saga.
    async fn record(&self, job_id: &JobId, owner: &UserName, init: &LiveInit) -> Result<Recording, LiveError> {
        let recording = Recording::start(&self.jobs, &self.media, &self.data_dir, job_id, init.language)
            .map_err(|e| internal(format!("the session's audio file could not be created: {e}")))?;
        let new_job = NewJob::Live {
            job_id: job_id.clone(),
            owner: owner.clone(),
            request: recording::job_request(init),
            node: self.node.clone(),
        };
        if let Err(e) = self.billing.submit(new_job).await {
            drop(recording);
            if let Err(removing) = self.media.delete_job(job_id.as_str()).await {
                tracing::warn!(error = %removing, "removing the audio file of a session whose job was refused");
            }
            return Err(match e {
                e @ SubmitError::InsufficientBalance { .. } => billing_error(e, 1),
                other => internal(format!("the session's job could not be created: {other}")),
            });
        }
        Ok(recording)
    }

    /// The glossary's terms, which must be the caller's own and not deleted.
    async fn glossary_terms(&self, owner: &UserName, init: &LiveInit) -> Result<Vec<String>, LiveError> {
        let Some(id) = &init.glossary_id else { return Ok(Vec::new()) };
        let refused = |why: &str| {
            LiveError::field(LiveErrorCode::InvalidParameter, "glossaryId", &format!("glossaryId {id} {why}"), &[])
        };
        let loaded = command::load::<GlossaryAggregate>(self.store.as_ref(), &glossary_stream(id))
            .await
            .map_err(|e| internal(format!("the glossary could not be read: {e}")))?;
        let Some(glossary) = loaded.state.view() else {
            return Err(refused(if loaded.state.glossary.is_none() { "does not exist" } else { "was deleted" }));
        };
        if &glossary.user_name != owner {
            return Err(refused("belongs to another account"));
        }
        Ok(glossary.hotwords())
    }
}

/// The engine of `model`, loading it first if it was released.
async fn lease(model: &Arc<SpeechModel>) -> Result<EngineLease, LiveError> {
    let model = model.clone();
    tokio::task::spawn_blocking(move || model.lease())
        .await
        .map_err(|e| internal(format!("loading the speech model failed: {e}")))?
        .map_err(|e| internal(format!("the speech model cannot be used: {e}")))
}

fn internal(message: String) -> LiveError {
    LiveError::new(LiveErrorCode::Internal, message)
}

/// The saga's refusal of the session's minute `minute`, in the protocol's words.
pub(crate) fn billing_error(error: SubmitError, minute: u32) -> LiveError {
    match error {
        SubmitError::InsufficientBalance { balance_cents, price_cents } => LiveError::new(
            LiveErrorCode::InsufficientBalance,
            format!(
                "The balance is used up: minute {minute} of this session costs {}.{:02} and the account has {}.{:02}",
                price_cents / 100,
                price_cents % 100,
                balance_cents / 100,
                balance_cents % 100
            ),
        ),
        other => internal(format!("Paying for the session failed ({other})")),
    }
}
