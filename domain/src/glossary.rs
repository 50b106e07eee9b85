//! The glossary aggregate (stream `glossary-<id>`): lists of names and terms a user attaches to
//! jobs. Created, updated and deleted by its owner only.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::aggregate::Aggregate;
use crate::codec::{self, DecodeError, VersionedEvent};
use crate::ids::{GLOSSARY_STREAM_PREFIX, GlossaryId, UserName};
use crate::kinds::{GlossarySortField, SortDirection};
use crate::requests::{GlossaryContent, GlossaryItem, GlossarySort};

/// The spec's Glossary object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Glossary {
    pub id: GlossaryId,
    pub user_name: UserName,
    pub name: String,
    pub names: Vec<String>,
    pub items: Vec<GlossaryItem>,
    /// Milliseconds since the Unix epoch.
    pub created: u64,
}

impl Glossary {
    /// The words recognition is nudged towards: the glossary's names, then its terms.
    pub fn hotwords(&self) -> Vec<String> {
        self.names.iter().cloned().chain(self.items.iter().map(|i| i.name.clone())).collect()
    }
}

impl GlossarySort {
    /// Orders two glossaries for `GET /glossary`; ties are broken by id so pages are stable.
    pub fn compare(&self, a: &Glossary, b: &Glossary) -> Ordering {
        let by = match self.by {
            GlossarySortField::Id => Ordering::Equal,
            GlossarySortField::Name => a.name.cmp(&b.name),
            GlossarySortField::Created => a.created.cmp(&b.created),
            GlossarySortField::UserName => a.user_name.cmp(&b.user_name),
        };
        let ordering = by.then_with(|| a.id.cmp(&b.id));
        match self.direction {
            SortDirection::Asc => ordering,
            SortDirection::Desc => ordering.reverse(),
        }
    }
}

/// Commands on a glossary.
#[derive(Debug, Clone, PartialEq)]
pub enum GlossaryCommand {
    Create { id: GlossaryId, owner: UserName, content: GlossaryContent, at_ms: u64 },
    Update { by: UserName, content: GlossaryContent, at_ms: u64 },
    Delete { by: UserName, at_ms: u64 },
}

/// Why a glossary command was refused. The API maps `NotFound` → 404, `Forbidden` → 403,
/// `Deleted` → 410 (as for jobs), `AlreadyExists` → 409.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GlossaryRefusal {
    #[error("glossary not found")]
    NotFound,
    #[error("a glossary with this id already exists")]
    AlreadyExists,
    #[error("this glossary belongs to another account")]
    Forbidden,
    #[error("this glossary was deleted")]
    Deleted,
}

/// Facts of a glossary's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum GlossaryEvent {
    GlossaryCreated {
        id: GlossaryId,
        owner: UserName,
        content: GlossaryContent,
        at_ms: u64,
    },
    /// The content is replaced as a whole (PUT semantics).
    GlossaryUpdated {
        content: GlossaryContent,
        at_ms: u64,
    },
    GlossaryDeleted {
        by: UserName,
        at_ms: u64,
    },
}

impl VersionedEvent for GlossaryEvent {
    fn event_type(&self) -> &'static str {
        match self {
            GlossaryEvent::GlossaryCreated { .. } => "GlossaryCreated",
            GlossaryEvent::GlossaryUpdated { .. } => "GlossaryUpdated",
            GlossaryEvent::GlossaryDeleted { .. } => "GlossaryDeleted",
        }
    }

    fn encode(&self) -> Value {
        codec::encode_tagged(self, 1)
    }

    fn decode(stored: &Value) -> Result<Self, DecodeError> {
        match codec::header(stored)? {
            (_, 1) => codec::decode_as(stored),
            _ => Err(codec::unknown_version(stored)),
        }
    }
}

/// A glossary as its history made it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GlossaryState {
    /// `None` before creation.
    pub glossary: Option<Glossary>,
    pub updated_ms: Option<u64>,
    pub deleted: bool,
}

impl GlossaryState {
    /// The Glossary object, unless it does not exist or was deleted.
    pub fn view(&self) -> Option<&Glossary> {
        self.glossary.as_ref().filter(|_| !self.deleted)
    }

    /// Whether `user` may attach this glossary to a job (exists, not deleted, theirs).
    pub fn usable_by(&self, user: &UserName) -> bool {
        self.view().is_some_and(|g| g.user_name == *user)
    }
}

/// Marker type implementing [`Aggregate`] for glossaries.
pub struct GlossaryAggregate;

impl Aggregate for GlossaryAggregate {
    const STREAM_PREFIX: &'static str = GLOSSARY_STREAM_PREFIX;
    type State = GlossaryState;
    type Command = GlossaryCommand;
    type Event = GlossaryEvent;
    type Refusal = GlossaryRefusal;

    fn decide(state: &GlossaryState, command: GlossaryCommand) -> Result<Vec<GlossaryEvent>, GlossaryRefusal> {
        decide(state, command)
    }

    fn evolve(state: GlossaryState, event: &GlossaryEvent) -> GlossaryState {
        evolve(state, event)
    }
}

/// Decides a glossary command. Ownership is checked before deletion, so another user learns
/// nothing about a deleted glossary.
pub fn decide(state: &GlossaryState, command: GlossaryCommand) -> Result<Vec<GlossaryEvent>, GlossaryRefusal> {
    let existing = state.glossary.as_ref();
    let check = |by: &UserName| match existing {
        None => Err(GlossaryRefusal::NotFound),
        Some(g) if g.user_name != *by => Err(GlossaryRefusal::Forbidden),
        Some(_) if state.deleted => Err(GlossaryRefusal::Deleted),
        Some(_) => Ok(()),
    };
    match command {
        GlossaryCommand::Create { id, owner, content, at_ms } => match existing {
            Some(_) => Err(GlossaryRefusal::AlreadyExists),
            None => Ok(vec![GlossaryEvent::GlossaryCreated { id, owner, content, at_ms }]),
        },
        GlossaryCommand::Update { by, content, at_ms } => {
            check(&by)?;
            Ok(vec![GlossaryEvent::GlossaryUpdated { content, at_ms }])
        }
        GlossaryCommand::Delete { by, at_ms } => {
            check(&by)?;
            Ok(vec![GlossaryEvent::GlossaryDeleted { by, at_ms }])
        }
    }
}

/// Applies one glossary event.
pub fn evolve(mut state: GlossaryState, event: &GlossaryEvent) -> GlossaryState {
    match event {
        GlossaryEvent::GlossaryCreated { id, owner, content, at_ms } => {
            state.glossary = Some(Glossary {
                id: id.clone(),
                user_name: owner.clone(),
                name: content.name.clone(),
                names: content.names.clone(),
                items: content.items.clone(),
                created: *at_ms,
            });
        }
        GlossaryEvent::GlossaryUpdated { content, at_ms } => {
            if let Some(g) = &mut state.glossary {
                g.name = content.name.clone();
                g.names = content.names.clone();
                g.items = content.items.clone();
            }
            state.updated_ms = Some(*at_ms);
        }
        GlossaryEvent::GlossaryDeleted { .. } => state.deleted = true,
    }
    state
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::given;

    fn user(name: &str) -> UserName {
        UserName::parse(name).unwrap()
    }

    fn content(name: &str) -> GlossaryContent {
        GlossaryContent { name: name.into(), names: vec!["Ada".into()], items: vec![] }
    }

    fn created() -> GlossaryEvent {
        GlossaryEvent::GlossaryCreated {
            id: GlossaryId::parse("g1").unwrap(),
            owner: user("ann"),
            content: content("Team"),
            at_ms: 10,
        }
    }

    #[test]
    fn a_new_glossary_is_created() {
        given::<GlossaryAggregate>([])
            .when(GlossaryCommand::Create {
                id: GlossaryId::parse("g1").unwrap(),
                owner: user("ann"),
                content: content("Team"),
                at_ms: 10,
            })
            .then([created()]);
    }

    #[test]
    fn creating_an_existing_glossary_is_refused() {
        given::<GlossaryAggregate>([created()])
            .when(GlossaryCommand::Create {
                id: GlossaryId::parse("g1").unwrap(),
                owner: user("ann"),
                content: content("Other"),
                at_ms: 11,
            })
            .then_refused(GlossaryRefusal::AlreadyExists);
    }

    #[test]
    fn the_owner_replaces_the_content() {
        let state = given::<GlossaryAggregate>([created()])
            .when(GlossaryCommand::Update { by: user("ann"), content: content("Renamed"), at_ms: 20 })
            .then([GlossaryEvent::GlossaryUpdated { content: content("Renamed"), at_ms: 20 }]);
        let g = state.view().unwrap();
        assert_eq!((g.name.as_str(), g.created), ("Renamed", 10));
    }

    #[test]
    fn another_user_cannot_update_or_delete() {
        given::<GlossaryAggregate>([created()])
            .when(GlossaryCommand::Update { by: user("bob"), content: content("X"), at_ms: 20 })
            .then_refused(GlossaryRefusal::Forbidden);
        given::<GlossaryAggregate>([created()])
            .when(GlossaryCommand::Delete { by: user("bob"), at_ms: 20 })
            .then_refused(GlossaryRefusal::Forbidden);
    }

    #[test]
    fn a_deleted_glossary_is_gone_for_its_owner_and_forbidden_for_others() {
        let deleted = GlossaryEvent::GlossaryDeleted { by: user("ann"), at_ms: 30 };
        given::<GlossaryAggregate>([created(), deleted.clone()])
            .when(GlossaryCommand::Delete { by: user("ann"), at_ms: 31 })
            .then_refused(GlossaryRefusal::Deleted);
        given::<GlossaryAggregate>([created(), deleted.clone()])
            .when(GlossaryCommand::Update { by: user("ann"), content: content("X"), at_ms: 31 })
            .then_refused(GlossaryRefusal::Deleted);
        given::<GlossaryAggregate>([created(), deleted.clone()])
            .when(GlossaryCommand::Delete { by: user("bob"), at_ms: 31 })
            .then_refused(GlossaryRefusal::Forbidden);
        let state = GlossaryAggregate::replay(&[created(), deleted]);
        assert!(state.view().is_none() && !state.usable_by(&user("ann")));
    }

    #[test]
    fn an_unknown_glossary_is_not_found() {
        given::<GlossaryAggregate>([])
            .when(GlossaryCommand::Delete { by: user("ann"), at_ms: 1 })
            .then_refused(GlossaryRefusal::NotFound);
    }

    #[test]
    fn the_glossary_object_has_the_spec_shape() {
        let state = GlossaryAggregate::replay(&[created()]);
        let json = serde_json::to_value(state.view().unwrap()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"id": "g1", "userName": "ann", "name": "Team", "names": ["Ada"], "items": [], "created": 10})
        );
    }

    #[test]
    fn sorting_follows_field_and_direction_with_id_as_tie_breaker() {
        let g = |id: &str, name: &str, created: u64| Glossary {
            id: GlossaryId::parse(id).unwrap(),
            user_name: user("ann"),
            name: name.into(),
            names: vec![],
            items: vec![],
            created,
        };
        let mut list = [g("a", "Zed", 1), g("b", "Amy", 3), g("c", "Amy", 2)];
        let sort = |by, direction| GlossarySort { by, direction };
        list.sort_by(|a, b| sort(GlossarySortField::Created, SortDirection::Desc).compare(a, b));
        assert_eq!(list.iter().map(|g| g.id.as_str()).collect::<Vec<_>>(), ["b", "c", "a"]);
        list.sort_by(|a, b| sort(GlossarySortField::Name, SortDirection::Asc).compare(a, b));
        assert_eq!(list.iter().map(|g| g.id.as_str()).collect::<Vec<_>>(), ["b", "c", "a"]);
        list.sort_by(|a, b| sort(GlossarySortField::Id, SortDirection::Desc).compare(a, b));
        assert_eq!(list.iter().map(|g| g.id.as_str()).collect::<Vec<_>>(), ["c", "b", "a"]);
    }

    #[test]
    fn events_round_trip_through_their_stored_form() {
        for e in [created(), GlossaryEvent::GlossaryDeleted { by: user("ann"), at_ms: 3 }] {
            let stored = e.encode();
            assert_eq!(stored["v"], 1);
            assert_eq!(GlossaryEvent::decode(&stored).unwrap(), e);
        }
    }
}
