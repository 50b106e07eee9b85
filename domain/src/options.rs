//! `JobOptions`: the options a client explicitly asked for. They are part of a job's stored
//! submission (`job::Submission`), of the Job object clients see, and of a validated request
//! (`requests::JobRequest`), so they live here, where the job's events and the request parsing
//! both import them without importing each other.

use serde::{Deserialize, Serialize};

use crate::kinds::TranscriptionStyle;

/// The options that were explicitly requested; a Job shows them as `jobOptions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobOptions {
    pub transcription_style: TranscriptionStyle,
}
