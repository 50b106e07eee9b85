//! Claims on a job's machine work, so that several `scribe serve` nodes sharing one event store
//! each run a job's stage exactly once between them.
//!
//! A node that wants to run a stage (fetch, probe, transcribe, translate, deliver the callback)
//! first records a `WorkClaimed` event naming itself, the stage and a lease end. The append
//! expects the stream version the node decided on, so of two nodes racing for the same stage one
//! wins and the other, reloading the stream, finds the claim and is refused
//! ([`JobRefusal::WorkHeldByOther`]). The holder renews the lease while its work runs (another
//! `WorkClaimed` by the same node); when a node dies its lease runs out and another node's claim
//! is accepted, so the job continues there. A claim concerns one stage only: once the job moves
//! on, the claim says nothing about the next stage.
//!
//! Leases compare the claiming node's clock with the one that recorded the claim: keep the
//! nodes' clocks in sync (NTP) and leases much longer than their skew.

use serde::{Deserialize, Serialize};

use super::{JobEvent, JobRefusal, JobState, Stage};

/// The stages that run on one node at a time and are claimed first. (Completing a job, opening
/// a task and the other single-append steps need no claim: the domain refuses a repeat.)
pub const CLAIMED_STAGES: [Stage; 5] =
    [Stage::StoreMedia, Stage::ProbeMedia, Stage::Transcribe, Stage::Translate, Stage::DeliverCallback];

/// Who runs a job's stage, and until when (milliseconds since the epoch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkClaim {
    pub stage: Stage,
    pub node: String,
    pub until_ms: u64,
}

/// What a node finds when it looks at the claim on a job's current stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimStatus {
    /// Nobody holds the stage (never claimed, claimed for an earlier stage, or the lease ran out).
    Free,
    /// This node holds it and the lease has not run out (the holder may be an earlier run of
    /// this node, which is therefore dead). A lease of this node that ran out is `Free`: the
    /// node claims the stage again before running it, since another node may have taken it.
    Mine { until_ms: u64 },
    /// Another node holds it until `until_ms`.
    Other { node: String, until_ms: u64 },
}

impl JobState {
    /// Who holds the job's current stage for `node`, at `now_ms`.
    pub fn claim_status(&self, node: &str, now_ms: u64) -> ClaimStatus {
        match &self.claim {
            Some(c) if c.stage == self.stage() && c.node == node && now_ms < c.until_ms => {
                ClaimStatus::Mine { until_ms: c.until_ms }
            }
            Some(c) if c.stage == self.stage() && now_ms < c.until_ms => {
                ClaimStatus::Other { node: c.node.clone(), until_ms: c.until_ms }
            }
            _ => ClaimStatus::Free,
        }
    }
}

/// Decides a claim (or a renewal) of `stage` by `node` until `until_ms`, at `at_ms`.
pub(super) fn decide_claim(
    state: &JobState,
    stage: Stage,
    node: String,
    until_ms: u64,
    at_ms: u64,
) -> Result<Vec<JobEvent>, JobRefusal> {
    if !CLAIMED_STAGES.contains(&stage) {
        return Err(JobRefusal::OutOfOrder("only a job's machine work is claimed"));
    }
    if state.stage() != stage {
        return Err(JobRefusal::OutOfOrder("the job is no longer at the claimed stage"));
    }
    if let ClaimStatus::Other { node, until_ms } = state.claim_status(&node, at_ms) {
        return Err(JobRefusal::WorkHeldByOther { node, until_ms });
    }
    Ok(vec![JobEvent::WorkClaimed { stage, node, lease_until_ms: until_ms.max(at_ms), at_ms }])
}

/// Serde names of the claimed stages (the stage is stored in `WorkClaimed` events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum StoredStage {
    StoreMedia,
    ProbeMedia,
    Transcribe,
    Translate,
    DeliverCallback,
    /// A stage this version does not claim (written by a newer version): never matches.
    #[serde(other)]
    Other,
}

impl From<Stage> for StoredStage {
    fn from(stage: Stage) -> Self {
        match stage {
            Stage::StoreMedia => StoredStage::StoreMedia,
            Stage::ProbeMedia => StoredStage::ProbeMedia,
            Stage::Transcribe => StoredStage::Transcribe,
            Stage::Translate => StoredStage::Translate,
            Stage::DeliverCallback => StoredStage::DeliverCallback,
            _ => StoredStage::Other,
        }
    }
}

impl From<StoredStage> for Stage {
    fn from(stage: StoredStage) -> Self {
        match stage {
            StoredStage::StoreMedia => Stage::StoreMedia,
            StoredStage::ProbeMedia => Stage::ProbeMedia,
            StoredStage::Transcribe => Stage::Transcribe,
            StoredStage::Translate => Stage::Translate,
            StoredStage::DeliverCallback => Stage::DeliverCallback,
            // `New` is never a job's current stage once it has events, so this claim holds nothing.
            StoredStage::Other => Stage::New,
        }
    }
}

/// `serde(with)` for the `stage` field of `WorkClaimed`.
pub(super) mod stage_serde {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::{Stage, StoredStage};

    pub fn serialize<S: Serializer>(stage: &Stage, s: S) -> Result<S::Ok, S::Error> {
        StoredStage::from(*stage).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Stage, D::Error> {
        StoredStage::deserialize(d).map(Stage::from)
    }
}
