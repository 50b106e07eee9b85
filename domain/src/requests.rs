//! The request parameters of every endpoint, as received (`*Params`, all optional strings or
//! numbers, deserializable from a query string or a JSON body), and their validation into
//! checked values (`JobRequest`, `TranslationRequest`, `JobFilter`, `GlossaryContent`,
//! `GlossarySort`). Every default and bound of the spec lives here and nowhere else.
//!
//! Conventions, the same for every endpoint:
//! - an optional parameter given as an empty or blank string counts as not given (forms and
//!   generated clients send `glossaryId=` for "none");
//! - a parameter that the spec restricts to some jobs (`transcriptionStyle`, `turnaroundTime`,
//!   `targetLanguage`) is **refused** with 400 when given for other jobs, rather than silently
//!   ignored: a client that believes it asked for something gets told it did not;
//! - lengths are counted in characters (Unicode scalar values), not bytes;
//! - the first broken rule is reported, in the order of the spec's parameter table.

use serde::{Deserialize, Serialize};

use crate::decoding::DecodingChoices;
use crate::error::ValidationError;
use crate::http_url::HttpUrl;
use crate::ids::{GlossaryId, JobId};
use crate::kinds::{
    GlossarySortField, JobSortField, JobStatus, JobType, SortDirection, TranscriptionStyle, TranscriptionType,
    TurnaroundTime,
};
use crate::languages::{Language, TargetLanguage};
pub use crate::options::JobOptions;

/// Most speakers a client may announce (`numberOfSpeakers` is 0 to 5; 0 means "unknown").
pub const MAX_SPEAKERS: i64 = 5;
/// Speakers assumed when `numberOfSpeakers` is not given.
pub const DEFAULT_SPEAKERS: u8 = 2;
/// `pageSize` when not given.
pub const DEFAULT_PAGE_SIZE: u32 = 20;
/// Largest `pageSize`.
pub const MAX_PAGE_SIZE: i64 = 100;
/// Longest `deleteAfterSeconds`: ten years.
pub const MAX_DELETE_AFTER_SECONDS: i64 = 10 * 365 * 24 * 3600;
/// Longest `notes` text. The spec sets no bound; one is needed so a job stays a small record.
pub const MAX_NOTES_CHARS: usize = 5000;
/// Glossary bounds of the spec.
pub const MAX_GLOSSARY_NAME_CHARS: usize = 60;
pub const MAX_GLOSSARY_NAMES: usize = 250;
pub const MAX_GLOSSARY_NAMES_ENTRY_CHARS: usize = 20;
pub const MAX_GLOSSARY_ITEMS: usize = 750;
pub const MAX_GLOSSARY_ITEM_NAME_CHARS: usize = 60;
pub const MAX_GLOSSARY_ITEM_DESCRIPTION_CHARS: usize = 200;

/// A parameter the client actually gave: an empty string counts as absent (`glossaryId=`).
/// Anything else is checked as sent, spaces included: ` en` is not a language.
fn given(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.is_empty())
}

/// A free-text field (a name, notes, a description): blank text counts as absent.
fn given_text(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.trim().is_empty())
}

fn check_len(field: &str, value: &str, max: usize) -> Result<(), ValidationError> {
    if value.chars().count() > max {
        return Err(ValidationError::new(field, format!("{field} must be at most {max} characters long")));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Job submission: POST /jobs/upload-media (query) and POST /jobs/upload-media-from-url (body)

/// The job parameters shared by both upload endpoints, as received.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobParams {
    pub language: Option<String>,
    pub transcription_type: Option<String>,
    pub job_type: Option<String>,
    pub number_of_speakers: Option<i64>,
    pub callback_url: Option<String>,
    pub glossary_id: Option<String>,
    pub transcription_style: Option<String>,
    pub turnaround_time: Option<String>,
    pub target_language: Option<String>,
    /// Beyond the spec: delete the job's media and documents this long after it finishes.
    pub delete_after_seconds: Option<i64>,
    /// Beyond the spec: each audio channel is one speaker (a call recorded one party per channel).
    pub speaker_channels: Option<bool>,
}

/// The body of `POST /jobs/upload-media-from-url`, as received.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UrlJobParams {
    pub source_url: Option<String>,
    #[serde(flatten)]
    pub job: JobParams,
}

/// A valid job submission, with every default applied.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRequest {
    pub language: Language,
    pub transcription_type: TranscriptionType,
    pub job_type: JobType,
    /// 0 to 5; 0 means the client does not know.
    pub number_of_speakers: u8,
    /// Whether the client gave `numberOfSpeakers` (then it is the number in the file) or it is
    /// the spec's default (then it is a bound); see [`crate::speakers::SpeakerCount`].
    pub number_of_speakers_given: bool,
    /// `Some` only when the client gave `transcriptionStyle` (only allowed for transcripts).
    pub job_options: Option<JobOptions>,
    /// `Some` exactly for `perfect` jobs (the given value or the spec's default).
    pub turnaround_time: Option<TurnaroundTime>,
    /// `Some` exactly for `translatedSubtitles` jobs.
    pub target_language: Option<TargetLanguage>,
    pub callback_url: Option<HttpUrl>,
    pub glossary_id: Option<GlossaryId>,
    /// Seconds after the job finishes when its media and documents are deleted (the operator's
    /// `--retention` applies too; the shorter wins).
    pub delete_after_seconds: Option<u64>,
    /// Whether each audio channel is one speaker, as the client gave it; `None`: left out, the
    /// operator's default applies (see [`crate::speakers::Diarization`]).
    pub speaker_channels: Option<bool>,
    /// How the engine decodes the job, when the client chose (the OpenAI door); `None` for the
    /// spec's endpoints.
    pub decoding: Option<DecodingChoices>,
}

impl JobRequest {
    /// The style the transcript is made in: the requested one, else `cleanread`.
    pub fn transcription_style(&self) -> TranscriptionStyle {
        self.job_options.map_or(TranscriptionStyle::Cleanread, |o| o.transcription_style)
    }
}

impl JobParams {
    /// Applies the spec's rules and defaults:
    ///
    /// - `language`: a code of the language table, default `en`. A language the speech engine
    ///   cannot recognise (Esperanto, Uyghur, Zulu) is refused for `direct` jobs.
    /// - `transcriptionType`: default `transcription`. `jobType`: default `direct`.
    /// - `numberOfSpeakers`: 0 to 5, default 2.
    /// - `transcriptionStyle`: `cleanread` or `verbatim`, default `cleanread`; **only for
    ///   transcriptionType `transcription`** ("transcripts only"): captions and subtitles are cut
    ///   into timed rows where the verbatim/clean-read choice is not offered, so giving it there is
    ///   a 400 rather than a silent no-op.
    /// - `turnaroundTime`: only for `perfect` jobs (400 on `direct`); default `FIVE_DAYS`, or
    ///   `SEVEN_DAYS` for translatedSubtitles.
    /// - `targetLanguage`: only for translatedSubtitles, from the list of the job type, and
    ///   **required** there: a translation needs a target, and the spec names no default.
    /// - `callbackUrl`: an absolute http(s) URL. `glossaryId`: an id (existence and ownership are
    ///   checked by the caller, which has the read model).
    /// - `deleteAfterSeconds` (beyond the spec): 1 to [`MAX_DELETE_AFTER_SECONDS`].
    /// - `speakerChannels` (beyond the spec): `true` is refused with a `numberOfSpeakers` given,
    ///   since the channels are then the speakers; left out, `None` (the operator's default).
    pub fn validate(self) -> Result<JobRequest, ValidationError> {
        let language = match given(self.language) {
            Some(code) => Language::parse(&code)?,
            None => Language::default_language(),
        };
        let transcription_type = match given(self.transcription_type) {
            Some(v) => TranscriptionType::parse(&v)?,
            None => TranscriptionType::Transcription,
        };
        let job_type = match given(self.job_type) {
            Some(v) => JobType::parse(&v)?,
            None => JobType::Direct,
        };
        if job_type == JobType::Direct && !language.is_supported_by_whisper() {
            return Err(ValidationError::new(
                "language",
                format!(
                    "language {} ({}) is not available for jobType direct; use jobType perfect",
                    language.code(),
                    language.name()
                ),
            ));
        }
        let number_of_speakers_given = self.number_of_speakers.is_some();
        let number_of_speakers = match self.number_of_speakers {
            Some(n) if (0..=MAX_SPEAKERS).contains(&n) => n as u8,
            Some(_) => {
                return Err(ValidationError::new(
                    "numberOfSpeakers",
                    format!("numberOfSpeakers must be between 0 and {MAX_SPEAKERS}"),
                ));
            }
            None => DEFAULT_SPEAKERS,
        };
        let callback_url = given(self.callback_url).map(|u| HttpUrl::parse_field("callbackUrl", &u)).transpose()?;
        let glossary_id = given(self.glossary_id).map(|g| GlossaryId::parse_field("glossaryId", &g)).transpose()?;
        let job_options = match given(self.transcription_style) {
            Some(v) => {
                let transcription_style = TranscriptionStyle::parse(&v)?;
                if transcription_type != TranscriptionType::Transcription {
                    return Err(ValidationError::new(
                        "transcriptionStyle",
                        "transcriptionStyle applies only to transcriptionType transcription",
                    ));
                }
                Some(JobOptions { transcription_style })
            }
            None => None,
        };
        let turnaround_time = match (given(self.turnaround_time), job_type) {
            (Some(v), JobType::Perfect) => Some(TurnaroundTime::parse(&v)?),
            (None, JobType::Perfect) => Some(TurnaroundTime::default_for(transcription_type)),
            (Some(v), JobType::Direct) => {
                TurnaroundTime::parse(&v)?;
                return Err(ValidationError::new("turnaroundTime", "turnaroundTime applies only to jobType perfect"));
            }
            (None, JobType::Direct) => None,
        };
        let target_language = match (given(self.target_language), transcription_type) {
            (Some(v), TranscriptionType::TranslatedSubtitles) => Some(TargetLanguage::parse_for(job_type, &v)?),
            (None, TranscriptionType::TranslatedSubtitles) => {
                return Err(ValidationError::new(
                    "targetLanguage",
                    "targetLanguage is required when transcriptionType is translatedSubtitles",
                ));
            }
            (Some(_), _) => {
                return Err(ValidationError::new(
                    "targetLanguage",
                    "targetLanguage applies only to transcriptionType translatedSubtitles",
                ));
            }
            (None, _) => None,
        };
        let delete_after_seconds = match self.delete_after_seconds {
            Some(s) if (1..=MAX_DELETE_AFTER_SECONDS).contains(&s) => Some(s as u64),
            Some(_) => {
                return Err(ValidationError::new(
                    "deleteAfterSeconds",
                    format!("deleteAfterSeconds must be between 1 and {MAX_DELETE_AFTER_SECONDS} (ten years)"),
                ));
            }
            None => None,
        };
        if self.speaker_channels == Some(true) && number_of_speakers_given {
            return Err(ValidationError::new(
                "speakerChannels",
                "speakerChannels=true makes each audio channel one speaker, so numberOfSpeakers cannot be given \
                 with it: leave numberOfSpeakers out (the channels are the speakers)",
            ));
        }
        Ok(JobRequest {
            language,
            transcription_type,
            job_type,
            number_of_speakers,
            number_of_speakers_given,
            job_options,
            turnaround_time,
            target_language,
            callback_url,
            glossary_id,
            delete_after_seconds,
            speaker_channels: self.speaker_channels,
            decoding: None,
        })
    }
}

impl UrlJobParams {
    /// `sourceUrl` is required and must be an absolute http(s) URL; the rest as
    /// [`JobParams::validate`].
    pub fn validate(self) -> Result<(HttpUrl, JobRequest), ValidationError> {
        let source_url = given(self.source_url).ok_or_else(|| ValidationError::required("sourceUrl"))?;
        let source_url = HttpUrl::parse_field("sourceUrl", &source_url)?;
        Ok((source_url, self.job.validate()?))
    }
}

// ---------------------------------------------------------------------------------------------
// POST /jobs/translatedSubtitles

/// The query of `POST /jobs/translatedSubtitles`, as received.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TranslationParams {
    pub source_job_id: Option<String>,
    pub target_language: Option<String>,
    pub turnaround_time: Option<String>,
    pub callback_url: Option<String>,
    pub notes: Option<String>,
}

/// A valid request for translated subtitles of an existing manual captions job.
#[derive(Debug, Clone, PartialEq)]
pub struct TranslationRequest {
    pub source_job_id: JobId,
    /// From the `perfect` list: translation of existing jobs is human work.
    pub target_language: TargetLanguage,
    /// Default `SEVEN_DAYS`.
    pub turnaround_time: TurnaroundTime,
    pub callback_url: Option<HttpUrl>,
    /// At most [`MAX_NOTES_CHARS`] characters; blank counts as none.
    pub notes: Option<String>,
}

impl TranslationParams {
    /// `sourceJobId` and `targetLanguage` are required; whether the source job is an
    /// eligible manual captions job is decided by `job::decide` with the source's facts.
    pub fn validate(self) -> Result<TranslationRequest, ValidationError> {
        let source_job_id = given(self.source_job_id).ok_or_else(|| ValidationError::required("sourceJobId"))?;
        let source_job_id = JobId::parse_field("sourceJobId", &source_job_id)?;
        let target = given(self.target_language).ok_or_else(|| ValidationError::required("targetLanguage"))?;
        let target_language = TargetLanguage::parse_for(JobType::Perfect, &target)?;
        let turnaround_time = match given(self.turnaround_time) {
            Some(v) => TurnaroundTime::parse(&v)?,
            None => TurnaroundTime::default_for(TranscriptionType::TranslatedSubtitles),
        };
        let callback_url = given(self.callback_url).map(|u| HttpUrl::parse_field("callbackUrl", &u)).transpose()?;
        let notes = given_text(self.notes);
        if let Some(n) = &notes {
            check_len("notes", n, MAX_NOTES_CHARS)?;
        }
        Ok(TranslationRequest { source_job_id, target_language, turnaround_time, callback_url, notes })
    }
}

// ---------------------------------------------------------------------------------------------
// GET /jobs

/// The query of `GET /jobs`, as received.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListJobsParams {
    pub job_id: Option<String>,
    pub job_type: Option<String>,
    pub status: Option<String>,
    pub transcription_type: Option<String>,
    pub page: Option<i64>,
    pub page_size: Option<i64>,
    pub sort_by: Option<String>,
    pub sort_direction: Option<String>,
}

/// Valid filters, order and paging of `GET /jobs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobFilter {
    pub job_id: Option<JobId>,
    pub job_type: Option<JobType>,
    /// `OPEN`, `ERROR` or `DONE` (the spec's list; `BUSY` is refused).
    pub status: Option<JobStatus>,
    pub transcription_type: Option<TranscriptionType>,
    /// Page number, from 0.
    pub page: u64,
    /// 1 to 100, default 20.
    pub page_size: u32,
    /// The order: default `created`, `DESC` (newest first); ties broken by `jobId` in the same
    /// direction, so pages never overlap.
    pub sort_by: JobSortField,
    pub sort_direction: SortDirection,
}

impl ListJobsParams {
    pub fn validate(self) -> Result<JobFilter, ValidationError> {
        let job_id = given(self.job_id).map(|j| JobId::parse(&j)).transpose()?;
        let job_type = given(self.job_type).map(|v| JobType::parse(&v)).transpose()?;
        let status = match given(self.status) {
            Some(v) => match JobStatus::parse(&v) {
                Ok(s) if s != JobStatus::Busy => Some(s),
                _ => return Err(ValidationError::one_of("status", ["OPEN", "ERROR", "DONE"])),
            },
            None => None,
        };
        let transcription_type = given(self.transcription_type).map(|v| TranscriptionType::parse(&v)).transpose()?;
        let page = match self.page {
            Some(p) if p >= 0 => p as u64,
            Some(_) => {
                return Err(ValidationError::new("page", "page must be 0 or more (pages count from 0)"));
            }
            None => 0,
        };
        let page_size = match self.page_size {
            Some(n) if (1..=MAX_PAGE_SIZE).contains(&n) => n as u32,
            Some(_) => {
                return Err(ValidationError::new(
                    "pageSize",
                    format!("pageSize must be between 1 and {MAX_PAGE_SIZE}"),
                ));
            }
            None => DEFAULT_PAGE_SIZE,
        };
        let sort_by =
            given(self.sort_by).map(|v| JobSortField::parse(&v)).transpose()?.unwrap_or(JobSortField::Created);
        let sort_direction =
            given(self.sort_direction).map(|v| SortDirection::parse(&v)).transpose()?.unwrap_or(SortDirection::Desc);
        Ok(JobFilter { job_id, job_type, status, transcription_type, page, page_size, sort_by, sort_direction })
    }
}

impl JobFilter {
    /// How many matching jobs come before this page (saturating: a far page is simply empty).
    pub fn offset(&self) -> u64 {
        self.page.saturating_mul(u64::from(self.page_size))
    }

    /// Whether a job passes the filters (paging aside): the meaning of the filters, which
    /// `list_jobs` of the read models applies in SQL. Test-only, so that parsing requests does not
    /// depend on the job aggregate.
    #[cfg(test)]
    pub fn matches(&self, job: &crate::job::Job) -> bool {
        self.job_id.as_ref().is_none_or(|id| *id == job.job_id)
            && self.job_type.is_none_or(|t| t == job.job_type)
            && self.status.is_none_or(|s| s == job.status)
            && self.transcription_type.is_none_or(|t| t == job.transcription_type)
    }
}

// ---------------------------------------------------------------------------------------------
// Glossaries: POST /glossary, PUT /glossary/{id}, GET /glossary

/// A UserGlossary body (create and update), as received. `id`, `userName` and `created` are
/// returned by the service and ignored on input.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GlossaryParams {
    pub name: Option<String>,
    pub names: Option<Vec<String>>,
    pub items: Option<Vec<GlossaryItemParams>>,
}

/// One GlossaryItem, as received.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GlossaryItemParams {
    pub name: Option<String>,
    pub description: Option<String>,
}

/// A term and what it means.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GlossaryItem {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The valid content of a glossary, as stored and returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GlossaryContent {
    pub name: String,
    pub names: Vec<String>,
    pub items: Vec<GlossaryItem>,
}

impl GlossaryParams {
    /// `name` required (not blank), at most 60 characters; `names` at most 250 entries, each
    /// non-blank and at most 20 characters; `items` at most 750, each with a required `name` of at
    /// most 60 characters and an optional `description` of at most 200. Errors name the entry:
    /// `names[3]`, `items[2].name`.
    pub fn validate(self) -> Result<GlossaryContent, ValidationError> {
        let name = given_text(self.name).ok_or_else(|| ValidationError::required("name"))?;
        check_len("name", &name, MAX_GLOSSARY_NAME_CHARS)?;
        let names = self.names.unwrap_or_default();
        if names.len() > MAX_GLOSSARY_NAMES {
            return Err(ValidationError::new("names", format!("names must have at most {MAX_GLOSSARY_NAMES} entries")));
        }
        for (i, n) in names.iter().enumerate() {
            let field = format!("names[{i}]");
            if n.trim().is_empty() {
                return Err(ValidationError::new(&field, format!("{field} must not be empty")));
            }
            check_len(&field, n, MAX_GLOSSARY_NAMES_ENTRY_CHARS)?;
        }
        let raw_items = self.items.unwrap_or_default();
        if raw_items.len() > MAX_GLOSSARY_ITEMS {
            return Err(ValidationError::new("items", format!("items must have at most {MAX_GLOSSARY_ITEMS} entries")));
        }
        let mut items = Vec::with_capacity(raw_items.len());
        for (i, item) in raw_items.into_iter().enumerate() {
            let field = format!("items[{i}].name");
            let name = given_text(item.name).ok_or_else(|| ValidationError::required(&field))?;
            check_len(&field, &name, MAX_GLOSSARY_ITEM_NAME_CHARS)?;
            let description = given_text(item.description);
            if let Some(d) = &description {
                check_len(&format!("items[{i}].description"), d, MAX_GLOSSARY_ITEM_DESCRIPTION_CHARS)?;
            }
            items.push(GlossaryItem { name, description });
        }
        Ok(GlossaryContent { name, names, items })
    }
}

/// The query of `GET /glossary`, as received.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListGlossariesParams {
    pub sort_by: Option<String>,
    pub sort_direction: Option<String>,
}

/// Sorting of `GET /glossary`: default `created`, `DESC` (newest first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GlossarySort {
    pub by: GlossarySortField,
    pub direction: SortDirection,
}

impl ListGlossariesParams {
    pub fn validate(self) -> Result<GlossarySort, ValidationError> {
        let by = given(self.sort_by).map(|v| GlossarySortField::parse(&v)).transpose()?;
        let direction = given(self.sort_direction).map(|v| SortDirection::parse(&v)).transpose()?;
        Ok(GlossarySort {
            by: by.unwrap_or(GlossarySortField::Created),
            direction: direction.unwrap_or(SortDirection::Desc),
        })
    }
}

#[cfg(test)]
mod tests;
