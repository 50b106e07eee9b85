//! Cutting a live audio stream into utterances, from the VAD's speech probabilities alone.
//!
//! A live session cannot wait for the end of the recording as the file path does
//! ([`crate::vad::speech_spans`] looks at every probability first): it must decide, chunk by
//! chunk (512 samples, 32 ms), when someone starts talking and when they have finished, so each
//! finished utterance is decoded once, whole, as soon as its speech ends. The rules are the
//! VAD's hysteresis with live-sized constants: speech starts at a probability ≥ `threshold`,
//! ends after `min_silence` below `neg_threshold`; a `pre_roll` before the start and `padding`
//! after the end give Whisper the edges of the words; bursts shorter than `min_speech` are
//! noise, not utterances; and a speaker who never pauses is cut at the quietest chunk of the
//! last seconds before `max_len`, so no utterance outgrows Whisper's 30 s window. A pause that
//! has lasted the padding is announced (`Pausing`, with the range the utterance will have if it
//! lasts), so a final can be decoded before the pause is long enough to end the utterance.
//!
//! The rules are pure: no model, no I/O, so they are tested on synthetic probability sequences.
//! [`of_recording`] runs them with the VAD over a whole recording, as a session streams it, for
//! the benchmarks and tests that cut recordings as sessions do.

use std::ops::Range;

use crate::audio::SAMPLE_RATE;
use crate::vad::{CHUNK, SileroVad, VadState};

/// Every event of `samples` streamed through `vad` and a segmenter with the default settings
/// in 100 ms pieces, as a live session receives them, to the stream's end.
pub fn of_recording(vad: &SileroVad, samples: &[f32]) -> Vec<UtteranceEvent> {
    of_recording_with(vad, samples, UtteranceParams::default())
}

/// [`of_recording`] with a segmenter of other settings.
pub fn of_recording_with(vad: &SileroVad, samples: &[f32], params: UtteranceParams) -> Vec<UtteranceEvent> {
    let mut events = Vec::new();
    let streamed = stream_recording(vad, samples, params, |_, event| {
        events.push(event);
        Ok::<_, std::convert::Infallible>(())
    });
    match streamed {
        Ok(()) => events,
    }
}

/// Streams `samples` as [`of_recording_with`] does, handing `each` every event as it is decided
/// with the segmenter, so that the caller can act on it before the stream goes on (hold a pause,
/// as a live session does); stops at `each`'s first error.
pub fn stream_recording<E>(
    vad: &SileroVad,
    samples: &[f32],
    params: UtteranceParams,
    mut each: impl FnMut(&mut Utterances, UtteranceEvent) -> Result<(), E>,
) -> Result<(), E> {
    let mut state = VadState::new();
    let mut segmenter = Utterances::new(params);
    for piece in samples.chunks(SAMPLE_RATE as usize / 10) {
        let probabilities = vad.push(&mut state, piece);
        for event in segmenter.push(&probabilities) {
            each(&mut segmenter, event)?;
        }
    }
    let mut last = segmenter.push(&[vad.finish(state)]);
    last.extend(segmenter.finish(samples.len()));
    for event in last {
        each(&mut segmenter, event)?;
    }
    Ok(())
}

/// Samples per second of the stream.
const RATE: usize = 16_000;
/// Whisper's window: no utterance may be longer.
const WHISPER_WINDOW: usize = 30 * RATE;

/// The rules of [`Utterances`]; `Default` is tuned for live captions.
#[derive(Clone, Debug, PartialEq)]
pub struct UtteranceParams {
    /// A chunk at or above this probability is speech (starts an utterance).
    pub threshold: f32,
    /// Below this a chunk is silence; in between it continues what was going on.
    pub neg_threshold: f32,
    /// Silence that ends an utterance (ms).
    pub min_silence_ms: u32,
    /// Audio kept before the first speech chunk (ms).
    pub pre_roll_ms: u32,
    /// Audio kept after the last speech chunk (ms; at most `min_silence_ms`).
    pub padding_ms: u32,
    /// Speech shorter than this is a blip and never becomes an utterance (ms).
    pub min_speech_ms: u32,
    /// An utterance reaching this length (s, pre-roll included) is cut without a pause; taken
    /// as 1 to 30 s (Whisper's window), and meant to be well above `cut_search_s`.
    pub max_len_s: f32,
    /// The forced cut falls at the quietest chunk of this many last seconds (s).
    pub cut_search_s: f32,
}

impl UtteranceParams {
    /// The defaults with `min_silence_ms` as the pause that ends an utterance, the padding kept
    /// after the last speech never longer than that pause.
    pub fn with_pause(min_silence_ms: u32) -> UtteranceParams {
        let defaults = UtteranceParams::default();
        UtteranceParams { min_silence_ms, padding_ms: defaults.padding_ms.min(min_silence_ms), ..defaults }
    }
}

impl Default for UtteranceParams {
    fn default() -> Self {
        UtteranceParams {
            threshold: 0.5,
            neg_threshold: 0.35,
            min_silence_ms: 500,
            pre_roll_ms: 200,
            padding_ms: 200,
            min_speech_ms: 100,
            max_len_s: 25.0,
            cut_search_s: 5.0,
        }
    }
}

/// What the segmenter decided, in samples of the stream (16 kHz, from its first sample).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UtteranceEvent {
    /// An utterance began (reported once it has lasted `min_speech`); it covers the stream from
    /// `at_sample` (its pre-roll included) and will end with an [`UtteranceEvent::Ended`] whose
    /// range starts there.
    Started { at_sample: usize },
    /// The speech paused long enough for the utterance's padding to be heard: if the pause
    /// lasts, the utterance ends with exactly this `range` and `speech_end`, so its final can
    /// be decoded now, before the pause is long enough to end it (followed by `Resumed` or by
    /// `Ended`; an `Ended` with another range replaces it).
    Pausing { range: Range<usize>, speech_end: usize },
    /// Speech came back inside the pause a `Pausing` announced: the utterance goes on.
    Resumed,
    /// The utterance is over: decode the samples of `range` (pre-roll and padding included).
    /// `speech_end` is where its speech stopped (the end of the last speech chunk, or the cut):
    /// the moment a final's latency is measured from.
    Ended { range: Range<usize>, speech_end: usize },
}

/// The utterance being heard.
#[derive(Clone, Debug)]
struct Open {
    /// First sample of the utterance (pre-roll included).
    start: usize,
    /// First speech chunk.
    speech_start: usize,
    /// First chunk of the silence going on now, if any.
    silence_since: Option<usize>,
    /// Lasted `min_speech`: `Started` was reported.
    confirmed: bool,
    /// `Pausing` was reported for the silence going on now.
    pausing: bool,
    /// The silence going on now ends the utterance only after this many chunks, not after
    /// `min_silence_ms` ([`Utterances::hold_pause`]); forgotten when speech resumes.
    held_chunks: Option<usize>,
    /// Probabilities of the chunks from `first_chunk` on (for the forced cut).
    probs: Vec<f32>,
    first_chunk: usize,
}

/// A streaming segmenter over VAD chunk probabilities: push them as they come, get
/// [`UtteranceEvent`]s. Utterances are reported in order and never overlap.
#[derive(Clone, Debug)]
pub struct Utterances {
    params: UtteranceParams,
    /// Chunks seen so far.
    chunks: usize,
    /// End of the last reported utterance: the next one starts no earlier.
    last_end: usize,
    open: Option<Open>,
}

impl Utterances {
    pub fn new(params: UtteranceParams) -> Utterances {
        Utterances { params, chunks: 0, last_end: 0, open: None }
    }

    /// The first sample of the utterance under way, once `Started` was reported.
    pub fn open_since(&self) -> Option<usize> {
        self.open.as_ref().filter(|o| o.confirmed).map(|o| o.start)
    }

    /// Asks the pause going on now (announced by `Pausing`) to last `ms` before it ends the
    /// utterance, rather than `min_silence_ms`: a live session holds a pause until it knows
    /// whether the words before it end a sentence, and holds on when they do not, so that a
    /// speaker who goes on after a breath is not cut there. The `Ended` that follows has the
    /// range `Pausing` announced. False when no pause is going on (the utterance ended already,
    /// or speech resumed); a later pause is not held.
    pub fn hold_pause(&mut self, ms: u32) -> bool {
        let chunks = self.chunks_for(ms.max(self.params.min_silence_ms));
        match self.open.as_mut() {
            Some(open) if open.pausing => {
                open.held_chunks = Some(chunks);
                true
            }
            _ => false,
        }
    }

    /// Lets the pause going on now end the utterance after `min_silence_ms` again, undoing
    /// [`Utterances::hold_pause`]: when it has lasted that long already, the utterance ends now
    /// (the `Ended` is returned). Nothing when no pause is held.
    pub fn release_pause(&mut self) -> Option<UtteranceEvent> {
        let silence_chunks = self.chunks_for(self.params.min_silence_ms);
        let open = self.open.as_mut()?;
        open.held_chunks.take()?;
        let since = open.silence_since?;
        if self.chunks - since < silence_chunks {
            return None;
        }
        let mut events = Vec::new();
        self.end_in_pause(since, self.chunks, &mut events);
        events.pop()
    }

    /// Samples of the stream covered by the probabilities pushed so far.
    pub fn position(&self) -> usize {
        self.chunks * CHUNK
    }

    /// Takes the probabilities of the next chunks (in stream order, one per 512 samples, as
    /// [`crate::vad::SileroVad::push`] returns them) and reports what they decided.
    pub fn push(&mut self, probs: &[f32]) -> Vec<UtteranceEvent> {
        let mut events = Vec::new();
        for &p in probs {
            self.step(p, &mut events);
            self.chunks += 1;
        }
        events
    }

    /// The stream ended after `stream_len` samples (push the VAD's last probability first):
    /// an utterance under way ends here, its padding cut at the end of the stream.
    pub fn finish(&mut self, stream_len: usize) -> Option<UtteranceEvent> {
        let open = self.open.take()?;
        if !open.confirmed {
            return None;
        }
        let speech_end =
            open.silence_since.map_or(stream_len, |s| s * CHUNK).min(stream_len).min(open.start + self.max_len());
        let end = (speech_end + self.samples(self.params.padding_ms))
            .min(stream_len)
            .min(open.start + self.max_len())
            .max(open.start);
        self.last_end = end;
        Some(UtteranceEvent::Ended { range: open.start..end, speech_end: speech_end.max(open.start) })
    }

    fn samples(&self, ms: u32) -> usize {
        ms as usize * RATE / 1000
    }

    /// The longest utterance, in samples (1 to 30 s).
    fn max_len(&self) -> usize {
        ((self.params.max_len_s * RATE as f32) as usize).clamp(RATE, WHISPER_WINDOW)
    }

    /// Chunks (rounded up) that last at least `ms`.
    fn chunks_for(&self, ms: u32) -> usize {
        self.samples(ms).div_ceil(CHUNK)
    }

    /// Chunk `self.chunks` has probability `p`.
    fn step(&mut self, p: f32, events: &mut Vec<UtteranceEvent>) {
        let i = self.chunks;
        let (padding, pause_chunks, silence_chunks, max_len) = (
            self.samples(self.params.padding_ms),
            self.chunks_for(self.params.padding_ms),
            self.chunks_for(self.params.min_silence_ms),
            self.max_len(),
        );
        let prm = &self.params;
        let Some(open) = self.open.as_mut() else {
            if p >= prm.threshold {
                let start = (i * CHUNK).saturating_sub(self.samples(prm.pre_roll_ms)).max(self.last_end);
                self.open = Some(Open {
                    start,
                    speech_start: i,
                    silence_since: None,
                    confirmed: false,
                    pausing: false,
                    held_chunks: None,
                    probs: vec![p],
                    first_chunk: i,
                });
                self.confirm(events);
            }
            return;
        };
        open.probs.push(p);
        if p >= prm.threshold {
            open.silence_since = None;
            open.held_chunks = None;
            if std::mem::take(&mut open.pausing) {
                events.push(UtteranceEvent::Resumed);
            }
        } else if p < prm.neg_threshold && open.silence_since.is_none() {
            open.silence_since = Some(i);
        }
        // The pause has lasted the padding (and not yet `min_silence`): the range is known.
        if let Some(s) = open.silence_since
            && open.confirmed
            && !open.pausing
            && (i + 1 - s) >= pause_chunks
            && (i + 1 - s) < silence_chunks
        {
            open.pausing = true;
            let max_end = open.start + max_len;
            let speech_end = (s * CHUNK).clamp(open.start, max_end);
            let end = (speech_end + padding).min((i + 1) * CHUNK).min(max_end);
            events.push(UtteranceEvent::Pausing { range: open.start..end, speech_end });
        }
        if let Some(s) = open.silence_since
            && (i + 1 - s) >= open.held_chunks.unwrap_or(silence_chunks)
        {
            self.end_in_pause(s, i + 1, events);
            return;
        }
        self.confirm(events);
        self.cut_if_too_long(events);
    }

    /// Ends the open utterance in the silence that began at chunk `silence_since`, `now` chunks
    /// into the stream (reported if it was confirmed).
    fn end_in_pause(&mut self, silence_since: usize, now: usize, events: &mut Vec<UtteranceEvent>) {
        let open = self.open.take().expect("an open utterance");
        if open.confirmed {
            let max_end = open.start + self.max_len();
            let speech_end = (silence_since * CHUNK).clamp(open.start, max_end);
            let end = (speech_end + self.samples(self.params.padding_ms)).min(now * CHUNK).min(max_end);
            self.last_end = end;
            events.push(UtteranceEvent::Ended { range: open.start..end, speech_end });
        }
    }

    /// Reports `Started` once the open utterance has lasted `min_speech`.
    fn confirm(&mut self, events: &mut Vec<UtteranceEvent>) {
        let min_speech = self.chunks_for(self.params.min_speech_ms);
        let now = self.chunks + 1;
        if let Some(open) = self.open.as_mut()
            && !open.confirmed
            && open.silence_since.unwrap_or(now).saturating_sub(open.speech_start) >= min_speech.max(1)
        {
            open.confirmed = true;
            events.push(UtteranceEvent::Started { at_sample: open.start });
        }
    }

    /// An utterance as long as `max_len` ends at the quietest chunk of its last `cut_search`
    /// seconds (the middle of that chunk), and the next one starts right there.
    fn cut_if_too_long(&mut self, events: &mut Vec<UtteranceEvent>) {
        let max_len = self.max_len();
        let search = ((self.params.cut_search_s * RATE as f32) as usize / CHUNK).max(1);
        let now = self.chunks + 1;
        let Some(open) = self.open.as_mut() else { return };
        if now * CHUNK - open.start < max_len {
            return;
        }
        // Candidates: the last `search` chunks, never the utterance's first chunk, nor one whose
        // middle lies beyond `max_len`.
        let to = now.min((open.start + max_len - CHUNK / 2) / CHUNK + 1);
        let from = to.saturating_sub(search).max(open.first_chunk + 1);
        let quietest = (from..to)
            .min_by(|&a, &b| {
                let (pa, pb) = (open.probs[a - open.first_chunk], open.probs[b - open.first_chunk]);
                // On a tie the later chunk wins: the longer utterance.
                pa.total_cmp(&pb).then(b.cmp(&a))
            })
            .unwrap_or(to - 1)
            .max(open.first_chunk);
        let cut = (quietest * CHUNK + CHUNK / 2).max(open.start + 1);
        // A cut inside a silence that began earlier: the speech ended where the silence began.
        let speech_end =
            open.silence_since.filter(|&s| s <= quietest).map_or(cut, |s| (s * CHUNK).clamp(open.start, cut));
        let confirmed = open.confirmed;
        let start = open.start;
        let rest = open.probs.split_off(quietest + 1 - open.first_chunk);
        let silence_since = open.silence_since.map(|s| s.max(quietest + 1));
        self.open = Some(Open {
            start: cut,
            speech_start: quietest + 1,
            silence_since,
            confirmed: false,
            pausing: false,
            held_chunks: None,
            probs: rest,
            first_chunk: quietest + 1,
        });
        self.last_end = cut;
        if confirmed {
            events.push(UtteranceEvent::Ended { range: start..cut, speech_end });
        }
        self.confirm(events);
    }
}

impl Default for Utterances {
    fn default() -> Self {
        Utterances::new(UtteranceParams::default())
    }
}

#[cfg(test)]
mod tests {
    use super::UtteranceEvent::{Ended, Pausing, Resumed, Started};
    use super::*;

    const SPEECH: f32 = 0.9;
    const SILENCE: f32 = 0.05;
    /// Chunks per second (31.25).
    fn chunks(seconds: f32) -> usize {
        (seconds * RATE as f32 / CHUNK as f32).round() as usize
    }
    fn run(seq: &[(f32, usize)]) -> Vec<f32> {
        seq.iter().flat_map(|&(p, n)| std::iter::repeat_n(p, n)).collect()
    }
    fn all_events(u: &mut Utterances, probs: &[f32]) -> Vec<UtteranceEvent> {
        let mut ev = u.push(probs);
        ev.extend(u.finish(probs.len() * CHUNK));
        ev
    }

    #[test]
    fn one_utterance_between_silences() {
        // Given 1 s of silence, 2 s of speech, 1 s of silence
        let probs = run(&[(SILENCE, 31), (SPEECH, 62), (SILENCE, 31)]);
        let mut u = Utterances::default();
        // When they are pushed one by one
        let mut events = Vec::new();
        for (i, &p) in probs.iter().enumerate() {
            let ev = u.push(&[p]);
            if !ev.is_empty() {
                events.push((i, ev));
            }
        }
        // Then it starts 100 ms in (4th speech chunk), with 200 ms of pre-roll…
        let speech_start = 31 * CHUNK;
        assert_eq!(events[0], (31 + 3, vec![Started { at_sample: speech_start - 3200 }]));
        // …is announced as pausing once its 200 ms of padding were heard…
        let speech_end = 93 * CHUNK;
        let range = speech_start - 3200..speech_end + 3200;
        assert_eq!(events[1], (93 + 6, vec![Pausing { range: range.clone(), speech_end }]));
        // …and ends 500 ms into the silence with the same range.
        assert_eq!(events[2], (93 + 15, vec![Ended { range, speech_end }]));
        assert_eq!(events.len(), 3);
        assert_eq!(u.finish(probs.len() * CHUNK), None);
    }

    #[test]
    fn short_pauses_do_not_split_and_long_ones_do() {
        // Given speech, a 300 ms pause, speech, a 600 ms pause, speech
        let probs = run(&[(SPEECH, 30), (SILENCE, 9), (SPEECH, 30), (SILENCE, 19), (SPEECH, 30), (SILENCE, 40)]);
        // When segmented
        let events = all_events(&mut Utterances::default(), &probs);
        // Then the 300 ms pause stays inside the first utterance
        let ends: Vec<(Range<usize>, usize)> = events
            .iter()
            .filter_map(|e| match e {
                Ended { range, speech_end } => Some((range.clone(), *speech_end)),
                _ => None,
            })
            .collect();
        assert_eq!(ends.len(), 2, "{events:?}");
        assert_eq!(ends[0], (0..69 * CHUNK + 3200, 69 * CHUNK));
        let second = 88 * CHUNK;
        assert_eq!(ends[1], (second - 3200..118 * CHUNK + 3200, 118 * CHUNK));
        assert_eq!(events.iter().filter(|e| matches!(e, Started { .. })).count(), 2);
    }

    #[test]
    fn blips_are_ignored() {
        // Given isolated 64 ms and 96 ms bursts of high probability in silence
        let probs = run(&[(SILENCE, 20), (SPEECH, 2), (SILENCE, 30), (SPEECH, 3), (SILENCE, 30)]);
        // Then nothing is reported, also at the end of the stream
        assert_eq!(all_events(&mut Utterances::default(), &probs), vec![]);
        // But 128 ms of speech is an utterance
        let probs = run(&[(SILENCE, 20), (SPEECH, 4), (SILENCE, 30)]);
        let events = all_events(&mut Utterances::default(), &probs);
        assert!(matches!(events[..], [Started { .. }, Pausing { .. }, Ended { .. }]), "{events:?}");
    }

    #[test]
    fn speech_inside_the_pause_resumes_the_utterance() {
        // Given speech, a 300 ms pause (longer than the padding, shorter than the minimum
        // silence), more speech and a long silence
        let probs = run(&[(SPEECH, 30), (SILENCE, 9), (SPEECH, 30), (SILENCE, 20)]);
        // When segmented
        let events = all_events(&mut Utterances::default(), &probs);
        // Then the pause is announced with the range the utterance would have had, taken back
        // when the speech resumes, and the one utterance ends with the longer range
        let first_end = 30 * CHUNK;
        let second_end = 69 * CHUNK;
        assert_eq!(
            events,
            vec![
                Started { at_sample: 0 },
                Pausing { range: 0..first_end + 3200, speech_end: first_end },
                Resumed,
                Pausing { range: 0..second_end + 3200, speech_end: second_end },
                Ended { range: 0..second_end + 3200, speech_end: second_end },
            ]
        );
    }

    #[test]
    fn a_held_pause_ends_the_utterance_later_with_the_range_announced() {
        // Given speech, then silence
        let probs = run(&[(SPEECH, 30), (SILENCE, 40)]);
        let mut u = Utterances::default();
        assert!(!u.hold_pause(1000), "no pause yet");
        // (the pause is announced in its 7th chunk, 224 ms in)
        let mut events = u.push(&probs[..37]);
        let speech_end = 30 * CHUNK;
        let range = 0..speech_end + 3200;
        assert_eq!(events.pop(), Some(Pausing { range: range.clone(), speech_end }));
        // When the pause is held for 1 s once announced
        assert!(u.hold_pause(1000));
        // Then 500 ms of silence (16 chunks) no longer end the utterance, and 1 s (32) does,
        // with the same range
        assert_eq!(u.push(&probs[37..30 + 31]), vec![]);
        assert_eq!(u.push(&probs[30 + 31..30 + 32]), vec![Ended { range, speech_end }]);
        assert!(!u.hold_pause(1000), "the utterance ended");
    }

    #[test]
    fn a_released_pause_ends_the_utterance_at_once_if_it_lasted_the_usual_silence() {
        let probs = run(&[(SPEECH, 30), (SILENCE, 40)]);
        let speech_end = 30 * CHUNK;
        let range = 0..speech_end + 3200;
        // Given a pause held as it is announced
        let mut u = Utterances::default();
        u.push(&probs[..37]);
        assert!(u.hold_pause(1000));
        // When it is released before 500 ms, nothing ends yet; the usual 500 ms end it
        assert_eq!(u.release_pause(), None);
        assert_eq!(u.push(&probs[37..30 + 15]), vec![]);
        assert_eq!(u.push(&probs[30 + 15..30 + 16]), vec![Ended { range: range.clone(), speech_end }]);
        // And released after 700 ms, it ends the utterance there and then
        let mut u = Utterances::default();
        u.push(&probs[..37]);
        assert!(u.hold_pause(1000));
        assert_eq!(u.push(&probs[37..30 + 22]), vec![]);
        assert_eq!(u.release_pause(), Some(Ended { range, speech_end }));
        assert_eq!(u.release_pause(), None);
        assert_eq!(u.push(&probs[30 + 22..]), vec![]);
    }

    #[test]
    fn a_hold_lasts_only_for_the_pause_it_was_asked_in() {
        // Given a pause held for 1 s, and speech resuming 700 ms into it
        let probs = run(&[(SPEECH, 30), (SILENCE, 22), (SPEECH, 30), (SILENCE, 20)]);
        let mut u = Utterances::default();
        u.push(&probs[..37]);
        assert!(u.hold_pause(1000));
        // When the rest is pushed
        let events = u.push(&probs[37..]);
        // Then the utterance goes on through the held pause, and the next pause ends it after
        // the usual 500 ms
        let second_end = 82 * CHUNK;
        assert_eq!(
            events,
            vec![
                Resumed,
                Pausing { range: 0..second_end + 3200, speech_end: second_end },
                Ended { range: 0..second_end + 3200, speech_end: second_end },
            ]
        );
    }

    #[test]
    fn middling_probabilities_continue_the_current_state() {
        // Given speech followed by 1 s at 0.4 (between the thresholds), then silence
        let probs = run(&[(SILENCE, 10), (SPEECH, 20), (0.4, 31), (SILENCE, 20)]);
        let events = all_events(&mut Utterances::default(), &probs);
        // Then the 0.4 chunks count as speech, and the utterance ends when the silence does
        let speech_end = 61 * CHUNK;
        assert_eq!(events.last(), Some(&Ended { range: 10 * CHUNK - 3200..speech_end + 3200, speech_end }));
        // And 0.4 after silence does not start anything
        assert_eq!(all_events(&mut Utterances::default(), &run(&[(0.4, 100)])), vec![]);
    }

    #[test]
    fn end_of_stream_flushes_the_open_utterance() {
        // Given speech until the stream ends 100 ms after a pause began
        let probs = run(&[(SILENCE, 10), (SPEECH, 40), (SILENCE, 3)]);
        let mut u = Utterances::default();
        assert_eq!(u.push(&probs), vec![Started { at_sample: 10 * CHUNK - 3200 }]);
        assert_eq!(u.open_since(), Some(10 * CHUNK - 3200));
        // When it is finished at a sample inside the last chunk
        let len = 52 * CHUNK + 100;
        // Then the utterance ends with its padding cut at the end of the stream
        let speech_end = 50 * CHUNK;
        assert_eq!(u.finish(len), Some(Ended { range: 10 * CHUNK - 3200..len, speech_end }));
        assert_eq!(u.open_since(), None);
        // And speech running to the very end ends there
        let mut u = Utterances::default();
        u.push(&run(&[(SPEECH, 40)]));
        let len = 40 * CHUNK;
        assert_eq!(u.finish(len), Some(Ended { range: 0..len, speech_end: len }));
    }

    #[test]
    fn pre_roll_never_reaches_into_the_previous_utterance() {
        // Given a configuration where pre-roll + padding exceed the silence that splits
        let params = UtteranceParams { min_silence_ms: 300, pre_roll_ms: 400, padding_ms: 300, ..Default::default() };
        let probs = run(&[(SPEECH, 20), (SILENCE, 10), (SPEECH, 20), (SILENCE, 20)]);
        let events = all_events(&mut Utterances::new(params), &probs);
        let ranges: Vec<Range<usize>> = events
            .iter()
            .filter_map(|e| match e {
                Ended { range, .. } => Some(range.clone()),
                _ => None,
            })
            .collect();
        // Then the second starts where the first ended
        assert_eq!(ranges.len(), 2, "{events:?}");
        assert_eq!(ranges[1].start, ranges[0].end);
        assert_eq!(events[2], Started { at_sample: ranges[0].end });
    }

    #[test]
    fn a_speaker_who_never_pauses_is_cut_at_the_quietest_chunk() {
        // Given 40 s of speech whose only dip (0.6) is at 22 s, and a milder one (0.7) at 18 s
        let mut probs = run(&[(SPEECH, chunks(40.0))]);
        let dip = chunks(22.0);
        probs[dip] = 0.6;
        probs[chunks(18.0)] = 0.7;
        let mut u = Utterances::default();
        // When pushed
        let events = u.push(&probs);
        // Then the first utterance is cut in the middle of the dip chunk, reported when it
        // reached 25 s, and the next one starts right there
        let cut = dip * CHUNK + CHUNK / 2;
        assert_eq!(events[0], Started { at_sample: 0 });
        assert_eq!(events[1], Ended { range: 0..cut, speech_end: cut });
        assert_eq!(events[2], Started { at_sample: cut });
        // And the rest (18 s) is flushed at the end
        assert_eq!(events.len(), 3, "{events:?}");
        let len = probs.len() * CHUNK;
        assert_eq!(u.finish(len), Some(Ended { range: cut..len, speech_end: len }));
    }

    #[test]
    fn a_forced_cut_stays_within_the_search_window_and_the_length_limit() {
        // Given 70 s of flat speech (no dip anywhere), after 2 s of silence
        let probs = run(&[(SILENCE, chunks(2.0)), (SPEECH, chunks(70.0))]);
        let events = all_events(&mut Utterances::default(), &probs);
        let ranges: Vec<Range<usize>> = events
            .iter()
            .filter_map(|e| match e {
                Ended { range, .. } => Some(range.clone()),
                _ => None,
            })
            .collect();
        // Then every utterance is at most 25 s and, but the last, at least 20 s; they tile the
        // speech without gaps
        assert_eq!(ranges.len(), 3, "{ranges:?}");
        for (k, r) in ranges.iter().enumerate() {
            assert!(r.len() <= 25 * RATE, "{r:?}");
            if k + 1 < ranges.len() {
                assert!(r.len() >= 20 * RATE, "{r:?}");
                assert_eq!(r.end, ranges[k + 1].start);
            }
        }
        assert_eq!(ranges[0].start, chunks(2.0) * CHUNK - 3200);
        assert_eq!(ranges[2].end, probs.len() * CHUNK);
        // And a longer limit is capped at Whisper's 30 s window
        let params = UtteranceParams { max_len_s: 45.0, ..Default::default() };
        let events = all_events(&mut Utterances::new(params), &probs);
        assert!(events.iter().all(|e| match e {
            Ended { range, .. } => range.len() <= WHISPER_WINDOW,
            _ => true,
        }));
    }

    #[test]
    fn silence_after_a_forced_cut_ends_nothing_twice() {
        // Given 24.9 s of speech, then silence: the cut point search happens at 25 s while the
        // silence has just begun
        let probs = run(&[(SPEECH, chunks(24.9)), (SILENCE, 40)]);
        let events = all_events(&mut Utterances::default(), &probs);
        // Then exactly one utterance is reported, ending in the silence, its speech where the
        // silence began
        let ended: Vec<&UtteranceEvent> = events.iter().filter(|e| matches!(e, Ended { .. })).collect();
        assert_eq!(ended.len(), 1, "{events:?}");
        let Ended { range, speech_end } = ended[0] else { unreachable!() };
        assert_eq!(*speech_end, chunks(24.9) * CHUNK);
        assert!(range.end > *speech_end && range.end <= *speech_end + 3200, "{range:?}");
        assert_eq!(events.iter().filter(|e| matches!(e, Started { .. })).count(), 1, "{events:?}");
    }
}
