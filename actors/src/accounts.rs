//! Account administration: API keys (made here, stored only as hashes), the webhook signing
//! secret, and balance credits. Used by `scribe keys create`, `scribe balance credit`, and by the
//! first start of `scribe serve`, which opens an account when the store is empty.

use rand::RngCore;
use scribe_domain::account::{AccountAggregate, AccountCommand, AccountRefusal};
use scribe_domain::ids::{UserName, account_stream};
use scribe_domain::kinds::Role;
use scribe_eventstore::EventStore;
use sha2::{Digest, Sha256};

use crate::clock::now_ms;
use crate::command::{self, CommandError};

/// The user name of the account a fresh server opens.
pub const FIRST_USER: &str = "admin";

/// Balance credited to a new account, in cents (Scribe is self-hosted: the operator decides what
/// a cent means; with the default prices this is 10 000 minutes of direct transcription).
pub const DEFAULT_INITIAL_CREDIT_CENTS: u64 = 100_000;

/// A key as shown once to the operator.
#[derive(Debug, Clone)]
pub struct IssuedKey {
    pub user_name: UserName,
    pub key_id: String,
    /// The plaintext key; only its hash is stored.
    pub api_key: String,
    /// The account's callback signing secret (`whsec_` + base64 of the HMAC key).
    pub webhook_secret: String,
    /// Whether this call opened the account.
    pub opened: bool,
}

pub type AccountError = CommandError<AccountRefusal>;

/// The hash under which a key is stored and looked up: lowercase hex SHA-256 of the key.
pub fn hash_api_key(api_key: &str) -> String {
    hex::encode(Sha256::digest(api_key.as_bytes()))
}

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    rand::rng().fill_bytes(&mut bytes);
    bytes
}

/// A new webhook secret in the Standard Webhooks format: `whsec_` + base64 of 32 random bytes.
pub fn new_webhook_secret() -> String {
    use base64::Engine;
    format!("whsec_{}", base64::engine::general_purpose::STANDARD.encode(random_bytes::<32>()))
}

/// What kind of account a key is for: a customer, or a staff member with their languages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccountKind {
    pub role: Role,
    /// Languages a staff member works in (empty: all).
    pub languages: Vec<String>,
}

/// Issues a new key for `user`, opening the account (as `kind`, with `initial_credit_cents`)
/// if it does not exist yet. An existing account keeps its role: asking for another one is an
/// error that says which role it has.
pub async fn create_key(
    store: &dyn EventStore,
    user: &UserName,
    kind: &AccountKind,
    initial_credit_cents: u64,
) -> Result<IssuedKey, AccountError> {
    let stream = account_stream(user);
    let existing = command::load::<AccountAggregate>(store, &stream).await?;
    let opened = existing.version.is_none();
    if !opened && existing.state.role != kind.role {
        return Err(CommandError::Refused(AccountRefusal::RoleMismatch {
            existing: existing.state.role,
            asked: kind.role,
        }));
    }
    if opened {
        let open = AccountCommand::Open {
            user_name: user.clone(),
            webhook_secret: new_webhook_secret(),
            role: kind.role,
            languages: kind.languages.clone(),
            at_ms: now_ms(),
        };
        command::execute::<AccountAggregate>(store, &stream, open).await?;
        if initial_credit_cents > 0 {
            let credit = AccountCommand::Credit {
                cents: initial_credit_cents,
                reason: "initial credit".into(),
                at_ms: now_ms(),
            };
            command::execute::<AccountAggregate>(store, &stream, credit).await?;
        }
    }
    let api_key = format!("sk_{}", hex::encode(random_bytes::<24>()));
    let key_id = hex::encode(random_bytes::<6>());
    let issue = AccountCommand::IssueKey { key_id: key_id.clone(), key_hash: hash_api_key(&api_key), at_ms: now_ms() };
    let done = command::execute::<AccountAggregate>(store, &stream, issue).await?;
    Ok(IssuedKey {
        user_name: user.clone(),
        key_id,
        api_key,
        webhook_secret: done.state.webhook_secret.clone(),
        opened,
    })
}

/// Credits `cents` to `user`'s balance; returns the new balance.
pub async fn credit(store: &dyn EventStore, user: &UserName, cents: u64, reason: &str) -> Result<u64, AccountError> {
    let cmd = AccountCommand::Credit { cents, reason: reason.to_owned(), at_ms: now_ms() };
    let done = command::execute::<AccountAggregate>(store, &account_stream(user), cmd).await?;
    Ok(done.state.balance_cents)
}

/// On a store with no events at all, opens the first account and returns its key (to be printed
/// once); otherwise `None`.
pub async fn first_start(store: &dyn EventStore, initial_credit_cents: u64) -> Result<Option<IssuedKey>, AccountError> {
    if store.head_position().await? > 0 {
        return Ok(None);
    }
    let user = UserName::parse(FIRST_USER).expect("a valid user name");
    create_key(store, &user, &AccountKind::default(), initial_credit_cents).await.map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_hash_is_sha256_hex() {
        assert_eq!(hash_api_key("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn webhook_secrets_are_fresh_and_standard_webhooks_shaped() {
        let a = new_webhook_secret();
        assert!(a.starts_with("whsec_"));
        assert_ne!(a, new_webhook_secret());
    }
}
