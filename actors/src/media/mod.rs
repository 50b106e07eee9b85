//! Media on disk and from the network: streaming storage, what a stored file holds (its probe,
//! its waveform peaks, its path as events record it), the address guard for client URLs, and URL downloads.

pub mod address_guard;
mod block_writer;
pub mod fetch;
pub mod peaks;
pub mod probe;
pub mod storage;

pub use scribe_domain::human;

pub use address_guard::{AddressGuard, GuardError, VettedUrl};
pub use fetch::{Download, FetchConfig, FetchError, Fetcher, MAX_URL_MEDIA_BYTES};
pub use peaks::{Peaks, PeaksError};
pub use probe::ProbeError;
pub use storage::{MediaError, MediaStore, StoredMedia, TempMedia, relative};
