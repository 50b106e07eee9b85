//! `POST /api/subtitles/preview`: the subtitle cues of an unsaved document, laid out exactly as
//! the SRT and WebVTT exports would lay it out once saved, so the editor's preview is the
//! export's layout and not a copy of it. The document is prepared as a save prepares it
//! (`scribe_domain::editing::prepare_saved`: a word typed with spaces becomes timed words), then
//! cut into cues by the exports' own segmentation (`scribe_domain::subtitles::segment` of the
//! document's timed words, exactly as `render_srt` and `render_vtt` call it).

use poem_openapi::param::Query;
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use scribe_domain::editing;
use scribe_domain::export::SubtitleParams;
use scribe_domain::subtitles::segment;

use crate::ApiTags;
use crate::auth::AnyKeyAuth;
use crate::error::ApiError;
use crate::strict_json::StrictJson;
use crate::work::WorkDocument;

/// Path template of the preview (its body cap is the documents' cap).
pub const PREVIEW_ROUTE: &str = "/api/subtitles/preview";

/// Latest time a preview lays out (about 115 days).
const MAX_SECONDS: f64 = 1e7;

/// One subtitle of the preview.
#[derive(Object, Debug, Clone, PartialEq)]
pub struct PreviewCue {
    /// Seconds from the start of the media, as the export writes them (rounded to the millisecond).
    pub start: f64,
    pub end: f64,
    /// The `spkid` of the speaker.
    pub speaker: String,
    /// The rows, top to bottom.
    pub lines: Vec<String>,
}

/// The cues of a document, in time order.
#[derive(Object, Debug, Clone, PartialEq)]
pub struct SubtitlePreview {
    pub cues: Vec<PreviewCue>,
}

pub struct SubtitlePreviewApi;

#[OpenApi(tag = "ApiTags::Exports")]
impl SubtitlePreviewApi {
    /// The subtitle cues of a document that need not be saved (the export-json shape, as
    /// `PUT /jobs/document` takes it), laid out with the rules and parameters of
    /// `GET /jobs/export-srt`: the same document and parameters give the same cues. Any key,
    /// customer or staff (the web app's editor previews with it). A parameter out of bounds
    /// answers 400 naming it; a body that is not the document shape, or a document without a
    /// speaker, a segment, or a word in each segment, answers 400 naming the place. Not in the
    /// original API contract.
    #[oai(path = "/subtitles/preview", method = "post", operation_id = "previewSubtitles")]
    async fn preview(
        &self,
        _auth: AnyKeyAuth,
        /// Characters per row, 30 to 45 (default 42).
        #[oai(name = "maxCharsPerRow")]
        max_chars_per_row: Query<Option<i64>>,
        /// Rows per subtitle, 1 or 2 (default 2).
        #[oai(name = "maxNumberOfRows")]
        max_number_of_rows: Query<Option<i64>>,
        /// Seconds a subtitle may stay on screen per row, 1 to 10 (default 2).
        #[oai(name = "maxScreenTimePerRowSeconds")]
        max_screen_time_per_row_seconds: Query<Option<f64>>,
        body: StrictJson<WorkDocument>,
    ) -> Result<Json<SubtitlePreview>, ApiError> {
        let params = SubtitleParams::new(max_chars_per_row.0, max_number_of_rows.0, max_screen_time_per_row_seconds.0)?;
        let mut doc = body.0.into_transcript("preview", "preview");
        editing::validate_outline(&doc)?;
        // A saved document's times lie inside its media; a preview takes any document, so absurd
        // times are held to a bound no media reaches (the layout of real documents is unchanged).
        for word in doc.segments.iter_mut().flat_map(|s| &mut s.words) {
            word.start = word.start.clamp(0.0, MAX_SECONDS);
            word.end = word.end.clamp(0.0, MAX_SECONDS);
        }
        let doc = editing::prepare_saved(doc, None);
        // Segmentation is CPU work: off the async threads, as the exports render.
        let cues = tokio::task::spawn_blocking(move || segment(&doc.timed_words(), &params))
            .await
            .map_err(|e| ApiError::internal("Laying out the subtitles", &e))?;
        let ms = |s: f64| (s * 1000.0).round() / 1000.0;
        Ok(Json(SubtitlePreview {
            cues: cues
                .into_iter()
                .map(|c| PreviewCue { start: ms(c.start), end: ms(c.end), speaker: c.speaker, lines: c.lines })
                .collect(),
        }))
    }
}
