//! The language codes of the API and what the speech engine makes of them.
//!
//! [`Language`] is one of the spec's `language` codes (including `auto`); [`TargetLanguage`] is one
//! of the `targetLanguage` codes, whose lists differ per job type and contain codes (`zh`, `ga`) that
//! are not source languages. Each source language maps to the code Whisper's tokenizer uses, or to
//! nothing when Whisper cannot recognise it (Esperanto, Uyghur, Zulu).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::ValidationError;
use crate::kinds::JobType;

/// One row of the language table: spec code, English name, Whisper code.
struct Row {
    code: &'static str,
    name: &'static str,
    whisper: Option<&'static str>,
}

const fn row(code: &'static str, name: &'static str, whisper: Option<&'static str>) -> Row {
    Row { code, name, whisper }
}

/// Every `language` code of the spec, in the spec's order. `auto` has no Whisper code of its own:
/// the engine detects the language among [`AUTO_DETECT_WHISPER`].
static LANGUAGES: &[Row] = &[
    row("auto", "Automatic detection", None),
    row("af-za", "Afrikaans", Some("af")),
    row("sq-al", "Albanian", Some("sq")),
    row("am-et", "Amharic", Some("am")),
    row("ar", "Arabic", Some("ar")),
    row("hy-am", "Armenian", Some("hy")),
    row("az-az", "Azerbaijani", Some("az")),
    row("id-id", "Bahasa Indonesia", Some("id")),
    row("ba", "Bashkir", Some("ba")),
    row("eu-es", "Basque", Some("eu")),
    row("bn-bd", "Bengali (Bangladesh)", Some("bn")),
    row("bn-in", "Bengali (India)", Some("bn")),
    row("bs-ba", "Bosnian", Some("bs")),
    row("bg", "Bulgarian", Some("bg")),
    row("my-mm", "Burmese", Some("my")),
    // Whisper has a `yue` token only from large-v3 on; older vocabularies lack it, and the engine
    // must check its tokenizer before using it (Mandarin `zh` is the usual fallback).
    row("yue", "Cantonese", Some("yue")),
    row("ca", "Catalan", Some("ca")),
    row("cmn", "Chinese, Mandarin", Some("zh")),
    row("hr", "Croatian", Some("hr")),
    row("cs", "Czech", Some("cs")),
    row("da", "Danish", Some("da")),
    row("nl", "Dutch", Some("nl")),
    row("en-au", "English (Australia)", Some("en")),
    row("en-uk", "English (United Kingdom)", Some("en")),
    row("en-us", "English (United States)", Some("en")),
    row("en", "English (all accents)", Some("en")),
    row("eo", "Esperanto", None),
    row("et-ee", "Estonian", Some("et")),
    row("fa-ir", "Farsi (Iran)", Some("fa")),
    row("fil-ph", "Filipino", Some("tl")),
    row("fi", "Finnish", Some("fi")),
    row("nl-be", "Flemish", Some("nl")),
    row("fr-ca", "French (Canada)", Some("fr")),
    row("fr", "French", Some("fr")),
    row("gl-es", "Galician", Some("gl")),
    row("ka-ge", "Georgian", Some("ka")),
    row("de-at", "German (Austria)", Some("de")),
    row("de-ot", "German (Germany)", Some("de")),
    row("de-ch", "German (Switzerland)", Some("de")),
    row("de-gsw", "German (Swiss Mundart)", Some("de")),
    row("de", "German (all accents)", Some("de")),
    row("el", "Greek", Some("el")),
    row("gu-in", "Gujarati", Some("gu")),
    row("iw-il", "Hebrew", Some("he")),
    row("hi", "Hindi", Some("hi")),
    row("hu", "Hungarian", Some("hu")),
    row("is-is", "Icelandic", Some("is")),
    row("it", "Italian", Some("it")),
    row("ja", "Japanese", Some("ja")),
    // Whisper spells Javanese `jw`, not ISO 639-1 `jv`.
    row("jv-id", "Javanese", Some("jw")),
    row("kn-in", "Kannada", Some("kn")),
    row("km-kh", "Khmer", Some("km")),
    row("ko", "Korean", Some("ko")),
    row("lo-la", "Lao", Some("lo")),
    row("lv", "Latvian", Some("lv")),
    row("lt", "Lithuanian", Some("lt")),
    row("mk-mk", "Macedonian", Some("mk")),
    row("ms", "Malay", Some("ms")),
    row("ml-in", "Malayalam", Some("ml")),
    row("mt", "Maltese", Some("mt")),
    row("mr-in", "Marathi", Some("mr")),
    row("mn-mn", "Mongolian", Some("mn")),
    row("ne-np", "Nepali", Some("ne")),
    row("no", "Norwegian", Some("no")),
    row("pl", "Polish", Some("pl")),
    row("pt-br", "Portuguese (Brazil)", Some("pt")),
    row("pt", "Portuguese", Some("pt")),
    row("pa-guru-in", "Punjabi", Some("pa")),
    row("ro", "Romanian", Some("ro")),
    row("ru", "Russian", Some("ru")),
    row("sr-rs", "Serbian", Some("sr")),
    row("si-lk", "Sinhala", Some("si")),
    row("sk", "Slovakian", Some("sk")),
    row("sl", "Slovenian", Some("sl")),
    row("es", "Spanish", Some("es")),
    row("es-la", "Spanish (Latin America)", Some("es")),
    row("su-id", "Sundanese", Some("su")),
    row("sw-ke", "Swahili (Kenya)", Some("sw")),
    row("sw-tz", "Swahili (Tanzania)", Some("sw")),
    row("sv", "Swedish", Some("sv")),
    row("ta-in", "Tamil (India)", Some("ta")),
    row("ta-my", "Tamil (Malaysia)", Some("ta")),
    row("ta-sg", "Tamil (Singapore)", Some("ta")),
    row("ta-lk", "Tamil (Sri Lanka)", Some("ta")),
    row("te-in", "Telugu", Some("te")),
    row("th-th", "Thai", Some("th")),
    row("tr", "Turkish", Some("tr")),
    row("uk", "Ukrainian", Some("uk")),
    // The spec also lists `uk-ua` for Ukrainian; it is accepted and kept as the client wrote it.
    row("uk-ua", "Ukrainian", Some("uk")),
    row("ur-in", "Urdu (India)", Some("ur")),
    row("ur-pk", "Urdu (Pakistan)", Some("ur")),
    row("ug", "Uyghur", None),
    row("uz-uz", "Uzbek", Some("uz")),
    row("vi-vn", "Vietnamese", Some("vi")),
    row("cy", "Welsh", Some("cy")),
    row("zu-za", "Zulu", None),
];

/// Whisper's language codes in its tokenizer's order (`LANGUAGES` in openai/whisper
/// `whisper/tokenizer.py`): the language token of `WHISPER_LANGUAGES[i]` is `<|startoftranscript|> + 1 + i`.
/// The first 99 are in every multilingual model; `yue` (the 100th) only from large-v3 on.
pub static WHISPER_LANGUAGES: [&str; 100] = [
    "en", "zh", "de", "es", "ru", "ko", "fr", "ja", "pt", "tr", "pl", "ca", "nl", "ar", "sv", "it", "id", "hi", "fi",
    "vi", "he", "uk", "el", "ms", "cs", "ro", "da", "hu", "ta", "no", "th", "ur", "hr", "bg", "lt", "la", "mi", "ml",
    "cy", "sk", "te", "fa", "lv", "bn", "sr", "az", "sl", "kn", "et", "mk", "br", "eu", "is", "hy", "ne", "mn", "bs",
    "kk", "sq", "sw", "gl", "mr", "pa", "si", "km", "sn", "yo", "so", "af", "oc", "ka", "be", "tg", "sd", "gu", "am",
    "yi", "lo", "uz", "fo", "ht", "ps", "tk", "nn", "mt", "sa", "lb", "my", "bo", "tl", "mg", "as", "tt", "haw", "ln",
    "ha", "ba", "jw", "su", "yue",
];

/// The Whisper codes among which `language=auto` chooses: every language Whisper knows that the
/// spec's table also has (in Whisper's order), so Spanish speech sent with `auto` comes back as
/// Spanish. A detected code maps back to a spec [`Language`] with [`Language::from_whisper`].
/// (`yue` needs a large-v3 model; the engine leaves out what its model lacks.)
pub static AUTO_DETECT_WHISPER: [&str; 74] = [
    "en", "zh", "de", "es", "ru", "ko", "fr", "ja", "pt", "tr", "pl", "ca", "nl", "ar", "sv", "it", "id", "hi", "fi",
    "vi", "he", "uk", "el", "ms", "cs", "ro", "da", "hu", "ta", "no", "th", "ur", "hr", "bg", "lt", "ml", "cy", "sk",
    "te", "fa", "lv", "bn", "sr", "az", "sl", "kn", "et", "mk", "eu", "is", "hy", "ne", "mn", "bs", "sq", "sw", "gl",
    "mr", "pa", "si", "km", "af", "ka", "gu", "am", "lo", "uz", "mt", "my", "tl", "ba", "jw", "su", "yue",
];

/// The languages the spec names for automatic identification (English, Dutch, German, French,
/// Italian): the documented and tested part of [`AUTO_DETECT_WHISPER`].
pub static DOCUMENTED_AUTO_DETECT: [&str; 5] = ["en", "nl", "de", "fr", "it"];

/// A `language` code of the spec, spelled exactly as the spec does (`en-us`, not `en-US`: every
/// enumerated value of the API is matched exactly, as the OpenAPI document lists it).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Language(u8);

impl Language {
    /// `auto`: let the engine detect the language.
    pub const AUTO: Language = Language(0);

    /// The default when `language` is not given: `en`.
    pub fn default_language() -> Language {
        Language::parse("en").expect("en is in the table")
    }

    /// Checks a `language` parameter.
    pub fn parse(value: &str) -> Result<Language, ValidationError> {
        Language::parse_field("language", value)
    }

    /// As [`Language::parse`], reporting against another parameter name.
    pub fn parse_field(field: &str, value: &str) -> Result<Language, ValidationError> {
        LANGUAGES.iter().position(|r| r.code == value).map(|i| Language(i as u8)).ok_or_else(|| {
            ValidationError::new(
                field,
                format!("{field} '{value}' is not a supported language code (for example en, nl, de-ch, auto)"),
            )
        })
    }

    /// The spec language of a Whisper code the engine detected: the row spelled like the code
    /// (`en`, `es`), else the first row that transcribes with it (`af` → `af-za`).
    pub fn from_whisper(whisper_code: &str) -> Option<Language> {
        LANGUAGES
            .iter()
            .position(|r| r.code == whisper_code)
            .or_else(|| LANGUAGES.iter().position(|r| r.whisper == Some(whisper_code)))
            .map(|i| Language(i as u8))
    }

    /// Every code, in the spec's order.
    pub fn all() -> impl Iterator<Item = Language> {
        (0..LANGUAGES.len()).map(|i| Language(i as u8))
    }

    /// The code as the spec spells it.
    pub fn code(self) -> &'static str {
        LANGUAGES[self.0 as usize].code
    }

    /// The English name of the language.
    pub fn name(self) -> &'static str {
        LANGUAGES[self.0 as usize].name
    }

    pub fn is_auto(self) -> bool {
        self == Language::AUTO
    }

    /// The Whisper code to force during decoding; `None` for `auto` (detect among
    /// [`AUTO_DETECT_WHISPER`]) and for languages Whisper cannot recognise. Use
    /// [`Language::is_supported_by_whisper`] to tell those apart.
    pub fn whisper_code(self) -> Option<&'static str> {
        LANGUAGES[self.0 as usize].whisper
    }

    /// Whether the speech engine can transcribe this language (`auto` included).
    pub fn is_supported_by_whisper(self) -> bool {
        self.is_auto() || self.whisper_code().is_some()
    }
}

impl fmt::Debug for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Language({})", self.code())
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl std::str::FromStr for Language {
    type Err = ValidationError;
    fn from_str(s: &str) -> Result<Self, ValidationError> {
        Language::parse(s)
    }
}

impl Serialize for Language {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.code())
    }
}

impl<'de> Deserialize<'de> for Language {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Language::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// `targetLanguage` codes for `direct` (machine) translation, in the spec's order.
pub static DIRECT_TARGET_LANGUAGES: [&str; 13] =
    ["da", "en", "es", "fi", "fr", "it", "nl", "no", "pt", "ro", "ru", "sv", "uk"];

/// `targetLanguage` codes for `perfect` (human) translation, in the spec's order. This is also the
/// list of `POST /jobs/translatedSubtitles`.
pub static PERFECT_TARGET_LANGUAGES: [&str; 30] = [
    "pl", "en", "ru", "fr-ca", "ca", "zh", "ga", "hu", "pt", "da", "de-at", "fr", "nl", "en-au", "ko", "it", "de",
    "fi", "cmn", "ja", "de-ch", "en-us", "ro", "pt-br", "nl-be", "cs", "no", "sv", "en-uk", "es",
];

/// The `targetLanguage` codes allowed for a job type.
pub fn target_languages(job_type: JobType) -> &'static [&'static str] {
    match job_type {
        JobType::Direct => &DIRECT_TARGET_LANGUAGES,
        JobType::Perfect => &PERFECT_TARGET_LANGUAGES,
    }
}

/// A `targetLanguage` of a translatedSubtitles job, valid for the job's type.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TargetLanguage(&'static str);

impl TargetLanguage {
    /// Checks a `targetLanguage` against the list of `job_type` (exact spelling).
    pub fn parse_for(job_type: JobType, value: &str) -> Result<TargetLanguage, ValidationError> {
        let allowed = target_languages(job_type);
        allowed.iter().find(|c| **c == value).map(|c| TargetLanguage(c)).ok_or_else(|| {
            ValidationError::new(
                "targetLanguage",
                format!("targetLanguage for jobType {} must be one of: {}", job_type.as_str(), allowed.join(", ")),
            )
        })
    }

    pub fn code(self) -> &'static str {
        self.0
    }
}

impl fmt::Debug for TargetLanguage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TargetLanguage({})", self.0)
    }
}

impl fmt::Display for TargetLanguage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl Serialize for TargetLanguage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

/// Stored values are read back against the union of both lists (the job type is checked when
/// the request is validated, not when history is replayed).
impl<'de> Deserialize<'de> for TargetLanguage {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        TargetLanguage::parse_for(JobType::Perfect, &s)
            .or_else(|_| TargetLanguage::parse_for(JobType::Direct, &s))
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spec's list, copied verbatim (code column only).
    const SPEC_CODES: &str = "auto af-za sq-al am-et ar hy-am az-az id-id ba eu-es bn-bd bn-in bs-ba bg my-mm yue ca cmn hr cs da nl en-au en-uk en-us en eo et-ee fa-ir fil-ph fi nl-be fr-ca fr gl-es ka-ge de-at de-ot de-ch de-gsw de el gu-in iw-il hi hu is-is it ja jv-id kn-in km-kh ko lo-la lv lt mk-mk ms ml-in mt mr-in mn-mn ne-np no pl pt-br pt pa-guru-in ro ru sr-rs si-lk sk sl es es-la su-id sw-ke sw-tz sv ta-in ta-my ta-sg ta-lk te-in th-th tr uk uk-ua ur-in ur-pk ug uz-uz vi-vn cy zu-za";

    #[test]
    fn every_spec_code_is_accepted_and_nothing_else_is_listed() {
        let spec: Vec<&str> = SPEC_CODES.split(' ').collect();
        let ours: Vec<&str> = Language::all().map(Language::code).collect();
        assert_eq!(ours, spec);
        for code in spec {
            assert_eq!(Language::parse(code).unwrap().code(), code);
        }
    }

    #[test]
    fn codes_parse_only_in_the_spec_spelling() {
        assert_eq!(Language::parse("en-us").unwrap().code(), "en-us");
        assert!(Language::parse("EN-us").is_err());
        assert!(Language::parse("Auto").is_err());
        assert!(TargetLanguage::parse_for(JobType::Perfect, "FR-ca").is_err());
    }

    #[test]
    fn unknown_codes_are_rejected_naming_the_parameter() {
        for bad in ["", "english", "en_us", "zh", "jv", "he", "en-", " en"] {
            let err = Language::parse(bad).unwrap_err();
            assert_eq!(err.field, "language");
            assert!(err.message.starts_with("language '"), "{}", err.message);
        }
    }

    #[test]
    fn regional_codes_map_to_the_whisper_code_of_the_language() {
        let w = |c: &str| Language::parse(c).unwrap().whisper_code();
        for (code, whisper) in [
            ("en-us", "en"),
            ("en-uk", "en"),
            ("en-au", "en"),
            ("nl-be", "nl"),
            ("cmn", "zh"),
            ("yue", "yue"),
            ("iw-il", "he"),
            ("de-gsw", "de"),
            ("de-ot", "de"),
            ("fil-ph", "tl"),
            ("pa-guru-in", "pa"),
            ("no", "no"),
            ("jv-id", "jw"),
            ("uk-ua", "uk"),
            ("es-la", "es"),
            ("id-id", "id"),
            ("fa-ir", "fa"),
            ("ba", "ba"),
            ("su-id", "su"),
        ] {
            assert_eq!(w(code), Some(whisper), "{code}");
        }
        for unsupported in ["eo", "ug", "zu-za"] {
            assert_eq!(w(unsupported), None);
            assert!(!Language::parse(unsupported).unwrap().is_supported_by_whisper());
        }
        assert_eq!(w("auto"), None);
        assert!(Language::AUTO.is_supported_by_whisper());
    }

    #[test]
    fn every_whisper_code_we_use_exists_in_whisper() {
        for lang in Language::all() {
            if let Some(w) = lang.whisper_code() {
                assert!(WHISPER_LANGUAGES.contains(&w), "{} -> {w}", lang.code());
            }
        }
        let mut sorted = WHISPER_LANGUAGES.to_vec();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 100, "Whisper's codes are distinct");
    }

    #[test]
    fn auto_detection_covers_every_language_whisper_and_the_spec_share() {
        let shared: Vec<&str> =
            WHISPER_LANGUAGES.iter().copied().filter(|w| LANGUAGES.iter().any(|r| r.whisper == Some(*w))).collect();
        assert_eq!(AUTO_DETECT_WHISPER.to_vec(), shared);
        assert!(DOCUMENTED_AUTO_DETECT.iter().all(|d| AUTO_DETECT_WHISPER.contains(d)));
        assert_eq!(Language::from_whisper("es").unwrap().code(), "es");
        assert_eq!(Language::from_whisper("af").unwrap().code(), "af-za");
    }

    #[test]
    fn auto_detection_candidates_are_spec_languages() {
        for w in AUTO_DETECT_WHISPER {
            assert_eq!(Language::from_whisper(w).unwrap().whisper_code(), Some(w));
        }
    }

    #[test]
    fn target_language_lists_differ_per_job_type() {
        assert_eq!(DIRECT_TARGET_LANGUAGES.len(), 13);
        assert_eq!(PERFECT_TARGET_LANGUAGES.len(), 30);
        assert!(TargetLanguage::parse_for(JobType::Direct, "uk").is_ok());
        assert!(TargetLanguage::parse_for(JobType::Perfect, "uk").is_err());
        assert!(TargetLanguage::parse_for(JobType::Perfect, "ga").is_ok());
        let err = TargetLanguage::parse_for(JobType::Direct, "de").unwrap_err();
        assert_eq!(err.field, "targetLanguage");
        assert!(err.message.contains("da, en, es, fi, fr, it, nl, no, pt, ro, ru, sv, uk"));
    }

    #[test]
    fn languages_round_trip_through_json() {
        for lang in Language::all() {
            let json = serde_json::to_string(&lang).unwrap();
            assert_eq!(serde_json::from_str::<Language>(&json).unwrap(), lang);
        }
        let t = TargetLanguage::parse_for(JobType::Direct, "uk").unwrap();
        assert_eq!(serde_json::from_str::<TargetLanguage>(&serde_json::to_string(&t).unwrap()).unwrap(), t);
    }
}
