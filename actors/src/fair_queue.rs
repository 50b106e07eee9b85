//! A work queue shared fairly between accounts, for the workers whose slots are scarce
//! (downloads, speech recognition): one account's many (or slow, or long) jobs must not make
//! every other account wait behind them.
//!
//! Each account has its own first-in-first-out line. When a slot frees, the next task comes from
//! the account with the fewest tasks running, and among those from the one served longest ago
//! (an account never served comes first; ties go to the account whose line formed first): a
//! round-robin between the accounts that have work waiting. An optional cap on the tasks one account may run at once keeps a slot free for
//! the others, so a newcomer starts at once instead of waiting for a slow task to end.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

/// Tasks of type `T` waiting per account `A`, and how many each account runs.
#[derive(Debug)]
pub struct FairQueue<A, T> {
    lines: HashMap<A, Line<T>>,
    /// Bumped at every start: an account's `last_started` says how long ago it was served.
    clock: u64,
    /// Bumped when an account's line forms: breaks ties in the order accounts came.
    arrivals: u64,
    /// Most tasks one account may run at once.
    per_account: usize,
}

#[derive(Debug)]
struct Line<T> {
    waiting: VecDeque<T>,
    running: usize,
    last_started: u64,
    arrived: u64,
}

impl<A: Clone + Eq + Hash, T> FairQueue<A, T> {
    /// A queue where one account may run at most `per_account` tasks at once (at least 1).
    pub fn new(per_account: usize) -> Self {
        FairQueue { lines: HashMap::new(), clock: 0, arrivals: 0, per_account: per_account.max(1) }
    }

    /// Puts `task` at the end of `account`'s line.
    pub fn push(&mut self, account: A, task: T) {
        let arrivals = &mut self.arrivals;
        self.lines
            .entry(account)
            .or_insert_with(|| {
                *arrivals += 1;
                Line { waiting: VecDeque::new(), running: 0, last_started: 0, arrived: *arrivals }
            })
            .waiting
            .push_back(task);
    }

    /// The next task to start, counted as running for its account until [`FairQueue::finished`];
    /// `None` when nothing waits (or every account with work is at its cap).
    pub fn start_next(&mut self) -> Option<(A, T)> {
        let per_account = self.per_account;
        let (account, line) = self
            .lines
            .iter_mut()
            .filter(|(_, line)| !line.waiting.is_empty() && line.running < per_account)
            .min_by_key(|(_, line)| (line.running, line.last_started, line.arrived))?;
        let task = line.waiting.pop_front().expect("filtered on waiting work");
        self.clock += 1;
        line.running += 1;
        line.last_started = self.clock;
        Some((account.clone(), task))
    }

    /// A task of `account` ended (whatever its outcome).
    pub fn finished(&mut self, account: &A) {
        if let Some(line) = self.lines.get_mut(account) {
            line.running = line.running.saturating_sub(1);
            if line.running == 0 && line.waiting.is_empty() {
                // Forget idle accounts so memory follows the work; a returning account starts
                // as "never served", which only helps it while others are busy.
                self.lines.remove(account);
            }
        }
    }

    /// Removes every waiting task `unwanted` says no to keep; returns them.
    pub fn remove_waiting(&mut self, mut unwanted: impl FnMut(&T) -> bool) -> Vec<T> {
        let mut removed = Vec::new();
        for line in self.lines.values_mut() {
            let (drop, keep): (Vec<T>, Vec<T>) = line.waiting.drain(..).partition(|t| unwanted(t));
            line.waiting = keep.into();
            removed.extend(drop);
        }
        self.lines.retain(|_, line| line.running > 0 || !line.waiting.is_empty());
        removed
    }

    /// Tasks waiting, over all accounts.
    pub fn waiting(&self) -> usize {
        self.lines.values().map(|l| l.waiting.len()).sum()
    }

    /// Tasks running, over all accounts.
    pub fn running(&self) -> usize {
        self.lines.values().map(|l| l.running).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain_order(q: &mut FairQueue<&'static str, u32>) -> Vec<(&'static str, u32)> {
        let mut order = Vec::new();
        while let Some((a, t)) = q.start_next() {
            q.finished(&a);
            order.push((a, t));
        }
        order
    }

    #[test]
    fn a_newcomer_goes_before_the_rest_of_a_busy_accounts_line() {
        let mut q = FairQueue::new(usize::MAX);
        q.push("a", 1);
        let (a, first) = q.start_next().unwrap();
        assert_eq!((a, first), ("a", 1));
        q.push("a", 2);
        q.push("a", 3);
        q.push("b", 10);
        q.finished(&"a");
        assert_eq!(drain_order(&mut q), vec![("b", 10), ("a", 2), ("a", 3)]);
    }

    #[test]
    fn accounts_take_turns() {
        let mut q = FairQueue::new(usize::MAX);
        for t in 1..=3 {
            q.push("a", t);
        }
        for t in 11..=12 {
            q.push("b", t);
        }
        q.push("c", 21);
        let order: Vec<&str> = drain_order(&mut q).into_iter().map(|(a, _)| a).collect();
        // Never served: in the order they came; then round and round among those with work left.
        assert_eq!(order, ["a", "b", "c", "a", "b", "a"]);
    }

    #[test]
    fn the_cap_keeps_a_slot_for_others() {
        let mut q = FairQueue::new(3);
        for t in 1..=4 {
            q.push("a", t);
        }
        let started: Vec<_> = std::iter::from_fn(|| q.start_next()).collect();
        assert_eq!(started.len(), 3, "one account runs at most three");
        q.push("b", 10);
        assert_eq!(q.start_next(), Some(("b", 10)));
        assert_eq!((q.running(), q.waiting()), (4, 1));
    }

    #[test]
    fn waiting_tasks_can_be_withdrawn() {
        let mut q = FairQueue::new(1);
        q.push("a", 1);
        q.push("a", 2);
        q.push("b", 3);
        let mut removed = q.remove_waiting(|t| *t != 1);
        removed.sort();
        assert_eq!(removed, vec![2, 3]);
        assert_eq!(drain_order(&mut q), vec![("a", 1)]);
        assert_eq!(q.waiting(), 0);
    }
}
