//! Agglomerative clustering of speaker embeddings across windows.
//!
//! Average linkage on cosine distance, with a cannot-link rule: two local speakers of the same
//! segmentation window are different people by construction, so their distance is infinite
//! and stays so through every merge. The dendrogram is built with the nearest-neighbour-chain
//! algorithm (O(n²), exact for average linkage, which is reducible), then replayed from the
//! lowest merge up: merging goes on while there are more clusters than the caller allows, then
//! while the next merge passes the [`Stop`] rule.

/// One merge of the dendrogram: two representatives and the distance they merged at.
#[derive(Clone, Copy, Debug)]
struct Merge {
    a: usize,
    b: usize,
    height: f32,
}

/// When to stop merging.
#[derive(Clone, Copy, Debug)]
pub struct Stop {
    /// Merging goes on, whatever the distances, while there are more clusters than this.
    pub max_clusters: usize,
    /// Never merge two clusters farther apart than this (cosine distance, average linkage).
    pub threshold: f32,
    /// Below `threshold`, two clusters merge when their distance is at most `ratio` times the
    /// larger of their spreads (mean distance between their own members): two voices can be
    /// close in absolute terms (two synthetic voices are) yet far apart compared with how much
    /// each varies, while one voice split in two is about as far from itself as it varies.
    pub ratio: f32,
    /// Two clusters without a spread to compare with merge under this distance.
    pub singles: f32,
    /// Items whose groups (windows) differ by at most this share audio: their distance says
    /// little about how much a voice varies, so spreads leave such pairs out.
    pub overlapping_groups: usize,
}

/// Cluster labels `0..k` for `embeddings` (cosine distance is used).
/// `group[i]` is the window of item `i`: items of one group never share a cluster.
pub fn agglomerate(embeddings: &[Vec<f32>], group: &[usize], stop: &Stop) -> Vec<usize> {
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
    let merges = nn_chain(&mut d, n);
    let mut sorted = merges;
    sorted.sort_by(|x, y| x.height.total_cmp(&y.height));
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    let mut clusters = n;
    for m in sorted {
        if !m.height.is_finite() || clusters <= 1 {
            break;
        }
        let (ra, rb) = (find(&mut parent, m.a), find(&mut parent, m.b));
        if clusters <= stop.max_clusters {
            if m.height > stop.threshold {
                break;
            }
            let members = |r: usize, p: &mut Vec<usize>| (0..n).filter(|&i| find(p, i) == r).collect::<Vec<_>>();
            let (ma, mb) = (members(ra, &mut parent), members(rb, &mut parent));
            let spread = |m: &[usize]| -> Option<f32> {
                let mut sum = 0.0f64;
                let mut count = 0usize;
                for (x, &i) in m.iter().enumerate() {
                    for &j in &m[x + 1..] {
                        let v = original[i * n + j];
                        if v.is_finite() && group[i].abs_diff(group[j]) > stop.overlapping_groups {
                            sum += v as f64;
                            count += 1;
                        }
                    }
                }
                (count > 0).then(|| (sum / count as f64) as f32)
            };
            let merge = match (spread(&ma), spread(&mb)) {
                (None, None) => m.height <= stop.singles,
                (a, b) => m.height <= stop.ratio * a.unwrap_or(0.0).max(b.unwrap_or(0.0)),
            };
            if std::env::var_os("SCRIBE_DIARIZE_DEBUG").is_some() {
                eprintln!("merge? d={:.3} sizes {} {} spreads {:?} {:?} -> {merge}", m.height, ma.len(), mb.len(), spread(&ma), spread(&mb));
            }
            if !merge {
                break;
            }
        }
        if ra != rb {
            parent[rb] = ra;
            clusters -= 1;
        }
    }
    let mut label = vec![usize::MAX; n];
    let mut next = 0;
    (0..n)
        .map(|i| {
            let r = find(&mut parent, i);
            if label[r] == usize::MAX {
                label[r] = next;
                next += 1;
            }
            label[r]
        })
        .collect()
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

    #[test]
    fn threshold_separates_directions() {
        let emb = vec![e(1.0, 0.0), e(0.99, 0.1), e(0.0, 1.0), e(0.1, 0.99)];
        let stop = Stop { max_clusters: 5, threshold: 0.5, ratio: 2.0, singles: 0.3, overlapping_groups: 0 };
        let labels = agglomerate(&emb, &[0, 1, 2, 3], &stop);
        assert_eq!(labels, vec![0, 0, 1, 1]);
        // Capped at one cluster, everything merges.
        assert_eq!(agglomerate(&emb, &[0, 1, 2, 3], &Stop { max_clusters: 1, ..stop }), vec![0, 0, 0, 0]);
    }

    #[test]
    fn same_window_never_merges() {
        let emb = vec![e(1.0, 0.0), e(1.0, 0.01), e(0.0, 1.0)];
        let labels = agglomerate(&emb, &[0, 0, 1], &Stop { max_clusters: 1, threshold: 0.5, ratio: 2.0, singles: 0.3, overlapping_groups: 0 });
        assert_ne!(labels[0], labels[1]);
    }
}
