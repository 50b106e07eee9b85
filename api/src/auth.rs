//! Who is calling: the API key, in the `apiKey` query parameter or as a Bearer token
//! (`Authorization: Bearer <key>`, what generated clients send), looked up by its SHA-256 hash in
//! the account read model (keys are never stored in clear), then the per-key rate limit. Both
//! ways are one key: the same accounts, roles, rate limits and failed-key limits. A request that
//! carries both with different keys is refused (400), not resolved by a preference.
//!
//! Guessing keys is limited per client address ([`FailedAuthLimits`]): every unknown key spends
//! from the address's budget, and once it is spent the address gets 429 with `Retry-After`,
//! for unknown keys and for keys it has not used successfully before, so a key guessed while
//! blocked is not revealed. Keys that already worked from that address keep working.
//! The address is the TCP peer: `X-Forwarded-For` and `Forwarded` are not trusted (any client can
//! write them). Behind a reverse proxy every client shares the proxy's budget. IPv6 clients are
//! counted by their /64 network, which one host usually holds whole.
//!
//! The key itself is never logged: only its hash is kept, and nothing here writes it anywhere.
//!
//! The same [`hash_api_key`] must be used wherever a key is issued (`scribe keys create`).
//!
//! [`Keys`] is the one check every door makes (the HTTP operations, the OpenAI door, the live
//! door's INIT): one lookup, one budget of failed keys per address, one rate limit per key. Each
//! door only turns its [`KeyRefusal`] into its protocol's answer. A key issued by another process
//! (`scribe keys create` beside a running server) is in the event store before the command
//! prints it; a key the read models do not know yet is looked up again once they have caught
//! up with the store's head, so it works at once.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use poem::http::header;
use poem::{Request, RequestBody};
use poem_openapi::payload::Json;
use poem_openapi::registry::{MetaSecurityScheme, Registry};
use poem_openapi::{ApiExtractor, ApiExtractorType, ExtractParamOptions};
use scribe_domain::ids::UserName;
use scribe_domain::kinds::Role;
use scribe_eventstore::EventStore;
use scribe_projections::{Account, ReadModels};

pub use crate::error::key_required;
use crate::error::{ApiError, ErrorBody, ErrorCode};
use crate::state::ApiSettings;

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

/// The name of the query parameter that carries the key.
pub const API_KEY_PARAM: &str = "apiKey";
/// The security schemes of the OpenAPI document: the key in the query, or as a Bearer token.
/// Every secured operation accepts either.
pub const API_KEY_SCHEME: &str = "ApiKeyAuth";
pub const BEARER_SCHEME: &str = "BearerAuth";

/// The API key of a customer account. A staff key is refused with 403.
pub struct ApiKeyAuth(pub Caller);

/// The API key of a staff account (transcriber or translator). A customer key is refused with
/// 403.
pub struct StaffKeyAuth(pub Caller);

/// Any valid API key, customer or staff (`GET /me`).
pub struct AnyKeyAuth(pub Caller);

/// Declares both schemes; each extractor below checks whichever the request used.
fn register_schemes(registry: &mut Registry) {
    registry.create_security_scheme(
        API_KEY_SCHEME,
        MetaSecurityScheme {
            ty: "apiKey",
            description: Some("Your API key in the `apiKey` query parameter."),
            name: Some(API_KEY_PARAM),
            key_in: Some("query"),
            scheme: None,
            bearer_format: None,
            flows: None,
            openid_connect_url: None,
        },
    );
    registry.create_security_scheme(
        BEARER_SCHEME,
        MetaSecurityScheme {
            ty: "http",
            description: Some(
                "The same API key as a Bearer token: `Authorization: Bearer <key>`. Given with a \
                 different `apiKey` in the query, the request is refused (400).",
            ),
            name: None,
            key_in: None,
            scheme: Some("bearer"),
            bearer_format: Some("API key"),
            flows: None,
            openid_connect_url: None,
        },
    );
}

/// An extractor of the caller that accepts either scheme and applies `$check` to the account.
macro_rules! key_extractor {
    ($name:ident, $check:path) => {
        impl<'a> ApiExtractor<'a> for $name {
            const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::SecurityScheme];
            type ParamType = ();
            type ParamRawType = ();

            fn register(registry: &mut Registry) {
                register_schemes(registry);
            }

            fn security_schemes() -> Vec<&'static str> {
                vec![API_KEY_SCHEME, BEARER_SCHEME]
            }

            async fn from_request(
                req: &'a Request,
                _body: &mut RequestBody,
                _: ExtractParamOptions<()>,
            ) -> poem::Result<Self> {
                Ok($name($check(req).await?))
            }
        }
    };
}

key_extractor!(ApiKeyAuth, check_customer_key);
key_extractor!(StaffKeyAuth, check_staff_key);
key_extractor!(AnyKeyAuth, check_key);

/// Where a request's key came from, for the field its refusals name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySource {
    /// The `apiKey` query parameter.
    Query,
    /// `Authorization: Bearer <key>`.
    Bearer,
}

impl KeySource {
    /// The parameter a refusal names: `apiKey`, or the `Authorization` header.
    pub fn field(self) -> &'static str {
        match self {
            KeySource::Query => API_KEY_PARAM,
            KeySource::Bearer => "Authorization",
        }
    }
}

/// The key a request presents and where it came from: the `apiKey` query parameter or a Bearer
/// `Authorization` header (another scheme, such as Basic added by a proxy, is not a key).
/// `None` when neither is given; a blank key is returned as given (empty), for the caller to
/// count as a failed authentication. 400 when both carry keys and they differ, or when the
/// header is given twice.
pub fn presented_key(req: &Request) -> Result<Option<(String, KeySource)>, ApiError> {
    let query = req.uri().query().and_then(|q| {
        url::form_urlencoded::parse(q.as_bytes()).find(|(k, _)| k == API_KEY_PARAM).map(|(_, v)| v.trim().to_owned())
    });
    let mut headers = req.headers().get_all(header::AUTHORIZATION).iter();
    let first = headers.next();
    if headers.next().is_some() {
        return Err(ApiError::invalid("Authorization", "The Authorization header is given twice; send it once"));
    }
    let bearer = match first {
        None => None,
        Some(value) => {
            let value = value
                .to_str()
                .map_err(|_| ApiError::invalid("Authorization", "The Authorization header is not readable text"))?;
            let value = value.trim();
            let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim().to_owned())
        }
    };
    Ok(match (query, bearer) {
        (Some(q), Some(b)) if !q.is_empty() && !b.is_empty() && q != b => {
            return Err(ApiError::invalid(
                API_KEY_PARAM,
                "The apiKey query parameter and the Authorization Bearer token are different keys; send one key, once",
            ));
        }
        (Some(q), Some(b)) if q.is_empty() => Some((b, KeySource::Bearer)),
        (Some(q), _) => Some((q, KeySource::Query)),
        (None, Some(b)) => Some((b, KeySource::Bearer)),
        (None, None) => None,
    })
}

/// The refusal of an unknown or revoked key, naming where it was given.
pub fn key_not_valid(source: KeySource) -> ApiError {
    let message = match source {
        KeySource::Query => "The apiKey is not valid (unknown or revoked)",
        KeySource::Bearer => "The API key in the Authorization Bearer token is not valid (unknown or revoked)",
    };
    ApiError::new(poem::http::StatusCode::UNAUTHORIZED, message, Some(source.field().to_owned()))
}

/// Keys are stored and looked up by the hash that `scribe keys create` records.
pub use scribe_actors::accounts::hash_api_key;

/// How long a key the read models do not know waits for them to catch up with the store.
const CATCH_UP_WAIT: Duration = Duration::from_secs(2);

/// Why a door refuses a key, before it says so in its protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyRefusal {
    /// No key, or a blank one.
    Missing,
    /// A key no account holds (unknown or revoked).
    NotValid,
    /// The address has spent its budget of failed keys, and this key has not worked from it
    /// before: retry after this many seconds.
    AddressBlocked(u64),
    /// The key has used its request quota: retry after this many seconds.
    RateLimited(u64),
    /// The lookup failed.
    Unavailable(String),
}

/// The key check every door shares (see the module's comment).
pub struct Keys {
    read: ReadModels,
    store: Arc<dyn EventStore>,
    limits: RateLimits,
    failures: FailedAuthLimits,
}

impl Keys {
    pub fn new(read: ReadModels, store: Arc<dyn EventStore>, settings: &ApiSettings) -> Keys {
        Keys { read, store, limits: RateLimits::new(settings), failures: FailedAuthLimits::new(settings) }
    }

    /// The account `key` opens for a caller at `client`. A missing or unknown key spends from
    /// the address's budget; a valid key is refused while the address is over it unless it
    /// worked from there before. `metered`: the call is a request against the key's rate limit
    /// (the edge's early check is not; the operation's is).
    pub async fn authenticate(&self, client: IpAddr, key: &str, metered: bool) -> Result<Account, KeyRefusal> {
        let key = key.trim();
        if key.is_empty() {
            self.failures.failed(client).map_err(KeyRefusal::AddressBlocked)?;
            return Err(KeyRefusal::Missing);
        }
        let hash = hash_api_key(key);
        let Some(account) = self.lookup(&hash).await? else {
            self.failures.failed(client).map_err(KeyRefusal::AddressBlocked)?;
            return Err(KeyRefusal::NotValid);
        };
        self.failures.admit(client, &hash).map_err(KeyRefusal::AddressBlocked)?;
        if metered {
            self.limits.check(&hash).map_err(KeyRefusal::RateLimited)?;
        }
        Ok(account)
    }

    /// [`Keys::authenticate`] for an HTTP request: the key it presents (`apiKey` or Bearer),
    /// refused in HTTP's words. No key at all guesses nothing; a blank one counts as a failed
    /// attempt.
    pub async fn authenticate_request(&self, req: &Request, metered: bool) -> Result<Account, ApiError> {
        let Some((key, source)) = presented_key(req)? else { return Err(key_required()) };
        self.authenticate(client_address(req), &key, metered).await.map_err(|r| refusal(r, source))
    }

    /// The account holding the key with this hash; when the read models do not know it, once
    /// more once they have caught up with the store's head.
    async fn lookup(&self, hash: &str) -> Result<Option<Account>, KeyRefusal> {
        let unavailable = |e: &dyn std::fmt::Display| KeyRefusal::Unavailable(e.to_string());
        if let Some(account) = self.read.account_by_key_hash(hash).map_err(|e| unavailable(&e))? {
            return Ok(Some(account));
        }
        // Looked up again even when the read models are at the head already: they may have
        // reached it since the first lookup.
        let head = self.store.head_position().await.map_err(|e| unavailable(&e))?;
        if self.read.position() < head && !self.read.wait_for(head, CATCH_UP_WAIT).await {
            return Ok(None);
        }
        self.read.account_by_key_hash(hash).map_err(|e| unavailable(&e))
    }
}

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

/// How long a key that worked from an address stays exempt from that address's block.
const KNOWN_GOOD_FOR: Duration = Duration::from_secs(24 * 3600);
/// Entries kept per map before expired ones are swept out.
const SWEEP_ABOVE: usize = 10_000;

/// Failed authentications allowed per client address.
pub struct FailedAuthLimits {
    limiter: DefaultKeyedRateLimiter<IpAddr>,
    clock: DefaultClock,
    /// Addresses over their budget, until when.
    blocked: Mutex<HashMap<IpAddr, Instant>>,
    /// (address, key hash) pairs that authenticated, and when they last did.
    known_good: Mutex<HashMap<(IpAddr, String), Instant>>,
}

impl FailedAuthLimits {
    pub fn new(settings: &ApiSettings) -> FailedAuthLimits {
        let quota = Quota::per_minute(settings.auth_failures_per_minute).allow_burst(settings.auth_failures_burst);
        FailedAuthLimits {
            limiter: RateLimiter::keyed(quota),
            clock: DefaultClock::default(),
            blocked: Mutex::new(HashMap::new()),
            known_good: Mutex::new(HashMap::new()),
        }
    }

    /// Records a failed authentication from `client`; `Err(seconds to wait)` once its budget is spent.
    pub fn failed(&self, client: IpAddr) -> Result<(), u64> {
        self.limiter.check_key(&client).map_err(|not_until| {
            let wait = not_until.wait_time_from(self.clock.now());
            let mut blocked = self.blocked.lock().expect("the blocked map is never poisoned");
            let now = Instant::now();
            if blocked.len() > SWEEP_ABOVE {
                blocked.retain(|_, until| *until > now);
            }
            blocked.insert(client, now + wait);
            whole_seconds(wait)
        })
    }

    /// Whether a valid key from `client` may pass: `Err(seconds to wait)` while the address is
    /// blocked and the key has not worked from it before.
    pub fn admit(&self, client: IpAddr, key_hash: &str) -> Result<(), u64> {
        let now = Instant::now();
        let pair = (client, key_hash.to_owned());
        let mut known_good = self.known_good.lock().expect("the known-good map is never poisoned");
        let known = known_good.get(&pair).is_some_and(|at| now.duration_since(*at) < KNOWN_GOOD_FOR);
        if !known {
            let blocked_until = self.blocked.lock().expect("the blocked map is never poisoned").get(&client).copied();
            if let Some(until) = blocked_until.filter(|until| *until > now) {
                return Err(whole_seconds(until - now));
            }
        }
        if known_good.len() > SWEEP_ABOVE {
            known_good.retain(|_, at| now.duration_since(*at) < KNOWN_GOOD_FOR);
        }
        known_good.insert(pair, now);
        Ok(())
    }
}

fn whole_seconds(wait: Duration) -> u64 {
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
}

/// The address a request is counted under: the TCP peer (never a forwarding header), IPv6 by
/// its /64. Requests without a socket peer (in-process tests) share the unspecified address.
pub fn client_address(req: &Request) -> IpAddr {
    match req.remote_addr().as_socket_addr().map(|a| a.ip()) {
        Some(IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
        Some(v4) => v4,
        None => IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED),
    }
}

/// 429 for an address that sent too many unknown keys.
pub(crate) fn too_many_failures(retry_after_s: u64) -> ApiError {
    let body = ErrorBody {
        status: 429,
        error: ErrorCode::RateLimited,
        message: format!(
            "Too many requests with an invalid apiKey from your address; retry in {retry_after_s} s with a valid key"
        ),
        field: Some("apiKey".to_owned()),
    };
    ApiError::TooManyRequests(Json(body), retry_after_s)
}

async fn check_customer_key(req: &Request) -> poem::Result<Caller> {
    let caller = check_key(req).await?;
    if caller.role.is_staff() {
        return Err(ApiError::new(
            poem::http::StatusCode::FORBIDDEN,
            format!(
                "This is a {} key: customer endpoints need a customer key (staff work under /api/work)",
                caller.role
            ),
            Some("apiKey".to_owned()),
        )
        .into());
    }
    Ok(caller)
}

async fn check_staff_key(req: &Request) -> poem::Result<Caller> {
    let caller = check_key(req).await?;
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

async fn check_key(req: &Request) -> poem::Result<Caller> {
    let keys = req.data::<Arc<Keys>>().expect("Keys are attached to every request");
    let account = keys.authenticate_request(req, true).await?;
    Ok(Caller {
        user: account.user_name,
        balance_cents: account.balance_cents,
        role: account.role,
        languages: account.languages,
    })
}

/// A refused key as the HTTP answer: 401, 429 with `Retry-After`, or 503.
fn refusal(refusal: KeyRefusal, source: KeySource) -> ApiError {
    match refusal {
        KeyRefusal::Missing => key_required(),
        KeyRefusal::NotValid => key_not_valid(source),
        KeyRefusal::AddressBlocked(seconds) => too_many_failures(seconds),
        KeyRefusal::RateLimited(seconds) => ApiError::rate_limited(seconds),
        KeyRefusal::Unavailable(e) => ApiError::unavailable(format!("Checking the apiKey failed ({e}); retry shortly")),
    }
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

    #[test]
    fn an_address_that_guesses_is_blocked_but_keeps_its_working_keys() {
        let settings = ApiSettings {
            auth_failures_per_minute: NonZeroU32::new(1).unwrap(),
            auth_failures_burst: NonZeroU32::new(3).unwrap(),
            ..ApiSettings::default()
        };
        let failures = FailedAuthLimits::new(&settings);
        let guesser: IpAddr = "203.0.113.7".parse().unwrap();
        let other: IpAddr = "198.51.100.1".parse().unwrap();
        assert!(failures.admit(guesser, "good").is_ok(), "a key that works before the block");
        for _ in 0..3 {
            assert!(failures.failed(guesser).is_ok());
        }
        let wait = failures.failed(guesser).unwrap_err();
        assert!((1..=60).contains(&wait), "retry after {wait} s");
        assert!(failures.admit(guesser, "good").is_ok(), "a key known from this address still works");
        assert!(failures.admit(guesser, "guessed").is_err(), "a key first seen while blocked is not revealed");
        assert!(failures.admit(other, "guessed").is_ok(), "addresses are limited separately");
        assert!(failures.failed(other).is_ok());
    }
}
