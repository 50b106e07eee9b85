//! When a pause ends a live utterance. A pause of `min_silence_ms` (0.5 s) ends it when the words
//! decoded so far end a sentence; when they stop where a sentence goes on, the pause must last
//! [`HELD_PAUSE_MS`], so that a speaker who takes a breath mid-sentence is not cut there (a cut
//! costs the words around it their context, and each side reads as a sentence of its own).
//! Measured in `ops/bench/live.md` (`scribe-bench live --pauses`): on the corpus's cased
//! recordings, finals ending mid-sentence went from 21 of 145 to 2 of 125, for one final in 125
//! sent 0.5 s later.

/// How long a pause after words that do not end a sentence must last to end the utterance (ms).
pub const HELD_PAUSE_MS: u32 = 1000;

/// Whether a pause after `words` (the utterance's final, decoded once the pause began) should be
/// held: there are words, and the last has no sentence-ending mark.
pub fn holds_pause<'a>(words: impl IntoIterator<Item = &'a str>) -> bool {
    words.into_iter().last().is_some_and(|last| !crate::translation::ends_sentence(last))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_after_a_sentence_end_is_not_held() {
        // given words that end a sentence, however it is marked
        for words in [["we", "choose", "to", "go."], ["did", "you", "go", "?"], ["he", "said", "\"go!\"", ""]] {
            let words = words.iter().copied().filter(|w| !w.is_empty());
            // then the pause ends the utterance as usual
            assert!(!holds_pause(words));
        }
    }

    #[test]
    fn a_pause_mid_sentence_is_held() {
        // given words that stop with no mark, or at a comma
        assert!(holds_pause(["and", "so", "my", "fellow", "Americans"]));
        assert!(holds_pause(["ask", "not,"]));
    }

    #[test]
    fn a_pause_with_no_words_is_not_held() {
        assert!(!holds_pause([]));
    }
}
