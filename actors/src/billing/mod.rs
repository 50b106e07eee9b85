//! Billing, in one place: the saga every new job goes through to be paid for (charge → record →
//! give the charge back if recording fails; a URL job charged at probe), and the reactor that
//! refunds jobs that end without delivering. The doors (the HTTP edge, and later a live session
//! and the OpenAI-compatible endpoint) only ask [`Billing`] and map its answer.

mod refunds;
mod saga;

pub use refunds::{ORPHAN_GRACE, RefundActor, RefundMsg, RefundState};
pub use saga::{Billing, ChargeError, NewJob, SubmitError};
