//! Waveform peaks of a job's media, for the editor: the lowest and highest sample of every
//! `1 / PEAKS_PER_SECOND` of a second. A browser that decodes an hour of audio to draw its
//! waveform takes tens of seconds and hundreds of megabytes; with the peaks it draws at once.
//! They are computed from the decoded audio (the speech engine's decoder, as the probe uses it)
//! when the pipeline starts processing the job, before anyone opens the editor (media processed
//! before that pays once, on its first request), and cached beside the media (`.peaks-<n>.json`
//! in the job's directory: a media file name never starts with a dot), so deleting the job
//! removes them.

use std::path::{Path, PathBuf};

use scribe_whisper::audio::{self, AudioError, SAMPLE_RATE};
use serde::{Deserialize, Serialize};

use super::MediaStore;

/// Peaks per second of media: 72,000 pairs for an hour, enough to zoom in to 20 pixels a second.
pub const PEAKS_PER_SECOND: u32 = 20;

/// The waveform summary of one media file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Peaks {
    pub peaks_per_second: u32,
    /// Seconds of audio decoded.
    pub duration: f64,
    /// The lowest sample (-1 to 1) of each slice of `1 / peaks_per_second` seconds.
    pub min: Vec<f32>,
    /// The highest sample of each slice (the same count as `min`).
    pub max: Vec<f32>,
}

/// Why the peaks could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PeaksError {
    /// The media could not be decoded.
    #[error("The media could not be decoded for its waveform: {0}")]
    Undecodable(AudioError),
    /// The cache could not be written or read.
    #[error("The waveform cache failed ({path}): {source}")]
    Cache { path: PathBuf, source: std::io::Error },
    #[error("Computing the waveform failed unexpectedly: {0}")]
    Crashed(String),
}

/// Folds samples into min/max pairs, `samples_per_peak` samples each (the last pair may cover
/// fewer). Pure: the decoder feeds it.
#[derive(Debug, Clone)]
pub struct PeakFolder {
    samples_per_peak: usize,
    in_slice: usize,
    lo: f32,
    hi: f32,
    samples: u64,
    min: Vec<f32>,
    max: Vec<f32>,
}

impl PeakFolder {
    pub fn new(samples_per_peak: usize) -> PeakFolder {
        PeakFolder {
            samples_per_peak: samples_per_peak.max(1),
            in_slice: 0,
            lo: 0.0,
            hi: 0.0,
            samples: 0,
            min: Vec::new(),
            max: Vec::new(),
        }
    }

    pub fn push(&mut self, samples: &[f32]) {
        for &x in samples {
            let x = if x.is_finite() { x.clamp(-1.0, 1.0) } else { 0.0 };
            if self.in_slice == 0 {
                self.lo = x;
                self.hi = x;
            } else {
                self.lo = self.lo.min(x);
                self.hi = self.hi.max(x);
            }
            self.in_slice += 1;
            if self.in_slice == self.samples_per_peak {
                self.close_slice();
            }
        }
        self.samples += samples.len() as u64;
    }

    fn close_slice(&mut self) {
        self.min.push(round3(self.lo));
        self.max.push(round3(self.hi));
        self.in_slice = 0;
    }

    /// The pairs, for audio at `sample_rate` summarised `peaks_per_second` times a second.
    pub fn finish(mut self, sample_rate: u32, peaks_per_second: u32) -> Peaks {
        if self.in_slice > 0 {
            self.close_slice();
        }
        Peaks { peaks_per_second, duration: self.samples as f64 / f64::from(sample_rate), min: self.min, max: self.max }
    }
}

/// Three decimals are finer than a pixel of any waveform, and keep the JSON small.
fn round3(x: f32) -> f32 {
    (x * 1000.0).round() / 1000.0
}

/// Decodes `path` and folds it into peaks (blocking: run it off the async threads).
pub fn compute(path: &Path) -> Result<Peaks, AudioError> {
    let mut stream = audio::open(path)?;
    let mut folder = PeakFolder::new((SAMPLE_RATE / PEAKS_PER_SECOND) as usize);
    while let Some(chunk) = stream.read(SAMPLE_RATE as usize * 10)? {
        folder.push(&chunk);
    }
    Ok(folder.finish(SAMPLE_RATE, PEAKS_PER_SECOND))
}

/// Where the peaks of the media at `media` are cached.
fn cache_path(media: &Path) -> PathBuf {
    media.with_file_name(format!(".peaks-{PEAKS_PER_SECOND}.json"))
}

impl MediaStore {
    /// The peaks of the media file at `media`: from the cache beside it, else decoded now (off
    /// the async threads) and cached. Media processed since peaks are prepared with the job
    /// (see [`MediaStore::prepare_peaks`]) always has them cached; older media pays once here.
    pub async fn peaks(&self, media: &Path) -> Result<Peaks, PeaksError> {
        let cache = cache_path(media);
        match tokio::fs::read(&cache).await {
            Ok(bytes) => match serde_json::from_slice(&bytes) {
                Ok(peaks) => return Ok(peaks),
                Err(e) => {
                    tracing::warn!(path = %cache.display(), error = %e, "an unreadable waveform cache; computing it again")
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(PeaksError::Cache { path: cache, source }),
        }
        let (peaks, written) = compute_and_cache(media).await?;
        if let Err(source) = written {
            // The peaks are still good; only the next request pays again.
            tracing::warn!(path = %cache.display(), error = %source, "the waveform could not be cached");
        }
        Ok(peaks)
    }

    /// Computes and caches the peaks of the media at `media` unless they are cached already, so
    /// that the editor's first request finds them (the pipeline asks this when a job's media is
    /// ready for its first processing stage). Returns whether they were computed now.
    pub async fn prepare_peaks(&self, media: &Path) -> Result<bool, PeaksError> {
        let cache = cache_path(media);
        match tokio::fs::try_exists(&cache).await {
            Ok(true) => return Ok(false),
            Ok(false) => {}
            Err(source) => return Err(PeaksError::Cache { path: cache, source }),
        }
        let (_, written) = compute_and_cache(media).await?;
        written.map_err(|source| PeaksError::Cache { path: cache, source })?;
        Ok(true)
    }
}

/// Decodes `media` into peaks (off the async threads) and writes them beside it: the peaks, and
/// whether the cache was written.
async fn compute_and_cache(media: &Path) -> Result<(Peaks, std::io::Result<()>), PeaksError> {
    let path = media.to_owned();
    let in_job = tracing::Span::current();
    let peaks = tokio::task::spawn_blocking(move || in_job.in_scope(|| compute(&path)))
        .await
        .map_err(|e| PeaksError::Crashed(e.to_string()))?
        .map_err(PeaksError::Undecodable)?;
    let json = serde_json::to_vec(&peaks).expect("peaks serialize");
    // Written whole under a temporary name, then renamed: a reader sees all or nothing.
    let temp = media.with_file_name(format!(".peaks-{}.part", uuid::Uuid::new_v4()));
    let written = async {
        tokio::fs::write(&temp, &json).await?;
        tokio::fs::rename(&temp, cache_path(media)).await
    }
    .await;
    if written.is_err() {
        let _ = tokio::fs::remove_file(&temp).await;
    }
    Ok((peaks, written))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_slice_keeps_its_lowest_and_highest_sample() {
        let mut f = PeakFolder::new(4);
        f.push(&[0.1, -0.5, 0.3]);
        f.push(&[0.2, 0.0, 0.9, f32::NAN, -2.0, 0.25]);
        let p = f.finish(8, 2);
        assert_eq!(p.min, vec![-0.5, -1.0, 0.25]);
        assert_eq!(p.max, vec![0.3, 0.9, 0.25]);
        assert_eq!(p.duration, 9.0 / 8.0);
        assert_eq!(p.peaks_per_second, 2);
    }

    #[test]
    fn nothing_decoded_is_no_pairs() {
        let p = PeakFolder::new(800).finish(16_000, 20);
        assert!(p.min.is_empty() && p.max.is_empty());
        assert_eq!(p.duration, 0.0);
    }
}
