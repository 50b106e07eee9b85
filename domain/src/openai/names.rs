//! Language names as OpenAI writes them in `verbose_json` (`"language": "english"`): Whisper's
//! own English names, in lower case.

use crate::languages::WHISPER_LANGUAGES;

/// The names of [`WHISPER_LANGUAGES`], in the same order.
static NAMES: [&str; 100] = [
    "english",
    "chinese",
    "german",
    "spanish",
    "russian",
    "korean",
    "french",
    "japanese",
    "portuguese",
    "turkish",
    "polish",
    "catalan",
    "dutch",
    "arabic",
    "swedish",
    "italian",
    "indonesian",
    "hindi",
    "finnish",
    "vietnamese",
    "hebrew",
    "ukrainian",
    "greek",
    "malay",
    "czech",
    "romanian",
    "danish",
    "hungarian",
    "tamil",
    "norwegian",
    "thai",
    "urdu",
    "croatian",
    "bulgarian",
    "lithuanian",
    "latin",
    "maori",
    "malayalam",
    "welsh",
    "slovak",
    "telugu",
    "persian",
    "latvian",
    "bengali",
    "serbian",
    "azerbaijani",
    "slovenian",
    "kannada",
    "estonian",
    "macedonian",
    "breton",
    "basque",
    "icelandic",
    "armenian",
    "nepali",
    "mongolian",
    "bosnian",
    "kazakh",
    "albanian",
    "swahili",
    "galician",
    "marathi",
    "punjabi",
    "sinhala",
    "khmer",
    "shona",
    "yoruba",
    "somali",
    "afrikaans",
    "occitan",
    "georgian",
    "belarusian",
    "tajik",
    "sindhi",
    "gujarati",
    "amharic",
    "yiddish",
    "lao",
    "uzbek",
    "faroese",
    "haitian creole",
    "pashto",
    "turkmen",
    "nynorsk",
    "maltese",
    "sanskrit",
    "luxembourgish",
    "myanmar",
    "tibetan",
    "tagalog",
    "malagasy",
    "assamese",
    "tatar",
    "hawaiian",
    "lingala",
    "hausa",
    "bashkir",
    "javanese",
    "sundanese",
    "cantonese",
];

/// The name of a Whisper language code (`en` → `english`); an unknown code is returned as given.
pub fn whisper_name(code: &str) -> &str {
    WHISPER_LANGUAGES.iter().position(|c| *c == code).map_or(code, |i| NAMES[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_whisper_codes() {
        assert_eq!(whisper_name("en"), "english");
        assert_eq!(whisper_name("nl"), "dutch");
        assert_eq!(whisper_name("jw"), "javanese");
        assert_eq!(whisper_name("yue"), "cantonese");
        assert_eq!(whisper_name("xx"), "xx");
    }
}
