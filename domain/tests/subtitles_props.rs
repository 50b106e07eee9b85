//! Property tests of subtitle segmentation: for generated word streams (random words, unicode text,
//! over-long words, durations, pauses, overlaps, speaker changes) and every parameter combination in
//! bounds, every hard limit holds and every word comes out once, whole, in order; with speaker
//! labels (SRT's `includeSpeakers`) too, the label counted in the row and at every change of speaker.

use proptest::prelude::*;
use scribe_domain::export::params::SubtitleParams;
use scribe_domain::subtitles::{Cue, MIN_GAP, report, segment, segment_with_labels};
use scribe_domain::transcript::{TimedWord, one_line};

fn word_text() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[a-z]{1,9}[,.?!]?",
        2 => "[A-Z][a-z]{0,8}",
        2 => "(é|ü|ç|ø|ß|日本|😀|e\u{301}|ñ|œ)[a-zà-ÿ]{0,6}",
        1 => "[a-z]{20,100}",
        1 => "( |\t|\n|\u{a0}|[a-z]+ [a-z]+)",
    ]
}

/// (text, duration, pause before, speaker) for each word.
fn stream() -> impl Strategy<Value = Vec<(String, f64, f64, u8)>> {
    prop::collection::vec(
        (word_text(), 0.0f64..3.0, prop_oneof![6 => 0.0f64..0.4, 2 => 0.4f64..3.0, 1 => -0.5f64..0.0], 0u8..3),
        0..200,
    )
}

fn params() -> impl Strategy<Value = SubtitleParams> {
    (30i64..=45, 1i64..=2, 1.0f64..=10.0).prop_map(|(c, r, s)| SubtitleParams::new(Some(c), Some(r), Some(s)).unwrap())
}

fn build(items: &[(String, f64, f64, u8)], sticky_speakers: bool) -> Vec<TimedWord> {
    let mut t = 0.0;
    let mut words = Vec::new();
    let mut speaker = 0u8;
    for (text, dur, pause, spk) in items {
        t = (t + pause).max(0.0);
        // Speakers change now and then rather than at every word, like real turns.
        if !sticky_speakers || *spk == 0 {
            speaker = *spk;
        }
        words.push(TimedWord { start: t, end: t + dur, text: text.clone(), speaker: format!("S{speaker}") });
        t += dur;
    }
    words
}

/// The tokens segmentation must show, with their speakers: whitespace-separated, cut into
/// row-sized pieces only when longer than a row.
fn expected_tokens(words: &[TimedWord], max_chars: usize) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for w in words {
        let clean: String = w.text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
        for token in clean.split_whitespace() {
            let chars: Vec<char> = token.chars().collect();
            for piece in chars.chunks(max_chars) {
                out.push((piece.iter().collect(), w.speaker.clone()));
            }
        }
    }
    out
}

fn shown_tokens(cues: &[Cue]) -> Vec<(String, String)> {
    cues.iter()
        .flat_map(|c| c.lines.iter().flat_map(move |l| l.split(' ').map(move |t| (t.to_owned(), c.speaker.clone()))))
        .collect()
}

fn check_hard_limits(words: &[TimedWord], p: &SubtitleParams, cues: &[Cue]) -> Result<(), TestCaseError> {
    check_rows_and_times(p, cues)?;
    // Every word once, whole (unless longer than a row), in order, under its own speaker.
    prop_assert_eq!(shown_tokens(cues), expected_tokens(words, p.max_chars_per_row()));
    Ok(())
}

fn check_rows_and_times(p: &SubtitleParams, cues: &[Cue]) -> Result<(), TestCaseError> {
    for (k, c) in cues.iter().enumerate() {
        prop_assert!(!c.lines.is_empty() && c.lines.len() <= p.max_rows(), "rows of cue {k}: {:?}", c.lines);
        for l in &c.lines {
            prop_assert!(!l.is_empty() && l.trim() == l, "empty or padded row in cue {k}: {l:?}");
            prop_assert!(l.chars().count() <= p.max_chars_per_row(), "row too long in cue {k}: {l:?}");
        }
        prop_assert!(c.start.is_finite() && c.end > c.start, "cue {k} has no duration: {c:?}");
        let limit = c.lines.len() as f64 * p.max_screen_time_per_row();
        prop_assert!(c.duration() <= limit + 1e-9, "cue {k} stays {} s > {limit} s", c.duration());
        if k > 0 {
            let prev = &cues[k - 1];
            prop_assert!(
                c.start >= prev.end + MIN_GAP - 1e-9,
                "cue {k} starts {} before gap after {}",
                c.start,
                prev.end
            );
        }
    }
    prop_assert_eq!(report(cues, p).hard_violations(), 0);
    Ok(())
}

/// Names for speakers `S0`..`S2`: plain, long, blank, with line breaks and markup.
fn names() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(
        prop_oneof![
            "[A-Z][a-z]{1,8}( [A-Z][a-z]{1,12})?",
            "[A-Za-zé<>&:. ]{0,60}",
            "( |\n|\t){0,3}",
            "[a-z]{1,5}\n[a-z]{1,5}",
        ],
        3,
    )
}

/// With labels: the hard limits hold with the label in the row; each cue whose speaker differs
/// from the previous cue's begins with its label (the name on one line, or its start and `…`),
/// and no other does; without the labels, the words are all there, in order.
fn check_labelled(
    words: &[TimedWord],
    p: &SubtitleParams,
    cues: &[Cue],
    names: &[String],
) -> Result<(), TestCaseError> {
    check_rows_and_times(p, cues)?;
    let name_of = |spk: &str| one_line(&names[spk[1..].parse::<usize>().unwrap()]);
    let mut spoken = String::new();
    for (k, c) in cues.iter().enumerate() {
        let name = name_of(&c.speaker);
        let changes = k == 0 || cues[k - 1].speaker != c.speaker;
        // The label may sit alone on the first row when the words need both rows.
        let mut text = c.lines.join(" ");
        if changes && !name.is_empty() {
            let whole = format!("{name}: ");
            let label_len = if text.starts_with(&whole) {
                whole.len()
            } else {
                // Names never hold `…`: a cut name is a start of the name, then `…: `.
                let cut = text.find("…: ");
                prop_assert!(
                    cut.is_some_and(|i| name.starts_with(text[..i].trim_end())),
                    "cue {k} lacks the label of {name:?}: {text:?}"
                );
                cut.unwrap() + "…: ".len()
            };
            text = text[label_len..].to_owned();
        }
        spoken.extend(text.split(' '));
    }
    let expected: String = expected_tokens(words, p.max_chars_per_row()).into_iter().map(|(t, _)| t).collect();
    prop_assert_eq!(spoken, expected);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn hard_limits_hold_for_any_stream_and_parameters(items in stream(), p in params(), sticky in any::<bool>()) {
        let words = build(&items, sticky);
        let cues = segment(&words, &p);
        check_hard_limits(&words, &p, &cues)?;
    }

    #[test]
    fn labelled_cues_keep_the_limits_and_every_word(
        items in stream(), p in params(), sticky in any::<bool>(), names in names(),
    ) {
        let words = build(&items, sticky);
        let cues = segment_with_labels(&words, &p, &|spk: &str| names[spk[1..].parse::<usize>().unwrap()].clone());
        check_labelled(&words, &p, &cues, &names)?;
    }

    #[test]
    fn messy_times_never_break_the_limits(
        items in prop::collection::vec((word_text(), -5.0f64..100.0, -5.0f64..100.0, 0u8..2), 0..60),
        p in params(),
    ) {
        // Unordered, reversed, negative and non-finite times.
        let mut words: Vec<TimedWord> = items
            .iter()
            .map(|(text, a, b, s)| TimedWord { start: *a, end: *b, text: text.clone(), speaker: format!("S{s}") })
            .collect();
        if let Some(w) = words.first_mut() { w.end = f64::NAN; }
        if let Some(w) = words.last_mut() { w.start = f64::INFINITY; }
        let cues = segment(&words, &p);
        let kept: Vec<TimedWord> = words.into_iter().filter(|w| w.start.is_finite()).collect();
        check_hard_limits(&kept, &p, &cues)?;
    }
}
