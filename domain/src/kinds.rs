//! The closed vocabularies of the API: job status, transcription type, job type, transcription
//! style, turnaround time, and the glossary sort keys. Each spells its values exactly as the
//! spec does, on the wire and in stored events, and parses with an error that lists them.

use std::fmt;

use crate::error::ValidationError;

/// Declares a string enum: serde names, `ALL`, `as_str`, `parse`/`parse_field`, `FromStr`, `Display`.
macro_rules! api_enum {
    (
        $(#[$meta:meta])*
        $name:ident, field = $field:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $( $(#[$vmeta])* #[serde(rename = $text)] $variant ),+
        }

        impl $name {
            /// Every value, in the spec's order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The value as the API spells it.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Parses the parameter
            #[doc = concat!("`", $field, "`")]
            /// (exact spelling).
            pub fn parse(value: &str) -> Result<Self, ValidationError> {
                Self::parse_field($field, value)
            }

            /// As `parse`, reporting against another parameter name.
            pub fn parse_field(field: &str, value: &str) -> Result<Self, ValidationError> {
                Self::ALL
                    .iter()
                    .copied()
                    .find(|v| v.as_str() == value)
                    .ok_or_else(|| ValidationError::one_of(field, Self::ALL.iter().map(|v| v.as_str())))
            }
        }

        impl std::str::FromStr for $name {
            type Err = ValidationError;
            fn from_str(s: &str) -> Result<Self, ValidationError> {
                Self::parse(s)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

api_enum!(
    /// Where a job is. `OPEN` → `DONE` | `ERROR`; `BUSY` for a translated-subtitles request on an
    /// existing job (see `job::decide`).
    JobStatus, field = "status" {
        Open = "OPEN",
        Done = "DONE",
        Error = "ERROR",
        Busy = "BUSY",
    }
);

impl JobStatus {
    /// `DONE` and `ERROR` end a job; nothing changes its status afterwards.
    pub fn is_terminal(self) -> bool {
        matches!(self, JobStatus::Done | JobStatus::Error)
    }
}

api_enum!(
    /// What the client wants back.
    TranscriptionType, field = "transcriptionType" {
        Transcription = "transcription",
        Captions = "captions",
        TranslatedSubtitles = "translatedSubtitles",
    }
);

api_enum!(
    /// Who does the work: `direct` is the speech engine alone, `perfect` adds human transcribers.
    JobType, field = "jobType" {
        Perfect = "perfect",
        Direct = "direct",
    }
);

api_enum!(
    /// How closely a transcript follows the speech: `cleanread` drops filler words and false
    /// starts, `verbatim` keeps them.
    TranscriptionStyle, field = "transcriptionStyle" {
        Cleanread = "cleanread",
        Verbatim = "verbatim",
    }
);

api_enum!(
    /// Turnaround of a manual (`perfect`) job. The spec names `FIVE_DAYS` (default for
    /// transcription and captions) and `SEVEN_DAYS` (default for translatedSubtitles) and says
    /// others are "available on request"; this service offers the ones listed here.
    TurnaroundTime, field = "turnaroundTime" {
        OneDay = "ONE_DAY",
        TwoDays = "TWO_DAYS",
        ThreeDays = "THREE_DAYS",
        FourDays = "FOUR_DAYS",
        FiveDays = "FIVE_DAYS",
        SevenDays = "SEVEN_DAYS",
        TenDays = "TEN_DAYS",
        FourteenDays = "FOURTEEN_DAYS",
    }
);

impl TurnaroundTime {
    /// Calendar days until delivery is due.
    pub fn days(self) -> u32 {
        match self {
            TurnaroundTime::OneDay => 1,
            TurnaroundTime::TwoDays => 2,
            TurnaroundTime::ThreeDays => 3,
            TurnaroundTime::FourDays => 4,
            TurnaroundTime::FiveDays => 5,
            TurnaroundTime::SevenDays => 7,
            TurnaroundTime::TenDays => 10,
            TurnaroundTime::FourteenDays => 14,
        }
    }

    /// The spec's default for a manual job of this transcription type.
    pub fn default_for(transcription_type: TranscriptionType) -> TurnaroundTime {
        match transcription_type {
            TranscriptionType::TranslatedSubtitles => TurnaroundTime::SevenDays,
            TranscriptionType::Transcription | TranscriptionType::Captions => TurnaroundTime::FiveDays,
        }
    }
}

api_enum!(
    /// What an account does: customers submit jobs; transcribers and translators (staff) work
    /// on the tasks of manual jobs through the work API. Accounts opened before roles existed
    /// are customers.
    Role, field = "role" {
        Customer = "customer",
        Transcriber = "transcriber",
        Translator = "translator",
    }
);

#[allow(clippy::derivable_impls)] // the enum is declared by a macro that takes no `#[default]`
impl Default for Role {
    fn default() -> Self {
        Role::Customer
    }
}

impl Role {
    /// Transcribers and translators.
    pub fn is_staff(self) -> bool {
        self != Role::Customer
    }
}

api_enum!(
    /// The human work a manual job needs: `transcribe` (correct the machine draft) or
    /// `translate` (subtitles in the target language, on the source's timings).
    TaskKind, field = "kind" {
        Transcribe = "transcribe",
        Translate = "translate",
    }
);

impl TaskKind {
    /// The staff role that does this kind of task.
    pub fn role(self) -> Role {
        match self {
            TaskKind::Transcribe => Role::Transcriber,
            TaskKind::Translate => Role::Translator,
        }
    }
}

api_enum!(
    /// The Glossary fields `GET /glossary` can sort by (`sortBy`). The list-valued fields
    /// (`names`, `items`) have no order and are refused.
    GlossarySortField, field = "sortBy" {
        Id = "id",
        Name = "name",
        Created = "created",
        UserName = "userName",
    }
);

api_enum!(
    /// The Job fields `GET /jobs` can sort by (`sortBy`, beyond the spec, named as the Job
    /// object names them, like `GET /glossary`'s): the date, the file name, the length.
    JobSortField, field = "sortBy" {
        Created = "created",
        Filename = "filename",
        NrAudioSeconds = "nrAudioSeconds",
    }
);

api_enum!(
    /// `sortDirection` of `GET /glossary` and `GET /jobs`.
    SortDirection, field = "sortDirection" {
        Desc = "DESC",
        Asc = "ASC",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_spelled_as_in_the_spec_on_the_wire() {
        assert_eq!(serde_json::to_string(&JobStatus::Open).unwrap(), "\"OPEN\"");
        assert_eq!(serde_json::to_string(&TranscriptionType::TranslatedSubtitles).unwrap(), "\"translatedSubtitles\"");
        assert_eq!(serde_json::to_string(&TurnaroundTime::FiveDays).unwrap(), "\"FIVE_DAYS\"");
        for v in TurnaroundTime::ALL {
            assert_eq!(serde_json::from_str::<TurnaroundTime>(&format!("\"{v}\"")).unwrap(), *v);
        }
    }

    #[test]
    fn parse_errors_name_the_parameter_and_the_allowed_values() {
        let err = JobType::parse("manual").unwrap_err();
        assert_eq!(err.field, "jobType");
        assert_eq!(err.message, "jobType must be one of: perfect, direct");
        assert_eq!(
            TranscriptionStyle::parse("Verbatim").unwrap_err().message,
            "transcriptionStyle must be one of: cleanread, verbatim"
        );
        assert_eq!(JobStatus::parse_field("state", "x").unwrap_err().field, "state");
    }

    #[test]
    fn only_done_and_error_are_terminal() {
        let terminal: Vec<_> = JobStatus::ALL.iter().filter(|s| s.is_terminal()).collect();
        assert_eq!(terminal, [&JobStatus::Done, &JobStatus::Error]);
    }

    #[test]
    fn default_turnaround_depends_on_the_transcription_type() {
        assert_eq!(TurnaroundTime::default_for(TranscriptionType::Captions), TurnaroundTime::FiveDays);
        assert_eq!(TurnaroundTime::default_for(TranscriptionType::TranslatedSubtitles), TurnaroundTime::SevenDays);
    }
}
