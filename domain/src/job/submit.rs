//! How a job comes to exist: an upload the edge stored (and probed), a URL to fetch, or an order
//! of translated subtitles of a finished manual captions job. Each is one decision on a job that
//! does not exist yet; its events are the job's first.

use crate::http_url::HttpUrl;
use crate::ids::{JobId, UserName};
use crate::kinds::{JobStatus, JobType, TaskKind, TranscriptionType};
use crate::requests::{JobRequest, TranslationRequest};

use super::{JobCommand, JobEvent, JobRefusal, MediaSource, SourceJobFacts, StoredMedia, Submission, tasks};

/// Where the media of a new job comes from. An upload always has its file: the edge stores it
/// before the job exists, so there is no upload waiting for media.
#[derive(Debug, Clone, PartialEq)]
pub enum NewMedia {
    /// An upload already stored as `media`; `filename` as the client sent it (it is sanitized
    /// here).
    Upload { filename: String, media: StoredMedia },
    /// A URL to fetch; the file name is taken from its path.
    Url { source_url: HttpUrl },
    /// A live session run by the server node `node`; its audio arrives as it is spoken.
    Live { node: String },
}

/// Decides a command on a job that does not exist yet: only the commands that create one are
/// accepted.
pub(super) fn decide_new(command: JobCommand) -> Result<Vec<JobEvent>, JobRefusal> {
    match command {
        JobCommand::Submit { job_id, owner, at_ms, request, source } => {
            Ok(submit(job_id, owner, at_ms, request, source, None))
        }
        JobCommand::SubmitUpload { job_id, owner, at_ms, request, filename, media, duration_ms, awaited_on } => {
            let mut events = submit(job_id, owner, at_ms, request, NewMedia::Upload { filename, media }, awaited_on);
            events.push(JobEvent::MediaProbed {
                duration_ms,
                nr_audio_seconds: super::nr_audio_seconds(duration_ms),
                at_ms,
            });
            Ok(events)
        }
        JobCommand::RequestTranslation { job_id, owner, at_ms, request, source } => {
            request_translation(job_id, owner, at_ms, request, source)
        }
        _ => Err(JobRefusal::NotFound),
    }
}

fn submit(
    job_id: JobId,
    owner: UserName,
    at_ms: u64,
    request: JobRequest,
    media: NewMedia,
    awaited_on: Option<String>,
) -> Vec<JobEvent> {
    let (source, stored) = match media {
        NewMedia::Upload { filename, media } => {
            (MediaSource::Upload { filename: crate::http_url::sanitize_filename(&filename) }, Some(media))
        }
        NewMedia::Url { source_url } => (MediaSource::Url { filename: source_url.file_name(), source_url }, None),
        NewMedia::Live { node } => (MediaSource::Live { filename: "live-session.wav".into(), node }, None),
    };
    let mut events = vec![JobEvent::JobSubmitted(Box::new(Submission {
        job_id,
        owner,
        created_ms: at_ms,
        language: request.language,
        transcription_type: request.transcription_type,
        job_type: request.job_type,
        number_of_speakers: request.number_of_speakers,
        number_of_speakers_given: request.number_of_speakers_given,
        job_options: request.job_options,
        turnaround_time: request.turnaround_time,
        target_language: request.target_language,
        callback_url: request.callback_url,
        glossary_id: request.glossary_id,
        notes: None,
        source,
        delete_after_seconds: request.delete_after_seconds,
        speaker_channels: request.speaker_channels,
        decoding: request.decoding,
        awaited_on,
    }))];
    if let Some(media) = stored {
        events.push(JobEvent::MediaStored { path: media.path, bytes: media.bytes, at_ms });
    }
    events
}

fn request_translation(
    job_id: JobId,
    owner: UserName,
    at_ms: u64,
    request: TranslationRequest,
    source: SourceJobFacts,
) -> Result<Vec<JobEvent>, JobRefusal> {
    if source.owner != owner {
        return Err(JobRefusal::Forbidden);
    }
    if source.deleted {
        return Err(JobRefusal::Deleted);
    }
    let not_eligible = |why: &str| Err(JobRefusal::SourceNotEligible(format!("sourceJobId: {why}")));
    if source.job_type != JobType::Perfect {
        return not_eligible(
            "translated subtitles of automatic (direct) jobs must be requested at submission \
             with transcriptionType=translatedSubtitles",
        );
    }
    if source.transcription_type != TranscriptionType::Captions {
        return not_eligible("translated subtitles can be requested only for captions jobs");
    }
    if source.status != JobStatus::Done {
        return Err(JobRefusal::SourceNotDone(source.status));
    }
    let submission = Submission {
        job_id,
        owner,
        created_ms: at_ms,
        language: source.language,
        transcription_type: TranscriptionType::TranslatedSubtitles,
        job_type: JobType::Perfect,
        number_of_speakers: source.number_of_speakers,
        // A translation is not diarized again: its speakers come from the source's transcript.
        number_of_speakers_given: false,
        job_options: None,
        turnaround_time: Some(request.turnaround_time),
        target_language: Some(request.target_language),
        callback_url: request.callback_url,
        glossary_id: source.glossary_id,
        notes: request.notes,
        source: MediaSource::Job {
            source_job_id: source.job_id,
            filename: source.filename,
            nr_audio_seconds: source.nr_audio_seconds,
            media_path: source.media_path,
            document_path: source.document_path,
        },
        delete_after_seconds: None,
        speaker_channels: None,
        decoding: None,
        awaited_on: None,
    };
    let task = tasks::open_task(&submission, TaskKind::Translate, at_ms);
    Ok(vec![JobEvent::JobSubmitted(Box::new(submission)), task])
}
