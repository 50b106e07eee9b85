//! Transcription style: `cleanread` (the default) reads as clean text — no fillers (the spoken
//! language's own: "um", "uh" in English, "äh" in German, "euh" in French; see [`crate::fillers`]),
//! no stutters ("I- I", "th- the", "we, we") — while `verbatim` keeps what was
//! said. The engine is asked for verbatim text when the job wants it (the ASR actor prompts
//! Whisper with disfluent text); for clean read, whatever fillers and stutters it still writes
//! are removed here from the transcript, keeping every other word with its timing.
//!
//! A plain repetition without a break ("that that nation") is grammatical English and stays.

use crate::fillers::{is_filler, normalized};
use crate::languages::Language;
use crate::transcript::{Segment, Transcript, Word};

/// The transcript, spoken in `language`, without fillers and stutters. Punctuation that ended a
/// sentence on a removed word moves to the word before it, and a sentence that started with a
/// removed word starts with a capital again.
pub fn clean_read(transcript: &Transcript, language: Language) -> Transcript {
    let segments = transcript
        .segments
        .iter()
        .map(|s| Segment { speaker: s.speaker.clone(), words: clean_words(&s.words, language) })
        .filter(|s| !s.words.is_empty())
        .collect();
    Transcript { segments, ..transcript.clone() }
}

fn clean_words(words: &[Word], language: Language) -> Vec<Word> {
    let false_starts = false_starts(words);
    let mut kept: Vec<Word> = Vec::with_capacity(words.len());
    // Whether the next kept word starts a sentence (a removed sentence opener was capitalised).
    let mut capitalise_next = false;
    for (word, false_start) in words.iter().zip(false_starts) {
        if false_start || is_filler(&word.text, language) || word.text.trim().is_empty() {
            let text = word.text.trim();
            let opens_sentence = kept.last().is_none_or(|w: &Word| crate::translation::ends_sentence(&w.text));
            if opens_sentence && text.chars().next().is_some_and(char::is_uppercase) {
                capitalise_next = true;
            }
            if let Some(end) = sentence_end(text)
                && let Some(last) = kept.last_mut()
                && !crate::translation::ends_sentence(&last.text)
            {
                last.text = format!("{}{end}", last.text.trim_end_matches([',', ';', ':', '-']));
            }
            continue;
        }
        let mut word = word.clone();
        if capitalise_next {
            word.text = capitalise(&word.text);
            capitalise_next = false;
        }
        kept.push(word);
    }
    kept
}

/// Longest phrase (in words) taken back and said again that counts as a stutter.
const MAX_RESTART_WORDS: usize = 3;

/// Marks the words of false starts: a cut-off fragment before the word it starts ("th-" before
/// "the", "I-" before "I"), and a phrase of up to [`MAX_RESTART_WORDS`] words said again after a
/// break ("we, we", "the plan, the plan"). The later copy is kept.
fn false_starts(words: &[Word]) -> Vec<bool> {
    let norm: Vec<String> = words.iter().map(|w| normalized(&w.text)).collect();
    let mut drop = vec![false; words.len()];
    for i in 0..words.len() {
        let w = words[i].text.trim();
        if norm[i].is_empty() {
            continue;
        }
        if (w.ends_with('-') || w.ends_with('—'))
            && norm.get(i + 1).is_some_and(|n| !n.is_empty() && n.starts_with(&norm[i]))
        {
            drop[i] = true;
            continue;
        }
        for k in 1..=MAX_RESTART_WORDS {
            if i + 2 * k > words.len() {
                break;
            }
            let last = words[i + k - 1].text.trim();
            let broken = last.ends_with(',') || last.ends_with('-') || last.ends_with("...") || last.ends_with('…');
            if broken && norm[i..i + k] == norm[i + k..i + 2 * k] {
                drop[i..i + k].iter_mut().for_each(|d| *d = true);
                break;
            }
        }
    }
    drop
}

/// The sentence-ending punctuation at the end of `text`, if any.
fn sentence_end(text: &str) -> Option<&str> {
    let tail = &text[text.trim_end_matches(['.', '!', '?', '…']).len()..];
    (!tail.is_empty()).then_some(tail)
}

fn capitalise(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Transcript {
        let words = text
            .split(' ')
            .enumerate()
            .map(|(i, t)| Word { start: i as f64, end: i as f64 + 0.5, text: t.into(), conf: 0.9, pristine: true })
            .collect();
        crate::transcript::test_document(vec![Segment { speaker: "spk1".into(), words }])
    }

    fn english(t: &Transcript) -> Transcript {
        clean_read(t, Language::from_whisper("en").unwrap())
    }

    fn text(t: &Transcript) -> String {
        t.segments.iter().flat_map(|s| &s.words).map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn removes_fillers_and_keeps_the_sentence_shape() {
        assert_eq!(
            text(&english(&doc("Um, so I, uh, think that's the uh. What's that?"))),
            "So I, think that's the. What's that?"
        );
        assert_eq!(text(&english(&doc("Hmm? Yeah, mm, nice."))), "Yeah, nice.");
        assert_eq!(text(&english(&doc("It was good, um."))), "It was good.");
    }

    #[test]
    fn removes_stutters_but_not_grammatical_repetition() {
        assert_eq!(text(&english(&doc("I- I think th- the plan, the plan works."))), "I think the plan works.");
        assert_eq!(text(&english(&doc("we, we can go"))), "we can go");
        assert_eq!(
            text(&english(&doc("gave their lives that that nation might live"))),
            "gave their lives that that nation might live"
        );
    }

    #[test]
    fn kept_words_keep_their_times() {
        let cleaned = english(&doc("uh hello"));
        let w = &cleaned.segments[0].words[0];
        assert_eq!((w.start, w.end, w.text.as_str()), (1.0, 1.5, "hello"));
        assert!(english(&doc("um")).segments.is_empty());
    }

    #[test]
    fn recognises_fillers_with_punctuation() {
        let en = Language::from_whisper("en").unwrap();
        assert!(
            is_filler("Uh,", en)
                && is_filler("hmm?", en)
                && is_filler("Mm.", en)
                && !is_filler("us", en)
                && !is_filler("ahead", en)
        );
    }

    /// Clean read of `text` spoken in the language with Whisper code `code`.
    fn cleaned(code: &str, text_: &str) -> String {
        text(&clean_read(&doc(text_), Language::from_whisper(code).unwrap()))
    }

    #[test]
    fn each_language_loses_only_its_own_hesitations() {
        assert_eq!(cleaned("de", "Er ging, äh, um die Ecke, ähm."), "Er ging, um die Ecke.");
        assert_eq!(cleaned("de", "Das ist eh egal."), "Das ist eh egal.");
        assert_eq!(
            cleaned("nl", "Er is een, eh, probleem met de uh planning."),
            "Er is een, probleem met de planning."
        );
        assert_eq!(cleaned("fr", "Euh, je pense que, euh, c'est bon."), "Je pense que, c'est bon.");
        assert_eq!(cleaned("es", "Este libro es, ehm, muy bueno."), "Este libro es, muy bueno.");
        assert_eq!(cleaned("it", "Ehm, va bene, eh."), "Va bene, eh.");
        assert_eq!(cleaned("en", "Er, the um plan."), "The plan.");
        assert_eq!(cleaned("ja", "Hmm, um er."), "Um er.");
    }
}
