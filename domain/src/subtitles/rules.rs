//! How good a place between two words is for a break (a new cue or a new row): sentence ends first,
//! then clause punctuation and pauses; the splits the Netflix and BBC guides forbid (article|noun,
//! preposition|object, first|last name, pronoun|verb, auxiliary|verb) are penalised. The word lists
//! are small, English, and lower case; other languages still get the punctuation and pause rules.

/// Cost of breaking after `a` when `b` follows after `pause` seconds of silence. 0 is ideal.
pub(crate) fn break_cost(a: &str, b: &str, pause: f64) -> f64 {
    let mut cost = if ends_sentence(a) {
        0.0
    } else if ends_clause(a) {
        1.0
    } else if CONJUNCTIONS.contains(&bare(b).as_str()) {
        2.0
    } else {
        3.0
    };
    if forbidden_split(a, b) {
        cost += 5.0;
    }
    (cost - 1.5 * pause.clamp(0.0, 1.0)).max(0.0)
}

/// Whether the word ends a sentence: `.`, `!`, `?` or `…`, possibly followed by closing quotes or
/// brackets, and not a title such as `Mr.` or an initial such as `J.`.
pub(crate) fn ends_sentence(word: &str) -> bool {
    let core = word.trim_end_matches(CLOSERS);
    let Some(last) = core.chars().last() else {
        return false;
    };
    match last {
        '!' | '?' | '…' => true,
        '.' => {
            let stem = bare(core);
            !(TITLES.contains(&stem.as_str())
                || (stem.chars().count() == 1 && core.chars().next().is_some_and(char::is_uppercase)))
        }
        _ => false,
    }
}

/// Whether the word ends with clause punctuation (comma, semicolon, colon, dash).
pub(crate) fn ends_clause(word: &str) -> bool {
    matches!(word.trim_end_matches(CLOSERS).chars().last(), Some(',' | ';' | ':' | '–' | '—' | '-'))
}

/// Whether breaking between `a` and `b` splits a unit the style guides keep together.
pub(crate) fn forbidden_split(a: &str, b: &str) -> bool {
    if ends_sentence(a) {
        return false;
    }
    if a.chars().last().is_some_and(|c| !c.is_alphanumeric()) && !a.ends_with('.') {
        return false; // punctuation ends the unit ("for you, ask")
    }
    let w = bare(a);
    if ARTICLES.contains(&w.as_str()) || PREPOSITIONS.contains(&w.as_str()) || TITLES.contains(&w.as_str()) {
        return true;
    }
    if a.ends_with('.') {
        return false;
    }
    // Pronoun|verb and auxiliary|verb, unless what follows is plainly not a verb ("do | for").
    let next = bare(b);
    let not_a_verb = [ARTICLES, PREPOSITIONS, CONJUNCTIONS].iter().any(|l| l.contains(&next.as_str()));
    if (PRONOUNS.contains(&w.as_str()) || AUXILIARIES.contains(&w.as_str())) && !not_a_verb {
        return true;
    }
    // First|last name and other multi-word names: two capitalised words in a row ("New York").
    let capital = |s: &str| s.chars().find(|c| c.is_alphabetic()).is_some_and(char::is_uppercase);
    w != "i" && capital(a) && capital(b)
}

/// The word in lower case without surrounding punctuation (apostrophes inside are kept).
fn bare(word: &str) -> String {
    word.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase()
}

const CLOSERS: &[char] = &['"', '\'', '”', '’', ')', ']', '»'];

const ARTICLES: &[&str] = &[
    "a", "an", "the", "this", "these", "those", "my", "your", "his", "her", "its", "our", "their", "every", "each",
    "some", "no", "any",
];
const PREPOSITIONS: &[&str] = &[
    "of", "in", "on", "at", "to", "for", "with", "from", "by", "about", "into", "onto", "over", "under", "through",
    "between", "after", "before", "without", "during", "upon", "within", "across", "against", "among", "toward",
    "towards",
];
const PRONOUNS: &[&str] = &["i", "you", "he", "she", "we", "they", "i'm", "you're", "we're", "they're", "i've", "i'll"];
const AUXILIARIES: &[&str] = &[
    "am", "is", "are", "was", "were", "be", "been", "has", "have", "had", "do", "does", "did", "will", "would",
    "shall", "should", "can", "could", "may", "might", "must", "don't", "doesn't", "didn't", "can't", "won't", "isn't",
    "aren't", "wasn't", "weren't",
];
const CONJUNCTIONS: &[&str] =
    &["and", "but", "or", "nor", "so", "because", "which", "who", "when", "while", "if", "that"];
const TITLES: &[&str] = &["mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "mt"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentence_ends() {
        for w in ["done.", "really?", "stop!\"", "well…", "end.)"] {
            assert!(ends_sentence(w), "{w}");
        }
        for w in ["Mr.", "Dr.", "J.", "word", "so,"] {
            assert!(!ends_sentence(w), "{w}");
        }
    }

    #[test]
    fn forbidden_splits() {
        assert!(forbidden_split("the", "country"));
        assert!(forbidden_split("for", "you"));
        assert!(forbidden_split("you", "can"));
        assert!(forbidden_split("can", "do"));
        assert!(forbidden_split("Mr.", "Quilter"));
        assert!(forbidden_split("New", "York"));
        assert!(!forbidden_split("you,", "ask"));
        assert!(!forbidden_split("country", "can"));
        assert!(!forbidden_split("this.", "But"));
        assert!(!forbidden_split("do", "for"), "a main verb before a preposition");
    }

    #[test]
    fn breaks_rank_sentence_then_clause_then_plain_then_forbidden() {
        let s = break_cost("done.", "Now", 0.0);
        let c = break_cost("Americans,", "ask", 0.0);
        let p = break_cost("country", "can", 0.0);
        let f = break_cost("the", "nation", 0.0);
        assert!(s < c && c < p && p < f);
        assert!(break_cost("country", "can", 0.8) < p, "a pause makes a break better");
    }
}
