//! A server's live decodings counted by kind, for `/metrics` and `scribe-bench live`: what the
//! finals decoded when a pause begins and the partials a final pre-empts cost in engine work.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a live session decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeKind {
    /// A final decoded once its utterance had ended.
    Final,
    /// A final decoded when a pause began, before it was long enough to end the utterance.
    Early,
    /// An early final that became the utterance's final (the others were wasted).
    EarlyKept,
    /// A partial decoded.
    Partial,
    /// A partial stopped before its end because a final needed the engine.
    PartialCancelled,
}

impl DecodeKind {
    pub const ALL: [DecodeKind; 5] = [
        DecodeKind::Final,
        DecodeKind::Early,
        DecodeKind::EarlyKept,
        DecodeKind::Partial,
        DecodeKind::PartialCancelled,
    ];

    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            DecodeKind::Final => "final",
            DecodeKind::Early => "early",
            DecodeKind::EarlyKept => "early_kept",
            DecodeKind::Partial => "partial",
            DecodeKind::PartialCancelled => "partial_cancelled",
        }
    }
}

/// The counts since the server started; cheap to clone and share between sessions.
#[derive(Clone, Debug, Default)]
pub struct DecodeCounts(Arc<[AtomicU64; 5]>);

impl DecodeCounts {
    pub fn count(&self, kind: DecodeKind) {
        self.0[kind as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Each kind with its count, in [`DecodeKind::ALL`]'s order.
    pub fn by_kind(&self) -> Vec<(&'static str, u64)> {
        DecodeKind::ALL.iter().map(|&k| (k.as_str(), self.0[k as usize].load(Ordering::Relaxed))).collect()
    }
}
