//! Who is calling: the `apiKey` query parameter, looked up by its SHA-256 hash in the account
//! read model (keys are never stored in clear), then the per-key rate limit.
//!
//! The same [`hash_api_key`] must be used wherever a key is issued (`scribe keys create`).

use std::sync::Arc;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use poem::Request;
use poem_openapi::SecurityScheme;
use poem_openapi::auth::ApiKey;
use scribe_domain::ids::UserName;
use scribe_domain::kinds::Role;

use crate::error::ApiError;
use crate::state::{ApiSettings, ApiState};

/// The authenticated account behind a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub user: UserName,
    /// Balance in cents when the request arrived (as the read model knows it).
    pub balance_cents: u64,
    pub role: Role,
    /// Languages a staff member works in (empty: all).
    pub languages: Vec<String>,
}

/// The API key of a customer account, in the `apiKey` query parameter. A staff key is refused
/// with 403.
#[derive(SecurityScheme)]
#[oai(ty = "api_key", key_name = "apiKey", key_in = "query", checker = "check_customer_key")]
pub struct ApiKeyAuth(pub Caller);

/// The API key of a staff account (transcriber or translator), in the `apiKey` query
/// parameter. A customer key is refused with 403.
#[derive(SecurityScheme)]
#[oai(ty = "api_key", key_name = "apiKey", key_in = "query", checker = "check_staff_key")]
pub struct StaffKeyAuth(pub Caller);

/// Any valid API key, customer or staff (`GET /me`).
#[derive(SecurityScheme)]
#[oai(ty = "api_key", key_name = "apiKey", key_in = "query", checker = "check_key")]
pub struct AnyKeyAuth(pub Caller);

/// Keys are stored and looked up by the hash that `scribe keys create` records.
pub use scribe_actors::accounts::hash_api_key;

/// Requests allowed per API key (keyed by the key's hash).
pub struct RateLimits {
    limiter: DefaultKeyedRateLimiter<String>,
    clock: DefaultClock,
}

impl RateLimits {
    pub fn new(settings: &ApiSettings) -> RateLimits {
        let quota = Quota::per_second(settings.rate_per_second).allow_burst(settings.rate_burst);
        RateLimits { limiter: RateLimiter::keyed(quota), clock: DefaultClock::default() }
    }

    /// `Err(seconds to wait)` when the key has used up its quota.
    pub fn check(&self, key_hash: &str) -> Result<(), u64> {
        self.limiter.check_key(&key_hash.to_owned()).map_err(|not_until| {
            let wait = not_until.wait_time_from(self.clock.now());
            wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
        })
    }
}

async fn check_customer_key(req: &Request, key: ApiKey) -> poem::Result<Caller> {
    let caller = check_key(req, key).await?;
    if caller.role.is_staff() {
        return Err(ApiError::new(
            poem::http::StatusCode::FORBIDDEN,
            format!("This is a {} key: customer endpoints need a customer key (staff work under /api/work)", caller.role),
            Some("apiKey".to_owned()),
        )
        .into());
    }
    Ok(caller)
}

async fn check_staff_key(req: &Request, key: ApiKey) -> poem::Result<Caller> {
    let caller = check_key(req, key).await?;
    if !caller.role.is_staff() {
        return Err(ApiError::new(
            poem::http::StatusCode::FORBIDDEN,
            "The work API is for transcribers and translators: this is a customer key",
            Some("apiKey".to_owned()),
        )
        .into());
    }
    Ok(caller)
}

async fn check_key(req: &Request, key: ApiKey) -> poem::Result<Caller> {
    let state = req.data::<Arc<ApiState>>().expect("ApiState is attached to every request");
    let limits = req.data::<Arc<RateLimits>>().expect("RateLimits are attached to every request");
    let key = key.key.trim();
    if key.is_empty() {
        return Err(ApiError::unauthorized("apiKey is required: pass your API key in the apiKey query parameter").into());
    }
    let hash = hash_api_key(key);
    let account = state
        .read
        .account_by_key_hash(&hash)
        .map_err(|e| ApiError::unavailable(format!("Checking the apiKey failed ({e}); retry shortly")))?;
    let Some(account) = account else {
        return Err(ApiError::unauthorized("The apiKey is not valid (unknown or revoked)").into());
    };
    limits.check(&hash).map_err(ApiError::rate_limited)?;
    Ok(Caller { user: account.user_name, balance_cents: account.balance_cents, role: account.role, languages: account.languages })
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;

    use super::*;

    #[test]
    fn keys_are_hashed_as_lowercase_hex_sha256() {
        assert_eq!(hash_api_key("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn a_key_past_its_burst_is_told_when_to_retry() {
        let settings = ApiSettings {
            rate_per_second: NonZeroU32::new(1).unwrap(),
            rate_burst: NonZeroU32::new(2).unwrap(),
            ..ApiSettings::default()
        };
        let limits = RateLimits::new(&settings);
        assert!(limits.check("a").is_ok());
        assert!(limits.check("a").is_ok());
        assert_eq!(limits.check("a"), Err(1));
        assert!(limits.check("b").is_ok(), "keys are limited separately");
    }
}
