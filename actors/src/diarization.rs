//! Speakers for direct jobs: after recognition, the ASR worker asks this module who spoke
//! each word (see `scribe-diarize`), unless the client said there is one speaker.
//!
//! `numberOfSpeakers` decides ([`SpeakerCount`]): 1 skips diarization (every word is Speaker 1);
//! 2–5 given by the client is the number of speakers (exactly that many whenever that many
//! voices speak); left out, the default 2 is a bound (a monologue is one speaker); 0 lets
//! diarization estimate the number. The models load on the first job that needs them and stay loaded
//! (about 35 MB); a missing or broken model file fails the job with an error naming it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use scribe_diarize::{DiarizeOptions, Diarizer, Speakers};
use scribe_domain::speakers::{SpeakerCount, assign_speakers};
use scribe_domain::transcript as doc;

/// The loaded diarization models, per models folder.
fn diarizer(models_dir: &Path) -> Result<Arc<Diarizer>, String> {
    static LOADED: OnceLock<Mutex<HashMap<PathBuf, Arc<Diarizer>>>> = OnceLock::new();
    let mut loaded = LOADED.get_or_init(Default::default).lock().expect("the diarizer lock");
    if let Some(d) = loaded.get(models_dir) {
        return Ok(d.clone());
    }
    tracing::info!(models = %models_dir.display(), "loading the speaker diarization models");
    let d = Arc::new(Diarizer::load(models_dir).map_err(|e| e.to_string())?);
    loaded.insert(models_dir.to_path_buf(), d.clone());
    Ok(d)
}

/// Why reading the media for diarization stopped early.
enum Stop {
    Cancelled,
    Failed(String),
}

/// `document` with its words given to the speakers of the media at `media_path`.
/// Returns `Ok(None)` when the job was cancelled meanwhile.
pub async fn label_speakers(
    models_dir: PathBuf,
    media_path: PathBuf,
    count: SpeakerCount,
    document: doc::Transcript,
    cancel: Arc<AtomicBool>,
) -> Result<Option<doc::Transcript>, String> {
    let speakers = match count {
        _ if document.segments.is_empty() => return Ok(Some(document)),
        SpeakerCount::One => return Ok(Some(document)),
        SpeakerCount::Exactly(n) => Speakers::Exactly(n as usize),
        SpeakerCount::AtMost(n) => Speakers::AtMost(n as usize),
        SpeakerCount::Estimate => Speakers::Estimate,
    };
    // The caller's span (the job's) goes with the work onto the blocking pool.
    let span = tracing::Span::current();
    let result = tokio::task::spawn_blocking(move || {
        let _in_job = span.enter();
        let diarizer = diarizer(&models_dir)?;
        let mut audio = scribe_whisper::audio::open(&media_path)
            .map_err(|e| format!("Speaker diarization could not read the media: {e}"))?;
        let t0 = Instant::now();
        let mut seconds = 0.0;
        // The media is decoded again, 10 s at a time, as the diarizer asks for it.
        let read = || {
            if cancel.load(Ordering::Relaxed) {
                return Err(Stop::Cancelled);
            }
            let piece = audio
                .read(16_000 * 10)
                .map_err(|e| Stop::Failed(format!("Speaker diarization could not read the media: {e}")))?;
            seconds += piece.as_ref().map_or(0.0, |p| p.len() as f64 / 16_000.0);
            Ok(piece)
        };
        let d = match diarizer.diarize_stream(read, &DiarizeOptions { speakers, ..Default::default() }) {
            Ok(d) => d,
            Err(Stop::Cancelled) => return Ok(None),
            Err(Stop::Failed(msg)) => return Err(msg),
        };
        let took = t0.elapsed().as_secs_f64();
        tracing::info!(
            speakers = d.speakers,
            seconds = took,
            real_time_factor = took / f64::max(seconds, 1e-9),
            "diarized"
        );
        Ok(Some(assign_speakers(&document, |w| d.speaker_for(w.start, w.end).unwrap_or(0))))
    })
    .await;
    match result {
        Ok(r) => r,
        Err(e) => Err(format!("Speaker diarization failed unexpectedly: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document() -> doc::Transcript {
        let word = doc::Word { start: 0.5, end: 1.0, text: "Hello".into(), conf: 1.0, pristine: true };
        doc::Transcript {
            id: "j".into(),
            record_id: "j".into(),
            filename: "a.wav".into(),
            start_time_offset: 0.0,
            speakers: vec![doc::Speaker { spkid: "spk1".into(), name: "Speaker 1".into() }],
            segments: vec![doc::Segment { speaker: "spk1".into(), words: vec![word] }],
            highlights: Vec::new(),
        }
    }

    /// numberOfSpeakers=1 needs neither the models nor the media.
    #[tokio::test]
    async fn one_speaker_skips_diarization() {
        let out = label_speakers(
            "/nonexistent".into(),
            "/nonexistent.wav".into(),
            SpeakerCount::One,
            document(),
            Arc::default(),
        )
        .await;
        assert_eq!(out, Ok(Some(document())));
    }

    /// Without the models the job fails with a message naming the missing file.
    #[tokio::test]
    async fn missing_models_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let err = label_speakers(
            dir.path().into(),
            "/nonexistent.wav".into(),
            SpeakerCount::AtMost(2),
            document(),
            Arc::default(),
        )
        .await
        .unwrap_err();
        assert!(err.contains("pyannote_segmentation_3.0.bin"), "{err}");
    }
}
