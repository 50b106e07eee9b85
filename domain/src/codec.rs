//! How events are stored: one JSON object `{"type": "<EventType>", "v": <version>, ...fields}`.
//!
//! Writing always uses the current version of each event type. Reading looks at `v` first and
//! upcasts older shapes in one place, the `decode` of each event enum: an old version is a
//! frozen struct (`JobSubmittedV1`) deserialized and converted with `From` into the current
//! event. A version this code does not know is an error naming the type and version, never a
//! panic and never a silent guess: it means the store was written by a newer Scribe.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// An event that can be written to and read back from a stream.
pub trait VersionedEvent: Sized {
    /// The event's type name, as stored in `"type"` (for example `JobSubmitted`).
    fn event_type(&self) -> &'static str;

    /// The stored JSON object, with `"type"` and the current `"v"`.
    fn encode(&self) -> Value;

    /// Reads a stored JSON object back, upcasting older versions.
    fn decode(stored: &Value) -> Result<Self, DecodeError>;
}

/// A stored event could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("stored event is not a JSON object with a string \"type\" and an integer \"v\"")]
    MissingHeader,
    #[error(
        "stored event {event_type} has version {version}, which this version of Scribe does not know (written by a newer release?)"
    )]
    UnknownVersion { event_type: String, version: u64 },
    #[error("stored event {event_type} v{version} does not match its schema: {source}")]
    Invalid {
        event_type: String,
        version: u64,
        #[source]
        source: serde_json::Error,
    },
}

/// The `"type"` and `"v"` of a stored event.
pub fn header(stored: &Value) -> Result<(&str, u64), DecodeError> {
    let ty = stored.get("type").and_then(Value::as_str);
    let v = stored.get("v").and_then(Value::as_u64);
    match (ty, v) {
        (Some(ty), Some(v)) => Ok((ty, v)),
        _ => Err(DecodeError::MissingHeader),
    }
}

/// Serializes an internally tagged (`#[serde(tag = "type")]`) event and adds `"v": version`.
pub(crate) fn encode_tagged<E: Serialize>(event: &E, version: u64) -> Value {
    let mut value = serde_json::to_value(event).expect("events serialize to JSON objects");
    if let Value::Object(map) = &mut value {
        map.insert("v".to_owned(), Value::from(version));
    }
    value
}

/// Deserializes a stored object in the shape `T` (the current enum, or a frozen old version).
pub(crate) fn decode_as<T: DeserializeOwned>(stored: &Value) -> Result<T, DecodeError> {
    let (ty, v) = header(stored)?;
    T::deserialize(stored).map_err(|source| DecodeError::Invalid { event_type: ty.to_owned(), version: v, source })
}

/// The error for a version with no reading rule.
pub(crate) fn unknown_version(stored: &Value) -> DecodeError {
    match header(stored) {
        Ok((ty, v)) => DecodeError::UnknownVersion { event_type: ty.to_owned(), version: v },
        Err(e) => e,
    }
}
