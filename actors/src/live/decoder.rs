//! The server's one queue of live decodings, so that sessions share the engine.
//!
//! A decoder step reads all of the decoder's weights however many hypotheses it carries; two
//! sessions decoding apart read them twice, and one session's partial used to hold another's
//! final on the same two cores. Every session's decodings come here instead, and one thread
//! takes what is waiting by [`Priority`]: the finals (and finals begun at a pause) first, all of
//! them at once, else every partial waiting, else the revisions, and decodes them together
//! ([`Engine::transcribe_together`]); after each batch it waits a moment ([`GATHER`]) for the
//! sessions it answered to ask again. A revision reads up to 30 s with a beam, so it goes alone
//! (a partial that comes due waits for the whole batch running). A final submitted while a
//! batch of partials or revisions runs stops that batch between two decoder steps (their
//! sessions ask again later), and a request cancelled while it waits is answered `Cancelled`
//! without being decoded.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use scribe_whisper::Transcript;
use scribe_whisper::engine::{Engine, EngineError, TranscribeOptions};

use super::decodes::{DecodeCount, DecodeCounts};

/// Decodings in one batch at most: every fitted window's keys and values are held at once.
const MAX_BATCH: usize = 8;
/// Revisions in one batch at most: a partial that comes due meanwhile waits for the whole batch.
const REVISIONS_AT_ONCE: usize = 1;
/// After a batch, how long the decoder waits for the sessions it has just answered to ask
/// again before it takes the next batch. Each session asks for one decoding at a time, so
/// without it two sessions alternate, each decoded alone while the other waits, and never
/// share a batch (measured: 12 of 206 decodings shared in `scribe-bench live`'s base runs).
const GATHER: Duration = Duration::from_millis(15);

/// What a decoding's answer is given to.
pub type Reply = Box<dyn FnOnce(Result<Transcript, EngineError>) + Send>;

/// One decoding a session asks for.
pub struct Request {
    pub engine: Arc<Engine>,
    pub samples: Vec<f32>,
    /// The engine's options; their `cancel` flag, once set, stops the request whether it is
    /// waiting or running.
    pub options: TranscribeOptions,
    pub priority: Priority,
    /// Set when the decoder takes the request into a batch: until then, cancelling it costs
    /// nothing.
    pub started: Arc<AtomicBool>,
    pub reply: Reply,
}

/// Which waiting decodings go first: the earlier variant, and only one variant in a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Priority {
    /// A final (or a final begun at a pause): what a client waits for.
    Final,
    /// A partial: the captions while someone speaks.
    Partial,
    /// A final read again with its neighbours (`outputConfig.revisions`): it can wait.
    Revision,
}

impl Request {
    fn cancelled(&self) -> bool {
        self.options.cancelled()
    }
}

/// A handle on the queue; cheap to clone. The thread ends when the last handle is dropped.
#[derive(Clone)]
pub struct LiveDecoder {
    requests: mpsc::Sender<Request>,
    /// The cancel flags of the batch running, while it holds partials or revisions.
    running_stoppable: Arc<Mutex<Vec<Arc<AtomicBool>>>>,
}

impl LiveDecoder {
    pub fn start(counts: DecodeCounts) -> LiveDecoder {
        let (requests, queue) = mpsc::channel();
        let running_stoppable = Arc::new(Mutex::new(Vec::new()));
        let running = running_stoppable.clone();
        std::thread::Builder::new()
            .name("live-decoder".into())
            .spawn(move || run(queue, running, counts))
            .expect("the live decoder's thread starts");
        LiveDecoder { requests, running_stoppable }
    }

    /// Queues `request`; its reply comes from the decoder's thread.
    pub fn submit(&self, request: Request) {
        if request.priority == Priority::Final {
            for cancel in self.running_stoppable.lock().expect("the running batch's lock").drain(..) {
                cancel.store(true, Ordering::Relaxed);
            }
        }
        if let Err(mpsc::SendError(request)) = self.requests.send(request) {
            (request.reply)(Err(stopped()));
        }
    }
}

fn stopped() -> EngineError {
    EngineError::Model { path: Default::default(), reason: "the live decoder has stopped".into() }
}

/// The decoder's thread: waits for requests, then decodes batches until none waits.
fn run(queue: mpsc::Receiver<Request>, running: Arc<Mutex<Vec<Arc<AtomicBool>>>>, counts: DecodeCounts) {
    let mut waiting: VecDeque<Request> = VecDeque::new();
    let mut answered = false;
    loop {
        if waiting.is_empty() && !answered {
            match queue.recv() {
                Ok(request) => waiting.push_back(request),
                Err(_) => return,
            }
        }
        if answered {
            let until = Instant::now() + GATHER;
            while let Some(left) = until.checked_duration_since(Instant::now()) {
                match queue.recv_timeout(left) {
                    Ok(request) => waiting.push_back(request),
                    Err(mpsc::RecvTimeoutError::Timeout) => break,
                    Err(mpsc::RecvTimeoutError::Disconnected) => return,
                }
            }
        }
        waiting.extend(queue.try_iter());
        let batch = next_batch(&mut waiting);
        answered = !batch.is_empty();
        if batch.is_empty() {
            continue;
        }
        if batch[0].priority != Priority::Final {
            let mut flags = running.lock().expect("the running batch's lock");
            *flags = batch.iter().filter_map(|r| r.options.cancel.clone()).collect();
        }
        if batch.len() > 1 {
            (0..batch.len()).for_each(|_| counts.count(DecodeCount::Shared));
        }
        batch.iter().for_each(|r| r.started.store(true, Ordering::Relaxed));
        decode(batch);
        running.lock().expect("the running batch's lock").clear();
    }
}

/// Takes the next batch from `waiting` (see [`choose`]); requests cancelled while they waited
/// are answered here.
fn next_batch(waiting: &mut VecDeque<Request>) -> Vec<Request> {
    let (cancelled, kept): (Vec<Request>, Vec<Request>) = waiting.drain(..).partition(Request::cancelled);
    for request in cancelled {
        (request.reply)(Err(EngineError::Cancelled));
    }
    let keys: Vec<(Priority, usize)> = kept.iter().map(|r| (r.priority, Arc::as_ptr(&r.engine) as usize)).collect();
    let chosen = choose(&keys);
    let (mut batch, mut rest) = (Vec::new(), VecDeque::new());
    for (i, request) in kept.into_iter().enumerate() {
        if chosen.contains(&i) { batch.push(request) } else { rest.push_back(request) }
    }
    *waiting = rest;
    batch
}

/// The next batch among requests waiting in arrival order, each given as (priority, engine):
/// those of the first priority waiting; at most [`MAX_BATCH`], oldest first, all for the oldest
/// one's engine. Indices into `waiting`.
fn choose(waiting: &[(Priority, usize)]) -> Vec<usize> {
    let Some(first) = waiting.iter().map(|w| w.0).min() else { return Vec::new() };
    let Some(&(_, engine)) = waiting.iter().find(|w| w.0 == first) else { return Vec::new() };
    let most = if first == Priority::Revision { REVISIONS_AT_ONCE } else { MAX_BATCH };
    (0..waiting.len()).filter(|&i| waiting[i] == (first, engine)).take(most).collect()
}

/// Decodes a batch and answers every request in it (an engine panic answers them all with an
/// error: a session must never wait forever).
fn decode(batch: Vec<Request>) {
    let engine = batch[0].engine.clone();
    let items: Vec<(&[f32], &TranscribeOptions)> = batch.iter().map(|r| (r.samples.as_slice(), &r.options)).collect();
    let results = std::panic::catch_unwind(AssertUnwindSafe(|| engine.transcribe_together(&items)));
    drop(items);
    match results {
        Ok(results) => {
            for (request, result) in batch.into_iter().zip(results) {
                (request.reply)(result);
            }
        }
        Err(_) => {
            for request in batch {
                (request.reply)(Err(EngineError::Model {
                    path: engine.info().model_dir.clone(),
                    reason: "the decoder stopped on an internal error".into(),
                }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Priority::*;
    use super::*;

    #[test]
    fn finals_go_first_all_together_oldest_first() {
        // given partials of three sessions and finals of two, waiting in this order
        let waiting = [(Partial, 1), (Final, 1), (Partial, 1), (Final, 1), (Partial, 1)];
        // when the next batch is chosen, then it is both finals
        assert_eq!(choose(&waiting), vec![1, 3]);
    }

    #[test]
    fn partials_go_together_when_no_final_waits() {
        assert_eq!(choose(&[(Partial, 1), (Partial, 1), (Partial, 1)]), vec![0, 1, 2]);
        assert_eq!(choose(&[]), Vec::<usize>::new());
    }

    #[test]
    fn revisions_wait_for_partials_and_go_alone() {
        // given a revision waiting before two partials
        let waiting = [(Revision, 1), (Partial, 1), (Partial, 1)];
        // when the next batch is chosen, then it is the partials alone
        assert_eq!(choose(&waiting), vec![1, 2]);
        // and with nothing else waiting, the revisions go one at a time, oldest first
        assert_eq!(choose(&[(Revision, 1), (Revision, 1)]), vec![0]);
    }

    #[test]
    fn a_batch_holds_one_engine_and_at_most_the_limit() {
        // given finals for two engines (a model reloaded while sessions ran) and many partials
        let waiting = [(Final, 2), (Final, 1), (Final, 2)];
        assert_eq!(choose(&waiting), vec![0, 2]);
        let many = vec![(Partial, 1); MAX_BATCH + 3];
        assert_eq!(choose(&many), (0..MAX_BATCH).collect::<Vec<_>>());
    }
}
