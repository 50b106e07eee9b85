//! Spectral clustering of speaker embeddings into a number of speakers the client gave.
//!
//! The affinity graph keeps, for each embedding, only its nearest neighbours by cosine, so one
//! voice is one connected group even when it drifts over a recording, and the graph Laplacian's
//! eigenvectors of its smallest eigenvalues place each group apart; k-means in that space gives
//! the clusters. This is how 3D-Speaker clusters CAM++ embeddings (the model ours uses), written
//! here from the method. Used when the number of speakers is known: on the recordings of
//! `scribe-bench diarization` it splits them better than average linkage does. Estimating the
//! number from the eigengap was measured and not kept (`ops/bench/diarization.md`).

use nalgebra::{DMatrix, SymmetricEigen};

use crate::cluster::{normalise, renumber};

/// Neighbours each embedding keeps in the affinity graph (3D-Speaker's default minimum).
const NEIGHBOURS: usize = 6;

/// Above this many embeddings (an hour or two of a meeting) the dense eigendecomposition costs
/// more than it is worth: cubic in time (about 1 s at 1000 items and 7 s at 2000 on two busy
/// cores) and three n × n matrices of f64 (about 100 MB at 2000). Callers cluster larger sets
/// another way.
pub const MAX_ITEMS: usize = 2000;

/// Cluster labels `0..k` for `embeddings`, exactly `k` clusters when there are that many
/// items (each item alone when there are fewer). `group[i]` is the window of item `i`: items of
/// one window are never neighbours in the graph (they are different speakers by construction).
pub fn spectral(embeddings: &[Vec<f32>], group: &[usize], k: usize) -> Vec<usize> {
    let n = embeddings.len();
    if k <= 1 || n == 0 {
        return vec![0; n];
    }
    if n <= k {
        return (0..n).collect();
    }
    let unit: Vec<Vec<f32>> = embeddings.iter().map(|e| normalise(e)).collect();
    let mut affinity = DMatrix::<f64>::zeros(n, n);
    for i in 0..n {
        let mut near: Vec<(usize, f64)> = (0..n)
            .filter(|&j| group[j] != group[i])
            .map(|j| (j, unit[i].iter().zip(&unit[j]).map(|(a, b)| a * b).sum::<f32>().max(0.0) as f64))
            .collect();
        near.sort_by(|a, b| b.1.total_cmp(&a.1));
        // Each end that keeps an edge gives it half its weight, so the graph is symmetric.
        for &(j, s) in near.iter().take(NEIGHBOURS) {
            affinity[(i, j)] += 0.5 * s;
            affinity[(j, i)] += 0.5 * s;
        }
    }
    // Unnormalised Laplacian: degree on the diagonal, minus the affinity.
    let mut laplacian = -&affinity;
    for i in 0..n {
        laplacian[(i, i)] = affinity.row(i).sum();
    }
    let eigen = SymmetricEigen::new(laplacian);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| eigen.eigenvalues[a].total_cmp(&eigen.eigenvalues[b]));
    let points: Vec<Vec<f64>> =
        (0..n).map(|i| order[..k].iter().map(|&c| eigen.eigenvectors[(i, c)]).collect()).collect();
    renumber(&kmeans(&points, k))
}

/// Lloyd's k-means from up to 16 deterministic farthest-first seedings (each from another first
/// point); the one with the least within-cluster sum of squares wins.
fn kmeans(points: &[Vec<f64>], k: usize) -> Vec<usize> {
    let n = points.len();
    let dist = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>();
    let nearest = |p: &[f64], centres: &[Vec<f64>]| {
        (0..centres.len()).min_by(|&a, &b| dist(p, &centres[a]).total_cmp(&dist(p, &centres[b]))).expect("centres")
    };
    let mut best: Option<(f64, Vec<usize>)> = None;
    for first in (0..n).step_by(n.div_ceil(16)) {
        let mut centres = vec![points[first].clone()];
        while centres.len() < k {
            let gap = |p: usize| centres.iter().map(|c| dist(&points[p], c)).fold(f64::INFINITY, f64::min);
            let far = (0..n).max_by(|&a, &b| gap(a).total_cmp(&gap(b))).expect("points");
            centres.push(points[far].clone());
        }
        let mut labels = vec![usize::MAX; n];
        for _ in 0..100 {
            let next: Vec<usize> = points.iter().map(|p| nearest(p, &centres)).collect();
            if next == labels {
                break;
            }
            labels = next;
            for (c, centre) in centres.iter_mut().enumerate() {
                let members: Vec<&Vec<f64>> =
                    points.iter().zip(&labels).filter(|(_, l)| **l == c).map(|(p, _)| p).collect();
                if !members.is_empty() {
                    for (d, v) in centre.iter_mut().enumerate() {
                        *v = members.iter().map(|p| p[d]).sum::<f64>() / members.len() as f64;
                    }
                }
            }
        }
        let inertia: f64 = points.iter().zip(&labels).map(|(p, &l)| dist(p, &centres[l])).sum();
        if best.as_ref().is_none_or(|b| inertia < b.0) {
            best = Some((inertia, labels));
        }
    }
    best.map_or_else(|| vec![0; n], |b| b.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A unit vector at `degrees` in a plane of a 4-dimensional space.
    fn at(degrees: f32) -> Vec<f32> {
        let r = degrees.to_radians();
        vec![r.cos(), r.sin(), 0.0, 0.0]
    }

    #[test]
    fn three_voices_asked_for_are_three_clusters() {
        // Given three voices, each seen in several windows and drifting a little,
        let emb: Vec<Vec<f32>> =
            [0.0, 4.0, 8.0, 12.0, 100.0, 104.0, 108.0, 112.0, 200.0, 204.0, 208.0, 212.0].map(at).to_vec();
        let groups: Vec<usize> = (0..emb.len()).collect();
        // when three speakers are asked for,
        let labels = spectral(&emb, &groups, 3);
        // each voice is one cluster.
        assert_eq!(labels, vec![0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
    }

    #[test]
    fn a_voice_that_drifts_stays_one_cluster() {
        // Given one voice drifting in small steps over 70 degrees, and a second, tight voice,
        let mut emb: Vec<Vec<f32>> = (0..15).map(|i| at(i as f32 * 5.0)).collect();
        emb.extend([185.0, 186.0, 187.0, 188.0, 189.0].map(at));
        let groups: Vec<usize> = (0..emb.len()).collect();
        // when two speakers are asked for, the chain is one and the tight voice the other.
        let labels = spectral(&emb, &groups, 2);
        assert_eq!(labels, [vec![0; 15], vec![1; 5]].concat());
    }

    #[test]
    fn fewer_items_than_speakers_keeps_each_apart_and_one_speaker_is_one_cluster() {
        let emb = vec![at(0.0), at(1.0)];
        assert_eq!(spectral(&emb, &[0, 1], 3), vec![0, 1]);
        assert_eq!(spectral(&emb, &[0, 1], 1), vec![0, 0]);
        assert_eq!(spectral(&[], &[], 2), Vec::<usize>::new());
    }
}
