//! Scribe's read side: the read models that `GET /jobs/status`, `GET /jobs`, `GET /glossary` and
//! API-key authentication answer from, kept up to date by following the whole event log.
//!
//! ```text
//! event store ──subscribe_all(checkpoint)──▶ pump ──batches──▶ ProjectionActor ──▶ readmodels.sqlite3
//!                                                                  │ (rows + checkpoint,
//!                                                                  │  one transaction per batch)
//!                                                                  ▼
//!                                           ReadModels::wait_for(position) ◀── HTTP edge queries
//! ```
//!
//! Use it like this:
//!
//! ```no_run
//! # async fn example(store: std::sync::Arc<dyn scribe_eventstore::EventStore>, data_dir: &std::path::Path)
//! # -> Result<(), scribe_projections::ProjectionError> {
//! use std::time::Duration;
//! use scribe_projections::{Projection, ReadModels};
//!
//! let read_models = ReadModels::open(data_dir)?;
//! let projection = Projection::start(store.clone(), read_models.clone()).await?;
//! // ... after an append that returned `appended.position`:
//! # let appended_position = 1;
//! if read_models.wait_for(appended_position, Duration::from_secs(2)).await {
//!     // status and list queries now show that write
//! }
//! projection.stop().await;
//! # Ok(()) }
//! ```
//!
//! The read models are derived data: [`rebuild`] recreates them from the log at any time.

mod cache;
mod db;
mod error;
mod fold;
mod projector;
mod read;
mod rebuild;
mod rows;
mod runner;

pub use db::{FILE_NAME, SCHEMA_VERSION};
pub use error::ProjectionError;
pub use projector::BATCH_SIZE;
pub use read::{Account, GlossaryRecord, JobRecord, ReadModels, TaskCounts};
pub use rebuild::{RebuildReport, rebuild, rebuild_with_progress};
pub use runner::{Projection, ProjectionActor, ProjectionArgs, ProjectionMsg, ProjectionState};
