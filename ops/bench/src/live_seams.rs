//! An experiment of `scribe-bench live --context`: could live finals read as one text if their
//! casing were joined where one final meets the next?
//!
//! Whisper decodes each utterance as if it began a text, so a sentence spoken with pauses comes
//! back as several, each with a capital ("for you Ask what you can do"), and a short emphatic
//! one often in capitals ("ASK NOT"). Decoding a final with the previous one as its prompt costs
//! words, so these rules join the finals' text instead: they look only at the seam (the previous
//! final's last word and the new final's words) and change letters' case, never a word. Last,
//! the decoder itself joins them: it hears the audio on both sides of each seam and scores the
//! ways of writing it ([`join_by_decoder`]). Measured on the corpus, none helped enough to be
//! adopted (`ops/bench/live.md`); they stay here, with their measurement, for the next attempt.

use std::time::Instant;

use scribe_whisper::Engine;
use scribe_whisper::audio::SAMPLE_RATE;

/// Which rules join a session's finals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SeamRules {
    /// A final that starts a sentence (the session's first, or one after a final that ended
    /// with `.`, `!`, `?` or `…`) starts with a capital.
    pub capitalize_sentence_starts: bool,
    /// A final that goes on with the previous one's sentence (which ended without terminal
    /// punctuation) starts with a small letter, unless its first word is `I` (a rule for
    /// English: German, for one, capitalises every noun).
    pub lower_continuations: bool,
    /// A final of several words all in capitals (Whisper's rendering of emphatic speech) is
    /// written in small letters, but for words of one letter.
    pub unshout: bool,
}

impl SeamRules {
    /// No rule: the finals as Whisper wrote them.
    pub const NONE: SeamRules =
        SeamRules { capitalize_sentence_starts: false, lower_continuations: false, unshout: false };
}

/// Whether `word` ends a sentence (closing quotes and brackets after the mark count).
pub fn ends_sentence(word: &str) -> bool {
    let trimmed = word.trim_end_matches(['"', '\'', ')', ']', '»', '”', '’']);
    trimmed.ends_with(['.', '!', '?', '…'])
}

/// Joins `words`, a new final, to the final before it, whose last word was `previous` (`None`:
/// this is the session's first), by `rules`.
pub fn join(previous: Option<&str>, words: &mut [String], rules: SeamRules) {
    if words.is_empty() {
        return;
    }
    if rules.unshout && is_shouted(words) {
        for word in words.iter_mut().filter(|w| w.chars().filter(|c| c.is_alphabetic()).count() > 1) {
            *word = word.to_lowercase();
        }
    }
    let starts_sentence = previous.is_none_or(ends_sentence);
    let first = &mut words[0];
    if starts_sentence && rules.capitalize_sentence_starts {
        *first = with_first_letter(first, true);
    } else if !starts_sentence && rules.lower_continuations && !is_pronoun_i(first) && is_capitalized(first) {
        *first = with_first_letter(first, false);
    }
}

/// Two or more words, each with two or more letters in capitals only.
fn is_shouted(words: &[String]) -> bool {
    words.len() >= 2
        && words.iter().all(|w| {
            let letters: Vec<char> = w.chars().filter(|c| c.is_alphabetic()).collect();
            letters.len() >= 2 && letters.iter().all(|c| c.is_uppercase())
        })
}

/// `Word`: a capital, then small letters only (not `USA`, not `iPhone`).
fn is_capitalized(word: &str) -> bool {
    let mut letters = word.chars().filter(|c| c.is_alphabetic());
    letters.next().is_some_and(char::is_uppercase) && letters.all(char::is_lowercase)
}

fn is_pronoun_i(word: &str) -> bool {
    let bare = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’');
    bare == "I" || bare.starts_with("I'") || bare.starts_with("I’")
}

/// `word` with its first letter in capitals (`upper`) or small.
fn with_first_letter(word: &str, upper: bool) -> String {
    let Some((at, letter)) = word.char_indices().find(|(_, c)| c.is_alphabetic()) else { return word.to_owned() };
    let changed: String = match upper {
        true => letter.to_uppercase().collect(),
        false => letter.to_lowercase().collect(),
    };
    format!("{}{changed}{}", &word[..at], &word[at + letter.len_utf8()..])
}

/// A word of a final, its times in seconds from the recording's start.
#[derive(Clone, Debug)]
pub struct TimedWord {
    pub text: String,
    pub start: f64,
    pub end: f64,
}

/// What [`join_by_decoder`] did, summed over recordings.
#[derive(Debug, Default)]
pub struct Joins {
    pub seams: usize,
    pub changed: usize,
    pub took_s: f64,
}

/// How much speech on each side of a seam the decoder hears when it scores the seam.
const SEAM_SIDE_S: f64 = 8.0;

/// Silence kept around the words a seam's audio is cut to.
const SEAM_EDGE_S: f64 = 0.3;

/// Joins a recording's `finals` (their words, timed on `samples`) where each meets the next: the
/// decoder hears the seam (up to [`SEAM_SIDE_S`] of words on each side, the pause between) and
/// scores each way of writing it ([`seam_ways`]) with the words around it, and the likeliest is
/// kept. Only the previous final's last mark and the next one's first letter may change.
/// With `log`, prints each seam changed.
pub fn join_by_decoder(
    engine: &Engine,
    samples: &[f32],
    finals: &[Vec<TimedWord>],
    joins: &mut Joins,
    log: bool,
) -> anyhow::Result<Vec<String>> {
    let at = |s: f64| ((s.max(0.0) * SAMPLE_RATE as f64) as usize).min(samples.len());
    let mut joined: Vec<Vec<TimedWord>> = Vec::new();
    for next in finals.iter().filter(|f| !f.is_empty()) {
        let mut next = next.clone();
        if let Some(prev) = joined.last_mut() {
            let last = prev.len() - 1;
            let from = prev.iter().position(|w| w.start >= prev[last].end - SEAM_SIDE_S).unwrap_or(last);
            let to = next.iter().rposition(|w| w.end <= next[0].start + SEAM_SIDE_S).unwrap_or(0);
            let audio = at(prev[from].start - SEAM_EDGE_S)..at(next[to].end + SEAM_EDGE_S);
            if !audio.is_empty() && audio.len() <= 30 * SAMPLE_RATE as usize {
                let prefix: Vec<&str> = prev[from..last].iter().map(|w| w.text.as_str()).collect();
                let rest: String = next[1..=to].iter().map(|w| format!(" {}", w.text)).collect();
                let ways = seam_ways(&prev[last].text, &next[0].text);
                let readings: Vec<String> = ways.iter().map(|(end, start)| format!(" {end} {start}{rest}")).collect();
                let started = Instant::now();
                let scores = engine.likelihoods_of_readings(&samples[audio], "en", &prefix.join(" "), &readings)?;
                joins.took_s += started.elapsed().as_secs_f64();
                joins.seams += 1;
                let best = (0..scores.len()).max_by(|&a, &b| scores[a].total_cmp(&scores[b])).unwrap_or(0);
                if best != 0 {
                    joins.changed += 1;
                    if log {
                        let (end, start) = &ways[best];
                        let gain = scores[best] - scores[0];
                        eprintln!("seam: …{} | {} … → …{end} | {start} …  ({gain:+.2})", prev[last].text, next[0].text);
                    }
                    (prev[last].text, next[0].text) = ways[best].clone();
                }
            }
        }
        joined.push(next);
    }
    Ok(joined.into_iter().flatten().map(|w| w.text).collect())
}

/// Ways to write a seam between a final's `last` word and the next one's `first`, each a
/// reading of the sentence: as decoded; a sentence that ends there (a full stop, a capital
/// after); one that goes on (a comma or no mark, a small letter after, but for "I" and words
/// not written as a capital then small letters).
fn seam_ways(last: &str, first: &str) -> Vec<(String, String)> {
    let mut ways = vec![(last.to_owned(), first.to_owned())];
    let bare = last.trim_end_matches(['.', ',', '!', '?', ';', ':', '…']);
    if bare.is_empty() {
        return ways;
    }
    let own_case = is_pronoun_i(first) || !(is_capitalized(first) || first.chars().all(|c| !c.is_uppercase()));
    let (capital, small) = match own_case {
        true => (first.to_owned(), first.to_owned()),
        false => (with_first_letter(first, true), with_first_letter(first, false)),
    };
    for way in [(format!("{bare}."), capital), (format!("{bare},"), small.clone()), (bare.to_owned(), small)] {
        if !ways.contains(&way) {
            ways.push(way);
        }
    }
    ways
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: SeamRules = SeamRules { capitalize_sentence_starts: true, lower_continuations: true, unshout: true };

    fn joined(previous: Option<&str>, text: &str, rules: SeamRules) -> String {
        let mut words: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
        join(previous, &mut words, rules);
        words.join(" ")
    }

    #[test]
    fn given_a_first_final_in_small_letters_when_joined_then_it_starts_with_a_capital() {
        assert_eq!(joined(None, "and so my fellow Americans.", ALL), "And so my fellow Americans.");
        assert_eq!(joined(Some("done."), "\"well, then\"", ALL), "\"Well, then\"");
    }

    #[test]
    fn given_a_sentence_that_goes_on_when_joined_then_its_capital_goes_unless_it_is_i() {
        assert_eq!(joined(Some("you"), "Ask what you can do", ALL), "ask what you can do");
        assert_eq!(joined(Some("you,"), "I said", ALL), "I said");
        assert_eq!(joined(Some("and"), "I'm here", ALL), "I'm here");
        assert_eq!(joined(Some("the"), "USA today", ALL), "USA today", "not a capitalised word");
        assert_eq!(joined(Some("you"), "Ask", SeamRules::NONE), "Ask", "the rule is off");
    }

    #[test]
    fn given_a_shouted_final_when_joined_then_it_is_in_small_letters() {
        assert_eq!(joined(Some("Americans."), "ASK NOT", ALL), "Ask not");
        assert_eq!(joined(Some("Americans"), "ASK NOT!", ALL), "ask not!");
        assert_eq!(joined(Some("x."), "FBI", ALL), "FBI", "one word may be an acronym");
        assert_eq!(joined(Some("x."), "THE FBI A", ALL), "THE FBI A", "a one-letter word is not shouting");
    }

    #[test]
    fn given_a_seam_when_its_ways_are_listed_then_each_reads_as_one_sentence_or_two() {
        let ways = |last: &str, first: &str| seam_ways(last, first);
        let pair = |a: &str, b: &str| (a.to_owned(), b.to_owned());
        assert_eq!(
            ways("Americans.", "Ask"),
            [pair("Americans.", "Ask"), pair("Americans,", "ask"), pair("Americans", "ask")],
            "as decoded first"
        );
        assert_eq!(
            ways("you", "ask"),
            [pair("you", "ask"), pair("you.", "Ask"), pair("you,", "ask")],
            "a way already listed is not listed again"
        );
        assert_eq!(ways("said", "I"), [pair("said", "I"), pair("said.", "I"), pair("said,", "I")], "I keeps its case");
        assert_eq!(ways("the", "USA")[1], pair("the.", "USA"), "an acronym keeps its case");
        assert_eq!(ways("...", "so"), [pair("...", "so")], "no word to mark");
    }

    #[test]
    fn given_text_without_letters_when_joined_then_it_is_left_alone() {
        assert_eq!(joined(None, "42 ...", ALL), "42 ...");
        assert!(ends_sentence("done.\"") && ends_sentence("really?)") && !ends_sentence("so,"));
    }
}
