//! Which event store to open: the `--event-store` setting (flag, `SCRIBE_EVENT_STORE`, TOML key
//! `event_store`) read as a URL, or the embedded SQLite file of the data directory when it is
//! not given. Every tool that opens the store (`serve`, `replay`, `keys`, `balance`, `rebuild`)
//! goes through here, so they all follow the same setting.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{EventStore, KurrentDbEventStore, PostgresEventStore, SqliteEventStore, StoreError};

/// Where the event log lives.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreLocation {
    /// The SQLite file `events.sqlite3` in this data directory (the default).
    Embedded(PathBuf),
    /// A PostgreSQL database (`postgres://` or `postgresql://` URL).
    Postgres(String),
    /// A KurrentDB / EventStoreDB cluster (`esdb://`, `esdb+discover://`, `kurrentdb://`,
    /// `kurrentdb+discover://`, `kdb://` or `kdb+discover://` URL).
    KurrentDb(String),
}

impl StoreLocation {
    /// Reads the `--event-store` setting; `None` (or an empty string) means the embedded file in
    /// `data_dir`. Any other scheme than the ones above is refused with a message naming them.
    pub fn from_setting(setting: Option<&str>, data_dir: &Path) -> Result<Self, StoreError> {
        let Some(url) = setting.map(str::trim).filter(|s| !s.is_empty()) else {
            return Ok(StoreLocation::Embedded(data_dir.to_owned()));
        };
        let scheme = url.split_once("://").map(|(scheme, _)| scheme.to_ascii_lowercase());
        match scheme.as_deref() {
            Some("postgres" | "postgresql") => Ok(StoreLocation::Postgres(url.to_owned())),
            Some(
                "esdb" | "esdb+discover" | "kurrentdb" | "kurrentdb+discover" | "kurrent" | "kurrent+discover" | "kdb"
                | "kdb+discover",
            ) => Ok(StoreLocation::KurrentDb(url.to_owned())),
            _ => Err(StoreError::Configuration(format!(
                "unsupported event store {:?}: give a postgres://... or esdb://... (kurrentdb://...) URL, or leave the setting out for the embedded SQLite file in the data directory",
                redact(url)
            ))),
        }
    }

    /// Opens (creating if needed) the store. Call inside a tokio runtime.
    pub async fn open(&self) -> Result<Arc<dyn EventStore>, StoreError> {
        Ok(match self {
            StoreLocation::Embedded(dir) => Arc::new(SqliteEventStore::open_in(dir)?),
            StoreLocation::Postgres(url) => Arc::new(PostgresEventStore::connect(url).await?),
            StoreLocation::KurrentDb(url) => Arc::new(KurrentDbEventStore::connect(url, None).await?),
        })
    }

    /// Whether a store exists there already (for tools that only read). Servers are assumed to
    /// exist; the embedded file exists once something was written.
    pub fn may_exist(&self) -> bool {
        match self {
            StoreLocation::Embedded(dir) => dir.join(super::sqlite::FILE_NAME).exists(),
            StoreLocation::Postgres(_) | StoreLocation::KurrentDb(_) => true,
        }
    }
}

/// Shows the location without a password.
impl fmt::Display for StoreLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreLocation::Embedded(dir) => {
                write!(f, "{}", dir.join(super::sqlite::FILE_NAME).display())
            }
            StoreLocation::Postgres(url) | StoreLocation::KurrentDb(url) => f.write_str(&redact(url)),
        }
    }
}

impl fmt::Debug for StoreLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StoreLocation({self})")
    }
}

/// The URL with any `user:password@` password replaced by `***`.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split_once(':').map_or(userinfo, |(user, _)| user);
            let hidden = if userinfo.contains(':') { ":***" } else { "" };
            format!("{scheme}://{user}{hidden}@{host}{tail}")
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_setting_means_the_embedded_file() {
        let dir = Path::new("/srv/scribe");
        assert_eq!(StoreLocation::from_setting(None, dir).unwrap(), StoreLocation::Embedded(dir.into()));
        assert_eq!(StoreLocation::from_setting(Some("  "), dir).unwrap(), StoreLocation::Embedded(dir.into()));
    }

    #[test]
    fn schemes_pick_the_adapter() {
        let dir = Path::new("data");
        let pg = "postgres://scribe:secret@db:5432/scribe";
        assert_eq!(StoreLocation::from_setting(Some(pg), dir).unwrap(), StoreLocation::Postgres(pg.into()));
        let pg2 = "postgresql://db/scribe";
        assert_eq!(StoreLocation::from_setting(Some(pg2), dir).unwrap(), StoreLocation::Postgres(pg2.into()));
        for url in ["esdb://localhost:2113?tls=false", "kurrentdb://a:2113", "esdb+discover://c:2113"] {
            assert_eq!(StoreLocation::from_setting(Some(url), dir).unwrap(), StoreLocation::KurrentDb(url.into()));
        }
    }

    #[test]
    fn other_schemes_are_refused_with_the_accepted_ones_named_and_no_password() {
        let error = StoreLocation::from_setting(Some("mysql://root:hunter2@db/scribe"), Path::new("d")).unwrap_err();
        let message = error.to_string();
        assert!(message.contains("postgres://") && message.contains("esdb://"), "{message}");
        assert!(!message.contains("hunter2"), "the password is not echoed: {message}");
    }

    #[test]
    fn display_hides_the_password() {
        let location = StoreLocation::Postgres("postgres://scribe:secret@db:5432/scribe?sslmode=disable".into());
        assert_eq!(location.to_string(), "postgres://scribe:***@db:5432/scribe?sslmode=disable");
        let no_password = StoreLocation::Postgres("postgres://scribe@db/scribe".into());
        assert_eq!(no_password.to_string(), "postgres://scribe@db/scribe");
    }
}
