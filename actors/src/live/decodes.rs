//! A server's live decodings counted by kind, for `/metrics` and `scribe-bench live`: what the
//! finals decoded when a pause begins and the partials a final pre-empts cost in engine work,
//! and how many decodings shared the decoder with other sessions'.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a live session decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeCount {
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
    /// A decoding (of any kind) run in one batch with other sessions' (the server's live decoder).
    Shared,
    /// A final read again with its neighbours (`outputConfig.revisions`).
    Revision,
    /// ... stopped before its end because a final needed the engine, or before it began because
    /// a partial came due (it is decoded again later).
    RevisionCancelled,
    /// ... whose reading differed from the final, and was sent.
    Revised,
}

impl DecodeCount {
    pub const ALL: [DecodeCount; 9] = [
        DecodeCount::Final,
        DecodeCount::Early,
        DecodeCount::EarlyKept,
        DecodeCount::Partial,
        DecodeCount::PartialCancelled,
        DecodeCount::Shared,
        DecodeCount::Revision,
        DecodeCount::RevisionCancelled,
        DecodeCount::Revised,
    ];

    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            DecodeCount::Final => "final",
            DecodeCount::Early => "early",
            DecodeCount::EarlyKept => "early_kept",
            DecodeCount::Partial => "partial",
            DecodeCount::PartialCancelled => "partial_cancelled",
            DecodeCount::Shared => "shared",
            DecodeCount::Revision => "revision",
            DecodeCount::RevisionCancelled => "revision_cancelled",
            DecodeCount::Revised => "revised",
        }
    }
}

/// The counts since the server started; cheap to clone and share between sessions.
#[derive(Clone, Debug, Default)]
pub struct DecodeCounts(Arc<[AtomicU64; DecodeCount::ALL.len()]>);

impl DecodeCounts {
    pub fn count(&self, kind: DecodeCount) {
        self.0[kind as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Each kind with its count, in [`DecodeCount::ALL`]'s order.
    pub fn by_kind(&self) -> Vec<(&'static str, u64)> {
        DecodeCount::ALL.iter().map(|&k| (k.as_str(), self.0[k as usize].load(Ordering::Relaxed))).collect()
    }
}
