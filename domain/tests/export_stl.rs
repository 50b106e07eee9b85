//! Byte-level checks of the EBU-STL writer: GSI fields at their Tech 3264 offsets, TTI blocks
//! (numbering, extension blocks, binary 25 fps timecodes, position, text field, 0x8F padding),
//! ISO 6937 accents, and the file length 1024 + 128 × TNB.

use scribe_domain::export::params::SubtitleParams;
use scribe_domain::export::stl::{StlDate, StlError, StlInfo, cues_to_stl, encode_iso6937, render_stl};
use scribe_domain::subtitles::Cue;
use scribe_domain::transcript::{Segment, Speaker, Transcript, Word};

fn info(language: &str) -> StlInfo<'_> {
    StlInfo {
        programme_title: "jfk.wav",
        language,
        created: StlDate { year: 2026, month: 11, day: 22 },
        revised: StlDate { year: 2026, month: 12, day: 1 },
    }
}

fn cue(start: f64, end: f64, lines: &[&str]) -> Cue {
    Cue { start, end, lines: lines.iter().map(|l| l.to_string()).collect(), speaker: "S1".into() }
}

fn field(bytes: &[u8], offset: usize, len: usize) -> &str {
    std::str::from_utf8(&bytes[offset..offset + len]).unwrap()
}

fn tti(bytes: &[u8], n: usize) -> &[u8] {
    &bytes[1024 + 128 * n..1024 + 128 * (n + 1)]
}

#[test]
fn gsi_fields_sit_at_their_offsets() {
    let p = SubtitleParams::stl(None, None).unwrap();
    let cues =
        [cue(3.48, 5.0, &["And so my fellow Americans,"]), cue(5.2, 8.0, &["ask not", "what your country can do"])];
    let stl = cues_to_stl(&cues, &p, &info("en-us")).unwrap();
    assert_eq!(stl.len(), 1024 + 128 * 2);
    let expected = [
        (0, 3, "850"),
        (3, 8, "STL25.01"),
        (11, 1, "1"),
        (12, 2, "00"),
        (14, 2, "09"),
        (16, 32, "jfk.wav                         "),
        (48, 32, &" ".repeat(32)),
        (224, 6, "261122"),
        (230, 6, "261201"),
        (236, 2, "00"),
        (238, 5, "00002"),
        (243, 5, "00002"),
        (248, 3, "001"),
        (251, 2, "40"),
        (253, 2, "23"),
        (255, 1, "1"),
        (256, 8, "00000000"),
        (264, 8, "00000312"),
        (272, 1, "1"),
        (273, 1, "1"),
        (274, 3, "USA"),
        (277, 32, &" ".repeat(32)),
        (373, 75, &" ".repeat(75)),
        (448, 576, &" ".repeat(576)),
    ];
    for (offset, len, value) in expected {
        assert_eq!(field(&stl, offset, len), value, "GSI field at {offset}");
    }
    assert_eq!(field(&cues_to_stl(&cues, &p, &info("fr")).unwrap(), 14, 2), "0F");
    assert_eq!(field(&cues_to_stl(&cues, &p, &info("auto")).unwrap(), 14, 5), "00jfk");
    assert_eq!(field(&cues_to_stl(&cues, &p, &info("fr")).unwrap(), 274, 3), "   ");
}

#[test]
fn tti_blocks_carry_numbers_timecodes_position_and_padded_text() {
    let p = SubtitleParams::stl(None, None).unwrap();
    let cues = [cue(3.48, 5.0, &["And so"]), cue(3661.0, 3662.48, &["ask not", "what"])];
    let stl = cues_to_stl(&cues, &p, &info("en")).unwrap();

    let first = tti(&stl, 0);
    assert_eq!(&first[..5], &[0x00, 0x01, 0x00, 0xFF, 0x00], "SGN, SN (LE), EBN, CS");
    assert_eq!(&first[5..9], &[0, 0, 3, 12], "TCI 00:00:03:12");
    assert_eq!(&first[9..13], &[0, 0, 5, 0], "TCO 00:00:05:00");
    assert_eq!(&first[13..16], &[22, 2, 0], "VP one row at 22, centred, not a comment");
    let text = [&[0x0D, 0x0B, 0x0B][..], b"And so", &[0x0A, 0x0A]].concat();
    assert_eq!(&first[16..16 + text.len()], &text[..]);
    assert!(first[16 + text.len()..].iter().all(|&b| b == 0x8F), "unused text bytes are 0x8F");

    let second = tti(&stl, 1);
    assert_eq!(&second[1..3], &[0x02, 0x00]);
    assert_eq!(&second[5..9], &[1, 1, 1, 0], "TCI 01:01:01:00");
    assert_eq!(&second[9..13], &[1, 1, 2, 12], "TCO 01:01:02:12");
    assert_eq!(second[13], 20, "two double-height rows start at row 20");
    let text =
        [&[0x0D, 0x0B, 0x0B][..], b"ask not", &[0x0A, 0x0A, 0x8A, 0x8A, 0x0D, 0x0B, 0x0B], b"what", &[0x0A, 0x0A]]
            .concat();
    assert_eq!(&second[16..16 + text.len()], &text[..]);
}

#[test]
fn accents_are_two_bytes_diacritic_first() {
    assert_eq!(encode_iso6937("été"), vec![0xC2, b'e', b't', 0xC2, b'e']);
    assert_eq!(
        encode_iso6937("Über façade"),
        vec![0xC8, b'U', b'b', b'e', b'r', b' ', b'f', b'a', 0xCB, b'c', b'a', b'd', b'e']
    );
    assert_eq!(encode_iso6937("e\u{301}"), vec![0xC2, b'e'], "decomposed input is composed first");
    assert_eq!(encode_iso6937("ß Ø ’ ♪ €"), vec![0xFB, b' ', 0xE9, b' ', 0xB9, b' ', 0xD5, b' ', b'?']);
}

#[test]
fn long_text_continues_in_extension_blocks() {
    let p = SubtitleParams::stl(None, None).unwrap();
    let row = "é".repeat(37); // 74 bytes + 5 control bytes per row: two rows need 160 bytes
    let stl = cues_to_stl(&[cue(1.0, 3.0, &[&row, &row]), cue(4.0, 5.0, &["fin"])], &p, &info("fr")).unwrap();
    assert_eq!(field(&stl, 238, 5), "00003", "TNB counts extension blocks");
    assert_eq!(field(&stl, 243, 5), "00002", "TNS counts subtitles");
    assert_eq!(stl.len(), 1024 + 128 * 3);
    let (a, b) = (tti(&stl, 0), tti(&stl, 1));
    assert_eq!((a[3], b[3]), (0x00, 0xFF), "EBN 0 then last");
    assert_eq!((&a[1..3], &a[5..13]), (&b[1..3], &b[5..13]), "same SN and timecodes");
    let joined: Vec<u8> = [&a[16..], &b[16..]].concat().into_iter().filter(|&x| x != 0x8F).collect();
    let row_bytes = encode_iso6937(&row);
    let expected =
        [&[0x0D, 0x0B, 0x0B][..], &row_bytes, &[0x0A, 0x0A, 0x8A, 0x8A, 0x0D, 0x0B, 0x0B], &row_bytes, &[0x0A, 0x0A]]
            .concat();
    assert_eq!(joined, expected);
    assert!(a[16..].iter().all(|&x| x != 0x8F) || a[16..].ends_with(&[0x8F]), "a block splits between characters");
    assert_eq!(tti(&stl, 2)[1..4], [0x02, 0x00, 0xFF]);
}

#[test]
fn timecodes_honour_the_screen_time_limit_and_stay_apart() {
    let p = SubtitleParams::stl(Some(1), Some(1.5)).unwrap();
    let t = Transcript {
        id: "j".into(),
        record_id: "j".into(),
        filename: "f.wav".into(),
        start_time_offset: 0.0,
        speakers: vec![Speaker { spkid: "S1".into(), name: "Speaker 1".into() }],
        segments: vec![Segment {
            speaker: "S1".into(),
            words: (0..40)
                .map(|k| Word {
                    start: k as f64 * 0.4,
                    end: k as f64 * 0.4 + 0.35,
                    text: format!("wörd{k}"),
                    conf: 0.9,
                    pristine: true,
                })
                .collect(),
        }],
        highlights: vec![],
    };
    let stl = render_stl(&t, &p, &info("de")).unwrap();
    let tnb: usize = field(&stl, 238, 5).parse().unwrap();
    assert_eq!(stl.len(), 1024 + 128 * tnb);
    let frames = |b: &[u8]| ((b[0] as u32 * 60 + b[1] as u32) * 60 + b[2] as u32) * 25 + b[3] as u32;
    let mut prev_out = 0;
    for n in 0..tnb {
        let b = tti(&stl, n);
        let (tci, tco) = (frames(&b[5..9]), frames(&b[9..13]));
        assert!(tco > tci && tco - tci <= 37, "block {n}: {tci}..{tco} over 1.5 s");
        assert!(n == 0 || tci >= prev_out + 2, "block {n} starts {tci}, previous out {prev_out}");
        assert_eq!(b[13], 22, "one row only");
        assert!(!b[16..].windows(2).any(|w| w == [0x8A, 0x8A]), "one row only");
        prev_out = tco;
    }
}

#[test]
fn times_beyond_24_hours_are_refused() {
    let p = SubtitleParams::stl(None, None).unwrap();
    let err = cues_to_stl(&[cue(90_000.0, 90_001.0, &["late"])], &p, &info("en")).unwrap_err();
    assert!(matches!(err, StlError::TooLate(_)), "{err}");
}

#[test]
fn an_empty_transcript_is_a_gsi_block_alone() {
    let p = SubtitleParams::stl(None, None).unwrap();
    let stl = cues_to_stl(&[], &p, &info("en-uk")).unwrap();
    assert_eq!(stl.len(), 1024);
    assert_eq!(field(&stl, 238, 13), "0000000000001");
    assert_eq!(field(&stl, 264, 8), "00000000");
    assert_eq!(field(&stl, 274, 3), "GBR");
}

mod generated {
    use super::*;
    use proptest::prelude::*;
    use scribe_domain::subtitles::segment;
    use scribe_domain::transcript::TimedWord;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Any word stream gives a well-formed file: length 1024 + 128 × TNB, TNS subtitles, TTI
        /// blocks numbered in order with extension blocks before their last block, timecodes in
        /// order and apart, text free of 0x8F and padded with it.
        #[test]
        fn any_stream_gives_a_well_formed_file(
            items in prop::collection::vec(("[a-zA-Zéèàçüößøœ’♪€日 ]{1,14}[,.]?", 0.05f64..2.0, 0.0f64..1.5, 0u8..2), 0..120),
            rows in 1i64..=2,
            secs in 1.0f64..=10.0,
        ) {
            let mut t = 0.0;
            let words: Vec<TimedWord> = items.iter().map(|(text, d, pause, s)| {
                t += pause;
                let w = TimedWord { start: t, end: t + d, text: text.clone(), speaker: format!("S{s}") };
                t += d;
                w
            }).collect();
            let p = SubtitleParams::stl(Some(rows), Some(secs)).unwrap();
            let cues = segment(&words, &p);
            let stl = cues_to_stl(&cues, &p, &info("fr")).unwrap();
            let tnb: usize = field(&stl, 238, 5).parse().unwrap();
            let tns: usize = field(&stl, 243, 5).parse().unwrap();
            prop_assert_eq!(stl.len(), 1024 + 128 * tnb);
            prop_assert_eq!(tns, cues.len());
            let frames = |b: &[u8]| ((b[0] as u32 * 60 + b[1] as u32) * 60 + b[2] as u32) * 25 + b[3] as u32;
            let (mut subtitle, mut next_ebn, mut prev_out) = (0u16, 0u8, None::<u32>);
            for n in 0..tnb {
                let b = tti(&stl, n);
                prop_assert_eq!(u16::from_le_bytes([b[1], b[2]]), subtitle + 1, "SN of block {}", n);
                let (tci, tco) = (frames(&b[5..9]), frames(&b[9..13]));
                prop_assert!(tco > tci);
                prop_assert!(tco - tci <= (cues[subtitle as usize].lines.len() as f64 * secs * 25.0) as u32);
                let text = &b[16..];
                let used = text.iter().position(|&x| x == 0x8F).unwrap_or(text.len());
                prop_assert!(text[used..].iter().all(|&x| x == 0x8F), "padding of block {}", n);
                if b[3] == 0xFF {
                    if let Some(prev) = prev_out { prop_assert!(tci >= prev + 2, "gap before block {}", n); }
                    prev_out = Some(tco);
                    subtitle += 1;
                    next_ebn = 0;
                } else {
                    prop_assert_eq!(b[3], next_ebn, "EBN of block {}", n);
                    next_ebn += 1;
                }
            }
            prop_assert_eq!(subtitle as usize, cues.len());
        }
    }
}
