//! Waiting for an OpenAI-door job to end, and answering then: the whole answer at once, or a
//! stream of events while the audio is recognised (`stream=true`).
//!
//! The job's end is read from the read models (woken by their position); recognised text comes
//! from the recognition feed when the job runs on this node. Until the answer is given, an
//! `Abandon` guard is armed: if the client hangs up (seen on its socket, which hyper does not
//! read while the handler works) or the request is dropped, the guard fails the job, which stops
//! its recognition and refunds it. Once the job ended, or the wait ran
//! out (the job then goes on for the client to fetch), the guard is disarmed; a wait that ran
//! out records that the request let go of the job, which a restart then leaves running.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use poem::Body;
use poem::web::RemoteAddr;
use poem_openapi::types::ToJSON;
use scribe_actors::clock::now_ms;
use scribe_actors::recognition_feed::Watch;
use scribe_domain::decoding::DecodingRecord;
use scribe_domain::ids::JobId;
use scribe_domain::job::JobCommand;
use scribe_domain::kinds::JobStatus;
use scribe_domain::openai::answer::{diarized_segments, transcript_text, usage};
use scribe_domain::openai::{Answer, Finished, ResponseFormat, SpeechRequest, stream};
use scribe_domain::transcript::Transcript;
use tokio::sync::{broadcast, mpsc, watch};
use tokio::time::Instant;

use super::errors::OpenAiError;
use crate::state::ApiState;

/// The job's `errorMsg` when its client went away.
pub const ABANDONED: &str = "The client disconnected before the transcript was ready (OpenAI API request); \
the work was stopped and nothing is charged";

/// How a job ended.
enum Outcome {
    Done,
    Failed(String),
    Deleted,
}

/// One step of the wait.
enum Step {
    /// Text recognised since the last step.
    Text(String),
    Ended(Outcome),
    /// The server's wait ran out.
    TimedOut,
    /// The client hung up.
    Gone,
}

/// A submitted job its request waits for.
pub struct Waiting {
    state: Arc<ApiState>,
    job_id: JobId,
    /// The client's end of the connection, watched for a hang-up.
    peer: RemoteAddr,
    pub request: SpeechRequest,
    abandon: Abandon,
}

impl Waiting {
    /// Arms the guard: from now on, dropping this (or its stream) fails the job.
    pub fn new(state: Arc<ApiState>, job_id: JobId, request: SpeechRequest, peer: RemoteAddr) -> Waiting {
        let abandon = Abandon { state: state.clone(), job_id: Some(job_id.clone()) };
        Waiting { state, job_id, peer, request, abandon }
    }

    /// Waits for the end and answers in the requested format.
    pub async fn answer(mut self) -> Result<Answer, OpenAiError> {
        let mut waiter = self.waiter(None);
        let outcome = loop {
            match waiter.next().await? {
                Step::Text(_) => continue,
                Step::Ended(outcome) => break Some(outcome),
                Step::TimedOut => break None,
                // Nobody will read the answer; dropping `self` fails the job.
                Step::Gone => return Err(OpenAiError::job_failed(self.job_id.as_str(), ABANDONED)),
            }
        };
        self.abandon.disarm();
        match outcome {
            None => {
                self.detach().await;
                Err(OpenAiError::still_running(self.job_id.as_str(), self.wait().as_secs()))
            }
            Some(outcome) => self.finished(outcome).await.map(|(answer, _)| answer),
        }
    }

    /// The events of the job, as they come; the body ends after `transcript.text.done` (or an
    /// error event).
    pub fn stream(self, watch: Option<Watch>) -> Body {
        let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(256);
        tokio::spawn(self.run_stream(watch, tx));
        Body::from_bytes_stream(futures::stream::unfold(
            rx,
            |mut rx| async move { rx.recv().await.map(|item| (item, rx)) },
        ))
    }

    async fn run_stream(mut self, watch: Option<Watch>, tx: mpsc::Sender<Result<Bytes, std::io::Error>>) {
        let send = |text: String| {
            let tx = tx.clone();
            async move { tx.send(Ok(Bytes::from(text))).await.is_ok() }
        };
        let mut waiter = self.waiter(watch);
        let mut streamed = false;
        let outcome = loop {
            let step = tokio::select! {
                step = waiter.next() => step,
                // The client went away: the guard, still armed, fails the job when dropped.
                () = tx.closed() => return,
            };
            match step {
                Ok(Step::Text(text)) => {
                    let delta = if streamed { format!(" {text}") } else { text };
                    streamed = true;
                    if !send(stream::delta(&delta)).await {
                        return;
                    }
                }
                Ok(Step::Ended(outcome)) => break Ok(Some(outcome)),
                Ok(Step::TimedOut) => break Ok(None),
                Ok(Step::Gone) => return,
                Err(e) => break Err(e),
            }
        };
        drop(waiter);
        self.abandon.disarm();
        let finished = match outcome {
            Ok(None) => {
                self.detach().await;
                Err(OpenAiError::still_running(self.job_id.as_str(), self.wait().as_secs()))
            }
            Ok(Some(outcome)) => self.finished(outcome).await,
            Err(e) => Err(e),
        };
        let (_, transcript) = match finished {
            Ok(done) => done,
            Err(e) => {
                let error = e.object().to_json().unwrap_or_default();
                send(stream::error(&error)).await;
                return;
            }
        };
        let text = transcript_text(&transcript.transcript);
        // Recognised on another node (or too fast to watch): the text arrives in one piece.
        if !streamed && !text.is_empty() && !send(stream::delta(&text)).await {
            return;
        }
        if self.request.response_format == ResponseFormat::DiarizedJson {
            for segment in diarized_segments(&transcript.transcript) {
                if !send(stream::segment(&segment)).await {
                    return;
                }
            }
        }
        send(stream::done(&text, usage(transcript.decoding.duration_s))).await;
    }

    fn wait(&self) -> Duration {
        self.state.settings.openai_wait
    }

    /// Records that the request lets go of its running job: the client, told its id, follows
    /// it on the jobs API, so a restart must not fail it. Recorded before the 504 is sent.
    async fn detach(&self) {
        let command = JobCommand::DetachRequest { at_ms: now_ms() };
        if let Err(e) = self.state.jobs.execute(&self.job_id, command).await {
            // Ended meanwhile (the answer is then in the jobs API), or the store failed: the
            // client is told the job's id either way.
            scribe_actors::jobs::job_span(&self.job_id)
                .in_scope(|| tracing::debug!(error = %e, "recording that the request let go of its job"));
        }
    }

    fn waiter(&self, feed: Option<Watch>) -> Waiter {
        Waiter {
            state: self.state.clone(),
            job_id: self.job_id.clone(),
            deadline: Instant::now() + self.wait(),
            position: self.state.read.watch_position(),
            feed,
            peer: self.peer.clone(),
        }
    }

    /// The answer of an ended job (and what it was made from), or the error that tells why
    /// there is none.
    async fn finished(&self, outcome: Outcome) -> Result<(Answer, Documents), OpenAiError> {
        let job_id = self.job_id.as_str();
        match outcome {
            Outcome::Failed(reason) => Err(OpenAiError::job_failed(job_id, &reason)),
            Outcome::Deleted => Err(OpenAiError::job_failed(job_id, "The job was deleted before it finished")),
            Outcome::Done => {
                let documents = Documents::read(&self.state, job_id).await?;
                let answer = Finished {
                    transcript: &documents.transcript,
                    decoding: &documents.decoding,
                    endpoint: self.request.endpoint,
                    format: self.request.response_format,
                    granularities: self.request.granularities,
                }
                .answer();
                Ok((answer, documents))
            }
        }
    }
}

/// What a finished job's answers are made from.
struct Documents {
    transcript: Transcript,
    decoding: DecodingRecord,
}

impl Documents {
    async fn read(state: &ApiState, job_id: &str) -> Result<Documents, OpenAiError> {
        let internal = |what: &str, e: &dyn std::fmt::Display| {
            OpenAiError::from(crate::error::ApiError::internal(&format!("Reading the job's {what}"), e))
        };
        let transcript = match state.media.read_transcript(job_id).await {
            Ok(Some(bytes)) => serde_json::from_slice(&bytes).map_err(|e| internal("transcript", &e))?,
            Ok(None) => return Err(internal("transcript", &"it is missing")),
            Err(e) => return Err(internal("transcript", &e)),
        };
        let decoding = match state.media.read_decoding(job_id).await {
            Ok(Some(bytes)) => serde_json::from_slice(&bytes).map_err(|e| internal("decoding record", &e))?,
            Ok(None) => return Err(internal("decoding record", &"it is missing")),
            Err(e) => return Err(internal("decoding record", &e)),
        };
        Ok(Documents { transcript, decoding })
    }
}

/// Follows one job until it ends or the wait runs out.
struct Waiter {
    state: Arc<ApiState>,
    job_id: JobId,
    deadline: Instant,
    position: watch::Receiver<u64>,
    feed: Option<Watch>,
    peer: RemoteAddr,
}

/// What ended a wait of [`Waiter::next`].
enum Woke {
    /// The read models moved (`false`: they can no longer say).
    Moved(bool),
    Feed(Result<String, broadcast::error::RecvError>),
}

/// How often the job is looked at when the read models cannot say they moved.
const POLL: Duration = Duration::from_millis(200);

impl Waiter {
    async fn next(&mut self) -> Result<Step, OpenAiError> {
        loop {
            // Text already recognised comes first, so none is lost to the job's end.
            if let Some(watch) = &mut self.feed {
                match watch.receiver.try_recv() {
                    Ok(text) => return Ok(Step::Text(text)),
                    Err(broadcast::error::TryRecvError::Lagged(_)) => continue,
                    Err(_) => {}
                }
            }
            if let Some(outcome) = self.ended()? {
                return Ok(Step::Ended(outcome));
            }
            if self.state.connections.client_gone(&self.peer) {
                return Ok(Step::Gone);
            }
            let deadline = self.deadline;
            let feed = &mut self.feed;
            let received = async {
                match feed {
                    Some(watch) => watch.receiver.recv().await,
                    None => std::future::pending().await,
                }
            };
            let woke = tokio::select! {
                changed = self.position.changed() => Woke::Moved(changed.is_ok()),
                received = received => Woke::Feed(received),
                () = tokio::time::sleep(POLL) => Woke::Moved(true),
                () = tokio::time::sleep_until(deadline) => return Ok(Step::TimedOut),
            };
            match woke {
                Woke::Feed(Ok(text)) => return Ok(Step::Text(text)),
                Woke::Feed(Err(broadcast::error::RecvError::Lagged(_))) => {}
                Woke::Feed(Err(broadcast::error::RecvError::Closed)) => self.feed = None,
                Woke::Moved(true) => {}
                // The read models stopped: look again a little later.
                Woke::Moved(false) => tokio::time::sleep(POLL).await,
            }
        }
    }

    fn ended(&self) -> Result<Option<Outcome>, OpenAiError> {
        let record = self
            .state
            .read
            .job(&self.job_id)
            .map_err(|e| OpenAiError::from(crate::error::ApiError::internal("Looking up the job", &e)))?;
        let Some(record) = record else { return Ok(None) };
        if record.deleted {
            return Ok(Some(Outcome::Deleted));
        }
        Ok(match record.job.status {
            JobStatus::Done => Some(Outcome::Done),
            JobStatus::Error => {
                Some(Outcome::Failed(record.error_msg.unwrap_or_else(|| "The transcription failed".to_owned())))
            }
            _ => None,
        })
    }
}

/// Fails the job when dropped armed: its client is gone.
struct Abandon {
    state: Arc<ApiState>,
    job_id: Option<JobId>,
}

impl Abandon {
    fn disarm(&mut self) {
        self.job_id = None;
    }
}

impl Drop for Abandon {
    fn drop(&mut self) {
        let Some(job_id) = self.job_id.take() else { return };
        let jobs = self.state.jobs.clone();
        tokio::spawn(async move {
            let span = scribe_actors::jobs::job_span(&job_id);
            let command = JobCommand::Fail { error_msg: ABANDONED.to_owned(), at_ms: now_ms() };
            match jobs.execute(&job_id, command).await {
                Ok(_) => span.in_scope(|| tracing::info!("the client went away: job stopped and refunded")),
                Err(e) => span.in_scope(|| tracing::debug!(error = %e, "the client went away after the job ended")),
            }
        });
    }
}
