//! The speech engine's transcript as the export document: the one shape both recognition
//! (`asr`) and translation (`translation`) hand on, kept apart so neither imports the other for it.

use scribe_domain::ids::JobId;
use scribe_domain::transcript as doc;
use scribe_whisper::engine::Transcript;

/// The engine's transcript as the export document before diarization: one speaker, one
/// segment per recognised segment, every word `pristine` (untouched since the engine made it).
pub fn to_document(job_id: &JobId, filename: &str, t: &Transcript) -> doc::Transcript {
    let speaker = doc::Speaker { spkid: "spk1".into(), name: "Speaker 1".into() };
    let segments = t
        .segments
        .iter()
        .filter(|s| !s.words.is_empty())
        .map(|s| doc::Segment {
            speaker: speaker.spkid.clone(),
            words: s
                .words
                .iter()
                .map(|w| doc::Word {
                    start: round_ms(w.start),
                    end: round_ms(w.end.max(w.start)),
                    text: w.text.trim().to_owned(),
                    conf: f64::from(w.probability),
                    pristine: true,
                })
                .filter(|w| !w.text.is_empty())
                .collect(),
        })
        .collect();
    doc::Transcript {
        id: job_id.as_str().to_owned(),
        record_id: job_id.as_str().to_owned(),
        filename: filename.to_owned(),
        start_time_offset: 0.0,
        speakers: vec![speaker],
        segments,
        highlights: Vec::new(),
    }
}

fn round_ms(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}
