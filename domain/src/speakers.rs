//! Giving a machine transcript its speakers: every word gets the speaker diarization found at
//! its time, and the segments are cut where the speaker changes.
//!
//! Pure: the caller (the ASR stage) runs diarization and passes a function from a word to a
//! speaker number. Segments keep the recogniser's own boundaries and are also split at every
//! change of speaker, so a segment is always one speaker's words. Speakers are listed, and
//! named `Speaker <n>`, in order of first appearance, so the first voice heard is Speaker 1.
//! A second transcript of the same media (Whisper's English translation) takes its speakers
//! from the first by time ([`speakers_like`]).
//!
//! A stereo call (one party per channel) may instead be diarized by channel
//! ([`Diarization::ByChannel`], the job's `speakerChannels` or the operator's default): each
//! word goes to the channel loudest over its time span ([`loudest_channel`]), and the speakers
//! are numbered by channel, not by first appearance ([`assign_channel_speakers`]), so the party
//! on the first (left) channel is always Speaker 1.

use crate::transcript::{Segment, Speaker, Transcript, Word};

/// How many speakers diarization looks for, from the job's `numberOfSpeakers`.
///
/// The spec's `numberOfSpeakers` is the number of speakers in the file. Given by the client
/// (1 to 5) it is that number; left out, the spec's default of 2 is only a bound, so a
/// monologue stays one speaker; 0 (given) asks for the number to be estimated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpeakerCount {
    /// One speaker: diarization is skipped.
    One,
    /// Exactly this many (2 to 5) whenever that many voices speak.
    Exactly(u8),
    /// At most this many (the default's meaning).
    AtMost(u8),
    /// As many as the voices tell apart (up to the API's maximum of 5).
    Estimate,
}

impl SpeakerCount {
    /// `number` is the job's `numberOfSpeakers` (the default applied), `given` whether the
    /// client set it.
    pub fn of(number: u8, given: bool) -> SpeakerCount {
        match (number, given) {
            (0, _) => SpeakerCount::Estimate,
            (1, _) => SpeakerCount::One,
            (n, true) => SpeakerCount::Exactly(n),
            (n, false) => SpeakerCount::AtMost(n),
        }
    }
}

/// How a job's words get their speakers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Diarization {
    /// Each audio channel is one speaker (a call recorded one party per channel).
    ByChannel,
    /// The voices are told apart, looking for this many.
    ByVoice(SpeakerCount),
}

impl Diarization {
    /// The job's choice (`speakerChannels` as given, `None` when left out) decides; left out, the
    /// operator's default (`--speaker-channels`) applies, unless the job gave `numberOfSpeakers`:
    /// a number of voices asked for is a request for voice diarization (and refused together with
    /// `speakerChannels=true`, see `requests`).
    pub fn of(speaker_channels: Option<bool>, operator_default: bool, count: SpeakerCount, count_given: bool) -> Self {
        match speaker_channels {
            Some(true) => Diarization::ByChannel,
            None if operator_default && !count_given => Diarization::ByChannel,
            _ => Diarization::ByVoice(count),
        }
    }
}

/// Length of one frame of a channel's energy envelope, in seconds (10 ms).
pub const ENVELOPE_FRAME_S: f64 = 0.01;

/// Energies closer than this ratio (about 1 dB) are a tie, which the lower channel wins: a mono
/// recording stored as stereo, whose lossy coding leaves the two channels a hair apart, stays one
/// speaker instead of flickering between two.
pub const CHANNEL_TIE_RATIO: f64 = 1.25;

/// The channel (0-based) that is loudest over `start..end` seconds: `envelopes[c][i]` is the RMS
/// of channel `c` over frame `i` ([`ENVELOPE_FRAME_S`] long), and a channel's energy over the span
/// is the sum of its squared RMS over the frames the span touches (at least the frame holding
/// `start`). Ties (within [`CHANNEL_TIE_RATIO`]) go to the lower channel, and so does a span past
/// the end of every envelope.
pub fn loudest_channel(envelopes: &[Vec<f32>], start: f64, end: f64) -> usize {
    let first = (start.max(0.0) / ENVELOPE_FRAME_S).floor() as usize;
    let last = ((end.max(0.0) / ENVELOPE_FRAME_S).ceil() as usize).max(first + 1);
    let energy: Vec<f64> = envelopes
        .iter()
        .map(|env| {
            let frames = env.get(first.min(env.len())..last.min(env.len())).unwrap_or_default();
            frames.iter().map(|&r| f64::from(r) * f64::from(r)).sum()
        })
        .collect();
    let loudest = energy.iter().copied().fold(0.0, f64::max);
    if loudest <= 0.0 {
        return 0;
    }
    energy.iter().position(|&e| e * CHANNEL_TIE_RATIO >= loudest).unwrap_or(0)
}

/// `doc` with each word given to the channel `channel_of` says (0-based, below `channels`):
/// channel `c` is `spk<c+1>`, named `Speaker <c+1>`, whichever speaks first. Segments are split
/// where the channel changes, as [`assign_speakers`] does; the speakers listed are the channels
/// that have words, in channel order (Speaker 1 alone when none has). One channel (a mono file)
/// makes every word Speaker 1.
pub fn assign_channel_speakers(
    doc: &Transcript,
    channels: usize,
    mut channel_of: impl FnMut(&Word) -> usize,
) -> Transcript {
    let last = channels.max(1) - 1;
    let mut used = vec![false; last + 1];
    let mut segments: Vec<Segment> = Vec::new();
    for seg in &doc.segments {
        let mut current: Option<(usize, Vec<Word>)> = None;
        for word in &seg.words {
            let c = channel_of(word).min(last);
            used[c] = true;
            match &mut current {
                Some((s, words)) if *s == c => words.push(word.clone()),
                _ => {
                    if let Some((s, words)) = current.take() {
                        segments.push(Segment { speaker: spkid(s), words });
                    }
                    current = Some((c, vec![word.clone()]));
                }
            }
        }
        if let Some((s, words)) = current {
            segments.push(Segment { speaker: spkid(s), words });
        }
    }
    if !used.contains(&true) {
        used[0] = true;
    }
    let speakers = (0..=last)
        .filter(|&c| used[c])
        .map(|c| Speaker { spkid: spkid(c), name: format!("Speaker {}", c + 1) })
        .collect();
    Transcript { speakers, segments, ..doc.clone() }
}

/// `doc` with each word's speaker given by `speaker_of` (any numbering; renumbered here).
pub fn assign_speakers(doc: &Transcript, mut speaker_of: impl FnMut(&Word) -> usize) -> Transcript {
    let mut order: Vec<usize> = Vec::new();
    let mut segments: Vec<Segment> = Vec::new();
    for seg in &doc.segments {
        let mut current: Option<(usize, Vec<Word>)> = None;
        for word in &seg.words {
            let raw = speaker_of(word);
            let n = match order.iter().position(|&s| s == raw) {
                Some(p) => p,
                None => {
                    order.push(raw);
                    order.len() - 1
                }
            };
            match &mut current {
                Some((s, words)) if *s == n => words.push(word.clone()),
                _ => {
                    if let Some((s, words)) = current.take() {
                        segments.push(Segment { speaker: spkid(s), words });
                    }
                    current = Some((n, vec![word.clone()]));
                }
            }
        }
        if let Some((s, words)) = current {
            segments.push(Segment { speaker: spkid(s), words });
        }
    }
    let speakers =
        (0..order.len().max(1)).map(|n| Speaker { spkid: spkid(n), name: format!("Speaker {}", n + 1) }).collect();
    Transcript { speakers, segments, ..doc.clone() }
}

/// `doc`, a second transcript of the same media (Whisper's English translation of the speech),
/// with the speakers of `reference`, the diarized transcript: each word goes to the reference
/// speaker whose words overlap it longest in time, else to the one whose word is nearest. The
/// reference's speaker ids and names are kept, so both documents call a voice the same.
pub fn speakers_like(doc: &Transcript, reference: &Transcript) -> Transcript {
    let spoken: Vec<(&Word, &str)> =
        reference.segments.iter().flat_map(|s| s.words.iter().map(move |w| (w, s.speaker.as_str()))).collect();
    let Some(&(_, first)) = spoken.first() else { return doc.clone() };
    let speaker_of = |word: &Word| -> &str {
        let mut overlap: Vec<(&str, f64)> = Vec::new();
        for &(w, s) in &spoken {
            let o = w.end.min(word.end) - w.start.max(word.start);
            if o > 0.0 {
                match overlap.iter_mut().find(|(id, _)| *id == s) {
                    Some((_, total)) => *total += o,
                    None => overlap.push((s, o)),
                }
            }
        }
        if let Some((s, _)) = overlap.iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
            return s;
        }
        let mid = (word.start + word.end) / 2.0;
        let distance = |w: &Word| {
            if mid < w.start {
                w.start - mid
            } else if mid > w.end {
                mid - w.end
            } else {
                0.0
            }
        };
        spoken.iter().min_by(|a, b| distance(a.0).total_cmp(&distance(b.0))).map_or(first, |&(_, s)| s)
    };
    let mut segments: Vec<Segment> = Vec::new();
    for seg in &doc.segments {
        let mut current: Option<Segment> = None;
        for word in &seg.words {
            let speaker = speaker_of(word);
            match &mut current {
                Some(c) if c.speaker == speaker => c.words.push(word.clone()),
                _ => {
                    segments.extend(current.take());
                    current = Some(Segment { speaker: speaker.to_owned(), words: vec![word.clone()] });
                }
            }
        }
        segments.extend(current);
    }
    let speakers =
        reference.speakers.iter().filter(|sp| segments.iter().any(|s| s.speaker == sp.spkid)).cloned().collect();
    Transcript { speakers, segments, ..doc.clone() }
}

fn spkid(n: usize) -> String {
    format!("spk{}", n + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_given_number_is_the_number_and_the_default_a_bound() {
        // Given numberOfSpeakers as the client sent it (or the default 2 when left out),
        // when diarization is planned, then:
        assert_eq!(SpeakerCount::of(3, true), SpeakerCount::Exactly(3));
        assert_eq!(SpeakerCount::of(2, true), SpeakerCount::Exactly(2));
        assert_eq!(SpeakerCount::of(2, false), SpeakerCount::AtMost(2));
        assert_eq!(SpeakerCount::of(1, true), SpeakerCount::One);
        assert_eq!(SpeakerCount::of(0, true), SpeakerCount::Estimate);
    }

    #[test]
    fn the_job_choice_wins_then_the_operator_default_unless_a_number_was_given() {
        let bound = SpeakerCount::AtMost(2);
        // Given speakerChannels as the job gave it, and the operator's default, then:
        assert_eq!(Diarization::of(Some(true), false, bound, false), Diarization::ByChannel);
        assert_eq!(Diarization::of(Some(false), true, bound, false), Diarization::ByVoice(bound));
        assert_eq!(Diarization::of(None, true, bound, false), Diarization::ByChannel);
        assert_eq!(Diarization::of(None, false, bound, false), Diarization::ByVoice(bound));
        // and a job that named its number of speakers is diarized by voice whatever the default.
        let three = SpeakerCount::Exactly(3);
        assert_eq!(Diarization::of(None, true, three, true), Diarization::ByVoice(three));
    }

    #[test]
    fn a_word_goes_to_the_channel_loudest_over_its_span() {
        // Given left loud for the first 50 ms and right loud for the next 50 ms,
        let left = [vec![0.5f32; 5], vec![0.01; 5]].concat();
        let right = [vec![0.01f32; 5], vec![0.4; 5]].concat();
        let env = vec![left, right];
        // when a word lies in either half, then it goes to that half's channel;
        assert_eq!(loudest_channel(&env, 0.0, 0.05), 0);
        assert_eq!(loudest_channel(&env, 0.05, 0.1), 1);
        // a word across both goes to the one with more energy over it (0.25×5 > 0.16×5);
        assert_eq!(loudest_channel(&env, 0.0, 0.1), 0);
        // a word of no length takes the frame it starts in;
        assert_eq!(loudest_channel(&env, 0.072, 0.072), 1);
        // and past the end of the audio, or in silence, it goes to the first channel.
        assert_eq!(loudest_channel(&env, 3.0, 3.5), 0);
        assert_eq!(loudest_channel(&[vec![0.0; 10], vec![0.0; 10]], 0.0, 0.1), 0);
    }

    #[test]
    fn near_equal_channels_are_a_tie_that_the_lower_channel_wins() {
        // Given the same signal on both channels, a hair louder on the right (lossy coding),
        let env = vec![vec![0.30f32; 10], vec![0.31; 10]];
        // then the word stays on the left channel;
        assert_eq!(loudest_channel(&env, 0.0, 0.1), 0);
        // while a clearly louder right channel (2 dB) takes it.
        let env = vec![vec![0.30f32; 10], vec![0.38; 10]];
        assert_eq!(loudest_channel(&env, 0.0, 0.1), 1);
    }

    #[test]
    fn channel_speakers_are_numbered_by_channel_not_by_first_speech() {
        // Given a call where the right channel speaks first,
        let d = doc(vec![vec![word(0.0, "Hello?"), word(1.0, "Hi,"), word(2.0, "thanks.")], vec![word(3.0, "Bye.")]]);
        // when each word goes to its channel (right: before 0.5 s and from 2.5 s),
        let out = assign_channel_speakers(&d, 2, |w| usize::from(w.start < 0.5 || w.start > 2.5));
        // then the right channel is still Speaker 2 and the left Speaker 1, segments split at changes.
        let names: Vec<(&str, &str)> = out.speakers.iter().map(|s| (s.spkid.as_str(), s.name.as_str())).collect();
        assert_eq!(names, [("spk1", "Speaker 1"), ("spk2", "Speaker 2")]);
        let segs: Vec<(&str, usize)> = out.segments.iter().map(|s| (s.speaker.as_str(), s.words.len())).collect();
        assert_eq!(segs, [("spk2", 1), ("spk1", 2), ("spk2", 1)]);
    }

    #[test]
    fn a_silent_channel_is_not_listed_and_a_mono_file_is_one_speaker() {
        let d = doc(vec![vec![word(0.0, "a"), word(1.0, "b")]]);
        // Given only the right channel speaking, then only Speaker 2 is listed;
        let out = assign_channel_speakers(&d, 2, |_| 1);
        assert_eq!(out.speakers.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["Speaker 2"]);
        assert!(out.segments.iter().all(|s| s.speaker == "spk2"));
        // given one channel, every word is Speaker 1 (a channel out of range is clamped);
        let mono = assign_channel_speakers(&d, 1, |_| 3);
        assert_eq!(mono.speakers.len(), 1);
        assert_eq!((mono.segments.len(), mono.segments[0].speaker.as_str()), (1, "spk1"));
        // and a document without words lists Speaker 1.
        assert_eq!(assign_channel_speakers(&doc(vec![]), 2, |_| 1).speakers.len(), 1);
    }

    fn word(start: f64, text: &str) -> Word {
        Word { start, end: start + 0.5, text: text.into(), conf: 1.0, pristine: true }
    }

    fn doc(segments: Vec<Vec<Word>>) -> Transcript {
        crate::transcript::test_document(
            segments.into_iter().map(|words| Segment { speaker: "spk1".into(), words }).collect(),
        )
    }

    #[test]
    fn splits_at_speaker_changes_and_numbers_by_first_appearance() {
        let d = doc(vec![vec![word(0.0, "Hello"), word(1.0, "there."), word(2.0, "Hi!")], vec![word(3.0, "Bye.")]]);
        // raw speaker 7 speaks first, then 3
        let out = assign_speakers(&d, |w| if w.start < 1.5 { 7 } else { 3 });
        assert_eq!(out.speakers.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["Speaker 1", "Speaker 2"]);
        let segs: Vec<(&str, usize)> = out.segments.iter().map(|s| (s.speaker.as_str(), s.words.len())).collect();
        assert_eq!(segs, [("spk1", 2), ("spk2", 1), ("spk2", 1)]);
    }

    #[test]
    fn one_speaker_keeps_the_segments() {
        let d = doc(vec![vec![word(0.0, "a"), word(1.0, "b")], vec![word(2.0, "c")]]);
        let out = assign_speakers(&d, |_| 0);
        assert_eq!(out.speakers.len(), 1);
        assert_eq!(out.segments.len(), 2);
        assert_eq!(out, assign_speakers(&out, |_| 0));
    }

    fn two_speakers(segments: Vec<Segment>) -> Transcript {
        let speakers = ["1", "2"].map(|n| Speaker { spkid: format!("spk{n}"), name: format!("Speaker {n}") }).to_vec();
        Transcript { speakers, segments, ..doc(vec![]) }
    }

    #[test]
    fn a_translation_takes_the_speakers_of_the_words_it_overlaps() {
        // Given a diarized source: Speaker 1 from 0 to 2 s, Speaker 2 from 3 to 5 s
        let source = two_speakers(vec![
            Segment { speaker: "spk1".into(), words: vec![word(0.0, "Bonjour"), word(1.0, "à tous.")] },
            Segment { speaker: "spk2".into(), words: vec![word(3.0, "Merci"), word(4.0, "beaucoup.")] },
        ]);
        // When its translation (other words, other times, one segment, one speaker) is labelled
        let translation =
            doc(vec![vec![word(0.2, "Hello"), word(1.4, "everyone."), word(2.6, "Thank"), word(4.2, "you.")]]);
        let out = speakers_like(&translation, &source);
        // Then each word has the speaker it overlaps, or the nearest (2.6–3.1 s overlaps spk2 only)
        let segs: Vec<(&str, Vec<&str>)> = out
            .segments
            .iter()
            .map(|s| (s.speaker.as_str(), s.words.iter().map(|w| w.text.as_str()).collect()))
            .collect();
        assert_eq!(segs, [("spk1", vec!["Hello", "everyone."]), ("spk2", vec!["Thank", "you."])]);
        assert_eq!(out.speakers, source.speakers);
    }

    #[test]
    fn a_word_between_speakers_goes_to_the_nearest_and_unused_speakers_are_not_listed() {
        let source = two_speakers(vec![
            Segment { speaker: "spk1".into(), words: vec![word(0.0, "Oui.")] },
            Segment { speaker: "spk2".into(), words: vec![word(10.0, "Non.")] },
        ]);
        let out = speakers_like(&doc(vec![vec![word(2.0, "Yes.")]]), &source);
        assert_eq!(out.segments[0].speaker, "spk1");
        assert_eq!(out.speakers.len(), 1);
        // An empty reference leaves the document as it was.
        let empty = doc(vec![]);
        assert_eq!(speakers_like(&source, &empty), source);
    }
}
