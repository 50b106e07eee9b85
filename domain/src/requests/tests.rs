//! One test per rule of the request tables, with every bound checked on both sides of its edge.

use super::*;

fn job(f: impl FnOnce(&mut JobParams)) -> Result<JobRequest, ValidationError> {
    let mut p = JobParams::default();
    f(&mut p);
    p.validate()
}

fn s(v: &str) -> Option<String> {
    Some(v.to_owned())
}

#[track_caller]
fn rejects(result: Result<impl std::fmt::Debug, ValidationError>, field: &str, message: &str) {
    let err = result.expect_err("should be rejected");
    assert_eq!(err.field, field);
    assert_eq!(err.message, message);
}

#[test]
fn an_empty_upload_request_gets_the_spec_defaults() {
    let r = job(|_| {}).unwrap();
    assert_eq!(r.language.code(), "en");
    assert_eq!(r.transcription_type, TranscriptionType::Transcription);
    assert_eq!(r.job_type, JobType::Direct);
    assert_eq!(r.number_of_speakers, 2);
    assert!(!r.number_of_speakers_given, "the default is not the client's number");
    assert_eq!(r.transcription_style(), TranscriptionStyle::Cleanread);
    assert_eq!(r.job_options, None, "defaults are not explicit options");
    assert_eq!((r.turnaround_time, r.target_language, r.callback_url, r.glossary_id), (None, None, None, None));
}

#[test]
fn empty_parameters_count_as_not_given() {
    let r = job(|p| {
        p.language = s("");
        p.callback_url = s("");
        p.glossary_id = s("");
        p.transcription_style = s("");
    })
    .unwrap();
    assert_eq!(r, job(|_| {}).unwrap());
}

#[test]
fn values_are_checked_as_sent_spaces_and_case_included() {
    // One rule for every enumerated value: the exact spelling the OpenAPI document lists.
    assert_eq!(job(|p| p.language = s("EN")).unwrap_err().field, "language");
    assert_eq!(job(|p| p.job_type = s("DIRECT")).unwrap_err().field, "jobType");
    assert_eq!(job(|p| p.language = s(" en")).unwrap_err().field, "language");
    assert_eq!(job(|p| p.callback_url = s("  ")).unwrap_err().field, "callbackUrl");
    assert_eq!(job(|p| p.callback_url = s("http:example.com")).unwrap_err().field, "callbackUrl");
}

#[test]
fn number_of_speakers_is_accepted_from_0_to_5() {
    for n in 0..=5 {
        let r = job(|p| p.number_of_speakers = Some(n)).unwrap();
        assert_eq!((r.number_of_speakers, r.number_of_speakers_given), (n as u8, true));
    }
    for n in [-1, 6, i64::MIN, i64::MAX] {
        rejects(
            job(|p| p.number_of_speakers = Some(n)),
            "numberOfSpeakers",
            "numberOfSpeakers must be between 0 and 5",
        );
    }
}

#[test]
fn speaker_channels_is_recorded_as_given_and_refused_with_a_number_of_speakers() {
    // Given speakerChannels left out, true or false, then the request carries it as given;
    assert_eq!(job(|_| {}).unwrap().speaker_channels, None);
    assert_eq!(job(|p| p.speaker_channels = Some(true)).unwrap().speaker_channels, Some(true));
    assert_eq!(job(|p| p.speaker_channels = Some(false)).unwrap().speaker_channels, Some(false));
    // given false, a number of speakers may be asked for;
    let voices = job(|p| {
        p.speaker_channels = Some(false);
        p.number_of_speakers = Some(3);
    })
    .unwrap();
    assert_eq!((voices.speaker_channels, voices.number_of_speakers), (Some(false), 3));
    // given true, any numberOfSpeakers is refused naming speakerChannels: the channels are the speakers.
    for n in [0, 1, 2, 5] {
        rejects(
            job(|p| {
                p.speaker_channels = Some(true);
                p.number_of_speakers = Some(n);
            }),
            "speakerChannels",
            "speakerChannels=true makes each audio channel one speaker, so numberOfSpeakers cannot be given with \
             it: leave numberOfSpeakers out (the channels are the speakers)",
        );
    }
}

#[test]
fn an_unknown_language_is_rejected() {
    rejects(
        job(|p| p.language = s("xx")),
        "language",
        "language 'xx' is not a supported language code (for example en, nl, de-ch, auto)",
    );
    assert!(job(|p| p.language = s("auto")).unwrap().language.is_auto());
}

#[test]
fn a_language_the_engine_cannot_do_is_refused_for_direct_jobs_only() {
    rejects(
        job(|p| p.language = s("eo")),
        "language",
        "language eo (Esperanto) is not available for jobType direct; use jobType perfect",
    );
    assert!(
        job(|p| {
            p.language = s("eo");
            p.job_type = s("perfect");
        })
        .is_ok()
    );
}

#[test]
fn enum_parameters_name_their_allowed_values() {
    rejects(
        job(|p| p.transcription_type = s("subtitles")),
        "transcriptionType",
        "transcriptionType must be one of: transcription, captions, translatedSubtitles",
    );
    rejects(job(|p| p.job_type = s("DIRECT")), "jobType", "jobType must be one of: perfect, direct");
    rejects(
        job(|p| p.transcription_style = s("clean")),
        "transcriptionStyle",
        "transcriptionStyle must be one of: cleanread, verbatim",
    );
    rejects(
        job(|p| {
            p.job_type = s("perfect");
            p.turnaround_time = s("SOON");
        }),
        "turnaroundTime",
        "turnaroundTime must be one of: ONE_DAY, TWO_DAYS, THREE_DAYS, FOUR_DAYS, FIVE_DAYS, SEVEN_DAYS, TEN_DAYS, FOURTEEN_DAYS",
    );
}

#[test]
fn an_explicit_transcription_style_becomes_job_options() {
    let r = job(|p| p.transcription_style = s("verbatim")).unwrap();
    assert_eq!(r.job_options, Some(JobOptions { transcription_style: TranscriptionStyle::Verbatim }));
    let r = job(|p| p.transcription_style = s("cleanread")).unwrap();
    assert_eq!(r.job_options, Some(JobOptions { transcription_style: TranscriptionStyle::Cleanread }));
}

#[test]
fn transcription_style_is_refused_for_captions_and_subtitles() {
    for ty in ["captions", "translatedSubtitles"] {
        rejects(
            job(|p| {
                p.transcription_type = s(ty);
                p.transcription_style = s("verbatim");
                p.target_language = s("en");
            }),
            "transcriptionStyle",
            "transcriptionStyle applies only to transcriptionType transcription",
        );
    }
}

#[test]
fn turnaround_time_defaults_for_manual_jobs_and_is_refused_for_direct_ones() {
    let perfect = |ty: &str| {
        job(|p| {
            p.job_type = s("perfect");
            p.transcription_type = s(ty);
            p.target_language = (ty == "translatedSubtitles").then(|| "pl".to_owned());
        })
        .unwrap()
        .turnaround_time
    };
    assert_eq!(perfect("transcription"), Some(TurnaroundTime::FiveDays));
    assert_eq!(perfect("captions"), Some(TurnaroundTime::FiveDays));
    assert_eq!(perfect("translatedSubtitles"), Some(TurnaroundTime::SevenDays));
    let chosen = job(|p| {
        p.job_type = s("perfect");
        p.turnaround_time = s("ONE_DAY");
    });
    assert_eq!(chosen.unwrap().turnaround_time, Some(TurnaroundTime::OneDay));
    rejects(
        job(|p| p.turnaround_time = s("FIVE_DAYS")),
        "turnaroundTime",
        "turnaroundTime applies only to jobType perfect",
    );
}

#[test]
fn target_language_is_required_for_and_only_allowed_on_translated_subtitles() {
    rejects(
        job(|p| p.transcription_type = s("translatedSubtitles")),
        "targetLanguage",
        "targetLanguage is required when transcriptionType is translatedSubtitles",
    );
    rejects(
        job(|p| p.target_language = s("en")),
        "targetLanguage",
        "targetLanguage applies only to transcriptionType translatedSubtitles",
    );
    let direct = job(|p| {
        p.transcription_type = s("translatedSubtitles");
        p.target_language = s("uk");
    });
    assert_eq!(direct.unwrap().target_language.unwrap().code(), "uk");
}

#[test]
fn target_language_comes_from_the_list_of_the_job_type() {
    let with = |job_type: &str, target: &str| {
        job(|p| {
            p.job_type = s(job_type);
            p.transcription_type = s("translatedSubtitles");
            p.target_language = s(target);
        })
    };
    assert!(with("direct", "sv").is_ok());
    assert!(with("perfect", "ga").is_ok());
    assert_eq!(with("direct", "ga").unwrap_err().field, "targetLanguage");
    assert_eq!(with("perfect", "uk").unwrap_err().field, "targetLanguage");
}

#[test]
fn callback_url_must_be_absolute_http() {
    assert!(job(|p| p.callback_url = s("https://hooks.example.org/scribe?x=1")).unwrap().callback_url.is_some());
    for bad in ["hooks.example.org", "ftp://h/x", "not a url"] {
        assert_eq!(job(|p| p.callback_url = s(bad)).unwrap_err().field, "callbackUrl", "{bad}");
    }
}

#[test]
fn glossary_id_must_be_an_id() {
    assert_eq!(job(|p| p.glossary_id = s("g-1")).unwrap().glossary_id.unwrap().as_str(), "g-1");
    assert_eq!(job(|p| p.glossary_id = s("../etc")).unwrap_err().field, "glossaryId");
}

#[test]
fn a_url_job_needs_an_http_source_url() {
    let params = |url: Option<&str>| UrlJobParams { source_url: url.map(str::to_owned), job: JobParams::default() };
    rejects(params(None).validate(), "sourceUrl", "sourceUrl is required");
    assert_eq!(params(Some("file:///etc/passwd")).validate().unwrap_err().field, "sourceUrl");
    let (url, request) = params(Some("http://127.0.0.1:9/jfk.wav")).validate().unwrap();
    assert_eq!(url.file_name(), "jfk.wav");
    assert_eq!(request, job(|_| {}).unwrap());
}

#[test]
fn a_url_job_body_reads_the_spec_json_field_names() {
    let body = serde_json::json!({
        "sourceUrl": "https://example.org/a.mp3", "language": "nl", "transcriptionType": "captions",
        "jobType": "perfect", "numberOfSpeakers": 3, "callbackUrl": "https://example.org/cb",
        "glossaryId": "g1", "turnaroundTime": "TEN_DAYS"
    });
    let (_, r) = serde_json::from_value::<UrlJobParams>(body).unwrap().validate().unwrap();
    assert_eq!(r.language.code(), "nl");
    assert_eq!(r.transcription_type, TranscriptionType::Captions);
    assert_eq!(r.number_of_speakers, 3);
    assert_eq!(r.turnaround_time, Some(TurnaroundTime::TenDays));
    assert_eq!(r.glossary_id.unwrap().as_str(), "g1");
}

// --- POST /jobs/translatedSubtitles

fn translation(f: impl FnOnce(&mut TranslationParams)) -> Result<TranslationRequest, ValidationError> {
    let mut p = TranslationParams { source_job_id: s("j1"), target_language: s("pl"), ..Default::default() };
    f(&mut p);
    p.validate()
}

#[test]
fn a_translation_request_needs_a_source_job_and_a_perfect_target_language() {
    let r = translation(|_| {}).unwrap();
    assert_eq!(r.turnaround_time, TurnaroundTime::SevenDays);
    assert_eq!((r.source_job_id.as_str(), r.target_language.code()), ("j1", "pl"));
    rejects(translation(|p| p.source_job_id = None), "sourceJobId", "sourceJobId is required");
    rejects(translation(|p| p.target_language = None), "targetLanguage", "targetLanguage is required");
    assert_eq!(translation(|p| p.target_language = s("uk")).unwrap_err().field, "targetLanguage");
    assert_eq!(translation(|p| p.turnaround_time = s("TWO_DAYS")).unwrap().turnaround_time, TurnaroundTime::TwoDays);
}

#[test]
fn translation_notes_are_bounded() {
    assert_eq!(
        translation(|p| p.notes = s(&"n".repeat(MAX_NOTES_CHARS))).unwrap().notes.unwrap().len(),
        MAX_NOTES_CHARS
    );
    rejects(
        translation(|p| p.notes = s(&"n".repeat(MAX_NOTES_CHARS + 1))),
        "notes",
        "notes must be at most 5000 characters long",
    );
    assert_eq!(translation(|p| p.notes = s(" ")).unwrap().notes, None);
}

// --- GET /jobs

fn list(f: impl FnOnce(&mut ListJobsParams)) -> Result<JobFilter, ValidationError> {
    let mut p = ListJobsParams::default();
    f(&mut p);
    p.validate()
}

#[test]
fn listing_defaults_to_the_first_page_of_20() {
    let f = list(|_| {}).unwrap();
    assert_eq!((f.page, f.page_size, f.offset()), (0, 20, 0));
}

#[test]
fn listing_sorts_newest_first_unless_asked_by_name_or_length() {
    let f = list(|_| {}).unwrap();
    assert_eq!((f.sort_by, f.sort_direction), (JobSortField::Created, SortDirection::Desc));
    let f = list(|p| {
        p.sort_by = s("filename");
        p.sort_direction = s("ASC");
    })
    .unwrap();
    assert_eq!((f.sort_by, f.sort_direction), (JobSortField::Filename, SortDirection::Asc));
    assert_eq!(list(|p| p.sort_by = s("nrAudioSeconds")).unwrap().sort_by, JobSortField::NrAudioSeconds);
    rejects(list(|p| p.sort_by = s("name")), "sortBy", "sortBy must be one of: created, filename, nrAudioSeconds");
    rejects(list(|p| p.sort_direction = s("up")), "sortDirection", "sortDirection must be one of: DESC, ASC");
}

#[test]
fn page_size_is_accepted_from_1_to_100() {
    assert_eq!(list(|p| p.page_size = Some(1)).unwrap().page_size, 1);
    assert_eq!(list(|p| p.page_size = Some(100)).unwrap().page_size, 100);
    for n in [0, 101, -1] {
        rejects(list(|p| p.page_size = Some(n)), "pageSize", "pageSize must be between 1 and 100");
    }
}

#[test]
fn pages_count_from_zero() {
    let f = list(|p| {
        p.page = Some(3);
        p.page_size = Some(10);
    })
    .unwrap();
    assert_eq!(f.offset(), 30);
    rejects(list(|p| p.page = Some(-1)), "page", "page must be 0 or more (pages count from 0)");
    let far = list(|p| {
        p.page = Some(i64::MAX);
        p.page_size = Some(100);
    });
    assert_eq!(far.unwrap().offset(), u64::MAX, "a far page saturates instead of overflowing");
}

#[test]
fn the_status_filter_accepts_open_error_and_done_only() {
    for st in ["OPEN", "ERROR", "DONE"] {
        assert_eq!(list(|p| p.status = s(st)).unwrap().status.unwrap().as_str(), st);
    }
    for bad in ["BUSY", "open", "FINISHED"] {
        rejects(list(|p| p.status = s(bad)), "status", "status must be one of: OPEN, ERROR, DONE");
    }
}

#[test]
fn list_filters_are_parsed() {
    let f = list(|p| {
        p.job_id = s("j1");
        p.job_type = s("perfect");
        p.transcription_type = s("captions");
    })
    .unwrap();
    assert_eq!(f.job_id.unwrap().as_str(), "j1");
    assert_eq!(f.job_type, Some(JobType::Perfect));
    assert_eq!(f.transcription_type, Some(TranscriptionType::Captions));
    assert_eq!(list(|p| p.job_type = s("auto")).unwrap_err().field, "jobType");
}

#[test]
fn the_list_filter_matches_on_every_given_field() {
    let job = crate::job::Job {
        job_id: JobId::parse("j1").unwrap(),
        created: 1,
        language: Language::parse("en").unwrap(),
        status: JobStatus::Done,
        nr_audio_seconds: 11,
        transcription_type: TranscriptionType::Transcription,
        filename: "a.wav".into(),
        job_type: JobType::Direct,
        notes: None,
        job_options: None,
        source_job_id: None,
        target_language: None,
        error_msg: None,
        delete_after_seconds: None,
        finished_ms: Some(2),
        expired: false,
        progress: None,
    };
    assert!(list(|_| {}).unwrap().matches(&job));
    assert!(list(|p| p.status = s("DONE")).unwrap().matches(&job));
    assert!(!list(|p| p.status = s("OPEN")).unwrap().matches(&job));
    assert!(!list(|p| p.job_id = s("j2")).unwrap().matches(&job));
    assert!(!list(|p| p.job_type = s("perfect")).unwrap().matches(&job));
    assert!(!list(|p| p.transcription_type = s("captions")).unwrap().matches(&job));
    let all = list(|p| {
        p.job_id = s("j1");
        p.job_type = s("direct");
        p.status = s("DONE");
        p.transcription_type = s("transcription");
    });
    assert!(all.unwrap().matches(&job));
}

// --- Glossaries

fn glossary(f: impl FnOnce(&mut GlossaryParams)) -> Result<GlossaryContent, ValidationError> {
    let mut p = GlossaryParams { name: s("Team"), ..Default::default() };
    f(&mut p);
    p.validate()
}

fn item(name: Option<&str>, description: Option<&str>) -> GlossaryItemParams {
    GlossaryItemParams { name: name.map(str::to_owned), description: description.map(str::to_owned) }
}

#[test]
fn a_glossary_needs_a_name_of_at_most_60_characters() {
    rejects(glossary(|p| p.name = None), "name", "name is required");
    rejects(glossary(|p| p.name = s("   ")), "name", "name is required");
    assert!(glossary(|p| p.name = s(&"é".repeat(60))).is_ok(), "60 characters, 120 bytes");
    rejects(glossary(|p| p.name = s(&"a".repeat(61))), "name", "name must be at most 60 characters long");
}

#[test]
fn glossary_names_are_at_most_250_of_at_most_20_characters() {
    assert_eq!(glossary(|p| p.names = Some(vec!["n".repeat(20); 250])).unwrap().names.len(), 250);
    rejects(glossary(|p| p.names = Some(vec!["n".into(); 251])), "names", "names must have at most 250 entries");
    rejects(
        glossary(|p| p.names = Some(vec!["ok".into(), "n".repeat(21)])),
        "names[1]",
        "names[1] must be at most 20 characters long",
    );
    rejects(glossary(|p| p.names = Some(vec!["".into()])), "names[0]", "names[0] must not be empty");
}

#[test]
fn glossary_items_are_at_most_750_with_bounded_names_and_descriptions() {
    let many = |n: usize| Some(vec![item(Some("term"), None); n]);
    assert_eq!(glossary(|p| p.items = many(750)).unwrap().items.len(), 750);
    rejects(glossary(|p| p.items = many(751)), "items", "items must have at most 750 entries");
    assert!(glossary(|p| p.items = Some(vec![item(Some(&"t".repeat(60)), Some(&"d".repeat(200)))])).is_ok());
    rejects(
        glossary(|p| p.items = Some(vec![item(Some("a"), None), item(Some(&"t".repeat(61)), None)])),
        "items[1].name",
        "items[1].name must be at most 60 characters long",
    );
    rejects(
        glossary(|p| p.items = Some(vec![item(Some("a"), Some(&"d".repeat(201)))])),
        "items[0].description",
        "items[0].description must be at most 200 characters long",
    );
    rejects(glossary(|p| p.items = Some(vec![item(None, Some("x"))])), "items[0].name", "items[0].name is required");
}

#[test]
fn a_glossary_body_reads_the_spec_json_and_ignores_returned_only_fields() {
    let body = serde_json::json!({
        "name": "Team", "names": ["Ada"], "items": [{"name": "ASR", "description": "speech recognition"}],
        "id": "ignored", "userName": "ignored", "created": 1
    });
    let content = serde_json::from_value::<GlossaryParams>(body).unwrap().validate().unwrap();
    assert_eq!(content.items[0].description.as_deref(), Some("speech recognition"));
}

#[test]
fn glossary_sorting_defaults_to_newest_first() {
    let sort = ListGlossariesParams::default().validate().unwrap();
    assert_eq!((sort.by, sort.direction), (GlossarySortField::Created, SortDirection::Desc));
    let sort = ListGlossariesParams { sort_by: s("userName"), sort_direction: s("ASC") }.validate().unwrap();
    assert_eq!((sort.by, sort.direction), (GlossarySortField::UserName, SortDirection::Asc));
    rejects(
        ListGlossariesParams { sort_by: s("names"), sort_direction: None }.validate(),
        "sortBy",
        "sortBy must be one of: id, name, created, userName",
    );
    rejects(
        ListGlossariesParams { sort_by: None, sort_direction: s("UP") }.validate(),
        "sortDirection",
        "sortDirection must be one of: DESC, ASC",
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn number_of_speakers_is_valid_exactly_in_0_to_5(n in any::<i64>()) {
            let ok = job(|p| p.number_of_speakers = Some(n)).is_ok();
            prop_assert_eq!(ok, (0..=5).contains(&n));
        }

        #[test]
        fn page_size_is_valid_exactly_in_1_to_100(n in any::<i64>()) {
            prop_assert_eq!(list(|p| p.page_size = Some(n)).is_ok(), (1..=100).contains(&n));
        }

        #[test]
        fn glossary_name_is_valid_exactly_up_to_60_characters(name in "[a-zé ]{1,80}") {
            let ok = glossary(|p| p.name = Some(name.clone())).is_ok();
            prop_assert_eq!(ok, !name.trim().is_empty() && name.chars().count() <= 60);
        }

        #[test]
        fn validation_never_panics_on_arbitrary_text(
            language in any::<Option<String>>(), ty in any::<Option<String>>(), jt in any::<Option<String>>(),
            cb in any::<Option<String>>(), style in any::<Option<String>>(), tat in any::<Option<String>>(),
            target in any::<Option<String>>(), glossary_id in any::<Option<String>>(), n in any::<Option<i64>>(),
            keep in any::<Option<i64>>(), channels in any::<Option<bool>>(),
        ) {
            let _ = JobParams {
                language, transcription_type: ty, job_type: jt, number_of_speakers: n, callback_url: cb,
                glossary_id, transcription_style: style, turnaround_time: tat, target_language: target,
                delete_after_seconds: keep, speaker_channels: channels,
            }.validate();
        }
    }
}
