//! Hesitation sounds ("fillers") per language, for clean-read transcripts.
//!
//! A filler list belongs to one language: English "er" and "um" are German words ("he", "around")
//! and Dutch "er" ("there") is one of that language's most common words, so a list applied to
//! every language deletes real speech. Each list holds only sounds that are no word of its
//! language; a language without a list of its own loses only the humming sounds that are no word
//! anywhere ("hmm", "mhm"). Lists are keyed by the Whisper code of the spoken language.

use crate::languages::Language;

/// Humming that no language writes as a word.
const HUMS: &[&str] = &["hm", "hmm", "hmmm", "mhm", "mmh", "mmm"];

/// Hesitation sounds per Whisper language code, lower case without punctuation. Left out on
/// purpose: German "er", "um", "eh" (he, around, anyway), Dutch "er" (there), Spanish "este"
/// (this), Italian and Spanish "eh" (a real interjection there), Portuguese "é" (is), "hum" (one).
const FILLERS: &[(&str, &[&str])] = &[
    ("en", &["um", "umm", "ummm", "uh", "uhh", "uhm", "er", "erm", "ehm", "eh", "ah", "ahh", "mm"]),
    ("de", &["äh", "ähh", "ähm", "öh", "öhm", "hmhm"]),
    ("nl", &["eh", "ehm", "uh", "uhm", "euh", "ehh"]),
    ("fr", &["euh", "heu", "euhm", "hum"]),
    ("es", &["em", "ehm", "emm", "mmm"]),
    ("it", &["ehm", "ehh", "uhm", "mmh"]),
    ("pt", &["hã", "ahn", "humm", "éh"]),
];

/// The hesitation sounds of `language` (beyond the humming every language shares).
pub fn fillers_of(language: Language) -> &'static [&'static str] {
    let Some(code) = language.whisper_code() else { return &[] };
    FILLERS.iter().find(|(c, _)| *c == code).map_or(&[], |(_, list)| list)
}

/// Whether `word` (with its punctuation, any case) is a hesitation sound in `language`.
pub fn is_filler(word: &str, language: Language) -> bool {
    let word = normalized(word);
    HUMS.contains(&word.as_str()) || fillers_of(language).contains(&word.as_str())
}

/// Lower case, without surrounding punctuation.
pub(crate) fn normalized(word: &str) -> String {
    word.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lang(code: &str) -> Language {
        Language::from_whisper(code).unwrap()
    }

    /// Common words of each language that look like another language's fillers; none of them
    /// may ever be removed.
    const REAL_WORDS: &[(&str, &[&str])] = &[
        ("en", &["a", "I", "oh", "us", "ahead", "hum", "err"]),
        ("de", &["er", "um", "eh", "ah", "es", "ehe", "oh"]),
        ("nl", &["er", "een", "om", "hem", "he", "ah"]),
        ("fr", &["eh", "euro", "heure", "ah", "oh", "um"]),
        ("es", &["este", "eh", "esta", "er"]),
        ("it", &["eh", "e", "è", "ha", "er"]),
        ("pt", &["é", "hum", "um", "ah", "e"]),
    ];

    #[test]
    fn no_filler_is_a_word_of_its_language() {
        for (code, words) in REAL_WORDS {
            for word in *words {
                assert!(!is_filler(word, lang(code)), "{word:?} is a word of {code} but counts as a filler");
            }
        }
    }

    #[test]
    fn each_language_has_its_own_hesitations() {
        assert!(is_filler("Äh,", lang("de")) && is_filler("ähm", lang("de")));
        assert!(!is_filler("äh", lang("en")), "German hesitations are not English ones");
        assert!(is_filler("uh", lang("nl")) && is_filler("Ehm.", lang("nl")));
        assert!(is_filler("euh", lang("fr")) && !is_filler("um", lang("fr")));
        assert!(is_filler("um", lang("en")) && is_filler("Er,", lang("en")));
        assert!(is_filler("Ehm,", lang("it")));
    }

    #[test]
    fn every_language_drops_humming_and_nothing_else_without_a_list() {
        for code in ["en", "de", "ja", "sw"] {
            assert!(is_filler("Hmm?", lang(code)) && is_filler("mhm", lang(code)), "{code}");
        }
        assert!(!is_filler("um", lang("ja")) && !is_filler("er", lang("sw")));
    }
}
