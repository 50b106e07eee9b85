//! The answers of the two lookups nearly every request makes — the account behind an API key,
//! and a job by id — kept in memory until the projection changes them.
//!
//! Why: profiling `scribe-bench status` put the two SQLite point queries (each a read
//! transaction with its file locks) at about 30% of the server's time on `GET /jobs/status`;
//! with them answered from memory the endpoint went from 0.33 to 0.57 of a bare poem handler.
//!
//! Coherence: after committing a batch, the projection calls [`ReadCache::invalidate`] with the
//! jobs and accounts the batch changed, before it publishes the new position. A reader that
//! queried SQLite keeps its answer only if no batch was committed meanwhile (the generation did
//! not move), so an answer read before a commit can never be stored after that commit's
//! invalidation. Only found records are kept, and each map is bounded.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use crate::read::{Account, JobRecord};

/// Most entries of each map; past it that map starts over.
const MAX_ENTRIES: usize = 10_000;

#[derive(Default)]
pub(crate) struct ReadCache {
    inner: Mutex<Maps>,
}

#[derive(Default)]
struct Maps {
    /// Batches committed (bumped by every invalidation).
    generation: u64,
    jobs: HashMap<String, JobRecord>,
    accounts_by_key_hash: HashMap<String, Account>,
}

/// What one committed batch changed.
#[derive(Debug, Default)]
pub(crate) struct Changes {
    pub(crate) job_ids: Vec<String>,
    pub(crate) user_names: Vec<String>,
}

impl ReadCache {
    /// The current generation: pass it to `keep_*` with an answer read after this call.
    pub(crate) fn generation(&self) -> u64 {
        self.maps().generation
    }

    pub(crate) fn job(&self, job_id: &str) -> Option<JobRecord> {
        self.maps().jobs.get(job_id).cloned()
    }

    pub(crate) fn keep_job(&self, generation: u64, job_id: &str, record: &JobRecord) {
        self.keep(generation, |maps| &mut maps.jobs, job_id, record);
    }

    pub(crate) fn account(&self, key_hash: &str) -> Option<Account> {
        self.maps().accounts_by_key_hash.get(key_hash).cloned()
    }

    pub(crate) fn keep_account(&self, generation: u64, key_hash: &str, account: &Account) {
        self.keep(generation, |maps| &mut maps.accounts_by_key_hash, key_hash, account);
    }

    /// Forgets what `changes` touched (an account's entries go under every key of it: a revoked
    /// key is forgotten with them).
    pub(crate) fn invalidate(&self, changes: &Changes) {
        let mut maps = self.maps();
        maps.generation += 1;
        for job_id in &changes.job_ids {
            maps.jobs.remove(job_id);
        }
        if !changes.user_names.is_empty() {
            let users: HashSet<&str> = changes.user_names.iter().map(String::as_str).collect();
            maps.accounts_by_key_hash.retain(|_, account| !users.contains(account.user_name.as_str()));
        }
    }

    /// Stores `value` in the map `pick` chooses, unless a batch was committed since `generation`.
    fn keep<V: Clone>(
        &self,
        generation: u64,
        pick: impl FnOnce(&mut Maps) -> &mut HashMap<String, V>,
        key: &str,
        value: &V,
    ) {
        let mut maps = self.maps();
        if maps.generation != generation {
            return;
        }
        let map = pick(&mut maps);
        if map.len() >= MAX_ENTRIES {
            map.clear();
        }
        map.insert(key.to_owned(), value.clone());
    }

    fn maps(&self) -> std::sync::MutexGuard<'_, Maps> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use scribe_domain::ids::UserName;

    use super::*;

    fn account(user: &str, balance_cents: u64) -> Account {
        Account {
            user_name: UserName::parse(user).unwrap(),
            balance_cents,
            webhook_secret: String::new(),
            created_ms: 0,
            role: Default::default(),
            languages: Vec::new(),
        }
    }

    #[test]
    fn an_answer_read_before_a_commit_is_not_kept_after_it() {
        let cache = ReadCache::default();
        let before = cache.generation();
        // The projection commits a change to alice while a reader's query is in flight.
        cache.invalidate(&Changes { job_ids: vec![], user_names: vec!["alice".into()] });
        cache.keep_account(before, "hash-a", &account("alice", 100));
        assert_eq!(cache.account("hash-a"), None);

        let now = cache.generation();
        cache.keep_account(now, "hash-a", &account("alice", 90));
        assert_eq!(cache.account("hash-a"), Some(account("alice", 90)));
    }

    #[test]
    fn a_change_forgets_every_key_of_the_account_and_only_those() {
        let cache = ReadCache::default();
        let generation = cache.generation();
        cache.keep_account(generation, "alice-1", &account("alice", 5));
        cache.keep_account(generation, "alice-2", &account("alice", 5));
        cache.keep_account(generation, "bob-1", &account("bob", 7));
        cache.invalidate(&Changes { job_ids: vec![], user_names: vec!["alice".into()] });
        assert_eq!(cache.account("alice-1"), None);
        assert_eq!(cache.account("alice-2"), None);
        assert_eq!(cache.account("bob-1"), Some(account("bob", 7)));
    }
}
