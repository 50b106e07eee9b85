//! The one error type of request validation. Every rule in `requests`, `ids` and `languages`
//! reports through it, so the API edge can turn any of them into the spec's 400 body
//! (`{"status": 400, "error": "INVALID_PARAMETER", "message": ..., "field": ...}`) without guessing.

use std::fmt;

/// A request parameter broke a rule of the API contract.
///
/// `field` is the parameter's name as the client spelled it (`numberOfSpeakers`, `items[3].name`);
/// `message` is a full sentence for a person that names the parameter and the bound it broke,
/// for example `numberOfSpeakers must be between 0 and 5`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ValidationError {
    pub field: String,
    pub message: String,
}

impl ValidationError {
    /// An error about `field`, with a message already naming it.
    pub fn new(field: impl Into<String>, message: impl fmt::Display) -> Self {
        ValidationError { field: field.into(), message: message.to_string() }
    }

    /// `<field> is required`.
    pub fn required(field: &str) -> Self {
        ValidationError::new(field, format!("{field} is required"))
    }

    /// `<field> must be one of: a, b, c` (the allowed values, in the spec's order).
    pub fn one_of<'a>(field: &str, allowed: impl IntoIterator<Item = &'a str>) -> Self {
        let allowed: Vec<&str> = allowed.into_iter().collect();
        ValidationError::new(field, format!("{field} must be one of: {}", allowed.join(", ")))
    }
}
