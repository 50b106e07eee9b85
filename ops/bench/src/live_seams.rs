//! An experiment of `scribe-bench live --context`: could live finals read as one text if their
//! casing were joined where one final meets the next?
//!
//! Whisper decodes each utterance as if it began a text, so a sentence spoken with pauses comes
//! back as several, each with a capital ("for you Ask what you can do"), and a short emphatic
//! one often in capitals ("ASK NOT"). Decoding a final with the previous one as its prompt costs
//! words, so these rules join the finals' text instead: they look only at the seam (the previous
//! final's last word and the new final's words) and change letters' case, never a word. Measured
//! on the corpus, none helped enough to be adopted (`ops/bench/live.md`); they stay here, with
//! their measurement, for the next attempt.

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
    fn given_text_without_letters_when_joined_then_it_is_left_alone() {
        assert_eq!(joined(None, "42 ...", ALL), "42 ...");
        assert!(ends_sentence("done.\"") && ends_sentence("really?)") && !ends_sentence("so,"));
    }
}
