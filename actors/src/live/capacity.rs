//! How many live sessions may run: a bound for the server and one per account. A session holds
//! a [`Slot`] for its life; dropping it frees the place. Over the bound, a new session is refused
//! at once (close 1013, "try again later") instead of every session slowing down together.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use scribe_domain::ids::UserName;
use scribe_domain::live::{LiveError, LiveErrorCode};

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    per_account: HashMap<UserName, usize>,
}

/// The places of the server.
#[derive(Debug, Clone)]
pub struct Capacity {
    max_total: usize,
    max_per_account: usize,
    counts: Arc<Mutex<Counts>>,
}

/// One session's place; freed when dropped.
#[derive(Debug)]
pub struct Slot {
    owner: UserName,
    counts: Arc<Mutex<Counts>>,
}

impl Capacity {
    pub fn new(max_total: usize, max_per_account: usize) -> Capacity {
        Capacity { max_total, max_per_account, counts: Arc::default() }
    }

    /// A place for a session of `owner`, or the `CAPACITY` error that says which bound is full.
    pub fn acquire(&self, owner: &UserName) -> Result<Slot, LiveError> {
        let mut counts = self.counts.lock().expect("the capacity lock");
        if counts.total >= self.max_total {
            return Err(LiveError::new(
                LiveErrorCode::Capacity,
                format!("The server is running its maximum of {} live sessions; try again later", self.max_total),
            ));
        }
        let mine = counts.per_account.get(owner).copied().unwrap_or(0);
        if mine >= self.max_per_account {
            return Err(LiveError::new(
                LiveErrorCode::Capacity,
                format!(
                    "This account already runs its maximum of {} live sessions; end one or try again later",
                    self.max_per_account
                ),
            ));
        }
        counts.total += 1;
        *counts.per_account.entry(owner.clone()).or_default() += 1;
        Ok(Slot { owner: owner.clone(), counts: self.counts.clone() })
    }

    /// Sessions running now.
    pub fn running(&self) -> usize {
        self.counts.lock().expect("the capacity lock").total
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().expect("the capacity lock");
        counts.total -= 1;
        if let Some(n) = counts.per_account.get_mut(&self.owner) {
            *n -= 1;
            if *n == 0 {
                counts.per_account.remove(&self.owner);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn given_full_bounds_when_a_session_asks_then_it_is_refused_until_one_ends() {
        let capacity = Capacity::new(2, 1);
        let ann = UserName::parse("ann").unwrap();
        let bob = UserName::parse("bob").unwrap();
        let first = capacity.acquire(&ann).unwrap();
        assert!(capacity.acquire(&ann).unwrap_err().message.contains("account"));
        let _second = capacity.acquire(&bob).unwrap();
        let cid = UserName::parse("cid").unwrap();
        assert!(capacity.acquire(&cid).unwrap_err().message.contains("server"));
        drop(first);
        assert!(capacity.acquire(&cid).is_ok());
    }
}
