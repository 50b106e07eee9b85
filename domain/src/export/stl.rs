//! EBU-STL (EBU Tech 3264-E) subtitle files: a 1024-byte GSI block, then one 128-byte TTI block per
//! subtitle (more when its text needs extension blocks). Byte offsets follow the layout in
//! `shared/research/peers-and-standards.md` §4.4, cross-checked against ttconv's reader.
//!
//! Choices: 25 fps (`STL25.01`), teletext level 1 (DSC `1`, MNC 40, MNR 23) with double-height
//! rows framed by start-box/end-box codes, as broadcasters' teletext subtitles are; code page 850
//! for GSI text; character code table 00 (ISO 6937, accents as two bytes, diacritic first) for
//! subtitle text. A character ISO 6937 cannot write becomes `?`. Timecodes start at 00:00:00:00
//! (TCP 00000000): media time, not programme time.

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::decompose_canonical;

use crate::export::params::SubtitleParams;
use crate::subtitles::{Cue, segment};
use crate::transcript::Transcript;

pub const GSI_LEN: usize = 1024;
pub const TTI_LEN: usize = 128;
/// Bytes of text a TTI block holds; longer text continues in extension blocks.
pub const TF_LEN: usize = 112;
pub const FPS: u32 = 25;

/// A calendar date for the GSI creation and revision dates (written `YYMMDD`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StlDate {
    pub year: u16,
    pub month: u8,
    pub day: u8,
}

/// What the GSI block says about the programme. The caller supplies the dates: domain has no clock.
#[derive(Debug, Clone, PartialEq)]
pub struct StlInfo<'a> {
    /// Original Programme Title (we use the media's filename); cut to 32 bytes.
    pub programme_title: &'a str,
    /// The job's language code (`en-us`, `fr`, ...), mapped to the EBU language code and, when it
    /// names a region, the country of origin.
    pub language: &'a str,
    pub created: StlDate,
    pub revised: StlDate,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StlError {
    #[error("the subtitles need {0} TTI blocks, more than the 99999 one EBU-STL file can hold")]
    TooManyBlocks(usize),
    #[error("a subtitle at {0:.0} s is later than the 24 hours an EBU-STL timecode can hold")]
    TooLate(f64),
}

/// The EBU-STL export of a transcript (use [`SubtitleParams::stl`] for the parameters).
pub fn render_stl(transcript: &Transcript, params: &SubtitleParams, info: &StlInfo) -> Result<Vec<u8>, StlError> {
    cues_to_stl(&segment(&transcript.timed_words(), params), params, info)
}

/// EBU-STL bytes of cues already segmented.
pub fn cues_to_stl(cues: &[Cue], params: &SubtitleParams, info: &StlInfo) -> Result<Vec<u8>, StlError> {
    let max_frames = params.max_screen_time_per_row() * FPS as f64;
    let mut ttis: Vec<u8> = Vec::new();
    let mut blocks = 0usize;
    let mut first_in: Option<u32> = None;
    let mut prev_out = 0u32;
    for (n, cue) in cues.iter().enumerate() {
        // Rounded to frames; the 84 ms gaps between cues survive rounding, and each cue keeps at
        // least one frame and stays within its screen-time limit.
        let tci = frames(cue.start)?.max(prev_out);
        let limit = tci + (cue.lines.len() as f64 * max_frames).floor() as u32;
        let tco = frames(cue.end)?.min(limit).max(tci + 1);
        prev_out = tco;
        first_in.get_or_insert(tci);
        let text = text_field(&cue.lines);
        let chunks = split_text(&text);
        for (k, chunk) in chunks.iter().enumerate() {
            let ebn = if k + 1 == chunks.len() { 0xFF } else { k as u8 };
            ttis.extend_from_slice(&tti_block((n + 1) as u16, ebn, tci, tco, cue.lines.len(), chunk));
            blocks += 1;
        }
    }
    if blocks > 99_999 {
        return Err(StlError::TooManyBlocks(blocks));
    }
    let mut out = gsi_block(info, params, blocks, cues.len(), first_in.unwrap_or(0));
    out.extend_from_slice(&ttis);
    Ok(out)
}

/// Seconds → frames at 25 fps, refusing times past 23:59:59:24.
fn frames(seconds: f64) -> Result<u32, StlError> {
    let f = (seconds.max(0.0) * FPS as f64).round();
    if f >= (24 * 3600 * FPS) as f64 || f.is_nan() {
        return Err(StlError::TooLate(seconds));
    }
    Ok(f as u32)
}

/// Frames → (hours, minutes, seconds, frames).
fn hmsf(frames: u32) -> [u8; 4] {
    let secs = frames / FPS;
    [(secs / 3600) as u8, (secs / 60 % 60) as u8, (secs % 60) as u8, (frames % FPS) as u8]
}

fn gsi_block(info: &StlInfo, params: &SubtitleParams, tnb: usize, tns: usize, first_in: u32) -> Vec<u8> {
    let mut g = vec![b' '; GSI_LEN];
    let mut put = |offset: usize, len: usize, bytes: &[u8]| {
        let n = bytes.len().min(len);
        g[offset..offset + n].copy_from_slice(&bytes[..n]);
    };
    let date = |d: StlDate| format!("{:02}{:02}{:02}", d.year % 100, d.month % 100, d.day % 100);
    let [h, m, s, f] = hmsf(first_in);
    put(0, 3, b"850"); // CPN: code page of GSI text
    put(3, 8, b"STL25.01"); // DFC: 25 fps
    put(11, 1, b"1"); // DSC: teletext level 1
    put(12, 2, b"00"); // CCT: ISO 6937 Latin
    put(14, 2, format!("{:02X}", ebu_language_code(info.language)).as_bytes()); // LC
    put(16, 32, &encode_cp850(info.programme_title)); // OPT
    put(224, 6, date(info.created).as_bytes()); // CD
    put(230, 6, date(info.revised).as_bytes()); // RD
    put(236, 2, b"00"); // RN
    put(238, 5, format!("{tnb:05}").as_bytes()); // TNB
    put(243, 5, format!("{:05}", tns.min(99_999)).as_bytes()); // TNS
    put(248, 3, b"001"); // TNG
    put(251, 2, format!("{:02}", params.max_chars_per_row().clamp(40, 99)).as_bytes()); // MNC
    put(253, 2, b"23"); // MNR: teletext rows
    put(255, 1, b"1"); // TCS: timecodes are for use
    put(256, 8, b"00000000"); // TCP
    put(264, 8, format!("{h:02}{m:02}{s:02}{f:02}").as_bytes()); // TCF
    put(272, 1, b"1"); // TND
    put(273, 1, b"1"); // DSN
    if let Some(co) = country(info.language) {
        put(274, 3, co.as_bytes()); // CO
    }
    g
}

fn tti_block(sn: u16, ebn: u8, tci: u32, tco: u32, rows: usize, text: &[u8]) -> [u8; TTI_LEN] {
    let mut b = [0x8Fu8; TTI_LEN];
    b[0] = 0; // SGN
    b[1..3].copy_from_slice(&sn.to_le_bytes()); // SN
    b[3] = ebn; // EBN
    b[4] = 0; // CS: not cumulative
    b[5..9].copy_from_slice(&hmsf(tci));
    b[9..13].copy_from_slice(&hmsf(tco));
    b[13] = if rows >= 2 { 20 } else { 22 }; // VP: bottom of the teletext page, double height
    b[14] = 2; // JC: centred
    b[15] = 0; // CF: subtitle, not a comment
    b[16..16 + text.len()].copy_from_slice(text);
    b
}

/// The text field of a cue: each row `0x0D 0x0B 0x0B <text> 0x0A 0x0A` (double height, start
/// box, end box), rows separated by `0x8A 0x8A` (a double-height row takes two teletext rows).
fn text_field(lines: &[String]) -> Vec<Vec<u8>> {
    let mut units: Vec<Vec<u8>> = Vec::new();
    for (k, line) in lines.iter().enumerate() {
        if k > 0 {
            units.push(vec![0x8A, 0x8A]);
        }
        units.push(vec![0x0D, 0x0B, 0x0B]);
        units.extend(line.nfc().map(encode_char));
        units.push(vec![0x0A, 0x0A]);
    }
    units
}

/// Splits text into chunks of at most [`TF_LEN`] bytes without cutting an encoded character.
fn split_text(units: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut chunks = vec![Vec::new()];
    for u in units {
        if chunks.last().is_some_and(|c| c.len() + u.len() > TF_LEN) {
            chunks.push(Vec::new());
        }
        if let Some(c) = chunks.last_mut() {
            c.extend_from_slice(u);
        }
    }
    chunks
}

/// ISO 6937 bytes of a text (character code table 00), `?` for what it cannot write.
pub fn encode_iso6937(text: &str) -> Vec<u8> {
    text.nfc().flat_map(encode_char).collect()
}

fn encode_char(c: char) -> Vec<u8> {
    if (' '..='~').contains(&c) {
        return vec![c as u8];
    }
    if let Some(b) = iso6937_single(c) {
        return vec![b];
    }
    match c {
        '…' => return b"...".to_vec(),
        '–' => return vec![b'-'],
        '„' | '‟' => return vec![b'"'],
        _ => {}
    }
    let mut parts: Vec<char> = Vec::new();
    decompose_canonical(c, |d| parts.push(d));
    if let [base, mark, ..] = parts[..]
        && base.is_ascii_alphabetic()
        && let Some(diacritic) = iso6937_diacritic(mark)
    {
        return vec![diacritic, base as u8];
    }
    vec![b'?']
}

/// The non-spacing diacritic byte that precedes its letter.
fn iso6937_diacritic(mark: char) -> Option<u8> {
    Some(match mark {
        '\u{300}' => 0xC1, // grave
        '\u{301}' => 0xC2, // acute
        '\u{302}' => 0xC3, // circumflex
        '\u{303}' => 0xC4, // tilde
        '\u{304}' => 0xC5, // macron
        '\u{306}' => 0xC6, // breve
        '\u{307}' => 0xC7, // dot above
        '\u{308}' => 0xC8, // diaeresis
        '\u{30A}' => 0xCA, // ring
        '\u{327}' => 0xCB, // cedilla
        '\u{30B}' => 0xCD, // double acute
        '\u{328}' => 0xCE, // ogonek
        '\u{30C}' => 0xCF, // caron
        _ => return None,
    })
}

/// Characters ISO 6937 writes as one byte in 0xA0..=0xFF.
#[rustfmt::skip]
fn iso6937_single(c: char) -> Option<u8> {
    Some(match c {
        '\u{A0}' => 0xA0, '¡' => 0xA1, '¢' => 0xA2, '£' => 0xA3, '¥' => 0xA5, '§' => 0xA7, '¤' => 0xA8,
        '‘' => 0xA9, '“' => 0xAA, '«' => 0xAB, '←' => 0xAC, '↑' => 0xAD, '→' => 0xAE, '↓' => 0xAF,
        '°' => 0xB0, '±' => 0xB1, '²' => 0xB2, '³' => 0xB3, '×' => 0xB4, 'µ' => 0xB5, '¶' => 0xB6,
        '·' => 0xB7, '÷' => 0xB8, '’' => 0xB9, '”' => 0xBA, '»' => 0xBB, '¼' => 0xBC, '½' => 0xBD,
        '¾' => 0xBE, '¿' => 0xBF, '―' | '—' => 0xD0, '¹' => 0xD1, '®' => 0xD2, '©' => 0xD3, '™' => 0xD4,
        '♪' => 0xD5, '¬' => 0xD6, '¦' => 0xD7, '⅛' => 0xDC, '⅜' => 0xDD, '⅝' => 0xDE, '⅞' => 0xDF,
        'Ω' => 0xE0, 'Æ' => 0xE1, 'Đ' => 0xE2, 'ª' => 0xE3, 'Ħ' => 0xE4, 'Ĳ' => 0xE6, 'Ŀ' => 0xE7,
        'Ł' => 0xE8, 'Ø' => 0xE9, 'Œ' => 0xEA, 'º' => 0xEB, 'Þ' => 0xEC, 'Ŧ' => 0xED, 'Ŋ' => 0xEE,
        'ŉ' => 0xEF, 'ĸ' => 0xF0, 'æ' => 0xF1, 'đ' => 0xF2, 'ð' => 0xF3, 'ħ' => 0xF4, 'ı' => 0xF5,
        'ĳ' => 0xF6, 'ŀ' => 0xF7, 'ł' => 0xF8, 'ø' => 0xF9, 'œ' => 0xFA, 'ß' => 0xFB, 'þ' => 0xFC,
        'ŧ' => 0xFD, 'ŋ' => 0xFE, '\u{AD}' => 0xFF,
        _ => return None,
    })
}

/// Code page 850 bytes of GSI text, `?` for what it cannot write.
fn encode_cp850(text: &str) -> Vec<u8> {
    const HIGH: &str = "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜø£Ø×ƒáíóúñÑªº¿®¬½¼¡«»░▒▓│┤ÁÂÀ©╣║╗╝¢¥┐\
                        └┴┬├─┼ãÃ╚╔╩╦╠═╬¤ðÐÊËÈıÍÎÏ┘┌█▄¦Ì▀ÓßÔÒõÕµþÞÚÛÙýÝ¯´\u{AD}±‗¾¶§÷¸°¨·¹³²■\u{A0}";
    text.nfc()
        .map(|c| match c {
            ' '..='~' => c as u8,
            _ => HIGH.chars().position(|h| h == c).map_or(b'?', |i| 0x80 + i as u8),
        })
        .collect()
}

/// The EBU language code (Tech 3264 appendix 3) of one of our language codes; 0x00 when unknown
/// (including `auto`).
#[rustfmt::skip]
pub fn ebu_language_code(code: &str) -> u8 {
    let lower = code.to_ascii_lowercase();
    if lower == "nl-be" {
        return 0x2A; // Flemish
    }
    match lower.split('-').next().unwrap_or("") {
        "sq" => 0x01, "ca" => 0x03, "hr" => 0x04, "cy" => 0x05, "cs" => 0x06, "da" => 0x07, "de" => 0x08,
        "en" => 0x09, "es" => 0x0A, "eo" => 0x0B, "et" => 0x0C, "eu" => 0x0D, "fr" => 0x0F, "gl" => 0x13,
        "is" => 0x14, "it" => 0x15, "lv" => 0x18, "lt" => 0x1A, "hu" => 0x1B, "mt" => 0x1C, "nl" => 0x1D,
        "no" => 0x1E, "pl" => 0x20, "pt" => 0x21, "ro" => 0x22, "sr" => 0x24, "sk" => 0x25, "sl" => 0x26,
        "fi" => 0x27, "sv" => 0x28, "tr" => 0x29, "zu" => 0x45, "vi" => 0x46, "uz" => 0x47, "ur" => 0x48,
        "uk" => 0x49, "th" => 0x4A, "te" => 0x4B, "ta" => 0x4D, "sw" => 0x4F, "si" => 0x52, "bs" => 0x54,
        "ru" => 0x56, "pa" => 0x59, "fa" => 0x5A, "ne" => 0x5D, "mr" => 0x5F, "ms" => 0x61, "mk" => 0x63,
        "lo" => 0x64, "ko" => 0x65, "km" => 0x66, "kn" => 0x68, "ja" => 0x69, "id" => 0x6A, "hi" => 0x6B,
        "iw" | "he" => 0x6C, "gu" => 0x6F, "el" => 0x70, "ka" => 0x71, "cmn" | "yue" | "zh" => 0x75,
        "my" => 0x76, "bg" => 0x77, "bn" => 0x78, "az" => 0x7B, "hy" => 0x7D, "ar" => 0x7E, "am" => 0x7F,
        _ => 0x00,
    }
}

/// ISO 3166 alpha-3 country of a language code that names a region (`en-uk` → `GBR`).
#[rustfmt::skip]
fn country(code: &str) -> Option<&'static str> {
    let region = code.to_ascii_lowercase().rsplit('-').next()?.to_owned();
    if !code.contains('-') {
        return None;
    }
    Some(match region.as_str() {
        "za" => "ZAF", "al" => "ALB", "et" => "ETH", "am" => "ARM", "az" => "AZE", "id" => "IDN", "es" => "ESP",
        "bd" => "BGD", "in" => "IND", "ba" => "BIH", "mm" => "MMR", "au" => "AUS", "uk" => "GBR", "us" => "USA",
        "ee" => "EST", "ir" => "IRN", "ph" => "PHL", "be" => "BEL", "ca" => "CAN", "ge" => "GEO", "at" => "AUT",
        "ot" => "DEU", "ch" => "CHE", "il" => "ISR", "is" => "ISL", "kh" => "KHM", "la" => "LAO", "mk" => "MKD",
        "lk" => "LKA", "np" => "NPL", "br" => "BRA", "rs" => "SRB", "ke" => "KEN", "tz" => "TZA", "my" => "MYS",
        "sg" => "SGP", "th" => "THA", "ua" => "UKR", "pk" => "PAK", "uz" => "UZB", "vn" => "VNM", "mn" => "MNG",
        _ => return None,
    })
}
