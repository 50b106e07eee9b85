//! Media on disk and from the network: streaming storage, the address guard for client URLs,
//! and URL downloads.

pub mod address_guard;
mod block_writer;
pub mod fetch;
pub mod human;
pub mod storage;

pub use address_guard::{AddressGuard, GuardError, VettedUrl};
pub use fetch::{Download, FetchConfig, FetchError, Fetcher, MAX_URL_MEDIA_BYTES};
pub use storage::{MediaError, MediaStore, StoredMedia, TempMedia, relative};
