//! The JSON shapes of the API as OpenAPI objects: the spec's Job and Glossary, their wrappers,
//! and the request bodies. Responses are built from the domain's views (`scribe_domain::job::Job`,
//! `scribe_domain::glossary::Glossary`), whose serde form is the contract; a test pins that both
//! serialize to the same JSON.
//!
//! Request fields are plain strings and numbers: the domain validates them (defaults, enums,
//! bounds) and names the parameter in its errors. Response fields use enums so that generated
//! clients get typed values.

use poem_openapi::{Enum, Object};
use scribe_domain::{glossary, job, kinds};

/// Where a job is.
#[derive(Enum, Debug, Clone, Copy, PartialEq, Eq)]
#[oai(rename_all = "UPPERCASE")]
pub enum JobStatus {
    /// Submitted and not finished (for manual jobs: until the people's work is submitted).
    Open,
    /// Finished; the exports are available.
    Done,
    /// The service hit a problem; the callback (and the job's history) says why.
    Error,
    /// A translatedSubtitles order on an existing manual job (`POST /jobs/translatedSubtitles`),
    /// until its translator submits (→ `DONE`) or its source job is deleted (→ `ERROR`).
    Busy,
}

#[derive(Enum, Debug, Clone, Copy, PartialEq, Eq)]
#[oai(rename_all = "camelCase")]
pub enum TranscriptionType {
    Transcription,
    Captions,
    TranslatedSubtitles,
}

#[derive(Enum, Debug, Clone, Copy, PartialEq, Eq)]
#[oai(rename_all = "lowercase")]
pub enum JobType {
    Perfect,
    Direct,
}

#[derive(Enum, Debug, Clone, Copy, PartialEq, Eq)]
#[oai(rename_all = "lowercase")]
pub enum TranscriptionStyle {
    Cleanread,
    Verbatim,
}

/// Options that were explicitly requested at submission.
#[derive(Object, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
pub struct JobOptions {
    pub transcription_style: TranscriptionStyle,
}

/// The spec's Job object.
#[derive(Object, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
pub struct Job {
    pub job_id: String,
    /// Creation time, milliseconds since the Unix epoch.
    pub created: u64,
    /// A language code; for `auto`, the detected language once the transcript exists.
    pub language: String,
    pub status: JobStatus,
    /// Length of the audio in whole seconds; 0 until the media has been inspected.
    pub nr_audio_seconds: u64,
    pub transcription_type: TranscriptionType,
    /// Name of the media file.
    pub filename: String,
    pub job_type: JobType,
    /// Job notes; null when none.
    pub notes: Option<String>,
    /// Present only when options were explicitly requested.
    #[oai(skip_serializing_if_is_none)]
    pub job_options: Option<JobOptions>,
    /// Only on translatedSubtitles jobs made from an existing job.
    #[oai(skip_serializing_if_is_none)]
    pub source_job_id: Option<String>,
    /// Only on translatedSubtitles jobs.
    #[oai(skip_serializing_if_is_none)]
    pub target_language: Option<String>,
    /// Why the job failed; only when the status is `ERROR`.
    #[oai(skip_serializing_if_is_none)]
    pub error_msg: Option<String>,
    /// Beyond the spec: the `deleteAfterSeconds` given at submission.
    #[oai(skip_serializing_if_is_none)]
    pub delete_after_seconds: Option<u64>,
    /// Beyond the spec: when the job's media and transcripts will be deleted, in milliseconds
    /// since the Unix epoch: once the job is `DONE` or `ERROR`, if its `deleteAfterSeconds` or
    /// the server's retention limits how long they are kept (the shorter wins). Afterwards the
    /// job answers 410, as a deleted job does.
    #[oai(skip_serializing_if_is_none)]
    pub expires_at: Option<u64>,
    /// Beyond the spec (clients that do not know it ignore it): how far the job's speech
    /// recognition has come. Present only while the job is `OPEN` and its transcription runs;
    /// absent while it waits for a recognition worker, and once it is `DONE` or `ERROR`.
    #[oai(skip_serializing_if_is_none)]
    pub progress: Option<TranscriptionProgress>,
}

/// Beyond the spec: the progress of a job's running speech recognition. Each server records it
/// in whole 10 % steps, so `percent` moves in steps on long recordings. (Not `JobProgress`:
/// client generators give that name to the model of `Job`'s `progress` property.)
#[derive(Object, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
pub struct TranscriptionProgress {
    /// Whole percent (0 to 100) of the media's speech recognised. Speaker diarization and
    /// writing the transcript follow recognition and take a little longer after 100.
    pub percent: u8,
    /// Estimated seconds of recognition left, from the time spent so far and the share done,
    /// as of the last progress step; absent until the first step past 0 %.
    #[oai(skip_serializing_if_is_none)]
    pub eta_seconds: Option<u64>,
}

/// `{"jobStatus": Job}`.
#[derive(Object, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
pub struct JobStatusResponse {
    pub job_status: Job,
}

/// A confirmation, such as `{"message": "Job deleted"}`.
#[derive(Object, Debug, Clone, PartialEq)]
pub struct Message {
    pub message: String,
}

impl Message {
    pub fn new(text: &str) -> Message {
        Message { message: text.to_owned() }
    }
}

/// A term and what it means.
#[derive(Object, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
pub struct GlossaryItem {
    /// The term; required, at most 60 characters.
    pub name: String,
    /// At most 200 characters.
    #[oai(skip_serializing_if_is_none)]
    pub description: Option<String>,
}

/// The spec's Glossary object.
#[derive(Object, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
pub struct Glossary {
    /// The value to pass as glossaryId in uploads.
    pub id: String,
    /// The owner's user name.
    pub user_name: String,
    pub name: String,
    pub names: Vec<String>,
    pub items: Vec<GlossaryItem>,
    /// Creation time, milliseconds since the Unix epoch.
    pub created: u64,
}

/// Body of `POST /glossary` and `PUT /glossary/{glossaryId}`. `id`, `userName` and `created`
/// are set by the service.
#[derive(Object, serde::Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[oai(rename_all = "camelCase", rename = "UserGlossary")]
pub struct UserGlossary {
    /// Required; at most 60 characters. (Optional in the schema so that a missing name is
    /// answered with a 400 naming `name`, like every other invalid parameter.)
    pub name: Option<String>,
    /// At most 250 entries, each at most 20 characters.
    pub names: Option<Vec<String>>,
    /// At most 750 entries.
    pub items: Option<Vec<UserGlossaryItem>>,
}

/// A GlossaryItem as sent.
#[derive(Object, serde::Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[oai(rename_all = "camelCase")]
pub struct UserGlossaryItem {
    /// Required; at most 60 characters (checked by the service, which names the entry).
    pub name: Option<String>,
    /// At most 200 characters.
    pub description: Option<String>,
}

/// Body of `POST /jobs/upload-media-from-url`. Every field but `sourceUrl` is optional and has
/// the same meaning, default and allowed values as the query parameter of `upload-media`.
#[derive(Object, serde::Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[oai(rename_all = "camelCase")]
pub struct UploadFromUrl {
    /// Required: http(s) URL of the media file, publicly reachable or presigned; at most 16 GB.
    /// (Optional in the schema so that a missing sourceUrl is answered with a 400 naming it.)
    pub source_url: Option<String>,
    // The job parameters, described once for both submissions: `contract::job_parameter`.
    pub language: Option<String>,
    pub transcription_type: Option<String>,
    pub job_type: Option<String>,
    pub number_of_speakers: Option<i64>,
    pub callback_url: Option<String>,
    pub glossary_id: Option<String>,
    pub transcription_style: Option<String>,
    pub turnaround_time: Option<String>,
    pub target_language: Option<String>,
    pub delete_after_seconds: Option<i64>,
    pub speaker_channels: Option<bool>,
}

impl UploadFromUrl {
    /// The first field sent as an empty string. A query parameter left empty (`glossaryId=`)
    /// means "not given", but a JSON body says that with `null` or by leaving the field out,
    /// and the document holds "" to every field's pattern or list of values.
    pub fn empty_field(&self) -> Option<&'static str> {
        [
            ("sourceUrl", &self.source_url),
            ("language", &self.language),
            ("transcriptionType", &self.transcription_type),
            ("jobType", &self.job_type),
            ("callbackUrl", &self.callback_url),
            ("glossaryId", &self.glossary_id),
            ("transcriptionStyle", &self.transcription_style),
            ("turnaroundTime", &self.turnaround_time),
            ("targetLanguage", &self.target_language),
        ]
        .into_iter()
        .find(|(_, value)| value.as_deref() == Some(""))
        .map(|(name, _)| name)
    }
}

impl From<kinds::JobStatus> for JobStatus {
    fn from(s: kinds::JobStatus) -> Self {
        match s {
            kinds::JobStatus::Open => JobStatus::Open,
            kinds::JobStatus::Done => JobStatus::Done,
            kinds::JobStatus::Error => JobStatus::Error,
            kinds::JobStatus::Busy => JobStatus::Busy,
        }
    }
}

impl From<kinds::TranscriptionType> for TranscriptionType {
    fn from(t: kinds::TranscriptionType) -> Self {
        match t {
            kinds::TranscriptionType::Transcription => TranscriptionType::Transcription,
            kinds::TranscriptionType::Captions => TranscriptionType::Captions,
            kinds::TranscriptionType::TranslatedSubtitles => TranscriptionType::TranslatedSubtitles,
        }
    }
}

impl From<kinds::JobType> for JobType {
    fn from(t: kinds::JobType) -> Self {
        match t {
            kinds::JobType::Perfect => JobType::Perfect,
            kinds::JobType::Direct => JobType::Direct,
        }
    }
}

impl From<kinds::TranscriptionStyle> for TranscriptionStyle {
    fn from(s: kinds::TranscriptionStyle) -> Self {
        match s {
            kinds::TranscriptionStyle::Cleanread => TranscriptionStyle::Cleanread,
            kinds::TranscriptionStyle::Verbatim => TranscriptionStyle::Verbatim,
        }
    }
}

impl From<job::Job> for Job {
    fn from(j: job::Job) -> Self {
        Job::shown(j, None)
    }
}

impl Job {
    /// The domain's view as clients see it, with its expiry under the server's `retention_s`.
    pub fn shown(j: job::Job, retention_s: Option<u64>) -> Job {
        let expires_at = j.expires_at_ms(retention_s);
        Job {
            job_id: j.job_id.to_string(),
            created: j.created,
            language: j.language.code().to_owned(),
            status: j.status.into(),
            nr_audio_seconds: j.nr_audio_seconds,
            transcription_type: j.transcription_type.into(),
            filename: j.filename,
            job_type: j.job_type.into(),
            notes: j.notes,
            job_options: j.job_options.map(|o| JobOptions { transcription_style: o.transcription_style.into() }),
            source_job_id: j.source_job_id.map(|id| id.to_string()),
            target_language: j.target_language.map(|t| t.code().to_owned()),
            error_msg: j.error_msg,
            delete_after_seconds: j.delete_after_seconds,
            expires_at,
            progress: j.progress.map(|p| TranscriptionProgress { percent: p.percent, eta_seconds: p.eta_seconds }),
        }
    }
}

impl From<job::Job> for JobStatusResponse {
    fn from(j: job::Job) -> Self {
        JobStatusResponse { job_status: j.into() }
    }
}

impl From<glossary::Glossary> for Glossary {
    fn from(g: glossary::Glossary) -> Self {
        Glossary {
            id: g.id.to_string(),
            user_name: g.user_name.to_string(),
            name: g.name,
            names: g.names,
            items: g.items.into_iter().map(|i| GlossaryItem { name: i.name, description: i.description }).collect(),
            created: g.created,
        }
    }
}

impl From<UserGlossary> for scribe_domain::requests::GlossaryParams {
    fn from(b: UserGlossary) -> Self {
        scribe_domain::requests::GlossaryParams {
            name: b.name,
            names: b.names,
            items: b.items.map(|items| {
                items
                    .into_iter()
                    .map(|i| scribe_domain::requests::GlossaryItemParams { name: i.name, description: i.description })
                    .collect()
            }),
        }
    }
}

impl From<UploadFromUrl> for scribe_domain::requests::UrlJobParams {
    fn from(b: UploadFromUrl) -> Self {
        scribe_domain::requests::UrlJobParams {
            source_url: b.source_url,
            job: scribe_domain::requests::JobParams {
                language: b.language,
                transcription_type: b.transcription_type,
                job_type: b.job_type,
                number_of_speakers: b.number_of_speakers,
                callback_url: b.callback_url,
                glossary_id: b.glossary_id,
                transcription_style: b.transcription_style,
                turnaround_time: b.turnaround_time,
                target_language: b.target_language,
                delete_after_seconds: b.delete_after_seconds,
                speaker_channels: b.speaker_channels,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use poem_openapi::types::ToJSON;
    use scribe_domain::ids::{GlossaryId, JobId, UserName};
    use scribe_domain::languages::{Language, TargetLanguage};
    use scribe_domain::requests::{GlossaryContent, JobOptions as DomainOptions};

    use super::*;

    /// The OpenAPI objects must serialize exactly as the domain's views (the API contract).
    #[test]
    fn job_json_matches_the_domain_view() {
        let plain = job::Job {
            job_id: JobId::parse("j1").unwrap(),
            created: 1_700_000_000_000,
            language: Language::parse("en").unwrap(),
            status: kinds::JobStatus::Open,
            nr_audio_seconds: 11,
            transcription_type: kinds::TranscriptionType::Transcription,
            filename: "jfk.wav".into(),
            job_type: kinds::JobType::Direct,
            notes: None,
            job_options: None,
            source_job_id: None,
            target_language: None,
            error_msg: None,
            delete_after_seconds: None,
            finished_ms: None,
            expired: false,
            progress: None,
        };
        let full = job::Job {
            status: kinds::JobStatus::Busy,
            transcription_type: kinds::TranscriptionType::TranslatedSubtitles,
            job_type: kinds::JobType::Perfect,
            notes: Some("n".into()),
            job_options: Some(DomainOptions { transcription_style: kinds::TranscriptionStyle::Verbatim }),
            source_job_id: Some(JobId::parse("j0").unwrap()),
            target_language: Some(TargetLanguage::parse_for(kinds::JobType::Perfect, "fr-ca").unwrap()),
            error_msg: Some("The media could not be decoded".into()),
            delete_after_seconds: Some(86_400),
            progress: Some(job::JobProgress { percent: 42, eta_seconds: Some(73) }),
            ..plain.clone()
        };
        for domain_job in [plain, full] {
            let want = serde_json::to_value(&domain_job).unwrap();
            let got = Job::from(domain_job).to_json().unwrap();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn glossary_json_matches_the_domain_view() {
        let content = GlossaryContent {
            name: "Team".into(),
            names: vec!["Ada".into()],
            items: vec![
                scribe_domain::requests::GlossaryItem { name: "ASR".into(), description: None },
                scribe_domain::requests::GlossaryItem {
                    name: "VAD".into(),
                    description: Some("voice activity".into()),
                },
            ],
        };
        let g = glossary::Glossary {
            id: GlossaryId::parse("g1").unwrap(),
            user_name: UserName::parse("ann").unwrap(),
            name: content.name,
            names: content.names,
            items: content.items,
            created: 5,
        };
        let want = serde_json::to_value(&g).unwrap();
        assert_eq!(Glossary::from(g).to_json().unwrap(), want);
    }
}
