//! `GET /api/work/media/peaks`: the waveform of a job's media as min/max pairs, beside the
//! signed media link the editor already holds (same `jobId`, `expires` and `sig`), so the
//! browser draws the waveform of an hour at once instead of downloading and decoding the whole
//! file. The media store computes the peaks once per media file and caches them on disk.

use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::Data;
use poem_openapi::param::Query;
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use scribe_actors::media::PeaksError;

use crate::ApiTags;
use crate::error::ApiError;
use crate::signed_links::SignedLinks;
use crate::state::ApiState;

/// The waveform of a job's media.
#[derive(Object, Debug, Clone, PartialEq)]
#[oai(rename_all = "camelCase")]
pub struct MediaPeaks {
    /// Seconds of audio.
    pub duration: f64,
    /// Pairs per second of audio (each pair covers `1 / peaksPerSecond` seconds).
    pub peaks_per_second: u32,
    /// The lowest sample (-1 to 1) of each slice, in time order.
    pub min: Vec<f32>,
    /// The highest sample (-1 to 1) of each slice; as many as `min`.
    pub max: Vec<f32>,
}

pub struct PeaksApi;

#[OpenApi(tag = "ApiTags::Work")]
impl PeaksApi {
    /// The waveform of a job's media, for the editor: min/max pairs, 20 per second. Takes the
    /// parameters of the signed media link (`mediaUrl` of a task or of `GET /jobs/document`),
    /// needs no apiKey: the signature is the permission.
    ///
    /// 403 (field `sig`) for a changed link, 410 once it expired (field `expires`) or the job
    /// was deleted (field `jobId`), 404 for a job without media, 409 when the media cannot be
    /// decoded (it still plays; the editor shows no waveform).
    #[oai(path = "/work/media/peaks", method = "get", operation_id = "getMediaPeaks")]
    async fn peaks(
        &self,
        state: Data<&Arc<ApiState>>,
        links: Data<&Arc<SignedLinks>>,
        /// The job's id, as signed.
        #[oai(name = "jobId")]
        job_id: Query<String>,
        /// When the link expires, Unix seconds, as signed.
        expires: Query<u64>,
        /// The link's signature.
        sig: Query<String>,
    ) -> Result<Json<MediaPeaks>, ApiError> {
        let media = crate::work::signed_media_file(&state, &links, &job_id, expires.0, &sig).await?;
        let peaks = state.media.peaks(&media).await.map_err(|e| match e {
            PeaksError::Undecodable(_) => ApiError::new(StatusCode::CONFLICT, e.to_string(), Some("jobId".into())),
            other => ApiError::internal("Computing the waveform", &other),
        })?;
        Ok(Json(MediaPeaks {
            duration: peaks.duration,
            peaks_per_second: peaks.peaks_per_second,
            min: peaks.min,
            max: peaks.max,
        }))
    }
}
