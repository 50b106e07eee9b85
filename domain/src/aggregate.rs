//! The shape every aggregate (job, glossary, account) shares, so that the event store, the
//! actors and the tests can treat them alike: a stream prefix, and two pure functions.
//!
//! `decide` looks at the current state and a command and either refuses or returns the events
//! that record what happened; `evolve` applies one event. Neither has side effects: anything a
//! decision needs from outside (time, ids, prices, a probed duration) arrives in the command.
//! `evolve` trusts events, because they are facts that were accepted once.

use crate::codec::VersionedEvent;

/// An event-sourced aggregate.
pub trait Aggregate {
    /// The prefix of this aggregate's stream names (`job-`, `glossary-`, `account-`).
    /// **A contract with stored data**: changing it orphans every stream already written.
    const STREAM_PREFIX: &'static str;
    type State: Default + Clone + PartialEq + std::fmt::Debug;
    type Command;
    type Event: VersionedEvent + Clone + PartialEq + std::fmt::Debug;
    /// Why a command was refused (a domain answer, not a failure).
    type Refusal: std::error::Error + Clone + PartialEq + Send + Sync + 'static;

    fn decide(state: &Self::State, command: Self::Command) -> Result<Vec<Self::Event>, Self::Refusal>;

    fn evolve(state: Self::State, event: &Self::Event) -> Self::State;

    /// The state after a whole history.
    fn replay<'a>(events: impl IntoIterator<Item = &'a Self::Event>) -> Self::State
    where
        Self::Event: 'a,
    {
        events.into_iter().fold(Self::State::default(), Self::evolve)
    }
}
