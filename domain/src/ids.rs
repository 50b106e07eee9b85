//! Identifiers (`JobId`, `GlossaryId`, `UserName`) and the event-stream names built from them.
//!
//! Ids are created by the caller (the actors use UUIDs) and only checked here: a short,
//! URL-safe token, so that an id can appear in a path, a query string, a file name and a
//! stream name without escaping.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::ValidationError;

/// Longest id or user name accepted, in bytes (a UUID is 36).
pub const MAX_ID_LEN: usize = 64;

fn check_token(field: &str, value: &str, extra: &[char]) -> Result<(), ValidationError> {
    if value.is_empty() {
        return Err(ValidationError::required(field));
    }
    if value.len() > MAX_ID_LEN {
        return Err(ValidationError::new(field, format!("{field} must be at most {MAX_ID_LEN} characters long")));
    }
    let ok = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_' || extra.contains(&c);
    if !value.chars().all(ok) {
        return Err(ValidationError::new(
            field,
            format!("{field} may contain only letters, digits, '-' and '_'{}", describe(extra)),
        ));
    }
    Ok(())
}

fn describe(extra: &[char]) -> String {
    extra.iter().map(|c| format!(", '{c}'")).collect()
}

macro_rules! token_id {
    ($(#[$meta:meta])* $name:ident, $field:literal, $extra:expr) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// Checks `value` (the parameter is reported as
            #[doc = concat!("`", $field, "`)")]
            /// and wraps it.
            pub fn parse(value: &str) -> Result<Self, ValidationError> {
                Self::parse_field($field, value)
            }

            /// As [`Self::parse`], reporting errors against another parameter name.
            pub fn parse_field(field: &str, value: &str) -> Result<Self, ValidationError> {
                check_token(field, value, $extra)?;
                Ok($name(value.to_owned()))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::str::FromStr for $name {
            type Err = ValidationError;
            fn from_str(s: &str) -> Result<Self, ValidationError> {
                Self::parse(s)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                Self::parse(&s).map_err(serde::de::Error::custom)
            }
        }
    };
}

token_id!(
    /// Identifier of a job (`jobId`).
    JobId, "jobId", &[]
);
token_id!(
    /// Identifier of a glossary (`id` on the Glossary, `glossaryId` in uploads).
    GlossaryId, "glossaryId", &[]
);
token_id!(
    /// The owner of an account, its jobs and glossaries (`userName`). Also allows `.` and `@`
    /// so that e-mail-like names work.
    UserName, "userName", &['.', '@']
);

/// Prefix of every job stream. **A contract with stored data**: renaming it orphans every
/// job history already written.
pub const JOB_STREAM_PREFIX: &str = "job-";
/// Prefix of every glossary stream (same contract as [`JOB_STREAM_PREFIX`]).
pub const GLOSSARY_STREAM_PREFIX: &str = "glossary-";
/// Prefix of every account stream (same contract as [`JOB_STREAM_PREFIX`]).
pub const ACCOUNT_STREAM_PREFIX: &str = "account-";

/// The stream holding one job's history: `job-<jobId>`.
pub fn job_stream(id: &JobId) -> String {
    format!("{JOB_STREAM_PREFIX}{id}")
}

/// The stream holding one glossary's history: `glossary-<id>`.
pub fn glossary_stream(id: &GlossaryId) -> String {
    format!("{GLOSSARY_STREAM_PREFIX}{id}")
}

/// The stream holding one account's history: `account-<userName>`.
pub fn account_stream(user: &UserName) -> String {
    format!("{ACCOUNT_STREAM_PREFIX}{user}")
}

/// The job id of a job stream name, or `None` if `stream` is not a job stream.
pub fn job_id_of_stream(stream: &str) -> Option<JobId> {
    stream.strip_prefix(JOB_STREAM_PREFIX).and_then(|id| JobId::parse(id).ok())
}

/// The account of an account stream name, or `None` if `stream` is not an account stream.
pub fn user_of_account_stream(stream: &str) -> Option<UserName> {
    stream.strip_prefix(ACCOUNT_STREAM_PREFIX).and_then(|user| UserName::parse(user).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_accept_uuids_and_reject_unsafe_text() {
        assert!(JobId::parse("0192f6a4-7c1e-7d2a-9a55-2b3c4d5e6f70").is_ok());
        assert_eq!(JobId::parse("").unwrap_err().message, "jobId is required");
        assert!(JobId::parse("a/b").is_err());
        assert!(JobId::parse("a b").is_err());
        assert!(JobId::parse(&"x".repeat(64)).is_ok());
        assert!(JobId::parse(&"x".repeat(65)).is_err());
        assert!(UserName::parse("ann.lee@example.org").is_ok());
        assert!(GlossaryId::parse("g@1").is_err());
    }

    #[test]
    fn stream_names_give_back_their_ids() {
        let user = UserName::parse("ann.lee@example.org").unwrap();
        assert_eq!(user_of_account_stream(&account_stream(&user)), Some(user));
        assert_eq!(user_of_account_stream("job-123"), None);
        let job = JobId::parse("0192f6a4-7c1e-7d2a-9a55-2b3c4d5e6f70").unwrap();
        assert_eq!(job_id_of_stream(&job_stream(&job)), Some(job));
    }

    #[test]
    fn stream_names_round_trip() {
        let id = JobId::parse("abc-1").unwrap();
        assert_eq!(job_stream(&id), "job-abc-1");
        assert_eq!(job_id_of_stream("job-abc-1"), Some(id));
        assert_eq!(job_id_of_stream("glossary-abc"), None);
        assert_eq!(account_stream(&UserName::parse("ann").unwrap()), "account-ann");
        assert_eq!(glossary_stream(&GlossaryId::parse("g1").unwrap()), "glossary-g1");
    }
}
