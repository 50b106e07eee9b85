//! The diarization pipeline: from 16 kHz mono samples to speaker turns. The audio is read in
//! batches of windows (steps 1 and 2, and again in step 4 when there are two speakers or more),
//! so only a batch's samples are ever held.
//!
//! 1. Segmentation windows of 10 s every [`DiarizeOptions::step_frames`] output frames (a step
//!    that is a whole number of frames, so every window's frames fall on one global frame grid);
//!    the last window is padded with silence. Each gives up to 3 local speakers per frame.
//! 2. One CAM++ embedding per (window, local speaker) from the fbank frames where that speaker
//!    speaks alone (or, when that is under half a second, wherever it speaks), at most
//!    [`DiarizeOptions::max_embed_frames`] of them from the middle of the stretch.
//! 3. Clustering of the embeddings of local speakers with at least 1.5 s of speech across
//!    windows: centroid linkage cut at a fixed distance ([`crate::threshold`], pyannote's
//!    clustering) gives the speakers when it finds more than one, at most the caller's
//!    maximum; when it finds one, average linkage ([`crate::cluster`]) cut where the silhouette
//!    is best decides, and its clusters with under a fifth of the speech join a larger one.
//!    Its split needs a window holding two of the voices or enough embeddings for a silhouette
//!    to mean something ([`DiarizeOptions::min_silhouette_items`]); otherwise one voice it is.
//!    Shorter local speakers join the nearest cluster afterwards. Not told the number, two
//!    local speakers of one window that ended in one cluster are then given distinct ones
//!    ([`crate::assign`]).
//!    When the caller knows the number ([`Speakers::Exactly`]), spectral clustering
//!    ([`crate::spectral`]) splits them into that many (from all local speakers when the long
//!    ones are too few; average linkage cut there beyond [`spectral::MAX_ITEMS`]) and none is
//!    too small to keep.
//! 4. Reconstruction: each global frame's speaker scores are the mean, over the windows that
//!    cover it, of their local activity mapped to clusters; the number of speakers of a frame
//!    is the windows' mean local count, rounded, and the frame keeps that many top scorers.
//!    Then, when there are two speakers or more, the audio is read again for a CAM++ print of
//!    each piece of 1 to 2.25 s of every stretch where a local speaker speaks alone (each moment
//!    once), and a piece nearer another speaker's mean piece print than its own speaker's gives
//!    that speaker its frames where its own speaker speaks alone ([`crate::short_prints`],
//!    [`DiarizeOptions::short_prints`]).
//! 5. Turns per speaker (a pause under half a second with nobody else speaking is filled),
//!    speakers numbered by first appearance.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::assign;
use crate::cluster;
use crate::embedding::CamPlus;
use crate::fbank::{self, FRAME_LENGTH, FRAME_SHIFT, N_MELS};
use crate::segmentation::{FRAME_SPAN, FRAME_STEP, FRAMES, LOCAL_SPEAKERS, Segmentation, WINDOW};
use crate::short_prints::{self, Piece};
use crate::spectral;
use crate::threshold;
use crate::weights::WeightsError;

/// File names inside the models folder (see `ops/setup.sh`).
pub const SEGMENTATION_FILE: &str = "diarization/pyannote_segmentation_3.0.bin";
pub const EMBEDDING_FILE: &str = "diarization/campplus_cn_en_common.pt";

const SAMPLE_RATE: f64 = 16_000.0;

/// How many speakers to look for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Speakers {
    /// At most this many (1–5); fewer when the voices do not separate clearly.
    AtMost(usize),
    /// Exactly this many (1–5) whenever the audio holds that many voices: the caller knows.
    Exactly(usize),
    /// Estimate the number (up to 5, the API's maximum).
    Estimate,
}

#[derive(Clone, Debug)]
pub struct DiarizeOptions {
    pub speakers: Speakers,
    /// Frames (of 270 samples) between window starts; 222 ≈ 3.75 s, so each moment is seen by
    /// two or three windows. (148, 2.5 s, scored 17 % instead of 21 % on the corpus at twice the
    /// cost; 296, 5 s, 20 % but with less margin on the two-voice clip.)
    pub step_frames: usize,
    /// Embeddings whose voices' means lie this far apart (euclidean, unit length) are different
    /// speakers when the number is not given (see [`threshold`]).
    pub distance: f32,
    /// Least mean silhouette for more than one speaker, when the distance finds one voice
    /// (see [`cluster::Stop`]).
    pub min_silhouette: f32,
    /// Fewest embeddings (of local speakers with 1.5 s of speech) for the silhouette to part
    /// voices the distance joined, when no window holds two of them (see [`cluster::Stop`]):
    /// 12 windows are 45 s of audio.
    pub min_silhouette_items: usize,
    /// Clusters with less than this share of the embedded speech join the nearest larger one.
    pub min_cluster_share: f32,
    /// Pauses of one speaker shorter than this (seconds) are filled when nobody else speaks.
    pub fill_gaps_s: f64,
    /// At most this many fbank frames (10 ms each) go into one embedding.
    pub max_embed_frames: usize,
    /// Pieces of lone speech get voice prints of their own and go to the speaker they sound
    /// like (see [`crate::short_prints`]).
    pub short_prints: bool,
    /// Windows per segmentation batch.
    pub batch: usize,
}

impl Default for DiarizeOptions {
    fn default() -> Self {
        DiarizeOptions {
            speakers: Speakers::AtMost(2),
            step_frames: 222,
            distance: threshold::DISTANCE,
            min_silhouette: 0.25,
            min_silhouette_items: 12,
            min_cluster_share: 0.2,
            fill_gaps_s: 0.5,
            max_embed_frames: 450,
            short_prints: true,
            batch: 16,
        }
    }
}

/// A stretch of one speaker's speech, in seconds; speakers count from 0 in order of first
/// appearance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpeakerTurn {
    pub start: f64,
    pub end: f64,
    pub speaker: usize,
}

/// The result: turns, and per-frame scores to attribute any time span.
#[derive(Clone, Debug, Default)]
pub struct Diarization {
    pub speakers: usize,
    pub turns: Vec<SpeakerTurn>,
    /// `[frame][speaker]` scores in [0, 1] on the 270-sample frame grid.
    scores: Vec<Vec<f32>>,
    /// `[frame][speaker]` final activity.
    active: Vec<Vec<bool>>,
}

fn frame_center(g: usize) -> f64 {
    (g * FRAME_STEP) as f64 / SAMPLE_RATE + FRAME_SPAN as f64 / 2.0 / SAMPLE_RATE
}

impl Diarization {
    /// The speaker who speaks most in `[start, end]` seconds, or the nearest speaker in time
    /// when nobody does; `None` when there are no speakers at all.
    pub fn speaker_for(&self, start: f64, end: f64) -> Option<usize> {
        if self.speakers == 0 || self.active.is_empty() {
            return None;
        }
        let step = FRAME_STEP as f64 / SAMPLE_RATE;
        let half = FRAME_SPAN as f64 / 2.0 / SAMPLE_RATE;
        let last = self.active.len() - 1;
        let a = (((start - half) / step).ceil().max(0.0) as usize).min(last);
        let b = (((end - half) / step).floor().max(0.0) as usize).clamp(a, last);
        let mut hard = vec![0.0f32; self.speakers];
        let mut soft = vec![0.0f32; self.speakers];
        for g in a..=b {
            for s in 0..self.speakers {
                hard[s] += self.active[g][s] as u8 as f32;
                soft[s] += self.scores[g][s];
            }
        }
        let pick = |v: &[f32]| {
            v.iter().enumerate().filter(|(_, x)| **x > 0.0).max_by(|x, y| x.1.total_cmp(y.1)).map(|(i, _)| i)
        };
        if let Some(s) = pick(&hard).or_else(|| pick(&soft)) {
            return Some(s);
        }
        let mid = (start + end) / 2.0;
        self.turns.iter().min_by(|x, y| dist(x, mid).total_cmp(&dist(y, mid))).map(|t| t.speaker)
    }
}

fn dist(t: &SpeakerTurn, x: f64) -> f64 {
    if x < t.start {
        t.start - x
    } else if x > t.end {
        x - t.end
    } else {
        0.0
    }
}

/// Both models, loaded once; `Send + Sync`, share it.
pub struct Diarizer {
    segmentation: Segmentation,
    embedding: CamPlus,
}

/// One local speaker of one window, with the fbank frames its embedding is taken from.
struct Local {
    window: usize,
    speaker: usize,
    frames: Vec<usize>,
}

/// A piece of one local speaker's lone speech in one window, printed on its own.
struct Printed {
    window: usize,
    piece: Piece,
}

impl Diarizer {
    /// Loads both models from the models folder onto burn's flex device (this CPU).
    pub fn load(models_dir: &Path) -> Result<Diarizer, WeightsError> {
        Diarizer::load_on(models_dir, &burn::tensor::Device::flex())
    }

    /// Loads both models onto `device` (the speech engine's, a GPU's where it runs on one).
    pub fn load_on(models_dir: &Path, device: &burn::tensor::Device) -> Result<Diarizer, WeightsError> {
        let segmentation = Segmentation::load_on(&models_dir.join(SEGMENTATION_FILE), device)?;
        let embedding = CamPlus::load_on(&models_dir.join(EMBEDDING_FILE), device)?;
        Ok(Diarizer { segmentation, embedding })
    }

    /// The paths [`Diarizer::load`] reads.
    pub fn files(models_dir: &Path) -> [PathBuf; 2] {
        [models_dir.join(SEGMENTATION_FILE), models_dir.join(EMBEDDING_FILE)]
    }

    /// Diarizes 16 kHz mono `samples` held in memory.
    pub fn diarize(&self, samples: &[f32], opts: &DiarizeOptions) -> Diarization {
        let open = || {
            let mut pieces = samples.chunks(WINDOW);
            Ok::<_, std::convert::Infallible>(move || Ok(pieces.next().map(<[f32]>::to_vec)))
        };
        match self.diarize_stream(open, opts) {
            Ok(d) => d,
            Err(never) => match never {},
        }
    }

    /// Diarizes 16 kHz mono audio that a reader hands over in pieces (`None` at the end), never
    /// holding more of it than one batch of windows: hours of media cost no more memory than a
    /// minute. `open` gives a reader from the audio's start: it is called once, and once more
    /// when two speakers or more are found (for [`DiarizeOptions::short_prints`]). An error of
    /// `open` or of a reader (a decoder's, or a cancellation) ends the work with it.
    pub fn diarize_stream<R, E>(
        &self,
        mut open: impl FnMut() -> Result<R, E>,
        opts: &DiarizeOptions,
    ) -> Result<Diarization, E>
    where
        R: FnMut() -> Result<Option<Vec<f32>>, E>,
    {
        let mut read = open()?;
        let step = opts.step_frames.max(1) * FRAME_STEP;
        let batch = opts.batch.max(1);
        let mut audio = Rolling::default();
        // Per window, in order: segmentation activations; the local speakers and their embeddings.
        let mut act = Vec::new();
        let mut locals = Vec::new();
        let mut embeddings: Vec<Vec<f32>> = Vec::new();
        let mut n_windows = 0;
        let (mut t_seg, mut t_emb) = (0.0, 0.0);
        loop {
            // The next batch of windows: read until its last window is whole or the audio ends
            // (the windows that run past the end are padded with silence).
            let w0 = n_windows;
            audio.fill_to((w0 + batch - 1) * step + WINDOW, &mut read)?;
            let end = audio.end();
            // Window 0 exists when there is a frame's worth of audio, window w > 0 when audio
            // goes on past the end of window w - 1.
            let exists = |w: usize| if w == 0 { end >= FRAME_LENGTH } else { (w - 1) * step + WINDOW < end };
            let nb = (w0..w0 + batch).take_while(|&w| exists(w)).count();
            if nb == 0 {
                break;
            }

            // 1. segmentation
            let t0 = std::time::Instant::now();
            let mut buf = Vec::with_capacity(nb * WINDOW);
            for w in w0..w0 + nb {
                let from = w * step;
                let to = (from + WINDOW).min(end);
                buf.extend_from_slice(audio.slice(from, to));
                buf.resize(buf.len() + WINDOW - (to - from), 0.0);
            }
            let batch_act = self.segmentation.activations(&buf, nb);
            let a = |w: usize, i: usize, k: usize| batch_act[((w - w0) * FRAMES + i) * LOCAL_SPEAKERS + k] > 0.5;
            t_seg += t0.elapsed().as_secs_f64();

            // 2. embeddings, from the filter-bank frames of each window's local speakers
            let t0 = std::time::Instant::now();
            let first_new = locals.len();
            for w in w0..w0 + nb {
                let active = |i: usize, k: usize| a(w, i, k);
                locals.extend(window_locals(w, w * step, (w * step + WINDOW).min(end), active, opts.max_embed_frames));
            }
            embeddings.par_extend(locals[first_new..].par_iter().map(|l| self.embed(&audio, l.frames.iter().copied())));
            t_emb += t0.elapsed().as_secs_f64();

            act.extend(batch_act);
            n_windows += nb;
            // Later windows start at or after the next one's start; what lies before is done.
            audio.forget_before(n_windows * step);
            if nb < batch {
                break;
            }
        }
        let n = audio.end();
        if locals.is_empty() {
            return Ok(Diarization::default());
        }
        let a = |w: usize, i: usize, k: usize| act[(w * FRAMES + i) * LOCAL_SPEAKERS + k] > 0.5;
        // Global frames that hold real audio.
        let real_frames = n.saturating_sub(FRAME_SPAN) / FRAME_STEP + 1;
        tracing::debug!(
            windows = n_windows,
            embeddings = locals.len(),
            segmentation_s = t_seg,
            embedding_s = t_emb,
            "diarization stages"
        );
        // 3. clustering: long local speakers first, the short ones attached afterwards.
        let (max, exact) = match opts.speakers {
            Speakers::AtMost(k) => (k.max(1), false),
            Speakers::Exactly(k) => (k.max(1), true),
            Speakers::Estimate => (5, false),
        };
        const LONG: usize = 150; // 1.5 s of fbank frames
        let long: Vec<usize> = {
            let l: Vec<usize> = (0..locals.len()).filter(|&i| locals[i].frames.len() >= LONG).collect();
            if l.is_empty() || (exact && l.len() < max) { (0..locals.len()).collect() } else { l }
        };
        let long_emb: Vec<Vec<f32>> = long.iter().map(|&i| embeddings[i].clone()).collect();
        let groups: Vec<usize> = long.iter().map(|&i| locals[i].window).collect();
        let overlapping_groups = (WINDOW - 1) / step;
        let stop = cluster::Stop {
            max_clusters: max,
            exact,
            min_silhouette: opts.min_silhouette,
            min_items: opts.min_silhouette_items,
            overlapping_groups,
            min_share: opts.min_cluster_share,
        };
        let weights: Vec<f32> = long.iter().map(|&i| locals[i].frames.len() as f32).collect();
        // Told the number, spectral clustering splits the voices better. Otherwise the voices
        // a fixed distance apart are the speakers when it finds several; when it finds one,
        // average linkage with the silhouette decides, which also parts two close voices
        // (`ops/bench/diarization.md`).
        let mut by_distance = false;
        let long_labels = if exact && long_emb.len() <= spectral::MAX_ITEMS {
            spectral::spectral(&long_emb, &groups, max)
        } else if exact {
            cluster::agglomerate(&long_emb, &groups, &weights, &stop)
        } else {
            let labels = threshold::by_distance(&long_emb, opts.distance, threshold::MIN_EMBEDDINGS, max);
            by_distance = labels.iter().any(|&l| l > 0);
            if by_distance { labels } else { cluster::agglomerate(&long_emb, &groups, &weights, &stop) }
        };
        let k = long_labels.iter().max().map_or(0, |m| m + 1);
        let long_unit: Vec<Vec<f32>> = long.iter().map(|&i| cluster::normalise(&embeddings[i])).collect();
        let centroids = cluster::direction_sums(&long_labels, &long_unit, k);
        let mut label = vec![usize::MAX; locals.len()];
        for (&i, &c) in long.iter().zip(&long_labels) {
            label[i] = c;
        }
        for i in 0..locals.len() {
            if label[i] == usize::MAX {
                let u = cluster::normalise(&embeddings[i]);
                label[i] = (0..k)
                    .max_by(|&x, &y| cosine(&centroids[x], &u).total_cmp(&cosine(&centroids[y], &u)))
                    .unwrap_or(0);
            }
        }
        // Clusters holding little of the speech (a cough, a stray window) join the nearest
        // large cluster: they are more often a voice seen badly than a person.
        let mut size = vec![0usize; k];
        for (l, &c) in locals.iter().zip(&label) {
            size[c] += l.frames.len();
        }
        let total: usize = size.iter().sum();
        // Beyond the `max` largest clusters (the cannot-link rule can leave more), all are small.
        let mut by_size: Vec<usize> = (0..k).collect();
        by_size.sort_by(|a, b| size[*b].cmp(&size[*a]));
        let kept: Vec<usize> = by_size.into_iter().take(max).collect();
        // The distance's clusters are kept as found (each has two embeddings at least).
        let min_share = if exact || by_distance { 0.0 } else { opts.min_cluster_share };
        let small = |c: usize| !kept.contains(&c) || (size[c] as f32) < min_share * total as f32;
        if (0..k).any(|c| !small(c)) {
            for i in 0..locals.len() {
                if small(label[i]) {
                    let u = cluster::normalise(&embeddings[i]);
                    label[i] = (0..k)
                        .filter(|&c| !small(c))
                        .max_by(|&x, &y| cosine(&centroids[x], &u).total_cmp(&cosine(&centroids[y], &u)))
                        .expect("a large cluster");
                }
            }
        }

        // Not told the number, two local speakers of one window joined in one cluster are
        // parted (told, spectral clustering's split is better left as it is: measured).
        if !exact {
            let clusters: Vec<usize> = (0..k).filter(|c| label.contains(c)).collect();
            let mut first = 0;
            for window in locals.chunk_by(|a, b| a.window == b.window) {
                let ids = first..first + window.len();
                first = ids.end;
                if !ids.clone().any(|i| (i + 1..ids.end).any(|j| label[i] == label[j])) {
                    continue;
                }
                let similarity: Vec<Vec<f32>> = ids
                    .clone()
                    .map(|i| {
                        let u = cluster::normalise(&embeddings[i]);
                        clusters.iter().map(|&c| cosine(&centroids[c], &u)).collect()
                    })
                    .collect();
                if let Some(picks) = assign::distinct(&similarity) {
                    for (i, p) in ids.zip(picks) {
                        label[i] = clusters[p];
                    }
                }
            }
        }

        let mut map = vec![[usize::MAX; LOCAL_SPEAKERS]; n_windows];
        for (l, &c) in locals.iter().zip(&label) {
            map[l.window][l.speaker] = c;
        }
        // Pieces of lone speech that sound like another speaker than their local speaker's,
        // printed from a second read of the audio when there are two speakers to choose from.
        // (A piece's local speaker always has an embedding: it speaks alone for a second.)
        let mut printed = Vec::new();
        if opts.short_prints && (0..k).filter(|c| label.contains(c)).count() >= 2 {
            for w in 0..n_windows {
                let own = short_prints::own_frames(opts.step_frames.max(1), w == 0, w + 1 == n_windows);
                let pieces = short_prints::pieces(|i, kk| a(w, i, kk), own);
                printed.extend(pieces.into_iter().map(|piece| Printed { window: w, piece }));
            }
            printed.retain(|p| map[p.window][p.piece.speaker] != usize::MAX);
        }
        let t0 = std::time::Instant::now();
        let prints = if printed.is_empty() { Vec::new() } else { self.print_pieces(open()?, &printed, step, batch)? };
        tracing::debug!(pieces = printed.len(), seconds = t0.elapsed().as_secs_f64(), "short prints");
        let given: Vec<usize> = printed.iter().map(|p| map[p.window][p.piece.speaker]).collect();
        let nearest = short_prints::nearest_speakers(&prints, &given);
        let moves: Vec<(&Printed, usize, usize)> = printed
            .iter()
            .zip(given.into_iter().zip(nearest))
            .filter(|(_, (given, nearest))| given != nearest)
            .map(|(p, (given, nearest))| (p, given, nearest))
            .collect();

        // 4. reconstruction on the global frame grid
        let g_frames = (n_windows - 1) * opts.step_frames.max(1) + FRAMES;
        let mut scores = vec![vec![0.0f32; k]; g_frames];
        let mut count = vec![0.0f32; g_frames];
        let mut cover = vec![0.0f32; g_frames];
        for w in 0..n_windows {
            let g0 = w * opts.step_frames.max(1);
            for i in 0..FRAMES {
                let g = g0 + i;
                cover[g] += 1.0;
                // Two local speakers mapped to one cluster count once.
                let mut seen = [usize::MAX; LOCAL_SPEAKERS];
                for kk in 0..LOCAL_SPEAKERS {
                    if a(w, i, kk) {
                        count[g] += 1.0;
                        let c = map[w][kk];
                        if c != usize::MAX && !seen.contains(&c) {
                            seen[kk] = c;
                            scores[g][c] += 1.0;
                        }
                    }
                }
            }
        }
        let g_frames = g_frames.min(real_frames);
        scores.truncate(g_frames);
        let mut active = vec![vec![false; k]; g_frames];
        for g in 0..g_frames {
            let c = cover[g].max(1.0);
            scores[g].iter_mut().for_each(|v| *v /= c);
            let want = (count[g] / c).round() as usize;
            let mut order: Vec<usize> = (0..k).filter(|&s| scores[g][s] > 0.0).collect();
            order.sort_by(|x, y| scores[g][*y].total_cmp(&scores[g][*x]));
            for &s in order.iter().take(want) {
                active[g][s] = true;
            }
        }
        // The pieces that sound like another speaker give it their frames where their speaker
        // speaks alone; told the number, never so many that a speaker vanishes.
        let heard = |active: &[Vec<bool>]| (0..k).filter(|&s| active.iter().any(|row| row[s])).count();
        let heard_before = (exact && !moves.is_empty()).then(|| heard(&active));
        let mut changed = Vec::new();
        for &(p, from, to) in &moves {
            let g0 = p.window * opts.step_frames.max(1);
            for g in (g0 + p.piece.frames.start).min(g_frames)..(g0 + p.piece.frames.end).min(g_frames) {
                if active[g][from] && active[g].iter().filter(|&&on| on).count() == 1 {
                    active[g][from] = false;
                    active[g][to] = true;
                    scores[g].swap(from, to);
                    changed.push((g, from, to));
                }
            }
        }
        if heard_before.is_some_and(|before| heard(&active) < before) {
            for &(g, from, to) in changed.iter().rev() {
                active[g][to] = false;
                active[g][from] = true;
                scores[g].swap(from, to);
            }
        }

        // 5. speakers by first appearance, turns
        let mut order = Vec::new();
        for row in &active {
            for (s, &on) in row.iter().enumerate() {
                if on && !order.contains(&s) {
                    order.push(s);
                }
            }
        }
        let speakers = order.len();
        let renumber = |s: usize| order.iter().position(|&o| o == s);
        let step_s = FRAME_STEP as f64 / SAMPLE_RATE;
        let mut turns = Vec::new();
        let mut new_active = vec![vec![false; speakers]; g_frames];
        let mut new_scores = vec![vec![0.0f32; speakers]; g_frames];
        for g in 0..g_frames {
            for s in 0..k {
                if let Some(r) = renumber(s) {
                    new_active[g][r] = active[g][s];
                    new_scores[g][r] = scores[g][s];
                }
            }
        }
        for s in 0..speakers {
            let mut g = 0;
            while g < g_frames {
                if new_active[g][s] {
                    let b = g;
                    while g < g_frames && new_active[g][s] {
                        g += 1;
                    }
                    let start = (frame_center(b) - step_s / 2.0).max(0.0);
                    let end = (frame_center(g - 1) + step_s / 2.0).min(n as f64 / SAMPLE_RATE);
                    turns.push(SpeakerTurn { start, end, speaker: s });
                } else {
                    g += 1;
                }
            }
        }
        turns.sort_by(|x, y| x.start.total_cmp(&y.start));
        // A speaker's pause shorter than `fill_gaps_s` with nobody else speaking is part of
        // the turn (a breath, a short hesitation).
        if opts.fill_gaps_s > 0.0 {
            let mut merged: Vec<SpeakerTurn> = Vec::with_capacity(turns.len());
            for t in turns {
                let prev = merged.iter().rposition(|p| p.speaker == t.speaker);
                let joinable = prev.is_some_and(|p| {
                    let gap = (merged[p].end, t.start);
                    gap.1 - gap.0 < opts.fill_gaps_s
                        && !merged.iter().any(|o| o.speaker != t.speaker && o.start < gap.1 && o.end > gap.0)
                });
                match prev {
                    Some(p) if joinable => merged[p].end = merged[p].end.max(t.end),
                    _ => merged.push(t),
                }
            }
            turns = merged;
        }
        Ok(Diarization { speakers, turns, scores: new_scores, active: new_active })
    }
}

impl Diarizer {
    /// A CAM++ voice print of the audio's fbank `frames` (which must not have been forgotten).
    fn embed(&self, audio: &Rolling, frames: impl Iterator<Item = usize>) -> Vec<f32> {
        let mut x = Vec::new();
        for j in frames {
            x.extend_from_slice(&fbank::fbank(audio.slice(j * FRAME_SHIFT, j * FRAME_SHIFT + FRAME_LENGTH)));
        }
        self.embedding.embed(&x, x.len() / N_MELS)
    }

    /// The voice prints of `printed` (in window order; windows `step` samples apart) from the
    /// audio `read` hands over, a batch of windows' pieces at a time.
    fn print_pieces<E>(
        &self,
        mut read: impl FnMut() -> Result<Option<Vec<f32>>, E>,
        printed: &[Printed],
        step: usize,
        batch: usize,
    ) -> Result<Vec<Vec<f32>>, E> {
        let mut audio = Rolling::default();
        let mut prints = Vec::with_capacity(printed.len());
        for group in printed.chunk_by(|x, y| x.window / batch == y.window / batch) {
            let last = group[group.len() - 1].window;
            audio.fill_to(last * step + WINDOW, &mut read)?;
            let end = audio.end();
            prints.par_extend(group.par_iter().map(|p| {
                let s0 = p.window * step;
                self.embed(&audio, fbank_frames(s0, (s0 + WINDOW).min(end), p.piece.frames.clone()))
            }));
            audio.forget_before((last + 1) * step);
        }
        Ok(prints)
    }
}

/// The local speakers of window `w` (which starts at sample `s0`; its audio ends at `last`) worth
/// an embedding, each with the filter-bank frames to take it from: where it speaks alone (or,
/// when that is under half a second, wherever it speaks), at most `max_frames` from the middle.
/// `active(i, k)`: local speaker `k` speaks in the window's output frame `i`.
fn window_locals(
    w: usize,
    s0: usize,
    last: usize,
    active: impl Fn(usize, usize) -> bool,
    max_frames: usize,
) -> Vec<Local> {
    let mut clean: [Vec<usize>; LOCAL_SPEAKERS] = Default::default();
    let mut any: [Vec<usize>; LOCAL_SPEAKERS] = Default::default();
    let mut j = s0.div_ceil(FRAME_SHIFT);
    while j * FRAME_SHIFT + FRAME_LENGTH <= last {
        let i = output_frame(j, s0);
        let count = (0..LOCAL_SPEAKERS).filter(|&k| active(i, k)).count();
        for k in (0..LOCAL_SPEAKERS).filter(|&k| active(i, k)) {
            any[k].push(j);
            if count == 1 {
                clean[k].push(j);
            }
        }
        j += 1;
    }
    let mut locals = Vec::new();
    for k in 0..LOCAL_SPEAKERS {
        let mut frames = if clean[k].len() >= 50 { std::mem::take(&mut clean[k]) } else { std::mem::take(&mut any[k]) };
        // The middle of a long stretch is enough for a voice print, and costs less.
        if frames.len() > max_frames {
            let skip = (frames.len() - max_frames) / 2;
            frames = frames[skip..skip + max_frames].to_vec();
        }
        if frames.len() >= 20 {
            locals.push(Local { window: w, speaker: k, frames });
        }
    }
    locals
}

/// The window's output frame (the window starts at sample `s0`) nearest fbank frame `j`'s middle.
fn output_frame(j: usize, s0: usize) -> usize {
    let center = (j * FRAME_SHIFT + FRAME_LENGTH / 2 - s0) as f64;
    ((center - FRAME_SPAN as f64 / 2.0) / FRAME_STEP as f64).round().clamp(0.0, (FRAMES - 1) as f64) as usize
}

/// The fbank frames of a window (starting at sample `s0`, its audio ending at `last`) whose
/// nearest output frame is in `frames`.
fn fbank_frames(s0: usize, last: usize, frames: std::ops::Range<usize>) -> impl Iterator<Item = usize> {
    let (from, to) = (frames.start, frames.end);
    (s0.div_ceil(FRAME_SHIFT)..)
        .take_while(move |j| j * FRAME_SHIFT + FRAME_LENGTH <= last)
        .skip_while(move |&j| output_frame(j, s0) < from)
        .take_while(move |&j| output_frame(j, s0) < to)
}

/// The part of the audio still needed: samples from file position `offset` on.
#[derive(Default)]
struct Rolling {
    samples: Vec<f32>,
    offset: usize,
    ended: bool,
}

impl Rolling {
    /// File position just past the last sample read.
    fn end(&self) -> usize {
        self.offset + self.samples.len()
    }

    /// Reads until the audio reaches file position `end`, or ends.
    fn fill_to<E>(&mut self, end: usize, read: &mut impl FnMut() -> Result<Option<Vec<f32>>, E>) -> Result<(), E> {
        while !self.ended && self.end() < end {
            match read()? {
                Some(piece) => self.samples.extend_from_slice(&piece),
                None => self.ended = true,
            }
        }
        Ok(())
    }

    /// Samples `from..to` (file positions), which must not have been forgotten.
    fn slice(&self, from: usize, to: usize) -> &[f32] {
        &self.samples[from - self.offset..to - self.offset]
    }

    /// Forgets the samples before file position `pos`.
    fn forget_before(&mut self, pos: usize) {
        let k = pos.saturating_sub(self.offset).min(self.samples.len());
        self.samples.drain(..k);
        self.offset += k;
    }
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    crate::embedding::cosine(a, b)
}
