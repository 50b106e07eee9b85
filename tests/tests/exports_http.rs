//! The export endpoints end to end on a real server: jfk.wav through the speech engine to `DONE`,
//! then SRT, VTT, TXT, JSON and the signed EBU-STL download with default and edge parameters;
//! the errors (400 naming the parameter, 409 for a job not yet `DONE`, 403, 404, 406, 410, 401);
//! the STL link without an apiKey, tampered (403), expired (410), after a restart (still valid)
//! and after the job's deletion (410); and `scribe subtitle-report` on the job.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use hmac::{Hmac, KeyInit, Mac};
use scribe_tests::{ASR_TIMEOUT, Reply, TestServer, clips, paths};

/// What JFK says in the clip (lowercase, no punctuation), as any decent transcript has it.
const JFK_WORDS: &str = "ask not what your country can do for you";

/// `GET /api/jobs/export-<format>` with `query`.
fn export(server: &TestServer, key: &str, format: &str, job_id: &str, query: &[(&str, &str)]) -> Reply {
    let mut q = vec![("jobId", job_id)];
    q.extend_from_slice(query);
    server.get(&format!("/jobs/export-{format}"), key, &q)
}

fn normalized(text: &str) -> String {
    let kept: String =
        text.chars().map(|c| if c.is_alphanumeric() || c == '\'' { c.to_ascii_lowercase() } else { ' ' }).collect();
    kept.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `HH:MM:SS,mmm` or `HH:MM:SS.mmm` → seconds.
fn seconds(clock: &str) -> f64 {
    let (hms, ms) = clock.trim().split_at(8);
    let parts: Vec<f64> = hms.split(':').map(|p| p.parse().unwrap()).collect();
    parts[0] * 3600.0 + parts[1] * 60.0 + parts[2] + ms[1..].parse::<f64>().unwrap() / 1000.0
}

/// A cue of an SRT or VTT file.
#[derive(Debug)]
struct Cue {
    start: f64,
    end: f64,
    rows: Vec<String>,
}

/// Parses numbered cues (SRT, or VTT after its header), checking the numbering.
fn cues(body: &str, separator: char) -> Vec<Cue> {
    let mut out = Vec::new();
    for (n, block) in body.trim().split("\n\n").enumerate() {
        let lines: Vec<&str> = block.lines().collect();
        assert!(lines.len() >= 3, "cue {n} has no text: {block:?}");
        assert_eq!(lines[0], (n + 1).to_string(), "cues are numbered from 1: {block:?}");
        let (start, end) = lines[1].split_once(" --> ").unwrap_or_else(|| panic!("no time line: {block:?}"));
        assert_eq!(start.chars().nth(8), Some(separator), "time line {:?}", lines[1]);
        out.push(Cue {
            start: seconds(start),
            end: seconds(end),
            rows: lines[2..].iter().map(|r| r.to_string()).collect(),
        });
    }
    out
}

/// Checks the hard limits of subtitles made with these parameters, and that they carry the speech.
fn check_cues(cues: &[Cue], chars: usize, rows: usize, screen: f64, what: &str) {
    assert!(!cues.is_empty(), "{what}: no cues");
    for (k, c) in cues.iter().enumerate() {
        assert!(!c.rows.is_empty() && c.rows.len() <= rows, "{what}: cue {k} has {} rows: {c:?}", c.rows.len());
        for row in &c.rows {
            assert!(row.chars().count() <= chars, "{what}: row longer than {chars} characters: {row:?}");
            assert!(!row.trim().is_empty(), "{what}: empty row in {c:?}");
        }
        assert!(c.end > c.start, "{what}: cue {k} ends before it starts: {c:?}");
        assert!(c.end - c.start <= c.rows.len() as f64 * screen + 0.002, "{what}: cue {k} on screen too long: {c:?}");
        if k > 0 {
            assert!(c.start >= cues[k - 1].end, "{what}: cue {k} overlaps the previous one");
        }
        assert!(c.end <= 12.0, "{what}: cue {k} ends after the 11 s clip: {c:?}");
    }
    let text: Vec<String> = cues.iter().flat_map(|c| c.rows.clone()).collect();
    assert!(normalized(&text.join(" ")).contains(JFK_WORDS), "{what}: the speech is missing: {text:?}");
}

fn now_s() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// `GET url` without an apiKey; status, headers and the raw bytes.
fn download(server: &TestServer, url: &str) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let response = server.http().get(url).send().unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.bytes().unwrap().to_vec())
}

/// The value of query parameter `name` in `url`.
fn param(url: &reqwest::Url, name: &str) -> String {
    url.query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| panic!("no {name} in {url}"))
}

/// `url` with the query parameter `name` set to `value`.
fn with_param(url: &reqwest::Url, name: &str, value: &str) -> String {
    let mut out = url.clone();
    let pairs: Vec<(String, String)> = url
        .query_pairs()
        .map(|(k, v)| (k.to_string(), if k == name { value.to_owned() } else { v.into_owned() }))
        .collect();
    out.query_pairs_mut().clear().extend_pairs(pairs);
    out.into()
}

/// Checks an EBU-STL file's framing: GSI block, TTI count and size, code page, language, padding.
fn check_stl(bytes: &[u8], max_rows: usize) -> usize {
    assert!(bytes.len() > 1024, "an STL file is a 1024-byte GSI block and TTI blocks: {} bytes", bytes.len());
    assert_eq!(&bytes[0..3], b"850", "GSI code page number");
    assert_eq!(&bytes[3..11], b"STL25.01", "GSI disk format code");
    assert_eq!(&bytes[12..14], b"00", "GSI character code table");
    assert_eq!(&bytes[14..16], b"09", "GSI language code: English");
    let tnb: usize = std::str::from_utf8(&bytes[238..243]).unwrap().parse().expect("TNB is 5 digits");
    let tns: usize = std::str::from_utf8(&bytes[243..248]).unwrap().parse().expect("TNS is 5 digits");
    assert_eq!(bytes.len(), 1024 + 128 * tnb, "file length = 1024 + 128 × TNB ({tnb})");
    assert!(tns >= 1 && tns <= tnb, "TNS {tns}, TNB {tnb}");
    let mut subtitles = 0;
    for (k, tti) in bytes[1024..].chunks(128).enumerate() {
        let sn = u16::from_le_bytes([tti[1], tti[2]]) as usize;
        if tti[3] == 0xFF {
            subtitles += 1;
            assert_eq!(sn, subtitles, "TTI {k}: subtitle numbers count up from 1");
        }
        let tci = &tti[5..9];
        let tco = &tti[9..13];
        let frames = |t: &[u8]| ((t[0] as u32 * 60 + t[1] as u32) * 60 + t[2] as u32) * 25 + t[3] as u32;
        assert!(tci[3] < 25 && tco[3] < 25, "TTI {k}: frames at 25 fps");
        assert!(frames(tco) > frames(tci), "TTI {k}: time code out after in");
        let text = &tti[16..128];
        let end = text.iter().rposition(|&b| b != 0x8F).map_or(0, |p| p + 1);
        assert!(end > 0, "TTI {k}: no text");
        let rows = text[..end].split(|&b| b == 0x8A).filter(|r| r.iter().any(|&b| (0x20..0x7F).contains(&b))).count();
        assert!(rows <= max_rows, "TTI {k}: {rows} rows, at most {max_rows}");
    }
    assert_eq!(subtitles, tns, "TNS counts the subtitles");
    tnb
}

/// A download link for `job_id` signed with the server's key, as the server would make it.
fn forged_link(server: &TestServer, job_id: &str, rows: &str, screen: &str, expires: u64) -> String {
    let secret = std::fs::read_to_string(server.data_dir().join("link-secret")).expect("the server keeps its link key");
    let key = STANDARD.decode(secret.trim()).expect("the key file holds base64");
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("scribe-stl-v1\n{job_id}\n{rows}\n{screen}\n{expires}").as_bytes());
    let sig = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
    server.url(&format!("/api/downloads/stl?jobId={job_id}&rows={rows}&screen={screen}&expires={expires}&sig={sig}"))
}

#[test]
fn exports_of_a_finished_job() {
    let mut server = TestServer::start();
    let key = server.key().to_owned();
    let key = key.as_str();
    let job = server.upload_ok(key, &paths::corpus_file(clips::JFK), &[]);
    let job_id = job["jobId"].as_str().unwrap().to_owned();
    let id = job_id.as_str();

    // Right after upload the job is OPEN: every export answers 409 saying so.
    assert_eq!(job["status"], "OPEN");
    for format in ["srt", "vtt", "txt", "json", "stl"] {
        let reply = export(&server, key, format, id, &[]);
        if reply.status == 200 {
            // The engine was faster than this loop: nothing left to check here.
            assert_eq!(server.status(key, id)["status"], "DONE", "{format}: 200 before DONE");
            break;
        }
        let body = reply.error(409, Some("jobId"));
        assert!(body["message"].as_str().unwrap().contains("OPEN"), "{format}: the message says the status: {body}");
    }

    server.wait_for_status(key, id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(server.status(key, id)["status"], "DONE", "jfk.wav transcribes");

    // SRT and VTT, defaults and edges.
    let srt = export(&server, key, "srt", id, &[]);
    assert_eq!(srt.status, 200, "{}", srt.text);
    assert_eq!(srt.header("content-type"), Some("application/x-subrip; charset=utf-8"));
    check_cues(&cues(&srt.text, ','), 42, 2, 2.0, "SRT defaults");
    let vtt = export(&server, key, "vtt", id, &[]);
    assert_eq!(vtt.status, 200, "{}", vtt.text);
    assert_eq!(vtt.header("content-type"), Some("text/vtt; charset=utf-8"));
    let (header, body) = vtt.text.split_once("\n\n").expect("a header, then cues");
    assert!(header.starts_with("WEBVTT") && header.len() > "WEBVTT".len(), "WEBVTT with a creator note: {header:?}");
    check_cues(&cues(body, '.'), 42, 2, 2.0, "VTT defaults");
    assert_eq!(cues(&srt.text, ',').len(), cues(body, '.').len(), "SRT and VTT cut the same cues");

    for (chars, rows, screen) in
        [("30", "2", "2"), ("45", "2", "2"), ("42", "1", "2"), ("30", "1", "1"), ("45", "2", "10"), ("42", "2", "1.5")]
    {
        let query = [("maxCharsPerRow", chars), ("maxNumberOfRows", rows), ("maxScreenTimePerRowSeconds", screen)];
        let what = format!("{query:?}");
        let (c, r, s) = (chars.parse().unwrap(), rows.parse().unwrap(), screen.parse().unwrap());
        let srt = export(&server, key, "srt", id, &query);
        assert_eq!(srt.status, 200, "{what}: {}", srt.text);
        check_cues(&cues(&srt.text, ','), c, r, s, &format!("SRT {what}"));
        let vtt = export(&server, key, "vtt", id, &query);
        assert_eq!(vtt.status, 200, "{what}: {}", vtt.text);
        check_cues(&cues(vtt.text.split_once("\n\n").unwrap().1, '.'), c, r, s, &format!("VTT {what}"));
    }
    let narrow =
        cues(&export(&server, key, "srt", id, &[("maxCharsPerRow", "30"), ("maxNumberOfRows", "1")]).text, ',');
    assert!(
        narrow.len() > cues(&srt.text, ',').len(),
        "one 30-character row per cue needs more cues than the defaults"
    );

    // TXT and its options.
    let txt = export(&server, key, "txt", id, &[]);
    assert_eq!(txt.status, 200, "{}", txt.text);
    assert_eq!(txt.header("content-type"), Some("text/plain; charset=utf-8"));
    let lines: Vec<&str> = txt.text.lines().collect();
    assert!(
        lines[0].len() == 8 && lines[0].as_bytes()[2] == b':' && lines[0].as_bytes()[5] == b':',
        "HH:MM:SS first: {:?}",
        lines[0]
    );
    assert!(lines[1].starts_with("Speaker 1: "), "then Speaker <n>: {:?}", lines[1]);
    assert!(normalized(&txt.text).contains(JFK_WORDS), "{}", txt.text);
    let bare = export(&server, key, "txt", id, &[("includeTimestamps", "false"), ("includeSpeakers", "false")]);
    assert_eq!(bare.status, 200, "{}", bare.text);
    assert!(
        !bare.text.contains("Speaker") && !bare.text.lines().any(|l| l.len() == 8 && l.as_bytes()[2] == b':'),
        "{}",
        bare.text
    );
    assert!(normalized(&bare.text).contains(JFK_WORDS), "{}", bare.text);
    let wrapped = export(&server, key, "txt", id, &[("maxCharsPerRow", "20")]);
    assert_eq!(wrapped.status, 200, "{}", wrapped.text);
    assert!(wrapped.text.lines().all(|l| l.chars().count() <= 20), "rows of at most 20 characters: {}", wrapped.text);
    assert!(wrapped.text.lines().count() > lines.len(), "wrapping adds rows");
    let highlights = export(&server, key, "txt", id, &[("highlightsOnly", "true")]);
    assert_eq!(highlights.status, 200, "{}", highlights.text);
    assert!(
        !normalized(&highlights.text).contains("country"),
        "a machine transcript has no highlights: {}",
        highlights.text
    );

    // JSON.
    let json = export(&server, key, "json", id, &[]);
    let doc = json.ok();
    assert!(json.header("content-type").unwrap().starts_with("application/json"));
    assert_eq!(doc["id"], id);
    assert_eq!(doc["filename"], "en_jfk.wav");
    assert!(doc["startTimeOffset"].is_number() && doc["highlights"].is_array());
    let speakers: Vec<&str> =
        doc["speakers"].as_array().unwrap().iter().map(|s| s["spkid"].as_str().unwrap()).collect();
    let mut words = Vec::new();
    for segment in doc["segments"].as_array().unwrap() {
        assert!(speakers.contains(&segment["speaker"].as_str().unwrap()), "segment speaker is listed: {segment}");
        for w in segment["words"].as_array().unwrap() {
            let (start, end, duration) =
                (w["start"].as_f64().unwrap(), w["end"].as_f64().unwrap(), w["duration"].as_f64().unwrap());
            assert!(0.0 <= start && start <= end && end <= 11.5, "word times in seconds: {w}");
            assert!((duration - (end - start)).abs() < 1e-6, "duration = end - start: {w}");
            assert!(w["conf"].is_number() && w["pristine"].is_boolean(), "{w}");
            words.push(w["text"].as_str().unwrap().to_owned());
        }
    }
    assert!(normalized(&words.join(" ")).contains(JFK_WORDS), "{words:?}");

    // Bad parameters: 400 naming the parameter, never clamped.
    let bad: [(&str, &str, &str); 11] = [
        ("srt", "maxCharsPerRow", "29"),
        ("srt", "maxCharsPerRow", "46"),
        ("vtt", "maxCharsPerRow", "abc"),
        ("srt", "maxNumberOfRows", "0"),
        ("vtt", "maxNumberOfRows", "3"),
        ("srt", "maxScreenTimePerRowSeconds", "0.5"),
        ("vtt", "maxScreenTimePerRowSeconds", "11"),
        ("txt", "maxCharsPerRow", "5"),
        ("txt", "includeTimestamps", "maybe"),
        ("stl", "maxNumberOfRows", "3"),
        ("stl", "maxScreenTimePerRowSeconds", "-1"),
    ];
    for (format, name, value) in bad {
        export(&server, key, format, id, &[(name, value)]).error(400, Some(name));
    }
    server.get("/jobs/export-srt", key, &[]).error(400, Some("jobId"));

    // Accept negotiation, keys, other accounts, unknown jobs.
    let accept = |path: &str, accept: &str| {
        Reply::send(
            server.http().get(server.url(path)).query(&[("apiKey", key), ("jobId", id)]).header("Accept", accept),
        )
    };
    accept("/api/jobs/export-srt", "application/json").error(406, None);
    accept("/api/jobs/export-vtt", "application/x-subrip").error(406, None);
    accept("/api/jobs/export-json", "text/plain").error(406, None);
    assert_eq!(accept("/api/jobs/export-srt", "application/x-subrip").status, 200);
    assert_eq!(accept("/api/jobs/export-vtt", "text/*, application/json;q=0.5").status, 200);
    assert_eq!(accept("/api/jobs/export-txt", "*/*").status, 200);
    let bob = server.create_key("bob", None);
    for format in ["srt", "vtt", "txt", "json", "stl"] {
        export(&server, &bob, format, id, &[]).error(403, Some("jobId"));
        export(&server, key, format, "no-such-job", &[]).error(404, Some("jobId"));
        Reply::send(server.http().get(server.url(&format!("/api/jobs/export-{format}"))).query(&[("jobId", id)]))
            .error(401, None);
        export(&server, "not-a-key", format, id, &[]).error(401, None);
    }

    // EBU-STL: a signed link on this server that needs no apiKey.
    let link = export(&server, key, "stl", id, &[]).ok();
    let url = reqwest::Url::parse(link["downloadUrl"].as_str().expect("downloadUrl")).expect("an absolute URL");
    assert_eq!(
        url.origin(),
        reqwest::Url::parse(&server.url("/")).unwrap().origin(),
        "the link points at this server: {url}"
    );
    assert_eq!(url.path(), "/api/downloads/stl");
    assert!(url.query_pairs().all(|(k, _)| k != "apiKey"), "no key in the link: {url}");
    let expires: u64 = param(&url, "expires").parse().unwrap();
    let ttl = expires.saturating_sub(now_s());
    assert!((3500..=3601).contains(&ttl), "valid for an hour by default: {ttl} s");
    let (status, headers, stl) = download(&server, url.as_str());
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&stl));
    assert_eq!(headers["content-type"], "application/octet-stream");
    assert_eq!(headers["content-disposition"], "attachment; filename=\"en_jfk.stl\"");
    let blocks = check_stl(&stl, 2);
    assert!(stl[16..48].starts_with(b"en_jfk.wav"), "programme title: the media's name");

    let one_row =
        export(&server, key, "stl", id, &[("maxNumberOfRows", "1"), ("maxScreenTimePerRowSeconds", "3")]).ok();
    let one_row = reqwest::Url::parse(one_row["downloadUrl"].as_str().unwrap()).unwrap();
    assert_eq!((param(&one_row, "rows"), param(&one_row, "screen")), ("1".to_owned(), "3".to_owned()));
    let (status, _, stl_one) = download(&server, one_row.as_str());
    assert_eq!(status, 200);
    assert!(check_stl(&stl_one, 1) >= blocks, "one row per subtitle needs at least as many blocks");

    // Tampered links: 403 naming `sig`. Expired ones: 410 naming `expires`.
    let refused = |link: &str, status: u16, field: &str| {
        let reply = Reply::send(server.http().get(link));
        let body = reply.error(status, Some(field));
        assert!(body["message"].as_str().unwrap().contains("export-stl"), "the message says what to do: {body}");
    };
    let sig = param(&url, "sig");
    let flipped = format!("{}{}", if sig.starts_with('A') { 'B' } else { 'A' }, &sig[1..]);
    refused(&with_param(&url, "sig", &flipped), 403, "sig");
    refused(&with_param(&url, "rows", "1"), 403, "sig");
    refused(&with_param(&url, "screen", "9"), 403, "sig");
    refused(&with_param(&url, "expires", &(expires + 86_400).to_string()), 403, "sig");
    refused(&with_param(&url, "jobId", "another-job"), 403, "sig");
    refused(&forged_link(&server, id, "2", "2", now_s() - 10), 410, "expires");
    let (status, _, again) = download(&server, &forged_link(&server, id, "2", "2", now_s() + 60));
    assert_eq!((status, again.len()), (200, stl.len()), "a link signed with the server's key works");

    // The subtitle report command on this job.
    let report = server.scribe_ok(&["subtitle-report", id]);
    assert!(report.contains("hard limits violated         0"), "{report}");

    // Links survive a restart (the key is kept in the data directory).
    server.restart();
    let moved = format!("{}?{}", server.url("/api/downloads/stl"), url.query().unwrap());
    let (status, _, after) = download(&server, &moved);
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&after));
    assert_eq!(after.len(), stl.len());

    // Deleted: every export and the link answer 410.
    server.delete("/jobs", key, &[("jobId", id)]).ok();
    for format in ["srt", "vtt", "txt", "json", "stl"] {
        export(&server, key, format, id, &[]).error(410, Some("jobId"));
    }
    refused_after_delete(&server, &moved);
}

fn refused_after_delete(server: &TestServer, link: &str) {
    Reply::send(server.http().get(link)).error(410, Some("jobId"));
}
