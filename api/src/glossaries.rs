//! The glossary endpoints: list, create, replace and delete the caller's glossaries. Writes go
//! through the glossary aggregate (`glossary-<id>` streams); the list comes from the read model.
//! A deleted glossary answers 410, like a deleted job.

use std::sync::Arc;

use poem::web::Data;
use poem_openapi::OpenApi;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use scribe_actors::clock::now_ms;
use scribe_actors::command;
use scribe_domain::glossary::{GlossaryAggregate, GlossaryCommand};
use scribe_domain::ids::{GlossaryId, glossary_stream};
use scribe_domain::requests::{GlossaryParams, ListGlossariesParams};

use crate::ApiTags;
use crate::auth::ApiKeyAuth;
use crate::error::{ApiError, glossary_error};
use crate::model::{Glossary, Message, UserGlossary};
use crate::state::ApiState;
use crate::strict_json::StrictJson;

pub struct GlossaryApi;

#[OpenApi(tag = "ApiTags::Glossaries")]
impl GlossaryApi {
    /// Lists your glossaries.
    #[oai(path = "/glossary", method = "get", operation_id = "listGlossaries")]
    async fn list(
        &self,
        auth: ApiKeyAuth,
        state: Data<&Arc<ApiState>>,
        /// Field to sort by: `created` (default), `name`, `id` or `userName`.
        #[oai(name = "sortBy")]
        sort_by: Query<Option<String>>,
        /// `DESC` (default) or `ASC`.
        #[oai(name = "sortDirection")]
        sort_direction: Query<Option<String>>,
    ) -> Result<Json<Vec<Glossary>>, ApiError> {
        let sort = ListGlossariesParams { sort_by: sort_by.0, sort_direction: sort_direction.0 }.validate()?;
        let owner = auth.0.user;
        let list = state
            .read
            .run(move |read| read.list_glossaries(&owner, &sort))
            .await
            .map_err(|e| ApiError::internal("Listing glossaries", &e))?;
        Ok(Json(list.into_iter().map(Glossary::from).collect()))
    }

    /// Creates a glossary. Pass its `id` as `glossaryId` when uploading media.
    #[oai(path = "/glossary", method = "post", operation_id = "createGlossary")]
    async fn create(
        &self,
        auth: ApiKeyAuth,
        state: Data<&Arc<ApiState>>,
        body: StrictJson<UserGlossary>,
    ) -> Result<Json<Glossary>, ApiError> {
        let content = GlossaryParams::from(body.0).validate()?;
        // Time-ordered (UUIDv7, monotonic within the process): glossaries made in the same
        // millisecond still list in the order they were made.
        let id = GlossaryId::parse(&uuid::Uuid::now_v7().to_string()).expect("a UUID is a valid glossary id");
        let cmd = GlossaryCommand::Create { id: id.clone(), owner: auth.0.user, content, at_ms: now_ms() };
        write(&state, &id, cmd).await
    }

    /// Replaces a glossary's name, names and items.
    #[oai(path = "/glossary/:glossaryId", method = "put", operation_id = "updateGlossary")]
    async fn update(
        &self,
        auth: ApiKeyAuth,
        state: Data<&Arc<ApiState>>,
        /// The glossary's id.
        #[oai(name = "glossaryId")]
        glossary_id: Path<String>,
        body: StrictJson<UserGlossary>,
    ) -> Result<Json<Glossary>, ApiError> {
        let id = GlossaryId::parse(&glossary_id.0)?;
        let content = GlossaryParams::from(body.0).validate()?;
        let cmd = GlossaryCommand::Update { by: auth.0.user, content, at_ms: now_ms() };
        write(&state, &id, cmd).await
    }

    /// Deletes a glossary. Answers `{"message": "Glossary deleted"}`; afterwards the glossary
    /// answers 410.
    #[oai(path = "/glossary/:glossaryId", method = "delete", operation_id = "deleteGlossary")]
    async fn delete(
        &self,
        auth: ApiKeyAuth,
        state: Data<&Arc<ApiState>>,
        /// The glossary's id.
        #[oai(name = "glossaryId")]
        glossary_id: Path<String>,
    ) -> Result<Json<Message>, ApiError> {
        let id = GlossaryId::parse(&glossary_id.0)?;
        let cmd = GlossaryCommand::Delete { by: auth.0.user, at_ms: now_ms() };
        let executed = command::execute::<GlossaryAggregate>(state.store.as_ref(), &glossary_stream(&id), cmd)
            .await
            .map_err(glossary_error)?;
        state.settle(executed.position).await;
        Ok(Json(Message::new("Glossary deleted")))
    }
}

/// Runs a create or update and answers with the glossary as it now is.
async fn write(state: &ApiState, id: &GlossaryId, cmd: GlossaryCommand) -> Result<Json<Glossary>, ApiError> {
    let executed = command::execute::<GlossaryAggregate>(state.store.as_ref(), &glossary_stream(id), cmd)
        .await
        .map_err(glossary_error)?;
    state.settle(executed.position).await;
    let glossary = executed
        .state
        .view()
        .cloned()
        .ok_or_else(|| ApiError::internal("Showing the glossary", &"no view after a write"))?;
    Ok(Json(glossary.into()))
}
