//! One live session as an actor: audio in, results out.
//!
//! Every binary frame is decoded from the announced PCM encoding, resampled to 16 kHz, paid for
//! (a started minute is charged when its first sample arrives) and run through the VAD, whose
//! [`Utterances`] cut the stream at pauses (or at a quiet point before 30 s). An utterance is
//! decoded whole with the direct jobs' settings (beam 5, word times, glossary, clean read; but
//! no sampling fallback) into a `FinalResult`; the decoding starts as soon as a pause has lasted
//! the utterance's padding (`Pausing`), so it is usually done when the pause is long enough to
//! end the utterance, and is thrown away if the speaker goes on. The pause is held until those
//! words are known: when they end a sentence it ends the utterance after the operator's pause
//! (`--live-pause`, 0.5 s by default; at once, if that has passed), and when they stop
//! mid-sentence it must last 1 s ([`endpoint::HELD_PAUSE_MS`]), so a speaker taking a breath is
//! not cut there. While an
//! utterance is spoken, the growing audio is decoded cheaply (greedy, no word times) every 0.6 s
//! of speech, or less often while partials take long (the cores shared by many sessions), into
//! `PartialResult`s that [`Agreement`] keeps from flickering. The encoder reads only the
//! utterance's speech and a margin ([`EncoderWindow::fitted`]), not a 30 s window. Decodings go
//! through the server's [`LiveDecoder`], which decodes the sessions' finals first and what is
//! ready at the same moment together. One decode is asked for at a time per session, finals
//! first, and a final pre-empts a partial in flight (cancelled between two decoder steps): a
//! session that falls behind real time skips partials until it has caught up, and never drops a
//! final. With `outputConfig.revisions`, each final is read again once the next is out, over
//! the audio of its neighbours too ([`live::revision`]), and sent again when it reads otherwise:
//! after finals, their early decodings and the partials due (the decoder too takes revisions
//! last, one at a time), stopped like a partial for a final, and the first thing a session
//! behind real time gives up.
//!
//! The session ends on END, on a closed socket, on an exhausted balance, after an idle time, or
//! when the engine fails; in every case the speech already received is finalized first (unless
//! the engine failed), and then the door is told to close with the right code.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ractor::{Actor, ActorProcessingErr, ActorRef};
use scribe_domain::ids::{JobId, UserName};
use scribe_domain::languages::Language;
use scribe_domain::live::revision::Revision;
use scribe_domain::live::{
    self, LiveError, LiveErrorCode, LiveInit, LiveResult, LiveWord, PcmDecoder, WordTiming, endpoint, started_minutes,
};
use scribe_domain::style::clean_read;
use scribe_domain::transcript as doc;
use scribe_whisper::audio::StreamResampler;
use scribe_whisper::engine::{EncoderWindow, Engine, EngineError, TranscribeOptions};
use scribe_whisper::utterances::{UtteranceEvent, UtteranceParams, Utterances};
use scribe_whisper::vad::VadState;
use serde_json::json;
use tokio::sync::mpsc::UnboundedSender;

use super::agreement::Agreement;
use super::capacity::Slot;
use super::decoder::{LiveDecoder, Priority, Request};
use super::decodes::{DecodeCount as Counted, DecodeCounts};
use super::recording::Recording;
use super::{LiveOutput, LiveSettings};
use crate::billing::{Billing, SubmitError};
use crate::engine_document::to_document;
use crate::speech_model::EngineLease;

const RATE: usize = live::SAMPLE_RATE as usize;
/// A partial is decoded once the open utterance has grown by this much audio since the last.
const PARTIAL_EVERY: usize = RATE * 6 / 10;
/// ... or by this many times as long as the last partial took, from asking to answer, when
/// that is longer: under load (sessions sharing the cores, a long utterance) partials come less
/// often, a session waiting for partials at most half of the time, and finals find the decoder
/// free.
const PARTIAL_SPACING: u32 = 2;
/// The first partial of an utterance waits for this much speech.
const FIRST_PARTIAL_AFTER: usize = RATE * 4 / 10;
/// Until a partial of the utterance has shown words, the next comes after this much more
/// audio rather than [`PARTIAL_EVERY`]: the first half second often decodes to nothing, and the
/// client has seen nothing yet.
const PARTIAL_RETRY: usize = RATE * 3 / 10;
/// Finals waiting longer than this (seconds of audio received since their utterance ended)
/// make the session say it is behind real time.
const BEHIND_WARNING_S: f64 = 2.0;

/// Whether the open utterance, `spoken` samples long, is due a partial `since_last` samples
/// after its last one (its start before the first), the last one having taken `last_took`: the
/// first once it holds [`FIRST_PARTIAL_AFTER`], then each time it has grown by [`PARTIAL_EVERY`]
/// ([`PARTIAL_RETRY`] while none has `shown` words) or [`PARTIAL_SPACING`] times `last_took`,
/// whichever is more.
fn partial_due(spoken: usize, since_last: usize, last_took: Duration, shown: bool) -> bool {
    let spacing = ((last_took * PARTIAL_SPACING).as_secs_f64() * RATE as f64) as usize;
    let every = if shown { PARTIAL_EVERY } else { PARTIAL_RETRY };
    spoken >= FIRST_PARTIAL_AFTER && since_last >= every.max(spacing).min(spoken)
}

pub enum SessionMsg {
    /// A binary frame, as received.
    Audio(Vec<u8>),
    /// The client sent END.
    End,
    /// The socket closed without END.
    Disconnected,
    /// The door refused something the client sent: end with this error.
    Fail(LiveError),
    /// A decode finished.
    Decoded(Box<Decoded>),
    /// Once a second: the idle check.
    Tick,
}

pub struct Decoded {
    kind: DecodeKind,
    result: Result<scribe_whisper::Transcript, EngineError>,
}

enum DecodeKind {
    Partial {
        id: String,
    },
    /// The final of an utterance whose pause has not yet ended it.
    Early {
        range: Range<usize>,
    },
    Final {
        id: String,
        range: Range<usize>,
        partials_sent: bool,
    },
    /// A final sent earlier, read again with its neighbours (`outputConfig.revisions`).
    Revision(Pending),
}

/// The decode asked for (waiting in the server's queue, or running), and how to stop it when
/// it is no longer wanted.
struct InFlight {
    kind: Counted,
    cancel: Arc<AtomicBool>,
    /// Whether the decoder has begun it (see [`Request::started`]).
    started: Arc<AtomicBool>,
    asked: Instant,
}

/// The final of the utterance in a pause, decoded before the pause ends it.
struct Early {
    range: Range<usize>,
    state: EarlyState,
}

enum EarlyState {
    Waiting,
    Decoding,
    Done(Result<scribe_whisper::Transcript, EngineError>),
}

/// What the session was given when it opened.
pub struct SessionArgs {
    pub session_id: JobId,
    pub owner: UserName,
    pub init: LiveInit,
    pub hotwords: Vec<String>,
    pub engine: EngineLease,
    /// The operator's partials model (`--live-partials-model`) when it knows the session's
    /// language; else `engine` decodes the partials too.
    pub partials_engine: Option<EngineLease>,
    /// Pays the session's minutes.
    pub billing: Billing,
    /// The server's count of live decodings.
    pub decodes: DecodeCounts,
    /// The server's queue of live decodings, shared by its sessions.
    pub decoder: LiveDecoder,
    pub settings: LiveSettings,
    pub out: UnboundedSender<LiveOutput>,
    /// The session's place on the server: held, never read; it is freed when the session stops.
    #[allow(dead_code)]
    pub slot: Slot,
    pub recording: Option<Recording>,
}

/// An utterance being spoken.
struct Open {
    id: String,
    start: usize,
    agreement: Agreement,
    /// Stream position up to which the last partial was decoded.
    partial_at: usize,
    partials_sent: bool,
}

/// A final sent, as long as a revision may read it (the last few).
struct Sent {
    id: String,
    range: Range<usize>,
    transcript: String,
    /// Its revision has been planned (or it has none).
    revised: bool,
}

/// A final to read again, waiting for the engine (see [`live::revision`]).
struct Pending {
    id: String,
    own: Range<usize>,
    plan: Revision,
}

/// Finals a session keeps for revisions: a final is revised once the one after it is sent,
/// read with the one before it.
const SENT_KEPT: usize = 3;
/// Revisions waiting at most; older ones are dropped (a session behind its speaker).
const PENDING_KEPT: usize = 2;

/// An utterance that ended and waits for its final.
struct Ended {
    id: String,
    range: Range<usize>,
    partials_sent: bool,
}

pub struct SessionState {
    args: SessionArgs,
    engine: Arc<Engine>,
    pcm: PcmDecoder,
    resampler: Option<StreamResampler>,
    vad: VadState,
    utterances: Utterances,
    /// 16 kHz samples `base..base + audio.len()` of the stream.
    audio: Vec<f32>,
    base: usize,
    /// Samples received (16 kHz).
    received: usize,
    paid_minutes: u32,
    open: Option<Open>,
    ended: VecDeque<Ended>,
    /// The open utterance's final, while it is in a pause.
    early: Option<Early>,
    decoding: Option<InFlight>,
    /// The Whisper language code in force (detected on the first utterance for `auto`).
    language: Option<&'static str>,
    last_audio: Instant,
    /// Set once the session is ending: the close code and reason the door sends at the end.
    closing: Option<(u16, String)>,
    warned_split_sample: bool,
    warned_behind: bool,
    /// The VAD's last chunk was speech: a partial started in a pause would only delay the
    /// final that the pause may be about to bring.
    speaking: bool,
    /// How long the last partial answered took, from asking to answer (waiting included).
    partial_took: Duration,
    /// The last finals sent, and the revisions waiting (with `outputConfig.revisions`).
    sent: VecDeque<Sent>,
    revisions: VecDeque<Pending>,
}

pub struct LiveSessionActor;

impl Actor for LiveSessionActor {
    type Msg = SessionMsg;
    type State = SessionState;
    type Arguments = SessionArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<SessionMsg>,
        args: SessionArgs,
    ) -> Result<SessionState, ActorProcessingErr> {
        let engine = args.engine.shared();
        let resampler = StreamResampler::new(args.init.audio.sample_rate)?;
        let language = args.init.language.whisper_code();
        myself.send_interval(Duration::from_secs(1), || SessionMsg::Tick);
        Ok(SessionState {
            pcm: PcmDecoder::new(args.init.audio.encoding),
            resampler: Some(resampler),
            vad: VadState::new(),
            // The operator's pause (`--live-pause`) ends an utterance.
            utterances: Utterances::new(UtteranceParams::with_pause(
                u32::try_from(args.settings.pause.as_millis()).unwrap_or(u32::MAX),
            )),
            audio: Vec::new(),
            base: 0,
            received: 0,
            paid_minutes: 0,
            open: None,
            ended: VecDeque::new(),
            early: None,
            decoding: None,
            language,
            last_audio: Instant::now(),
            closing: None,
            warned_split_sample: false,
            warned_behind: false,
            speaking: false,
            partial_took: Duration::ZERO,
            sent: VecDeque::new(),
            revisions: VecDeque::new(),
            engine,
            args,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<SessionMsg>,
        msg: SessionMsg,
        state: &mut SessionState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            SessionMsg::Audio(frame) => state.receive(&frame).await,
            SessionMsg::End => state.end(1000, "the session ended"),
            SessionMsg::Disconnected => state.end(1000, "the client went away"),
            SessionMsg::Fail(error) => state.error(error),
            SessionMsg::Tick => {
                let idle = state.args.settings.idle_timeout;
                if state.closing.is_none() && state.last_audio.elapsed() >= idle {
                    state.error(LiveError::new(
                        LiveErrorCode::Idle,
                        format!("No audio for {} s: the session is closed", idle.as_secs()),
                    ));
                }
            }
            SessionMsg::Decoded(decoded) => {
                if let Some(flight) = state.decoding.take()
                    && flight.kind == Counted::Partial
                    && decoded.result.is_ok()
                {
                    state.partial_took = flight.asked.elapsed();
                }
                state.decoded(*decoded).await;
            }
        }
        state.plan_revisions();
        // Every message ends here: audio no utterance, final or revision needs is dropped once.
        state.forget_old_audio();
        state.yield_revision();
        state.schedule(&myself);
        if state.is_done() {
            if let Some(recording) = state.args.recording.take() {
                recording.finish().await;
            }
            let (code, reason) = state.closing.clone().unwrap_or((1000, String::new()));
            state.send(LiveOutput::Close { code, reason });
            myself.stop(None);
        }
        Ok(())
    }
}

impl SessionState {
    fn send(&self, output: LiveOutput) {
        // The door is gone when the client is: what was recorded stays recorded.
        let _ = self.args.out.send(output);
    }

    /// Sends `error` and ends the session with its close code.
    fn error(&mut self, error: LiveError) {
        let (code, reason) = (error.close_code, error.code.as_str().to_owned());
        self.send(LiveOutput::Error(error));
        self.end(code, &reason);
    }

    /// Stops taking audio; what was received is finalized, then the door closes with `code`.
    fn end(&mut self, code: u16, reason: &str) {
        if self.closing.is_some() {
            return;
        }
        self.closing = Some((code, reason.to_owned()));
        let tail = self.resampler.take().map(StreamResampler::finish).unwrap_or_default();
        self.take_audio(tail, true);
        self.cancel_partial();
    }

    fn is_done(&self) -> bool {
        self.closing.is_some()
            && self.decoding.is_none()
            && self.ended.is_empty()
            && self.open.is_none()
            && self.revisions.is_empty()
            && self.sent.back().is_none_or(|s| s.revised)
    }

    /// A partial or revision in flight is stopped: a final needs the engine. (A revision
    /// stopped is asked for again later.)
    fn cancel_partial(&self) {
        if let Some(flight) = self.decoding.as_ref().filter(|f| matches!(f.kind, Counted::Partial | Counted::Revision))
        {
            flight.cancel.store(true, Ordering::Relaxed);
        }
    }

    /// A revision still waiting in the decoder's queue gives way to a partial now due: it is
    /// cancelled (free while it waits) and asked for again after the partial. One the decoder
    /// has begun runs on.
    fn yield_revision(&self) {
        if let Some(flight) = self.decoding.as_ref().filter(|f| f.kind == Counted::Revision)
            && !flight.started.load(Ordering::Relaxed)
            && self.partial_due()
        {
            flight.cancel.store(true, Ordering::Relaxed);
        }
    }

    /// With revisions asked for, a final just sent (the newest of `sent`) makes the one before
    /// it ready to be read again with its neighbours; at the session's end, so is the last.
    fn plan_revisions(&mut self) {
        if !self.args.init.output.revisions {
            return;
        }
        let ending = self.closing.is_some() && self.ended.is_empty() && self.open.is_none();
        let n = self.sent.len();
        for i in 0..n {
            if self.sent[i].revised || (i + 1 == n && !ending) {
                continue;
            }
            let before = i.checked_sub(1).map(|b| &self.sent[b].range);
            let after = self.sent.get(i + 1).map(|a| &a.range);
            if let Some(plan) = Revision::plan(before, &self.sent[i].range, after) {
                self.revisions.push_back(Pending {
                    id: self.sent[i].id.clone(),
                    own: self.sent[i].range.clone(),
                    plan,
                });
            }
            self.sent[i].revised = true;
        }
        while self.revisions.len() > PENDING_KEPT {
            self.revisions.pop_front();
        }
    }

    async fn receive(&mut self, frame: &[u8]) {
        if self.closing.is_some() {
            return;
        }
        self.last_audio = Instant::now();
        let decoded = self.pcm.decode(frame);
        if decoded.split_sample && !self.warned_split_sample {
            self.warned_split_sample = true;
            self.send(LiveOutput::warning(
                "PARTIAL_SAMPLE",
                format!(
                    "A binary frame of {} bytes is not a whole number of {}-byte {} samples; its last bytes were joined to the next frame",
                    frame.len(),
                    self.args.init.audio.encoding.sample_bytes(),
                    self.args.init.audio.encoding
                ),
                json!({}),
            ));
        }
        let Some(resampler) = self.resampler.as_mut() else { return };
        let mut samples = resampler.push(&decoded.samples);
        if let Err(error) = self.pay_for(&mut samples).await {
            self.take_audio(samples, false);
            self.error(error);
            return;
        }
        self.take_audio(samples, false);
        self.warn_if_behind();
    }

    /// Pays every minute `samples` start (through the billing saga); on a balance that cannot
    /// pay, cuts `samples` at the end of the last paid minute and answers the error.
    async fn pay_for(&mut self, samples: &mut Vec<f32>) -> Result<(), LiveError> {
        let after = started_minutes((self.received + samples.len()) as u64);
        while self.paid_minutes < after {
            let minute = self.paid_minutes + 1;
            let paid = self.args.billing.charge_live_minute(&self.args.owner, &self.args.session_id, minute).await;
            if let Err(error) = paid {
                let insufficient = matches!(error, SubmitError::InsufficientBalance { .. });
                let paid_samples = self.paid_minutes as usize * 60 * RATE;
                samples.truncate(if insufficient { paid_samples.saturating_sub(self.received) } else { 0 });
                let mut refusal = super::billing_error(error, minute);
                refusal.message.push_str(if insufficient {
                    "; the session ends with the speech already paid for"
                } else {
                    "; it ends here"
                });
                return Err(refusal);
            }
            self.paid_minutes = minute;
        }
        Ok(())
    }

    /// Adds 16 kHz samples to the stream: VAD, utterance cuts, and the recording.
    fn take_audio(&mut self, samples: Vec<f32>, last: bool) {
        if let Some(recording) = self.args.recording.as_mut() {
            recording.audio(&samples);
        }
        let vad = self.engine.vad().expect("live sessions open only with a VAD");
        let mut probabilities = vad.push(&mut self.vad, &samples);
        if let Some(&p) = probabilities.last() {
            self.speaking = p >= 0.5;
        }
        self.received += samples.len();
        self.audio.extend_from_slice(&samples);
        if last {
            probabilities.push(vad.finish(std::mem::replace(&mut self.vad, VadState::new())));
        }
        let mut events = self.utterances.push(&probabilities);
        if last {
            events.extend(self.utterances.finish(self.received));
        }
        self.on_utterance_events(events);
        if last {
            self.open = None;
        }
    }

    /// What the segmenter decided: utterances open and end, pauses begin (their final is
    /// decoded early, and the pause held until those words say whether a sentence ends there).
    fn on_utterance_events(&mut self, events: Vec<UtteranceEvent>) {
        for event in events {
            match event {
                UtteranceEvent::Started { at_sample } => {
                    self.open = Some(Open {
                        id: uuid::Uuid::new_v4().to_string(),
                        start: at_sample,
                        agreement: Agreement::default(),
                        partial_at: at_sample,
                        partials_sent: false,
                    });
                }
                UtteranceEvent::Pausing { range, .. } => {
                    let range = self.clamp(range);
                    if self.open.is_some() && !range.is_empty() {
                        self.early = Some(Early { range, state: EarlyState::Waiting });
                        self.cancel_partial();
                        self.utterances.hold_pause(endpoint::HELD_PAUSE_MS);
                    }
                }
                UtteranceEvent::Resumed => {
                    // The early final is wasted; one in flight is stopped.
                    self.early = None;
                    if let Some(flight) = self.decoding.as_ref().filter(|f| f.kind == Counted::Early) {
                        flight.cancel.store(true, Ordering::Relaxed);
                    }
                }
                UtteranceEvent::Ended { range, .. } => {
                    self.cancel_partial();
                    let range = self.clamp(range);
                    // A forced cut ends the utterance elsewhere than its pause would have.
                    self.early.take_if(|e| e.range != range);
                    let open = self.open.take();
                    if range.is_empty() {
                        continue;
                    }
                    self.ended.push_back(Ended {
                        id: open.as_ref().map(|o| o.id.clone()).unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
                        range,
                        partials_sent: open.is_some_and(|o| o.partials_sent),
                    });
                }
            }
        }
    }

    /// An utterance's range within the samples received and still held.
    fn clamp(&self, range: Range<usize>) -> Range<usize> {
        range.start.max(self.base)..range.end.min(self.received)
    }

    /// Drops the samples no utterance needs any more (keeping a little for the VAD's pre-roll).
    fn forget_old_audio(&mut self) {
        let keep_from = self
            .ended
            .front()
            .map(|e| e.range.start)
            .or(self.open.as_ref().map(|o| o.start))
            .unwrap_or(self.received.saturating_sub(RATE));
        // Revisions read the finals before: the oldest waiting one's window, and the finals
        // kept (a revision of the newest reads the one before it).
        let keep_from = self
            .revisions
            .iter()
            .map(|r| r.plan.window.start)
            .chain(self.sent.iter().rev().take(2).map(|s| s.range.start))
            .fold(keep_from, usize::min);
        if keep_from > self.base {
            let drop = (keep_from - self.base).min(self.audio.len());
            self.audio.drain(..drop);
            self.base += drop;
        }
    }

    fn samples(&self, range: &Range<usize>) -> Vec<f32> {
        let a = range.start.saturating_sub(self.base).min(self.audio.len());
        let b = range.end.saturating_sub(self.base).min(self.audio.len());
        self.audio[a..b].to_vec()
    }

    /// Seconds of audio received since the oldest final-in-waiting's utterance ended.
    fn behind_s(&self) -> f64 {
        self.ended.front().map(|e| (self.received.saturating_sub(e.range.end)) as f64 / RATE as f64).unwrap_or(0.0)
    }

    fn warn_if_behind(&mut self) {
        let behind = self.behind_s();
        if behind > BEHIND_WARNING_S && !self.warned_behind {
            self.warned_behind = true;
            self.send(LiveOutput::warning(
                "BEHIND_REAL_TIME",
                format!(
                    "Transcription is {behind:.1} s behind the audio: partial results are skipped until it catches up; no final is dropped"
                ),
                json!({ "behindSeconds": (behind * 10.0).round() / 10.0 }),
            ));
        } else if self.ended.is_empty() {
            self.warned_behind = false;
        }
    }

    /// Starts the next decode when none runs: the oldest final first (taken from its early
    /// decoding when that covered the same audio), then the final of an utterance in a pause,
    /// then a partial when one is due, else a revision.
    fn schedule(&mut self, myself: &ActorRef<SessionMsg>) {
        if self.decoding.is_some() {
            return;
        }
        if let Some(next) = self.ended.front() {
            let kind =
                DecodeKind::Final { id: next.id.clone(), range: next.range.clone(), partials_sent: next.partials_sent };
            if let Some(early) = self.early.take_if(|e| e.range == next.range)
                && let EarlyState::Done(result) = early.state
            {
                self.args.decodes.count(Counted::EarlyKept);
                let _ = myself.send_message(SessionMsg::Decoded(Box::new(Decoded { kind, result })));
                self.decoding = Some(InFlight {
                    kind: Counted::EarlyKept,
                    cancel: Arc::default(),
                    started: Arc::default(),
                    asked: Instant::now(),
                });
                return;
            }
            let samples = self.samples(&next.range);
            let options = self.options(true);
            self.request_decode(myself, kind, samples, options);
            return;
        }
        if let Some(early) = self.early.as_mut().filter(|e| matches!(e.state, EarlyState::Waiting)) {
            early.state = EarlyState::Decoding;
            let range = early.range.clone();
            let samples = self.samples(&range);
            let kind = DecodeKind::Early { range };
            let options = self.options(true);
            self.request_decode(myself, kind, samples, options);
            return;
        }
        if self.behind_s() > BEHIND_WARNING_S {
            // Behind the speaker: revisions are the first thing to give up.
            self.revisions.clear();
        }
        // (One stopped while newer finals came may have lost its audio: dropped.)
        self.revisions.retain(|r| r.plan.window.start >= self.base);
        // The captions of someone speaking come before a revision, which can wait.
        if self.request_partial(myself) {
            return;
        }
        if let Some(pending) = self.revisions.pop_front() {
            let samples = self.samples(&pending.plan.window);
            let options = self.options(true);
            self.request_decode(myself, DecodeKind::Revision(pending), samples, options);
        }
    }

    /// Whether the open utterance is due a partial.
    fn partial_due(&self) -> bool {
        let Some(open) = self.open.as_ref() else { return false };
        let received = self.received;
        self.args.init.output.partials
            && self.closing.is_none()
            && self.speaking
            && partial_due(
                received.saturating_sub(open.start),
                received.saturating_sub(open.partial_at),
                self.partial_took,
                open.partials_sent,
            )
    }

    /// Asks for a partial of the open utterance when one is due; whether it did.
    fn request_partial(&mut self, myself: &ActorRef<SessionMsg>) -> bool {
        if !self.partial_due() {
            return false;
        }
        let received = self.received;
        let Some(open) = self.open.as_mut() else { return false };
        open.partial_at = received;
        let kind = DecodeKind::Partial { id: open.id.clone() };
        let range = open.start..received;
        let samples = self.samples(&range);
        let options = self.options(false);
        self.request_decode(myself, kind, samples, options);
        true
    }

    fn options(&self, for_final: bool) -> TranscribeOptions {
        let mut options = TranscribeOptions {
            language: self.language.map(str::to_owned),
            detect_among: if self.language.is_none() {
                crate::asr::AUTO_DETECT.iter().map(|s| s.to_string()).collect()
            } else {
                Vec::new()
            },
            hotwords: self.args.hotwords.clone(),
            // As the file path does: the VAD runs again inside the utterance. (Earlier finals
            // are not given as a prompt: measured, they carried their style and repeats over.)
            use_vad: true,
            encoder_window: EncoderWindow::fitted(),
            // A decoding that fails its checks is decoded again over the whole window, not
            // sampled at higher temperatures: five candidates a temperature cost a long
            // utterance seconds, and the session falls behind (measured in ops/bench/live.md).
            temperature_fallback: false,
            ..TranscribeOptions::default()
        };
        if !for_final {
            options.use_vad = false;
            options.beam_size = 1;
            options.word_timestamps = false;
            options.encoder_window = EncoderWindow::fitted_for_partials();
        }
        options
    }

    /// Asks the server's decoder for `kind`'s decoding of `samples`; the answer comes back as
    /// [`SessionMsg::Decoded`].
    fn request_decode(
        &mut self,
        myself: &ActorRef<SessionMsg>,
        kind: DecodeKind,
        samples: Vec<f32>,
        mut options: TranscribeOptions,
    ) {
        let counted = match kind {
            DecodeKind::Partial { .. } => Counted::Partial,
            DecodeKind::Early { .. } => Counted::Early,
            DecodeKind::Final { .. } => Counted::Final,
            DecodeKind::Revision(_) => Counted::Revision,
        };
        let cancel = Arc::new(AtomicBool::new(false));
        if counted != Counted::Final {
            options.cancel = Some(cancel.clone());
        }
        let started = Arc::new(AtomicBool::new(false));
        self.decoding = Some(InFlight { kind: counted, cancel, started: started.clone(), asked: Instant::now() });
        self.args.decodes.count(counted);
        let myself = myself.clone();
        let engine = match (&self.args.partials_engine, counted) {
            (Some(partials), Counted::Partial) => partials.shared(),
            _ => self.engine.clone(),
        };
        self.args.decoder.submit(Request {
            engine,
            samples,
            options,
            priority: match counted {
                Counted::Partial => Priority::Partial,
                Counted::Revision => Priority::Revision,
                _ => Priority::Final,
            },
            started,
            reply: Box::new(move |result| {
                let _ = myself.send_message(SessionMsg::Decoded(Box::new(Decoded { kind, result })));
            }),
        });
    }

    async fn decoded(&mut self, decoded: Decoded) {
        match decoded.kind {
            DecodeKind::Partial { id } => {
                if matches!(decoded.result, Err(EngineError::Cancelled)) {
                    self.args.decodes.count(Counted::PartialCancelled);
                }
                let Ok(transcript) = decoded.result else { return };
                let hypothesis: Vec<String> = transcript
                    .segments
                    .iter()
                    .flat_map(|s| s.text.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
                    .collect();
                if hypothesis.is_empty() {
                    return;
                }
                // The utterance may have ended while this was decoded: until its final is out,
                // the partial still shows the client something sooner.
                let shown = if let Some(open) = self.open.as_mut().filter(|o| o.id == id) {
                    open.partials_sent = true;
                    open.agreement.update(hypothesis)
                } else if let Some(ended) = self.ended.iter_mut().find(|e| e.id == id) {
                    ended.partials_sent = true;
                    hypothesis
                } else {
                    return;
                };
                self.send(LiveOutput::Result(LiveResult {
                    id,
                    is_final: false,
                    words: shown.into_iter().map(|word| LiveWord { word, timing: None }).collect(),
                    span: None,
                    revised: false,
                }));
            }
            DecodeKind::Early { range } => {
                // Stopped because the speaker went on: never a final. (At the end of a stream the
                // utterance can still end with the same range; it is then decoded again.)
                if matches!(decoded.result, Err(EngineError::Cancelled)) {
                    return;
                }
                if let Some(next) = self.ended.front().filter(|e| e.range == range) {
                    // The pause ended the utterance while this was decoded: it is the final.
                    let kind = DecodeKind::Final { id: next.id.clone(), range, partials_sent: next.partials_sent };
                    self.early = None;
                    self.args.decodes.count(Counted::EarlyKept);
                    Box::pin(self.decoded(Decoded { kind, result: decoded.result })).await;
                } else if let Some(early) = self.early.as_mut().filter(|e| e.range == range) {
                    // The pause was held until now: words that stop mid-sentence keep it held;
                    // otherwise it ends the utterance after the usual silence (now, if that
                    // has passed, and this decoding is its final).
                    let mid_sentence = decoded.result.as_ref().is_ok_and(|t| {
                        endpoint::holds_pause(t.segments.iter().flat_map(|s| s.text.split_whitespace()))
                    });
                    early.state = EarlyState::Done(decoded.result);
                    if !mid_sentence && let Some(ended) = self.utterances.release_pause() {
                        self.on_utterance_events(vec![ended]);
                    }
                }
                // Otherwise the speaker went on: the decoding is wasted.
            }
            DecodeKind::Revision(pending) => self.revised(pending, decoded.result),
            DecodeKind::Final { id, range, partials_sent } => {
                self.ended.pop_front();
                let transcript = match decoded.result {
                    Ok(t) => Some(t),
                    Err(EngineError::NoSpeech) => None,
                    Err(e) => {
                        self.ended.clear();
                        self.open = None;
                        self.error(LiveError::new(
                            LiveErrorCode::Internal,
                            format!("The speech engine failed on this session's audio: {e}"),
                        ));
                        return;
                    }
                };
                let offset = range.start as f64 / RATE as f64;
                let words = match transcript {
                    Some(t) => self.final_words(&t, offset),
                    None => Vec::new(),
                };
                if words.is_empty() && !partials_sent {
                    return;
                }
                let end = range.end as f64 / RATE as f64;
                let result = LiveResult { id, is_final: true, words, span: Some((offset, end)), revised: false };
                let language = self.language.and_then(Language::from_whisper).unwrap_or(self.args.init.language);
                if let Some(recording) = self.args.recording.as_mut() {
                    recording.utterance(&result, language).await;
                }
                if self.args.init.output.revisions && !result.words.is_empty() {
                    let transcript = result.transcript();
                    self.sent.push_back(Sent { id: result.id.clone(), range, transcript, revised: false });
                    if self.sent.len() > SENT_KEPT {
                        self.sent.pop_front();
                    }
                }
                self.send(LiveOutput::Result(result));
                self.warn_if_behind();
            }
        }
    }

    /// A revision's reading: its words within the final's stretch, sent as that final again
    /// when they read otherwise. One stopped for a final or a partial is asked for again; one
    /// that failed, or whose reading failed the decoder's checks (a loop on a child's babble), is
    /// dropped: the final stands.
    fn revised(&mut self, pending: Pending, result: Result<scribe_whisper::Transcript, EngineError>) {
        let transcript = match result {
            Ok(t) => t,
            Err(EngineError::Cancelled) => {
                self.args.decodes.count(Counted::RevisionCancelled);
                self.revisions.push_front(pending);
                return;
            }
            Err(_) => return,
        };
        if transcript.failed_checks() {
            return;
        }
        let offset = pending.plan.window.start as f64 / RATE as f64;
        let words: Vec<LiveWord> = self
            .final_words(&transcript, offset)
            .into_iter()
            .filter(|w| w.timing.is_some_and(|t| pending.plan.keeps(t.start, t.end)))
            .collect();
        let span = (pending.own.start as f64 / RATE as f64, pending.own.end as f64 / RATE as f64);
        let result = LiveResult { id: pending.id, is_final: true, words, span: Some(span), revised: true };
        let unchanged = self.sent.iter().any(|s| s.id == result.id && s.transcript == result.transcript());
        if !unchanged && !result.words.is_empty() {
            self.args.decodes.count(Counted::Revised);
            self.send(LiveOutput::Result(result));
        }
    }

    /// The words of a final: the engine's, at stream times, without fillers (clean read, as
    /// direct jobs default to); on the first final of an `auto` session, the language is fixed.
    fn final_words(&mut self, transcript: &scribe_whisper::Transcript, offset: f64) -> Vec<LiveWord> {
        if self.language.is_none() {
            let detected = scribe_whisper::languages::to_whisper_code(&transcript.language);
            self.language = detected;
            let code = Language::from_whisper(&transcript.language).map(Language::code).unwrap_or("en");
            self.send(LiveOutput::info(
                format!("Detected language: {code}"),
                json!({ "language": code, "languageProbability": transcript.language_probability }),
            ));
        }
        let language = self.language.and_then(Language::from_whisper).unwrap_or(self.args.init.language);
        let document = to_document(&self.args.session_id, "live", transcript);
        let document = clean_read(&document, language);
        document
            .segments
            .iter()
            .flat_map(|s| s.words.iter())
            .map(|w: &doc::Word| LiveWord {
                word: w.text.clone(),
                timing: Some(WordTiming {
                    start: round_cs(w.start + offset),
                    end: round_cs(w.end + offset),
                    confidence: w.conf as f32,
                }),
            })
            .collect()
    }
}

fn round_cs(seconds: f64) -> f64 {
    (seconds * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: usize = RATE / 1000;

    #[test]
    fn the_first_partial_comes_once_the_utterance_holds_enough_speech_however_long_the_last_took() {
        let slow = Duration::from_secs(2);
        assert!(!partial_due(300 * MS, 300 * MS, Duration::ZERO, false));
        assert!(partial_due(400 * MS, 400 * MS, Duration::ZERO, false));
        assert!(partial_due(400 * MS, 400 * MS, slow, false));
    }

    #[test]
    fn on_idle_cores_partials_come_every_0_6_s_of_speech() {
        // given a last partial that took 0.1 s, after words were shown
        let took = Duration::from_millis(100);
        // then the next is due 0.6 s of speech later, not sooner
        assert!(!partial_due(3000 * MS, 500 * MS, took, true));
        assert!(partial_due(3000 * MS, 600 * MS, took, true));
    }

    #[test]
    fn until_a_partial_shows_words_the_next_comes_after_0_3_s() {
        // given partials of an utterance that have all decoded to nothing, the last in 0.1 s
        let took = Duration::from_millis(100);
        // then the next is due 0.3 s later
        assert!(!partial_due(700 * MS, 200 * MS, took, false));
        assert!(partial_due(700 * MS, 300 * MS, took, false));
        // but no sooner than twice what the last took
        assert!(!partial_due(1000 * MS, 300 * MS, Duration::from_millis(200), false));
    }

    #[test]
    fn under_load_partials_wait_twice_as_long_as_the_last_one_took() {
        // given a last partial that took 0.8 s (waiting behind other sessions' decodings)
        let took = Duration::from_millis(800);
        // then the next waits for 1.6 s of speech, whether or not words were shown
        for shown in [true, false] {
            assert!(!partial_due(5000 * MS, 1500 * MS, took, shown));
            assert!(partial_due(5000 * MS, 1600 * MS, took, shown));
        }
    }
}
