//! Whisper's languages: the codes behind its `<|xx|>` tokens, and the mapping from the
//! service's language codes (`en-us`, `nl-be`, `cmn`, `iw-il`, …) to them.

/// Whisper's language codes, in token order (`<|en|>` first).
pub const WHISPER_LANGUAGES: &[(&str, &str)] = &[
    ("en", "english"),
    ("zh", "chinese"),
    ("de", "german"),
    ("es", "spanish"),
    ("ru", "russian"),
    ("ko", "korean"),
    ("fr", "french"),
    ("ja", "japanese"),
    ("pt", "portuguese"),
    ("tr", "turkish"),
    ("pl", "polish"),
    ("ca", "catalan"),
    ("nl", "dutch"),
    ("ar", "arabic"),
    ("sv", "swedish"),
    ("it", "italian"),
    ("id", "indonesian"),
    ("hi", "hindi"),
    ("fi", "finnish"),
    ("vi", "vietnamese"),
    ("he", "hebrew"),
    ("uk", "ukrainian"),
    ("el", "greek"),
    ("ms", "malay"),
    ("cs", "czech"),
    ("ro", "romanian"),
    ("da", "danish"),
    ("hu", "hungarian"),
    ("ta", "tamil"),
    ("no", "norwegian"),
    ("th", "thai"),
    ("ur", "urdu"),
    ("hr", "croatian"),
    ("bg", "bulgarian"),
    ("lt", "lithuanian"),
    ("la", "latin"),
    ("mi", "maori"),
    ("ml", "malayalam"),
    ("cy", "welsh"),
    ("sk", "slovak"),
    ("te", "telugu"),
    ("fa", "persian"),
    ("lv", "latvian"),
    ("bn", "bengali"),
    ("sr", "serbian"),
    ("az", "azerbaijani"),
    ("sl", "slovenian"),
    ("kn", "kannada"),
    ("et", "estonian"),
    ("mk", "macedonian"),
    ("br", "breton"),
    ("eu", "basque"),
    ("is", "icelandic"),
    ("hy", "armenian"),
    ("ne", "nepali"),
    ("mn", "mongolian"),
    ("bs", "bosnian"),
    ("kk", "kazakh"),
    ("sq", "albanian"),
    ("sw", "swahili"),
    ("gl", "galician"),
    ("mr", "marathi"),
    ("pa", "punjabi"),
    ("si", "sinhala"),
    ("km", "khmer"),
    ("sn", "shona"),
    ("yo", "yoruba"),
    ("so", "somali"),
    ("af", "afrikaans"),
    ("oc", "occitan"),
    ("ka", "georgian"),
    ("be", "belarusian"),
    ("tg", "tajik"),
    ("sd", "sindhi"),
    ("gu", "gujarati"),
    ("am", "amharic"),
    ("yi", "yiddish"),
    ("lo", "lao"),
    ("uz", "uzbek"),
    ("fo", "faroese"),
    ("ht", "haitian creole"),
    ("ps", "pashto"),
    ("tk", "turkmen"),
    ("nn", "nynorsk"),
    ("mt", "maltese"),
    ("sa", "sanskrit"),
    ("lb", "luxembourgish"),
    ("my", "myanmar"),
    ("bo", "tibetan"),
    ("tl", "tagalog"),
    ("mg", "malagasy"),
    ("as", "assamese"),
    ("tt", "tatar"),
    ("haw", "hawaiian"),
    ("ln", "lingala"),
    ("ha", "hausa"),
    ("ba", "bashkir"),
    ("jw", "javanese"),
    ("su", "sundanese"),
    ("yue", "cantonese"),
];

/// Whether `code` is one of Whisper's language codes.
pub fn is_whisper_language(code: &str) -> bool {
    WHISPER_LANGUAGES.iter().any(|(c, _)| *c == code)
}

/// Maps a service language code (ISO 639-1/-3, optionally with a region: `en-us`, `nl_BE`,
/// `cmn`, `iw-il`) to Whisper's code, or `None` when Whisper has no such language.
pub fn to_whisper_code(code: &str) -> Option<&'static str> {
    let lower = code.trim().to_ascii_lowercase();
    let base = lower.split(['-', '_']).next().unwrap_or("");
    let mapped = match base {
        "cmn" | "zho" | "chi" => "zh",
        "iw" | "heb" => "he",
        "jv" | "jav" => "jw",
        "nb" | "nob" | "nor" => "no",
        "nno" => "nn",
        "fil" => "tl",
        "eng" => "en",
        "fra" | "fre" => "fr",
        "deu" | "ger" => "de",
        "nld" | "dut" => "nl",
        "ita" => "it",
        "spa" => "es",
        other => other,
    };
    WHISPER_LANGUAGES.iter().find(|(c, _)| *c == mapped).map(|(c, _)| *c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_codes_map_to_whisper() {
        assert_eq!(to_whisper_code("en-us"), Some("en"));
        assert_eq!(to_whisper_code("nl-BE"), Some("nl"));
        assert_eq!(to_whisper_code("cmn"), Some("zh"));
        assert_eq!(to_whisper_code("iw-il"), Some("he"));
        assert_eq!(to_whisper_code("yue"), Some("yue"));
        assert_eq!(to_whisper_code("xx"), None);
        assert_eq!(WHISPER_LANGUAGES.len(), 100);
    }
}
