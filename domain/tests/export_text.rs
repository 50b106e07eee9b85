//! SRT, VTT, TXT and JSON rendered from a whole transcript: the spec's text formats, and the
//! edge cases (an empty transcript, a speaker change inside a sentence, text that needs escaping).

use scribe_domain::export::json::render_json;
use scribe_domain::export::params::{SubtitleParams, TxtParams};
use scribe_domain::export::srt::render_srt;
use scribe_domain::export::txt::render_txt;
use scribe_domain::export::vtt::render_vtt;
use scribe_domain::transcript::{Segment, Speaker, Transcript, Word};

/// (start, end, text) of a word.
type W<'a> = (f64, f64, &'a str);

fn transcript(segments: Vec<(&str, Vec<W>)>) -> Transcript {
    Transcript {
        id: "j".into(),
        record_id: "j".into(),
        filename: "f.wav".into(),
        start_time_offset: 0.0,
        speakers: vec![
            Speaker { spkid: "S1".into(), name: "Speaker 1".into() },
            Speaker { spkid: "S2".into(), name: "Speaker 2".into() },
        ],
        segments: segments
            .into_iter()
            .map(|(s, words)| Segment {
                speaker: s.into(),
                words: words
                    .into_iter()
                    .map(|(a, b, t)| Word { start: a, end: b, text: t.into(), conf: 1.0, pristine: true })
                    .collect(),
            })
            .collect(),
        highlights: vec![],
    }
}

#[test]
fn empty_transcript_renders_empty_documents() {
    let t = transcript(vec![]);
    let p = SubtitleParams::default();
    assert_eq!(render_srt(&t, &p), "");
    assert_eq!(render_vtt(&t, &p), "WEBVTT - Created by Scribe\n");
    assert_eq!(render_txt(&t, &TxtParams::default()), "");
    assert_eq!(
        render_json(&t),
        r#"{"id":"j","recordId":"j","filename":"f.wav","startTimeOffset":0.0,"speakers":[{"spkid":"S1","name":"Speaker 1"},{"spkid":"S2","name":"Speaker 2"}],"segments":[],"highlights":[]}"#
    );
}

#[test]
fn a_speaker_change_starts_a_new_cue_and_paragraph() {
    let t = transcript(vec![
        ("S1", vec![(0.0, 0.4, "Are"), (0.4, 0.8, "you")]),
        ("S2", vec![(0.8, 1.2, "sure?"), (1.2, 1.6, "Yes.")]),
    ]);
    let srt = render_srt(&t, &SubtitleParams::default());
    assert_eq!(srt, "1\n00:00:00,000 --> 00:00:00,716\nAre you\n\n2\n00:00:00,800 --> 00:00:01,633\nsure? Yes.\n");
    let vtt = render_vtt(&t, &SubtitleParams::default());
    assert_eq!(
        vtt,
        "WEBVTT - Created by Scribe\n\n1\n00:00:00.000 --> 00:00:00.716\nAre you\n\n2\n00:00:00.800 --> 00:00:01.633\nsure? Yes.\n"
    );
    let txt = render_txt(&t, &TxtParams::default());
    assert_eq!(txt, "00:00:00\nSpeaker 1: Are you\n\n00:00:00\nSpeaker 2: sure? Yes.\n");
}
