//! One callback delivery: a signed POST to a vetted address, and what came of it.
//!
//! The URL passes the [`AddressGuard`] on every attempt (DNS may change between retries) and the
//! connection is pinned to the addresses it vetted. Redirects are not followed: a 3xx is a failed
//! attempt like any other non-2xx answer, so a receiver cannot bounce us into a private network.

use std::time::Duration;

use reqwest::header::CONTENT_TYPE;
use scribe_domain::job::CallbackOutcome;
use url::Url;

use super::signing::WebhookSecret;
use crate::media::{AddressGuard, GuardError};

/// A signed callback, ready to send.
pub struct Message<'a> {
    pub url: &'a Url,
    /// The `webhook-id` header.
    pub id: &'a str,
    /// Unix seconds, the `webhook-timestamp` header.
    pub timestamp: u64,
    /// The JSON payload, exactly as signed.
    pub body: Vec<u8>,
    pub secret: &'a WebhookSecret,
}

/// Sends `message` once and says what happened, in words fit for the job's audit log.
pub async fn send(guard: &AddressGuard, timeout: Duration, message: Message<'_>) -> CallbackOutcome {
    let vetted = match guard.check(message.url).await {
        Ok(v) => v,
        Err(e @ GuardError::Unresolvable { .. }) => return CallbackOutcome::Error(format!("not sent: {e}")),
        Err(e) => return CallbackOutcome::Error(format!("not sent, the callbackUrl is refused: {e}")),
    };
    let mut client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout)
        .no_proxy() // a proxy would connect wherever it likes, bypassing the guard
        .user_agent(concat!("Scribe-Webhooks/", env!("CARGO_PKG_VERSION")));
    if let Some(addrs) = &vetted.resolved {
        client = client.resolve_to_addrs(&vetted.host, addrs);
    }
    let client = match client.build() {
        Ok(c) => c,
        Err(e) => {
            return CallbackOutcome::Error(format!("not sent, the HTTP client could not start: {}", root_cause(&e)));
        }
    };
    let signature = message.secret.sign(message.id, message.timestamp, &message.body);
    let sent = client
        .post(message.url.clone())
        .header(CONTENT_TYPE, "application/json")
        .header("webhook-id", message.id)
        .header("webhook-timestamp", message.timestamp.to_string())
        .header("webhook-signature", signature)
        .body(message.body)
        .send()
        .await;
    match sent {
        Ok(response) => CallbackOutcome::Status(response.status().as_u16()),
        Err(e) if e.is_timeout() => {
            CallbackOutcome::Error(format!("{} did not answer within {} s", vetted.host, timeout.as_secs_f32()))
        }
        Err(e) if e.is_connect() => {
            CallbackOutcome::Error(format!("could not connect to {}: {}", vetted.host, root_cause(&e)))
        }
        Err(e) => CallbackOutcome::Error(format!("the request to {} failed: {}", vetted.host, root_cause(&e))),
    }
}

/// The innermost error message (reqwest's outer ones only say "error sending request").
fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}
