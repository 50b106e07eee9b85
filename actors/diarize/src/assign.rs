//! Which cluster each local speaker of one window joins, when clustering put two of them in one.
//!
//! The segmentation model tells the voices of a window apart, so two local speakers of one
//! window are two people. Clustering looks at each voice print alone and can still join two of
//! them (a short or overlapped stretch gives a blurred print), and the frames where both speak
//! then have one speaker where the model heard two. pyannote's pipeline assigns a window's local
//! speakers to distinct clusters for the same reason; [`distinct`] does it where needed.

/// The assignment of a window's local speakers to distinct clusters that keeps them nearest
/// their clusters: `similarity[i][c]` is local speaker `i`'s similarity to cluster `c`, and the
/// answer gives each local speaker its cluster, the sum of similarities highest. `None` when
/// there are more local speakers than clusters. (A window has at most three local speakers and
/// the clusters are at most five: every assignment is tried.)
pub fn distinct(similarity: &[Vec<f32>]) -> Option<Vec<usize>> {
    let clusters = similarity.first().map_or(0, Vec::len);
    if similarity.len() > clusters {
        return None;
    }
    let mut best = None;
    extend(similarity, &mut Vec::with_capacity(similarity.len()), 0.0, &mut best);
    best.map(|(_, picks)| picks)
}

/// Tries every unused cluster for the next local speaker after `picks`.
fn extend(similarity: &[Vec<f32>], picks: &mut Vec<usize>, sum: f32, best: &mut Option<(f32, Vec<usize>)>) {
    let Some(row) = similarity.get(picks.len()) else {
        if best.as_ref().is_none_or(|(b, _)| sum > *b) {
            *best = Some((sum, picks.clone()));
        }
        return;
    };
    for (c, s) in row.iter().enumerate() {
        if !picks.contains(&c) {
            picks.push(c);
            extend(similarity, picks, sum + s, best);
            picks.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_local_speakers_near_one_cluster_are_parted_where_it_costs_least() {
        // Given two local speakers both nearest cluster 0, the second far less sure of it,
        let sim = vec![vec![0.9, 0.1, 0.2], vec![0.8, 0.7, 0.1]];
        // when they are assigned to distinct clusters, the second takes its next best.
        assert_eq!(distinct(&sim), Some(vec![0, 1]));
        // Given the first the less sure, it is the one that moves.
        let sim = vec![vec![0.8, 0.75, 0.1], vec![0.9, 0.1, 0.2]];
        assert_eq!(distinct(&sim), Some(vec![1, 0]));
    }

    #[test]
    fn local_speakers_already_apart_keep_their_clusters() {
        let sim = vec![vec![0.9, 0.1], vec![0.2, 0.8]];
        assert_eq!(distinct(&sim), Some(vec![0, 1]));
    }

    #[test]
    fn more_local_speakers_than_clusters_cannot_be_parted() {
        assert_eq!(distinct(&[vec![0.9], vec![0.8]]), None);
        assert_eq!(distinct(&[]), Some(vec![]));
    }
}
