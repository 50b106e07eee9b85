//! How many times the pipeline handed each stage of a job to its work, for `/metrics`
//! (`scribe_pipeline_dispatches_total{stage="…"}`). A job should cost one dispatch per stage it
//! really needs: an upload none for storing or probing its media (its own append did both), a
//! URL job one for each.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use scribe_domain::job::Stage;

/// The stages the pipeline starts work for.
pub const DISPATCHED_STAGES: [Stage; 7] = [
    Stage::StoreMedia,
    Stage::ProbeMedia,
    Stage::Transcribe,
    Stage::Translate,
    Stage::Complete,
    Stage::OpenTask,
    Stage::DeliverCallback,
];

/// Dispatches per stage since the node started. Cheap to share.
#[derive(Debug, Clone, Default)]
pub struct DispatchCounts(Arc<[AtomicU64; DISPATCHED_STAGES.len()]>);

impl DispatchCounts {
    /// Counts one dispatch of `stage` (a stage the pipeline does not dispatch is ignored).
    pub fn record(&self, stage: Stage) {
        if let Some(i) = DISPATCHED_STAGES.iter().position(|s| *s == stage) {
            self.0[i].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Every dispatched stage by name (`StoreMedia`, …) with its count, zeros included.
    pub fn by_stage(&self) -> Vec<(String, u64)> {
        DISPATCHED_STAGES
            .iter()
            .zip(self.0.iter())
            .map(|(stage, n)| (format!("{stage:?}"), n.load(Ordering::Relaxed)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_stage_apart_and_shows_the_zeros() {
        let counts = DispatchCounts::default();
        counts.record(Stage::Transcribe);
        counts.clone().record(Stage::Transcribe);
        counts.record(Stage::Finished);
        let by_stage = counts.by_stage();
        assert_eq!(by_stage.len(), DISPATCHED_STAGES.len());
        assert!(by_stage.contains(&("Transcribe".to_owned(), 2)));
        assert!(by_stage.contains(&("StoreMedia".to_owned(), 0)));
    }
}
