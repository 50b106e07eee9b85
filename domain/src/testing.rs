//! Given/when/then for aggregate tests: `given::<JobAggregate>(history).when(command)` then
//! `.then(expected_events)` or `.then_refused(refusal)`. Refusals are compared as values, never
//! by message text.

use std::marker::PhantomData;

use crate::aggregate::Aggregate;

pub(crate) struct Given<A: Aggregate> {
    state: A::State,
    _aggregate: PhantomData<A>,
}

/// Starts a test from a history (empty for a new stream).
pub(crate) fn given<A: Aggregate>(history: impl IntoIterator<Item = A::Event>) -> Given<A> {
    let history: Vec<A::Event> = history.into_iter().collect();
    Given { state: A::replay(&history), _aggregate: PhantomData }
}

pub(crate) struct When<A: Aggregate> {
    state: A::State,
    result: Result<Vec<A::Event>, A::Refusal>,
}

impl<A: Aggregate> Given<A> {
    pub(crate) fn when(self, command: A::Command) -> When<A> {
        let result = A::decide(&self.state, command);
        When { state: self.state, result }
    }
}

impl<A: Aggregate> When<A>
where
    A::Refusal: std::fmt::Debug,
{
    /// Asserts the events, and returns the state after them.
    #[track_caller]
    pub(crate) fn then(self, expected: impl IntoIterator<Item = A::Event>) -> A::State {
        let expected: Vec<A::Event> = expected.into_iter().collect();
        match self.result {
            Ok(events) => {
                assert_eq!(events, expected);
                events.iter().fold(self.state, A::evolve)
            }
            Err(refusal) => panic!("expected events {expected:?}, got refusal {refusal:?}"),
        }
    }

    /// Returns the decided events (for tests that inspect them) or panics on a refusal.
    #[track_caller]
    pub(crate) fn accepted(self) -> (Vec<A::Event>, A::State) {
        match self.result {
            Ok(events) => {
                let state = events.iter().fold(self.state, A::evolve);
                (events, state)
            }
            Err(refusal) => panic!("expected events, got refusal {refusal:?}"),
        }
    }

    #[track_caller]
    pub(crate) fn then_refused(self, expected: A::Refusal) {
        match self.result {
            Ok(events) => panic!("expected refusal {expected:?}, got events {events:?}"),
            Err(refusal) => assert_eq!(refusal, expected),
        }
    }
}
