//! Agglomerative clustering of speaker embeddings across windows.
//!
//! Average linkage on cosine distance, with a cannot-link rule: two local speakers of the same
//! segmentation window are different people by construction, so their distance is infinite
//! and stays so through every merge. The dendrogram is built with the nearest-neighbour-chain
//! algorithm (O(n²), exact for average linkage, which is reducible), then replayed from the
//! lowest merge up to cut it into 1..=max clusters, and the cut with the best silhouette wins
//! (see [`Stop`]).

/// One merge of the dendrogram: two representatives and the distance they merged at.
#[derive(Clone, Copy, Debug)]
struct Merge {
    a: usize,
    b: usize,
    height: f32,
}

/// How many clusters to keep.
#[derive(Clone, Copy, Debug)]
pub struct Stop {
    /// At most this many clusters (exactly this many when [`Stop::exact`]).
    pub max_clusters: usize,
    /// The caller knows the number: `max_clusters` clusters are kept whenever there are that
    /// many items, however close they are; the silhouette only chooses among the cuts that
    /// give that many, and no cluster is too small to be kept.
    pub exact: bool,
    /// Among the dendrogram's cuts into 2..=`max_clusters` clusters, the one with the best mean
    /// silhouette is kept when that silhouette reaches this; otherwise everything is one
    /// cluster. (Silhouette: for each item, how much nearer it is to its own cluster than to
    /// the next one, from -1 to 1.) Two voices can be close in absolute terms (two synthetic
    /// voices are) yet well separated compared with how much each varies, which is what the
    /// silhouette measures.
    pub min_silhouette: f32,
    /// With fewer items than this, a silhouette says too little (each item is compared with
    /// a handful of others): the items stay one cluster unless the cannot-link rule parts them
    /// (a group holding two items, a window where the segmentation model heard two voices).
    pub min_items: usize,
    /// Items whose groups (windows) differ by at most this share audio: their distance says
    /// little about how much a voice varies, so the silhouette leaves such pairs out.
    pub overlapping_groups: usize,
    /// In each cut, clusters with less than this share of the items' weight (speech) join the
    /// nearest larger cluster before the cut is judged: an outlier split off is not a speaker.
    pub min_share: f32,
}

/// Cluster labels `0..k` for `embeddings` (cosine distance is used).
/// `group[i]` is the window of item `i`: items of one group never share a cluster (unless only
/// one cluster is kept).
pub fn agglomerate(embeddings: &[Vec<f32>], group: &[usize], weight: &[f32], stop: &Stop) -> Vec<usize> {
    let n = embeddings.len();
    if n == 0 {
        return Vec::new();
    }
    let unit: Vec<Vec<f32>> = embeddings.iter().map(|e| normalise(e)).collect();
    let mut d = vec![0.0f32; n * n];
    for i in 0..n {
        for j in i + 1..n {
            let v = if group[i] == group[j] {
                f32::INFINITY
            } else {
                1.0 - unit[i].iter().zip(&unit[j]).map(|(a, b)| a * b).sum::<f32>()
            };
            d[i * n + j] = v;
            d[j * n + i] = v;
        }
    }
    let original = d.clone();
    let mut merges = nn_chain(&mut d, n);
    merges.sort_by(|x, y| x.height.total_cmp(&y.height));
    let finite = merges.iter().take_while(|m| m.height.is_finite()).count();
    // Fewest clusters the cannot-link rule allows.
    let floor = n - finite;
    if stop.max_clusters.max(floor) <= 1 {
        return vec![0; n];
    }
    // Cuts finer than the maximum are judged too, once their small clusters are absorbed and
    // the smallest ones beyond the maximum with them: the dendrogram's first splits are often
    // outliers rather than voices.
    let upper = (stop.max_clusters + 3).max(floor).min(n);
    let (lower, min_share) = if stop.exact { (stop.max_clusters, 0.0) } else { (2, stop.min_share) };
    let mut best: Option<(f32, Vec<usize>)> = None;
    for k in floor.max(lower)..=upper {
        let labels = absorb_small(&cut(&merges, n, k), &unit, weight, min_share, stop.max_clusters.max(floor));
        if best.as_ref().is_some_and(|b| b.1 == labels) {
            continue;
        }
        let s = silhouette(&original, &labels, group, stop.overlapping_groups, n);
        tracing::trace!(k, silhouette = ?s, "cut");
        if let Some(s) = s
            && best.as_ref().is_none_or(|b| s > b.0)
        {
            best = Some((s, labels));
        }
    }
    match best {
        Some((s, labels)) if (s >= stop.min_silhouette && n >= stop.min_items) || floor >= 2 || stop.exact => labels,
        // Known number, but no cut has a silhouette (too few items apart): the plain cut.
        None if stop.exact => cut(&merges, n, stop.max_clusters.max(floor)),
        _ => vec![0; n],
    }
}

/// `labels` with the items of clusters under `min_share` of the total weight, or beyond the
/// `max` largest, moved to the nearest (cosine to the mean direction) kept cluster, renumbered.
pub(crate) fn absorb_small(
    labels: &[usize],
    unit: &[Vec<f32>],
    weight: &[f32],
    min_share: f32,
    max: usize,
) -> Vec<usize> {
    let k = labels.iter().max().map_or(0, |m| m + 1);
    let mut size = vec![0.0f32; k];
    for (&l, &w) in labels.iter().zip(weight) {
        size[l] += w;
    }
    let total: f32 = size.iter().sum();
    let mut by_size: Vec<usize> = (0..k).collect();
    by_size.sort_by(|a, b| size[*b].total_cmp(&size[*a]));
    let large: Vec<usize> = by_size.into_iter().take(max.max(1)).filter(|&c| size[c] >= min_share * total).collect();
    if large.is_empty() || large.len() == k {
        return labels.to_vec();
    }
    let centroid = direction_sums(labels, unit, k);
    let sim = |c: usize, u: &[f32]| {
        centroid[c].iter().zip(u).map(|(a, b)| a * b).sum::<f32>()
            / centroid[c].iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12)
    };
    let moved: Vec<usize> = labels
        .iter()
        .zip(unit)
        .map(|(&l, u)| {
            if large.contains(&l) {
                l
            } else {
                *large.iter().max_by(|a, b| sim(**a, u).total_cmp(&sim(**b, u))).expect("a large cluster")
            }
        })
        .collect();
    renumber(&moved)
}

/// Per cluster `0..k`, the sum of its items' unit vectors (`unit[i]` labelled `labels[i]`): the
/// cluster's mean direction, unscaled, for cosine comparisons.
pub(crate) fn direction_sums(labels: &[usize], unit: &[Vec<f32>], k: usize) -> Vec<Vec<f32>> {
    let mut sums = vec![vec![0.0f32; unit.first().map_or(0, Vec::len)]; k];
    for (&l, u) in labels.iter().zip(unit) {
        sums[l].iter_mut().zip(u).for_each(|(a, b)| *a += b);
    }
    sums
}

/// Labels renumbered `0..` in order of first appearance.
pub(crate) fn renumber(labels: &[usize]) -> Vec<usize> {
    let mut seen: Vec<usize> = Vec::new();
    labels
        .iter()
        .map(|l| match seen.iter().position(|s| s == l) {
            Some(i) => i,
            None => {
                seen.push(*l);
                seen.len() - 1
            }
        })
        .collect()
}

/// The root of `x` in the union-find forest `p` (paths halved on the way).
pub(crate) fn find(p: &mut [usize], mut x: usize) -> usize {
    while p[x] != x {
        p[x] = p[p[x]];
        x = p[x];
    }
    x
}

/// Labels `0..k` after replaying the lowest merges until `k` clusters are left.
fn cut(sorted: &[Merge], n: usize, k: usize) -> Vec<usize> {
    let mut parent: Vec<usize> = (0..n).collect();
    let mut clusters = n;
    for m in sorted {
        if clusters <= k || !m.height.is_finite() {
            break;
        }
        let (ra, rb) = (find(&mut parent, m.a), find(&mut parent, m.b));
        if ra != rb {
            parent[rb] = ra;
            clusters -= 1;
        }
    }
    let roots: Vec<usize> = (0..n).map(|i| find(&mut parent, i)).collect();
    renumber(&roots)
}

/// Mean silhouette of `labels`, over the items that have a defined one, leaving out pairs of
/// overlapping groups and infinite distances; `None` when no item has one.
fn silhouette(d: &[f32], labels: &[usize], group: &[usize], overlapping: usize, n: usize) -> Option<f32> {
    let k = labels.iter().max().map_or(0, |m| m + 1);
    let mut total = 0.0f64;
    let mut count = 0usize;
    for i in 0..n {
        let mut sum = vec![0.0f64; k];
        let mut cnt = vec![0usize; k];
        for j in 0..n {
            let v = d[i * n + j];
            if j != i && v.is_finite() && group[i].abs_diff(group[j]) > overlapping {
                sum[labels[j]] += v as f64;
                cnt[labels[j]] += 1;
            }
        }
        let own = labels[i];
        if cnt[own] == 0 {
            continue;
        }
        let a = sum[own] / cnt[own] as f64;
        let Some(b) =
            (0..k).filter(|&c| c != own && cnt[c] > 0).map(|c| sum[c] / cnt[c] as f64).min_by(|x, y| x.total_cmp(y))
        else {
            continue;
        };
        total += (b - a) / a.max(b).max(1e-9);
        count += 1;
    }
    (count > 0).then(|| (total / count as f64) as f32)
}

/// Average-linkage dendrogram of the `n × n` distance matrix `d` (overwritten).
fn nn_chain(d: &mut [f32], n: usize) -> Vec<Merge> {
    let mut size = vec![1usize; n];
    let mut active = vec![true; n];
    let mut merges = Vec::with_capacity(n.saturating_sub(1));
    let mut chain: Vec<usize> = Vec::new();
    let mut remaining = n;
    while remaining > 1 {
        if chain.is_empty() {
            chain.push(active.iter().position(|&a| a).expect("an active cluster"));
        }
        loop {
            let a = *chain.last().expect("non-empty chain");
            let prev = if chain.len() >= 2 { Some(chain[chain.len() - 2]) } else { None };
            // Nearest active neighbour of a; ties go to the previous element of the chain.
            let mut best = prev;
            let mut best_d = prev.map_or(f32::INFINITY, |p| d[a * n + p]);
            for c in 0..n {
                if active[c] && c != a && (d[a * n + c] < best_d || best.is_none()) {
                    best = Some(c);
                    best_d = d[a * n + c];
                }
            }
            let b = best.expect("another active cluster");
            if Some(b) == prev {
                chain.pop();
                chain.pop();
                merges.push(Merge { a, b, height: best_d });
                let (sa, sb) = (size[a] as f32, size[b] as f32);
                for c in 0..n {
                    if active[c] && c != a && c != b {
                        let v = (sa * d[a * n + c] + sb * d[b * n + c]) / (sa + sb);
                        d[a * n + c] = v;
                        d[c * n + a] = v;
                    }
                }
                active[b] = false;
                size[a] += size[b];
                remaining -= 1;
                break;
            }
            chain.push(b);
        }
    }
    merges
}

pub fn normalise(e: &[f32]) -> Vec<f32> {
    let norm = e.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
    e.iter().map(|v| v / norm).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(x: f32, y: f32) -> Vec<f32> {
        vec![x, y]
    }

    /// Not told the number; every item counts for the silhouette.
    fn estimating(max_clusters: usize, min_silhouette: f32, min_share: f32) -> Stop {
        Stop { max_clusters, exact: false, min_silhouette, min_items: 0, overlapping_groups: 0, min_share }
    }

    #[test]
    fn threshold_separates_directions() {
        let emb = vec![e(1.0, 0.0), e(0.99, 0.1), e(0.0, 1.0), e(0.1, 0.99)];
        let stop = estimating(5, 0.3, 0.0);
        let labels = agglomerate(&emb, &[0, 1, 2, 3], &[1.0; 4], &stop);
        assert_eq!(labels, vec![0, 0, 1, 1]);
        // Capped at one cluster, everything merges.
        assert_eq!(agglomerate(&emb, &[0, 1, 2, 3], &[1.0; 4], &Stop { max_clusters: 1, ..stop }), vec![0, 0, 0, 0]);
    }

    #[test]
    fn too_few_items_are_one_voice_unless_a_window_parts_them() {
        // Given two directions, two items each, in four windows,
        let emb = vec![e(1.0, 0.0), e(0.99, 0.1), e(0.0, 1.0), e(0.1, 0.99)];
        let stop = Stop { min_items: 5, ..estimating(5, 0.3, 0.0) };
        // when fewer items than the silhouette needs are clustered, they are one voice;
        assert_eq!(agglomerate(&emb, &[0, 1, 2, 3], &[1.0; 4], &stop), vec![0; 4]);
        // when one window holds an item of each, they are two.
        assert_eq!(agglomerate(&emb, &[0, 1, 1, 2], &[1.0; 4], &stop), vec![0, 0, 1, 1]);
        // With enough items, the silhouette alone parts them.
        assert_eq!(agglomerate(&emb, &[0, 1, 2, 3], &[1.0; 4], &Stop { min_items: 4, ..stop }), vec![0, 0, 1, 1]);
    }

    #[test]
    fn same_window_never_merges() {
        let emb = vec![e(1.0, 0.0), e(1.0, 0.01), e(0.0, 1.0)];
        let labels = agglomerate(&emb, &[0, 0, 1], &[1.0; 3], &estimating(1, 0.3, 0.0));
        assert_ne!(labels[0], labels[1]);
    }

    #[test]
    fn a_known_number_splits_even_close_voices() {
        // Given two tight groups that are close to each other, and one far outlier,
        let emb = vec![e(1.0, 0.0), e(0.999, 0.04), e(0.97, 0.24), e(0.96, 0.28), e(-1.0, 0.0)];
        let groups = [0, 1, 2, 3, 4];
        // When the number is only a bound, the outlier (a fifth of the weight) is no speaker and the
        // close groups are one voice;
        let bound = estimating(2, 0.9, 0.3);
        assert_eq!(agglomerate(&emb, &groups, &[1.0; 5], &bound), vec![0; 5]);
        // when three speakers are known to speak, each group and the outlier are one.
        let known = Stop { max_clusters: 3, exact: true, ..bound };
        let labels = agglomerate(&emb, &groups, &[1.0; 5], &known);
        assert_eq!(labels, vec![0, 0, 1, 1, 2]);
    }

    #[test]
    fn a_known_number_beyond_the_items_keeps_them_apart() {
        let emb = vec![e(1.0, 0.0), e(0.99, 0.1)];
        let known = Stop { exact: true, ..estimating(3, 0.3, 0.2) };
        assert_eq!(agglomerate(&emb, &[0, 1], &[1.0; 2], &known), vec![0, 1]);
    }
}
