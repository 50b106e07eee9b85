//! What this server can do with the models it was started with, and the refusal of a direct job
//! it could not finish.
//!
//! The spec lists 13 `targetLanguage` codes for direct translatedSubtitles jobs; which of them a
//! server can really produce depends on its models folder. The binary builds a [`Capabilities`]
//! at start-up; the edge checks every submission against it (400 naming `targetLanguage` and the
//! targets it can do), so a job is never accepted, charged and then failed for a missing model,
//! and `GET /capabilities` shows clients the same value.

use crate::error::ValidationError;
use crate::kinds::{JobType, TranscriptionType};
use crate::languages::{DIRECT_TARGET_LANGUAGES, Language, TargetLanguage};
use crate::requests::JobRequest;

/// The languages a server can transcribe and translate into (direct jobs).
#[derive(Debug, Clone, PartialEq)]
pub struct Capabilities {
    /// Spec language codes a direct job may be submitted with (`auto` excluded).
    pub asr_languages: Vec<Language>,
    /// Whisper codes `language=auto` picks among.
    pub auto_detect: Vec<&'static str>,
    /// Direct `targetLanguage` codes this server produces, in the spec's order.
    pub translation_targets: Vec<TargetLanguage>,
    /// Whether the speech model is multilingual (it then also translates speech into English).
    pub multilingual_speech: bool,
}

impl Capabilities {
    /// The capabilities of a server whose speech model is `multilingual_speech` (else English
    /// only), which picks `auto` among `auto_detect`, and which has text models from English into
    /// `text_targets`.
    ///
    /// English is always a target: Whisper translates any speech it knows into English, and an
    /// English-only model only takes English jobs. Every other target needs its English→target
    /// model; the speech is first made English (the transcript, or Whisper's translation).
    pub fn new(multilingual_speech: bool, auto_detect: &[&'static str], text_targets: &[&str]) -> Capabilities {
        let asr_languages = Language::all()
            .filter(|l| !l.is_auto())
            .filter(|l| match l.whisper_code() {
                Some("en") => true,
                Some(_) => multilingual_speech,
                None => false,
            })
            .collect();
        let translation_targets = DIRECT_TARGET_LANGUAGES
            .iter()
            .filter(|code| **code == "en" || text_targets.contains(code))
            .map(|code| TargetLanguage::parse_for(JobType::Direct, code).expect("a direct target"))
            .collect();
        let auto_detect = if multilingual_speech { auto_detect.to_vec() } else { vec!["en"] };
        Capabilities { asr_languages, auto_detect, translation_targets, multilingual_speech }
    }

    /// Refuses a direct job this server could not finish: a language its speech model does not
    /// know, or a translation target it has no model for. Manual jobs are done by people and
    /// pass unchecked.
    pub fn check(&self, request: &JobRequest) -> Result<(), ValidationError> {
        if request.job_type != JobType::Direct {
            return Ok(());
        }
        let language = request.language;
        if !language.is_auto() && !self.asr_languages.contains(&language) {
            return Err(ValidationError::new(
                "language",
                format!(
                    "language {} ({}) is not available for jobType direct on this server: its speech model \
                     recognises English only; use jobType perfect, or see GET /capabilities",
                    language.code(),
                    language.name()
                ),
            ));
        }
        if request.transcription_type == TranscriptionType::TranslatedSubtitles
            && let Some(target) = request.target_language
            && !self.translation_targets.contains(&target)
        {
            return Err(ValidationError::new(
                "targetLanguage",
                format!(
                    "targetLanguage {target} is not available for jobType direct on this server; \
                             it can translate into: {} (see GET /capabilities)",
                    self.target_codes().join(", ")
                ),
            ));
        }
        Ok(())
    }

    /// The direct targets as codes.
    pub fn target_codes(&self) -> Vec<&'static str> {
        self.translation_targets.iter().map(|t| t.code()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::requests::JobParams;

    fn request(pairs: &[(&str, &str)]) -> JobRequest {
        let mut p = JobParams::default();
        for (k, v) in pairs {
            let v = Some(v.to_string());
            match *k {
                "language" => p.language = v,
                "transcriptionType" => p.transcription_type = v,
                "jobType" => p.job_type = v,
                "targetLanguage" => p.target_language = v,
                other => panic!("{other}"),
            }
        }
        p.validate().unwrap()
    }

    fn translated(target: &str) -> JobRequest {
        request(&[("transcriptionType", "translatedSubtitles"), ("targetLanguage", target)])
    }

    #[test]
    fn english_is_always_a_target_and_others_need_their_model() {
        let caps = Capabilities::new(true, &["en", "fr"], &["pt"]);
        assert_eq!(caps.target_codes(), vec!["en", "pt"]);
        assert!(caps.check(&translated("en")).is_ok());
        assert!(caps.check(&translated("pt")).is_ok());
        let err = caps.check(&translated("fr")).unwrap_err();
        assert_eq!(err.field, "targetLanguage");
        assert!(err.message.contains("into: en, pt"), "{}", err.message);
        assert_eq!(Capabilities::new(true, &[], &[]).target_codes(), vec!["en"]);
    }

    #[test]
    fn targets_come_in_the_spec_order_and_ignore_unknown_models() {
        let caps = Capabilities::new(true, &[], &["uk", "de", "da", "pt"]);
        assert_eq!(caps.target_codes(), vec!["da", "en", "pt", "uk"]);
    }

    #[test]
    fn manual_jobs_are_not_limited_by_the_models() {
        let caps = Capabilities::new(false, &[], &[]);
        let manual = request(&[
            ("jobType", "perfect"),
            ("transcriptionType", "translatedSubtitles"),
            ("targetLanguage", "ja"),
            ("language", "fr"),
        ]);
        assert!(caps.check(&manual).is_ok());
    }

    #[test]
    fn an_english_only_speech_model_takes_english_jobs_only() {
        let caps = Capabilities::new(false, &["en", "fr"], &[]);
        assert!(caps.check(&request(&[("language", "en-us")])).is_ok());
        assert!(caps.check(&request(&[("language", "auto")])).is_ok());
        assert_eq!(caps.auto_detect, vec!["en"]);
        let err = caps.check(&request(&[("language", "fr")])).unwrap_err();
        assert_eq!(err.field, "language");
        let multi = Capabilities::new(true, &["en", "fr"], &[]);
        assert!(multi.check(&request(&[("language", "fr")])).is_ok());
        assert!(multi.asr_languages.len() > 50);
    }
}
