//! `GET /capabilities` (beyond the spec): what this server can do with the models it was started
//! with, so a client can offer only what will work. The same value refuses, at submission, a
//! direct job the server could not finish (see `scribe_domain::capabilities`).

use std::sync::Arc;

use poem::web::Data;
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use scribe_actors::speech_model::SpeechModels;
use scribe_domain::capabilities::Capabilities as DomainCapabilities;
use scribe_domain::kinds::JobType;
use scribe_domain::languages::target_languages;

use crate::ApiTags;
use crate::auth::AnyKeyAuth;
use crate::error::ApiError;
use crate::state::ApiState;

/// What this server can do.
#[derive(Object, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
pub struct Capabilities {
    /// `language` codes a `direct` job may be submitted with (besides `auto`): the languages the
    /// speech model recognises.
    pub asr_languages: Vec<String>,
    /// The `language` codes `language=auto` chooses among: every language the speech model
    /// recognises that the spec's table has. en, nl, de, fr and it are the documented and tested
    /// ones; the job shows the detected code once its transcript exists.
    pub auto_detect_languages: Vec<String>,
    /// `targetLanguage` codes a `direct` translatedSubtitles job may ask for on this server:
    /// `en` (Whisper translates the speech), and every language whose English→target
    /// translation model is installed (`translation/en-xx/` in the models folder).
    pub direct_translation_targets: Vec<String>,
    /// `targetLanguage` codes of `perfect` (human) translatedSubtitles jobs.
    pub perfect_translation_targets: Vec<String>,
    /// `transcriptionStyle` values: `cleanread` (default; no fillers or stutters) and
    /// `verbatim` (keeps "um", "uh", repetitions and false starts).
    pub transcription_styles: Vec<String>,
    /// Whether the speech model is multilingual (else it recognises English only).
    pub multilingual_speech: bool,
    /// The speech models this server runs, the default first. Direct jobs use the default
    /// (`scribe serve --model DIR`); the OpenAI-compatible door (`/v1/audio/*`) takes any of
    /// them by name in its `model` field.
    pub speech_models: Vec<SpeechModelEntry>,
    /// The precision every speech model runs at (`scribe serve --compute-type`): `float32`,
    /// `float16` or `int8`.
    pub compute_type: String,
    /// The processor speech recognition runs on (`scribe serve --device`): `cpu`, `vulkan`,
    /// `vulkan:N`, `cuda:N` or `flex`.
    pub device: String,
    /// Every `language` code of the spec with its English name, in the spec's order (`auto`
    /// first): the codes a `perfect` job may be submitted with.
    pub languages: Vec<LanguageEntry>,
    /// The translation targets that are no `language` code (`zh`, `ga`), with their names: with
    /// `languages`, every code of these lists has a name to show.
    pub target_only_languages: Vec<LanguageEntry>,
    /// The rules SRT and VTT exports lay cues out by, so an editor can mark a cue that breaks
    /// them.
    pub subtitle_rules: SubtitleRules,
    /// What a job that leaves `speakerChannels` out gets (`scribe serve --speaker-channels`):
    /// `true`, each audio channel is one speaker (unless the job gives `numberOfSpeakers`);
    /// `false`, the voices are told apart.
    pub speaker_channels_by_default: bool,
}

/// A language code and its English name.
#[derive(Object, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
pub struct LanguageEntry {
    /// The code, as the API spells it (`en-us`).
    pub code: String,
    /// Its English name (`English, United States`).
    pub name: String,
}

/// The names of translation targets that are not `language` codes of the spec.
const TARGET_ONLY_NAMES: &[(&str, &str)] = &[("zh", "Chinese"), ("ga", "Irish")];

fn entry(code: &str, name: &str) -> LanguageEntry {
    LanguageEntry { code: code.to_owned(), name: name.to_owned() }
}

/// The spec's languages with their names.
fn language_entries() -> Vec<LanguageEntry> {
    scribe_domain::languages::Language::all().map(|l| entry(l.code(), l.name())).collect()
}

/// The target-only codes with their names.
fn target_only_entries() -> Vec<LanguageEntry> {
    TARGET_ONLY_NAMES.iter().map(|(code, name)| entry(code, name)).collect()
}

/// The numbers the subtitle exports work with (`scribe_domain::subtitles`): the quality rules
/// they meet where timing allows, and the defaults of their knobs.
#[derive(Object, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
pub struct SubtitleRules {
    /// Fastest comfortable reading speed, characters per second (a space between rows counts).
    pub max_chars_per_second: f64,
    /// Shortest comfortable time on screen, seconds.
    pub min_duration_seconds: f64,
    /// Smallest gap between two cues, seconds (two frames at 24 fps).
    pub min_gap_seconds: f64,
    /// `maxCharsPerRow`'s default.
    pub max_chars_per_row: u32,
    /// `maxNumberOfRows`' default.
    pub max_number_of_rows: u32,
    /// `maxScreenTimePerRowSeconds`' default: a cue stays at most rows × this on screen.
    pub max_screen_time_per_row_seconds: f64,
}

impl SubtitleRules {
    fn of_the_exports() -> Self {
        use scribe_domain::export::params::{DEFAULT_CHARS_PER_ROW, DEFAULT_ROWS, DEFAULT_SCREEN_TIME_PER_ROW};
        use scribe_domain::subtitles::{MAX_CPS, MIN_DURATION, MIN_GAP};
        SubtitleRules {
            max_chars_per_second: MAX_CPS,
            min_duration_seconds: MIN_DURATION,
            min_gap_seconds: MIN_GAP,
            max_chars_per_row: DEFAULT_CHARS_PER_ROW as u32,
            max_number_of_rows: DEFAULT_ROWS as u32,
            max_screen_time_per_row_seconds: DEFAULT_SCREEN_TIME_PER_ROW,
        }
    }
}

/// One speech model of this server.
#[derive(Object, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
pub struct SpeechModelEntry {
    /// Its folder's name (`whisper-base`, `whisper-tiny.en`, an operator's own model).
    pub name: String,
    /// Whether direct jobs use it.
    pub default: bool,
    /// Whether it recognises languages other than English (and translates into English).
    pub multilingual: bool,
    /// How its file stores the weights (`float16`, `int8`, `int8+float16`, `float32`); it runs at
    /// `computeType` whatever they are.
    pub weights: String,
}

impl Capabilities {
    /// What a server with these model capabilities and these speech models can do;
    /// `speaker_channels`: the operator's default for `speakerChannels`.
    pub fn new(c: &DomainCapabilities, models: &SpeechModels, speaker_channels: bool) -> Self {
        let default = models.default_entry().name.clone();
        Capabilities {
            speech_models: models
                .list()
                .into_iter()
                .map(|m| SpeechModelEntry {
                    default: m.name == default,
                    name: m.name.clone(),
                    multilingual: m.multilingual,
                    weights: m.weights.clone(),
                })
                .collect(),
            compute_type: models.compute_type().to_string(),
            device: models.device().to_string(),
            asr_languages: c.asr_languages.iter().map(|l| l.code().to_owned()).collect(),
            auto_detect_languages: c
                .auto_detect
                .iter()
                .filter_map(|w| scribe_domain::languages::Language::from_whisper(w))
                .map(|l| l.code().to_owned())
                .collect(),
            direct_translation_targets: c.target_codes().into_iter().map(str::to_owned).collect(),
            perfect_translation_targets: target_languages(JobType::Perfect).iter().map(|s| (*s).to_owned()).collect(),
            transcription_styles: vec!["cleanread".into(), "verbatim".into()],
            multilingual_speech: c.multilingual_speech,
            languages: language_entries(),
            target_only_languages: target_only_entries(),
            subtitle_rules: SubtitleRules::of_the_exports(),
            speaker_channels_by_default: speaker_channels,
        }
    }
}

pub struct CapabilitiesApi;

#[OpenApi(tag = "ApiTags::Jobs")]
impl CapabilitiesApi {
    /// What this server can do (beyond the spec).
    ///
    /// The languages direct jobs may use, the set `auto` detects among, and the translation
    /// targets: a direct translatedSubtitles job asking for a target not listed here is refused
    /// with 400 (field `targetLanguage`) at submission, before anything is charged. Any key,
    /// customer or staff, may ask (transcribers' and translators' editors use the subtitle
    /// rules).
    #[oai(path = "/capabilities", method = "get", operation_id = "getCapabilities")]
    async fn capabilities(
        &self,
        _auth: AnyKeyAuth,
        state: Data<&Arc<ApiState>>,
    ) -> Result<Json<Capabilities>, ApiError> {
        Ok(Json(Capabilities::new(
            state.settings.capabilities.as_ref(),
            &state.models,
            state.settings.speaker_channels,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_language_has_a_name() {
        let names: Vec<LanguageEntry> = language_entries().into_iter().chain(target_only_entries()).collect();
        for job_type in [JobType::Direct, JobType::Perfect] {
            for code in target_languages(job_type) {
                assert!(names.iter().any(|l| l.code == *code && !l.name.is_empty()), "{code} has no name");
            }
        }
        assert_eq!(names[0].code, "auto", "the spec's order, auto first");
        assert!(target_only_entries().iter().all(|t| language_entries().iter().all(|l| l.code != t.code)));
    }
}
