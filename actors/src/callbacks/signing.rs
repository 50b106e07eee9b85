//! Signing callback deliveries the Standard Webhooks way (<https://www.standardwebhooks.com>),
//! so a receiver can tell a genuine Scribe callback from a forged one.
//!
//! # The secret
//!
//! Every account gets a webhook secret when it is opened (shown by `scribe keys`). It is written
//! the way Standard Webhooks writes secrets: `whsec_` followed by the standard base64 (with
//! padding) of 32 random bytes, for example `whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw3VfbfEp5ZbE=`.
//! **The HMAC key is the base64-decoded bytes after `whsec_`**, not the text itself; this is
//! exactly what the Standard Webhooks libraries (`standardwebhooks` for Python, JavaScript, Go,
//! Rust, ...) do with such a secret, so receivers can use them as they are.
//!
//! # The signature
//!
//! Each delivery carries three headers:
//!
//! - `webhook-id`: the same for every retry of one job's final status (`msg_<jobId>_<STATUS>`);
//!   keep the ids you have processed for a few days and drop repeats.
//! - `webhook-timestamp`: when this attempt was sent, in Unix seconds.
//! - `webhook-signature`: `v1,` followed by base64(HMAC-SHA256(key, `{id}.{timestamp}.{body}`)),
//!   where `body` is the raw request body, byte for byte.
//!
//! A receiver verifies, before parsing the JSON (Python):
//!
//! ```text
//! key = base64.b64decode(secret.removeprefix("whsec_"))
//! signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + raw_body
//! expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
//! ok = any(hmac.compare_digest(expected, s) for s in headers["webhook-signature"].split())
//! ok = ok and abs(time.time() - int(headers["webhook-timestamp"])) < 300
//! ```
//!
//! (or `standardwebhooks.Webhook(secret).verify(raw_body, headers)`).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{Hmac, KeyInit, Mac};
use rand::RngCore;
use sha2::Sha256;

/// What a Standard Webhooks secret starts with.
pub const SECRET_PREFIX: &str = "whsec_";

/// Random bytes in a new secret.
const NEW_SECRET_BYTES: usize = 32;

/// Key lengths Standard Webhooks allows (24 to 64 bytes).
const KEY_BYTES: std::ops::RangeInclusive<usize> = 24..=64;

/// Why an account's webhook secret cannot sign.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error("the account has no webhook secret")]
    Missing,
    #[error("the account's webhook secret is not `whsec_` followed by base64")]
    NotBase64,
    #[error("the account's webhook secret is {0} bytes long; it must be 24 to 64 bytes")]
    BadLength(usize),
}

/// An account's webhook secret, decoded to the HMAC key it stands for.
#[derive(Clone)]
pub struct WebhookSecret {
    key: Vec<u8>,
}

impl std::fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebhookSecret(..)")
    }
}

impl WebhookSecret {
    /// A new random secret in its written form (`whsec_` + base64 of 32 bytes), for a new account.
    pub fn generate() -> String {
        let mut key = [0u8; NEW_SECRET_BYTES];
        rand::rng().fill_bytes(&mut key);
        format!("{SECRET_PREFIX}{}", BASE64.encode(key))
    }

    /// Reads a written secret. The `whsec_` prefix may be left out, as the Standard Webhooks
    /// libraries allow.
    pub fn parse(text: &str) -> Result<WebhookSecret, SecretError> {
        let text = text.trim();
        let encoded = text.strip_prefix(SECRET_PREFIX).unwrap_or(text);
        if encoded.is_empty() {
            return Err(SecretError::Missing);
        }
        let key = BASE64.decode(encoded).map_err(|_| SecretError::NotBase64)?;
        if !KEY_BYTES.contains(&key.len()) {
            return Err(SecretError::BadLength(key.len()));
        }
        Ok(WebhookSecret { key })
    }

    /// The `webhook-signature` header value for one delivery: `v1,<base64 HMAC-SHA256>` of
    /// `{message_id}.{timestamp}.{body}`.
    pub fn sign(&self, message_id: &str, timestamp: u64, body: &[u8]) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes keys of any length");
        mac.update(message_id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("v1,{}", BASE64.encode(mac.finalize().into_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the Standard Webhooks specification (and of its reference libraries).
    #[test]
    fn signs_the_standard_webhooks_example() {
        let secret = WebhookSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            secret.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn generated_secrets_parse_and_differ() {
        let (a, b) = (WebhookSecret::generate(), WebhookSecret::generate());
        assert!(a.starts_with(SECRET_PREFIX) && a != b);
        assert_eq!(WebhookSecret::parse(&a).unwrap().key.len(), NEW_SECRET_BYTES);
    }

    #[test]
    fn unusable_secrets_are_refused() {
        assert_eq!(WebhookSecret::parse("").unwrap_err(), SecretError::Missing);
        assert_eq!(WebhookSecret::parse("whsec_").unwrap_err(), SecretError::Missing);
        assert_eq!(WebhookSecret::parse("whsec_not base64!").unwrap_err(), SecretError::NotBase64);
        assert_eq!(WebhookSecret::parse("whsec_c2hvcnQ=").unwrap_err(), SecretError::BadLength(5));
        // Without the prefix the rest is still read as base64.
        assert!(WebhookSecret::parse("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").is_ok());
    }
}
