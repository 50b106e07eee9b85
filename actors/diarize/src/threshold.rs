//! Speakers as the voices whose embeddings lie within a fixed distance: pyannote's clustering.
//!
//! Centroid linkage on unit-length embeddings (euclidean distance between cluster means), cut
//! where every merge of a cluster happened under a fixed distance, as pyannote's
//! speaker-diarization-3.1 pipeline cuts its dendrogram; clusters of a single embedding join
//! the nearest larger one. A fixed distance says "these are different people" in absolute terms,
//! which holds across recordings; the silhouette in [`crate::cluster`] says how apart groups are
//! compared with how much each varies, which also separates two close voices (two synthetic
//! ones) that a fixed distance joins. The pipeline trusts the distance when it finds several
//! voices and asks the silhouette when it finds one (`ops/bench/diarization.md`).
//! The dendrogram comes from the `kodama` crate (Müllner's algorithms, as fastcluster and SciPy).

use kodama::{Method, linkage};

use crate::cluster::{absorb_small, find, normalise, renumber};

/// pyannote/speaker-diarization-3.1's distance, tuned by pyannote on its own embeddings and
/// kept here for CAM++'s: measured, it separates AMI's voices (`scribe-bench diarization`).
pub const DISTANCE: f32 = 0.7046;

/// Clusters with fewer embeddings than this join the nearest larger one. pyannote keeps 12 with
/// a window every second; ours come every 3.75 s, a third as many per voice or fewer.
pub const MIN_EMBEDDINGS: usize = 2;

/// Cluster labels `0..k` (k ≤ `max_clusters`) for `embeddings`: merged while within `distance`,
/// then the clusters under `min_embeddings` items, or beyond the `max_clusters` largest, join
/// the nearest kept cluster. All in one cluster when none has `min_embeddings` items.
pub fn by_distance(embeddings: &[Vec<f32>], distance: f32, min_embeddings: usize, max_clusters: usize) -> Vec<usize> {
    let n = embeddings.len();
    if n < 2 || max_clusters <= 1 {
        return vec![0; n];
    }
    let unit: Vec<Vec<f32>> = embeddings.iter().map(|e| normalise(e)).collect();
    // The condensed matrix of euclidean distances (row-major upper triangle), as kodama wants.
    let mut condensed = Vec::with_capacity(n * (n - 1) / 2);
    for i in 0..n {
        for j in i + 1..n {
            let d2: f32 = unit[i].iter().zip(&unit[j]).map(|(a, b)| (a - b) * (a - b)).sum();
            condensed.push(d2.sqrt());
        }
    }
    let dendrogram = linkage(&mut condensed, n, Method::Centroid);
    // Centroid linkage can merge lower than an earlier merge (an inversion): a cluster is kept
    // whole when the highest merge inside it is within the distance (SciPy's `fcluster`).
    let mut highest = vec![0.0f32; 2 * n - 1];
    let mut parent: Vec<usize> = (0..n).collect();
    // One item of each dendrogram node (the items are nodes 0..n, step s makes node n + s), to
    // join the two sides' items when the step is kept.
    let mut member: Vec<usize> = (0..n).collect();
    for (s, step) in dendrogram.steps().iter().enumerate() {
        let h = step.dissimilarity.max(highest[step.cluster1]).max(highest[step.cluster2]);
        highest[n + s] = h;
        let (a, b) = (member[step.cluster1], member[step.cluster2]);
        member.push(a);
        if h < distance {
            let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
            parent[rb] = ra;
        }
    }
    let roots: Vec<usize> = (0..n).map(|i| find(&mut parent, i)).collect();
    let labels = renumber(&roots);
    // Counted in items: each weighs one, and the share is set just under `min_embeddings`.
    let share = (min_embeddings as f32 - 0.5).max(0.0) / n as f32;
    let labels = absorb_small(&labels, &unit, &vec![1.0; n], share, max_clusters);
    let k = labels.iter().max().map_or(0, |m| m + 1);
    let size = |c: usize| labels.iter().filter(|&&l| l == c).count();
    if (0..k).all(|c| size(c) < min_embeddings) { vec![0; n] } else { labels }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A unit vector at `deg` degrees in the plane of the first two axes.
    fn at(deg: f32) -> Vec<f32> {
        let r = deg.to_radians();
        vec![r.cos(), r.sin()]
    }

    #[test]
    fn voices_apart_are_speakers_and_close_ones_one() {
        // Given three voices 90° apart, each seen three times within 10°,
        let emb: Vec<Vec<f32>> = [0.0, 5.0, 10.0, 90.0, 95.0, 100.0, 180.0, 185.0, 190.0].map(at).to_vec();
        // when they are clustered at pyannote's distance (about 41° between means),
        let labels = by_distance(&emb, DISTANCE, MIN_EMBEDDINGS, 5);
        // then each voice is one speaker;
        assert_eq!(labels, vec![0, 0, 0, 1, 1, 1, 2, 2, 2]);
        // and capped at two speakers, the smallest voice joins its nearest.
        let capped = by_distance(&emb, DISTANCE, MIN_EMBEDDINGS, 2);
        assert_eq!(capped.iter().max(), Some(&1));
        // Given one voice that drifts by 20°, it stays one speaker.
        let one: Vec<Vec<f32>> = [0.0, 5.0, 10.0, 15.0, 20.0].map(at).to_vec();
        assert_eq!(by_distance(&one, DISTANCE, MIN_EMBEDDINGS, 5), vec![0; 5]);
    }

    #[test]
    fn a_lone_embedding_is_no_speaker() {
        // Given one voice seen four times and one stray embedding far from it,
        let emb: Vec<Vec<f32>> = [0.0, 3.0, 6.0, 9.0, 120.0].map(at).to_vec();
        // then the stray joins the voice: one embedding is no speaker.
        assert_eq!(by_distance(&emb, DISTANCE, MIN_EMBEDDINGS, 5), vec![0; 5]);
        // With two strays together, they are a second speaker.
        let two: Vec<Vec<f32>> = [0.0, 3.0, 6.0, 9.0, 120.0, 123.0].map(at).to_vec();
        assert_eq!(by_distance(&two, DISTANCE, MIN_EMBEDDINGS, 5), vec![0, 0, 0, 0, 1, 1]);
    }

    #[test]
    fn nothing_to_split_is_one_cluster() {
        assert_eq!(by_distance(&[], DISTANCE, MIN_EMBEDDINGS, 5), Vec::<usize>::new());
        assert_eq!(by_distance(&[at(0.0)], DISTANCE, MIN_EMBEDDINGS, 5), vec![0]);
        // Every embedding alone and apart: none is a speaker by itself, so all are one.
        let apart: Vec<Vec<f32>> = [0.0, 90.0, 180.0].map(at).to_vec();
        assert_eq!(by_distance(&apart, DISTANCE, MIN_EMBEDDINGS, 5), vec![0; 3]);
    }
}
