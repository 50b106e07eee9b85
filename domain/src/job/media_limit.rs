//! The longest media a server accepts (the operator's `--max-duration`), as a rule on a probed
//! length. An upload that breaks it is no job at all (the edge refuses it before anything is
//! charged); a URL job, whose length is known only once it is fetched, fails when it is probed,
//! before it is charged. Both say the same words.

use std::time::Duration;

use crate::human;

/// The longest media accepted; `MaxDuration::NONE`: no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MaxDuration(pub Option<Duration>);

impl MaxDuration {
    /// No limit.
    pub const NONE: MaxDuration = MaxDuration(None);

    /// Media `duration_ms` long, judged against the limit: `Err` when it is longer.
    pub fn check(&self, duration_ms: u64) -> Result<(), MediaTooLong> {
        let Some(max) = self.0 else { return Ok(()) };
        let length = Duration::from_millis(duration_ms);
        if length > max { Err(MediaTooLong { length, max }) } else { Ok(()) }
    }
}

/// Media longer than the server accepts. Its words are the upload's 400 message and the URL
/// job's `errorMsg`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("The media is {} long; this server accepts media of at most {}", human::length(*.length), human::limit(*.max))]
pub struct MediaTooLong {
    pub length: Duration,
    pub max: Duration,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn given_a_one_minute_limit_when_media_of_100_s_is_probed_then_it_is_refused_naming_both_lengths() {
        let given = MaxDuration(Some(Duration::from_secs(60)));
        let when = given.check(100_400);
        let refusal = when.unwrap_err();
        assert_eq!(refusal.to_string(), "The media is 1 min 40 s long; this server accepts media of at most 1 minute");
    }

    #[test]
    fn given_a_limit_when_media_exactly_that_long_is_probed_then_it_is_accepted() {
        let given = MaxDuration(Some(Duration::from_secs(4 * 3600)));
        assert_eq!(given.check(4 * 3600 * 1000), Ok(()));
        let refused = given.check(4 * 3600 * 1000 + 1).unwrap_err();
        assert!(refused.to_string().ends_with("at most 4 hours"), "{refused}");
    }

    #[test]
    fn given_no_limit_when_any_media_is_probed_then_it_is_accepted() {
        assert_eq!(MaxDuration::NONE.check(u64::MAX), Ok(()));
    }
}
