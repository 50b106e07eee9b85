//! The checks every adapter makes on an append, written once so the three cannot drift apart.
//!
//! - [`check_request`]: an append names a stream and carries at least one event, or it is refused
//!   before any backend is asked ([`StoreError::InvalidAppend`]).
//! - [`place`]: an expectation the stream does not meet writes nothing and is refused with the
//!   stream's actual version ([`wrong_version`]); an accepted append's events take the versions
//!   after the stream's last one and, in a log the adapter numbers itself (SQLite, PostgreSQL),
//!   the positions after the log's head. KurrentDB checks the expectation and numbers the log on
//!   its server, so that adapter uses only [`check_request`] and [`wrong_version`].
//! - [`AppendRequest`]: an append on its way to the writer of an adapter that commits in groups.

use tokio::sync::oneshot;

use super::{Appended, ExpectedVersion, NewEvent, StoreError};

/// Refuses an append without a stream name or without events.
pub(crate) fn check_request(stream: &str, events: &[NewEvent]) -> Result<(), StoreError> {
    if stream.is_empty() {
        return Err(StoreError::InvalidAppend { stream: String::new(), reason: "the stream name is empty" });
    }
    if events.is_empty() {
        return Err(StoreError::InvalidAppend { stream: stream.to_owned(), reason: "no events given" });
    }
    Ok(())
}

/// The refusal of an append to `stream` whose expectation its actual version did not meet.
pub(crate) fn wrong_version(stream: &str, expected: ExpectedVersion, actual: Option<u64>) -> StoreError {
    StoreError::WrongExpectedVersion { stream: stream.to_owned(), expected, actual }
}

/// Where an accepted append's events go: `count` events (at least one) from `first_version` in
/// their stream and from `first_position` in the log, one after another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Placement {
    first_version: u64,
    first_position: u64,
    count: u64,
}

/// Checks `expected` against the stream's `actual` last version and, when it is met, places the
/// append's `count` events after that version and after the log's `head`.
pub(crate) fn place(
    stream: &str,
    expected: ExpectedVersion,
    actual: Option<u64>,
    head: u64,
    count: usize,
) -> Result<Placement, StoreError> {
    if !expected.is_met_by(actual) {
        return Err(wrong_version(stream, expected, actual));
    }
    Ok(Placement { first_version: actual.map_or(0, |v| v + 1), first_position: head + 1, count: count as u64 })
}

/// One event's place: its position in the log and its version in its stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    pub position: u64,
    pub version: u64,
}

impl Placement {
    /// The events' places, in append order.
    pub(crate) fn slots(self) -> impl Iterator<Item = Slot> {
        (0..self.count).map(move |i| Slot { position: self.first_position + i, version: self.first_version + i })
    }

    /// What the append reports once written: its last event's version and position.
    pub(crate) fn appended(self) -> Appended {
        let last = self.count.saturating_sub(1);
        Appended { last_version: self.first_version + last, position: self.first_position + last }
    }
}

/// An append on its way to an adapter's writer, which answers on `reply`.
pub(crate) struct AppendRequest {
    pub stream: String,
    pub expected: ExpectedVersion,
    pub events: Vec<NewEvent>,
    pub reply: oneshot::Sender<Result<Appended, StoreError>>,
}

impl AppendRequest {
    /// Checks the append ([`check_request`]) and makes its request, with the receiver of the answer.
    pub(crate) fn new(
        stream: &str,
        expected: ExpectedVersion,
        events: Vec<NewEvent>,
    ) -> Result<(Self, oneshot::Receiver<Result<Appended, StoreError>>), StoreError> {
        check_request(stream, &events)?;
        let (reply, answer) = oneshot::channel();
        Ok((AppendRequest { stream: stream.to_owned(), expected, events, reply }, answer))
    }

    /// Where this append goes in a stream whose last version is `actual` and a log whose head is `head`.
    pub(crate) fn place(&self, actual: Option<u64>, head: u64) -> Result<Placement, StoreError> {
        place(&self.stream, self.expected, actual, head, self.events.len())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn events(n: usize) -> Vec<NewEvent> {
        (0..n).map(|i| NewEvent::new("Counted", json!({"n": i}))).collect()
    }

    #[test]
    fn an_append_needs_a_stream_name_and_events() {
        let refused = check_request("", &events(1)).unwrap_err();
        assert!(
            matches!(refused, StoreError::InvalidAppend { ref stream, reason: "the stream name is empty" } if stream.is_empty())
        );
        let refused = check_request("job-a", &[]).unwrap_err();
        assert!(
            matches!(refused, StoreError::InvalidAppend { ref stream, reason: "no events given" } if stream == "job-a")
        );
        assert!(check_request("job-a", &events(1)).is_ok());
    }

    #[test]
    fn an_unmet_expectation_is_refused_with_the_actual_version() {
        for (expected, actual) in [
            (ExpectedVersion::NoStream, Some(0)),
            (ExpectedVersion::Exact(3), None),
            (ExpectedVersion::Exact(3), Some(4)),
        ] {
            let refused = place("job-a", expected, actual, 10, 1).unwrap_err();
            assert!(
                matches!(refused, StoreError::WrongExpectedVersion { ref stream, expected: e, actual: a }
                    if stream == "job-a" && e == expected && a == actual),
                "{expected} against {actual:?}: {refused}"
            );
        }
    }

    #[test]
    fn accepted_events_follow_the_stream_and_the_head() {
        let new_stream = place("job-a", ExpectedVersion::NoStream, None, 0, 2).unwrap();
        let slots: Vec<_> = new_stream.slots().collect();
        assert_eq!(slots, [Slot { position: 1, version: 0 }, Slot { position: 2, version: 1 }]);
        assert_eq!(new_stream.appended(), Appended { last_version: 1, position: 2 });

        let existing = place("job-a", ExpectedVersion::Exact(4), Some(4), 41, 3).unwrap();
        assert_eq!(existing.slots().map(|s| (s.position, s.version)).collect::<Vec<_>>(), [(42, 5), (43, 6), (44, 7)]);
        assert_eq!(existing.appended(), Appended { last_version: 7, position: 44 });

        let any = place("job-a", ExpectedVersion::Any, Some(9), 100, 1).unwrap();
        assert_eq!(any.appended(), Appended { last_version: 10, position: 101 });
    }
}
