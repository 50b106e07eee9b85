//! Quality of segmentation on real-looking speech: the Gettysburg Address as read in the corpus clip
//! `en_synth_gettysburg_2voices.wav` (its speaker turns, words timed in proportion to their length)
//! and a 30-minute stream of the same words at varying speaking rates with pauses and speaker
//! changes. Asserts the hard limits and the goals of issue 4 and prints the quality report.

use scribe_domain::export::params::SubtitleParams;
use scribe_domain::subtitles::{Cue, QualityReport, report, segment};
use scribe_domain::transcript::TimedWord;

const GETTYSBURG: &str = "Four score and seven years ago our fathers brought forth on this continent a new nation, conceived in liberty, and dedicated to the proposition that all men are created equal. Now we are engaged in a great civil war, testing whether that nation, or any nation so conceived and so dedicated, can long endure. We are met on a great battlefield of that war. We have come to dedicate a portion of that field, as a final resting place for those who here gave their lives that that nation might live. It is altogether fitting and proper that we should do this. But, in a larger sense, we can not dedicate, we can not consecrate, we can not hallow this ground. The brave men, living and dead, who struggled here, have consecrated it, far above our poor power to add or detract. The world will little note, nor long remember what we say here, but it can never forget what they did here. It is for us the living, rather, to be dedicated here to the unfinished work which they who fought here have thus far so nobly advanced. It is rather for us to be here dedicated to the great task remaining before us, that from these honored dead we take increased devotion to that cause for which they gave the last full measure of devotion. That we here highly resolve that these dead shall not have died in vain, that this nation, under God, shall have a new birth of freedom, and that government of the people, by the people, for the people, shall not perish from the earth.";

/// Speaker turns of the corpus clip (audio/ref/en_synth_gettysburg_2voices.turns.tsv).
const TURNS: &[(f64, f64, &str)] = &[
    (0.0, 11.27, "S1"),
    (12.07, 21.304, "S2"),
    (22.104, 33.594, "S1"),
    (34.394, 45.124, "S2"),
    (45.924, 54.172, "S1"),
    (54.972, 61.715, "S2"),
    (62.514, 71.334, "S1"),
    (72.134, 84.236, "S2"),
    (85.036, 99.362, "S1"),
];

/// The address spread over the turns: each turn gets a share of the words in proportion to its
/// length, each word a share of its turn in proportion to its characters plus a pause weight
/// after punctuation.
fn gettysburg() -> Vec<TimedWord> {
    let words: Vec<&str> = GETTYSBURG.split(' ').collect();
    let total: f64 = TURNS.iter().map(|t| t.1 - t.0).sum();
    let mut out = Vec::new();
    let mut next = 0;
    for (k, &(start, end, speaker)) in TURNS.iter().enumerate() {
        let take = if k + 1 == TURNS.len() {
            words.len() - next
        } else {
            ((end - start) / total * words.len() as f64).round() as usize
        };
        let turn = &words[next..next + take];
        next += take;
        let weight = |w: &str| w.len() as f64 + 1.0 + if w.ends_with([',', '.']) { 4.0 } else { 0.0 };
        let unit = (end - start) / turn.iter().map(|w| weight(w)).sum::<f64>();
        let mut t = start;
        for w in turn {
            let spoken = (w.len() as f64 + 1.0) * unit;
            out.push(TimedWord { start: t, end: t + spoken, text: w.to_string(), speaker: speaker.into() });
            t += weight(w) * unit;
        }
    }
    out
}

/// A deterministic pseudo-random stream of `minutes` of speech: the address's words over and
/// over, 2 to 3.5 words a second, pauses after punctuation, a new speaker every 10 to 60 s.
fn long_stream(minutes: f64) -> Vec<TimedWord> {
    let words: Vec<&str> = GETTYSBURG.split(' ').collect();
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let (mut t, mut out, mut speaker, mut turn_end) = (0.0, Vec::new(), 0, 0.0);
    let mut rate = 2.5;
    for w in words.iter().cycle() {
        if t >= minutes * 60.0 {
            break;
        }
        if t >= turn_end {
            speaker = (speaker + 1) % 3;
            turn_end = t + 10.0 + 50.0 * rand();
            rate = 2.0 + 1.5 * rand();
            t += 0.3 + rand();
        }
        let spoken = (w.len() as f64 + 1.0) / (6.0 * rate) * (0.7 + 0.6 * rand());
        out.push(TimedWord { start: t, end: t + spoken, text: w.to_string(), speaker: format!("S{speaker}") });
        t += spoken
            + if w.ends_with('.') {
                0.3 + 0.5 * rand()
            } else if w.ends_with(',') {
                0.15 + 0.2 * rand()
            } else {
                0.02 * rand()
            };
    }
    out
}

fn measured(name: &str, words: &[TimedWord], p: &SubtitleParams) -> (Vec<Cue>, QualityReport) {
    let cues = segment(words, p);
    let r = report(&cues, p);
    println!("== {name}: {} words, {:?}\n{r}\n", words.len(), p);
    (cues, r)
}

#[test]
fn gettysburg_meets_hard_limits_and_goals() {
    let words = gettysburg();
    let (cues, r) = measured("Gettysburg, 2 voices, 100 s", &words, &SubtitleParams::default());
    for c in &cues {
        println!("{:7.3} {:7.3}  {}", c.start, c.end, c.lines.join(" | "));
    }
    assert_eq!(r.hard_violations(), 0, "{r}");
    assert!(r.within_reading_speed >= 0.95, "{r}");
    assert_eq!(r.gaps_under_two_frames, 0, "{r}");
    assert!(r.min_duration >= 5.0 / 6.0 - 1e-3, "{r}");
    // Sentence ends close cues: no cue carries a sentence end in the middle of a row.
    for c in &cues {
        for line in &c.lines {
            let inner = &line[..line.len() - 1];
            assert!(!inner.contains(". "), "sentence end inside a row: {line:?}");
        }
    }
}

#[test]
fn long_stream_meets_hard_limits_and_goals_for_every_profile() {
    let words = long_stream(30.0);
    for (chars, rows, secs) in [(42, 2, 2.0), (37, 2, 2.0), (45, 2, 10.0), (30, 2, 3.5), (42, 1, 2.0), (30, 1, 1.0)] {
        let p = SubtitleParams::new(Some(chars), Some(rows), Some(secs)).unwrap();
        let (_, r) = measured("synthetic 30 min, 3 speakers", &words, &p);
        assert_eq!(r.hard_violations(), 0, "{r}");
        // One row of at most one second cannot hold speech at 20 chars/s: only the limits apply.
        if secs * rows as f64 >= 2.0 {
            assert!(r.within_reading_speed >= 0.95, "{p:?}\n{r}");
        }
    }
}

/// JFK's sentence from corpus/audio/en_jfk.wav with plausible word times: cues break at the
/// pauses and the commas, rows split before "can" and "for", never after "you" or "do".
#[test]
fn jfk_breaks_where_a_subtitler_would() {
    let jfk = [
        (0.30, 0.52, "And"),
        (0.52, 0.80, "so"),
        (0.80, 1.10, "my"),
        (1.10, 1.50, "fellow"),
        (1.50, 2.30, "Americans,"),
        (3.30, 3.70, "ask"),
        (3.70, 4.30, "not"),
        (5.40, 5.70, "what"),
        (5.70, 5.95, "your"),
        (5.95, 6.45, "country"),
        (6.45, 6.75, "can"),
        (6.75, 7.05, "do"),
        (7.05, 7.30, "for"),
        (7.30, 7.80, "you,"),
        (8.20, 8.50, "ask"),
        (8.50, 8.75, "what"),
        (8.75, 8.95, "you"),
        (8.95, 9.20, "can"),
        (9.20, 9.45, "do"),
        (9.45, 9.70, "for"),
        (9.70, 9.95, "your"),
        (9.95, 10.55, "country."),
    ];
    let words: Vec<TimedWord> = jfk
        .iter()
        .map(|&(start, end, text)| TimedWord { start, end, text: text.into(), speaker: "S1".into() })
        .collect();
    let (cues, r) = measured("JFK", &words, &SubtitleParams::default());
    let rows: Vec<Vec<&str>> = cues.iter().map(|c| c.lines.iter().map(String::as_str).collect()).collect();
    assert_eq!(
        rows,
        vec![
            vec!["And so my fellow Americans,"],
            vec!["ask not"],
            vec!["what your country", "can do for you,"],
            vec!["ask what you can do", "for your country."],
        ]
    );
    assert_eq!(r.hard_violations(), 0);
    assert_eq!(r.within_reading_speed, 1.0);
}
