//! OpenAI's audio API (`/v1/audio/transcriptions`, `/v1/audio/translations`), the rules of it
//! that are Scribe's: which form fields are taken and what each changes ([`request`]), the
//! answer in each `response_format` ([`answer`]), the streamed events ([`stream`]) and the
//! language names OpenAI writes ([`names`]). The door itself is `scribe_api::openai`.

pub mod answer;
pub mod names;
pub mod request;
pub mod stream;

pub use answer::{Answer, Finished};
pub use request::{Endpoint, Granularities, ModelFacts, Refusal, RefusalKind, ResponseFormat, SpeechRequest};
