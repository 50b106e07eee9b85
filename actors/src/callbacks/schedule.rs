//! When a failed callback is tried again: exponential backoff with full jitter, for as long as
//! the operator's `max_age` allows, so a receiver that is down for hours still hears from us.

use std::time::Duration;

use rand::Rng;

/// How callbacks are delivered and retried. `Default` gives the production values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackSettings {
    /// The longest wait before each retry: the first entry before the 1st retry, the second
    /// before the 2nd, and the last one for every retry after that. The real wait is drawn
    /// uniformly between zero and that value (full jitter), so receivers that come back are not
    /// hit by every pending callback at once. Empty: no retries.
    pub schedule: Vec<Duration>,
    /// Retries stop once this long has passed since the job finished. The last retry is made at
    /// that moment, so a receiver is tried for at least this long.
    pub max_age: Duration,
    /// Longest wait for a receiver's answer, connecting included.
    pub timeout: Duration,
    /// Deliveries sent at the same time, at most.
    pub max_concurrent: usize,
}

impl Default for CallbackSettings {
    /// Retries within 10 s, 30 s, 1 min, 5 min, 15 min, then every hour, for 26 hours (about
    /// 50 attempts; Amberscript's own policy is hourly, 10 times). Answers within 10 s.
    fn default() -> Self {
        let minute = Duration::from_secs(60);
        CallbackSettings {
            schedule: vec![
                Duration::from_secs(10),
                Duration::from_secs(30),
                minute,
                5 * minute,
                15 * minute,
                60 * minute,
            ],
            max_age: 26 * 60 * minute,
            timeout: Duration::from_secs(10),
            max_concurrent: 32,
        }
    }
}

impl CallbackSettings {
    /// When to try again after the failed attempt number `attempt` (1 for the first) made at
    /// `now_ms`, for a job that finished at `finished_ms`; `None` when retries are over.
    pub fn next_attempt_at(&self, attempt: u32, finished_ms: u64, now_ms: u64, rng: &mut impl Rng) -> Option<u64> {
        let deadline = finished_ms.saturating_add(millis(self.max_age));
        if now_ms >= deadline {
            return None;
        }
        let index = (attempt.max(1) as usize - 1).min(self.schedule.len().checked_sub(1)?);
        let longest = millis(self.schedule[index]);
        let wait = rng.random_range(0..=longest);
        Some(now_ms.saturating_add(wait).min(deadline))
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    use super::*;

    const HOUR_MS: u64 = 3_600_000;

    /// Every retry time, for a job that finished at 0 and whose attempts take no time.
    fn retries(settings: &CallbackSettings, seed: u64) -> Vec<u64> {
        let mut rng = StdRng::seed_from_u64(seed);
        let (mut attempt, mut now, mut times) = (1, 0, vec![]);
        while let Some(next) = settings.next_attempt_at(attempt, 0, now, &mut rng) {
            assert!(next >= now, "a retry is never scheduled in the past");
            times.push(next);
            now = next;
            attempt += 1;
        }
        times
    }

    #[test]
    fn the_default_retries_within_30_seconds_and_for_at_least_24_hours() {
        let settings = CallbackSettings::default();
        for seed in 0..200 {
            let times = retries(&settings, seed);
            assert!(times[0] <= 30_000, "first retry at {} ms", times[0]);
            assert!(*times.last().unwrap() >= 24 * HOUR_MS, "last retry at {} ms", times.last().unwrap());
            assert!(times.len() < 400, "{} retries", times.len());
        }
    }

    #[test]
    fn waits_grow_up_to_the_last_step_and_stay_there() {
        let settings = CallbackSettings::default();
        let mut rng = StdRng::seed_from_u64(7);
        for attempt in 1..60 {
            let now = 1_000_000;
            let next = settings.next_attempt_at(attempt, now, now, &mut rng).unwrap();
            let step = settings.schedule[(attempt as usize - 1).min(settings.schedule.len() - 1)];
            assert!(next - now <= millis(step), "attempt {attempt} waits {} ms", next - now);
        }
    }

    #[test]
    fn nothing_is_retried_after_max_age_or_without_a_schedule() {
        let settings = CallbackSettings::default();
        let mut rng = StdRng::seed_from_u64(1);
        let deadline = millis(settings.max_age);
        assert_eq!(settings.next_attempt_at(3, 0, deadline, &mut rng), None);
        assert_eq!(settings.next_attempt_at(3, 0, deadline + 1, &mut rng), None);
        let near = settings.next_attempt_at(40, 0, deadline - 5, &mut rng).unwrap();
        assert!(near <= deadline, "the last retry is made by the deadline");
        let none = CallbackSettings { schedule: vec![], ..settings };
        assert_eq!(none.next_attempt_at(1, 0, 0, &mut rng), None);
    }
}
