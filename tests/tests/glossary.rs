//! The glossary endpoints over HTTP: create, list (sortBy, sortDirection), replace, delete; the
//! bounds of the spec (400 naming the entry); another account's glossary (403), an unknown one
//! (404), a deleted one (410); and a glossary given at upload.

use scribe_tests::api::ids;
use scribe_tests::{TestServer, clips, paths};
use serde_json::{Value, json};

fn list(server: &TestServer, key: &str, query: &[(&str, &str)]) -> Vec<Value> {
    match server.get("/glossary", key, query).ok() {
        Value::Array(items) => items,
        other => panic!("GET /glossary answered a non-array: {other}"),
    }
}

#[test]
fn create_list_update_delete() {
    let server = TestServer::start();
    let key = server.key();
    let body = json!({
        "name": "Inauguration",
        "names": ["Kennedy", "Johnson"],
        "items": [{"name": "New Frontier", "description": "Kennedy's domestic programme"}, {"name": "Peace Corps"}]
    });
    let created = server.create_glossary(key, &body);
    let id = created["id"].as_str().expect("an id").to_owned();
    assert_eq!(created["userName"], "admin");
    assert_eq!(created["name"], "Inauguration");
    assert_eq!(created["names"], json!(["Kennedy", "Johnson"]));
    assert_eq!(created["items"][0], json!({"name": "New Frontier", "description": "Kennedy's domestic programme"}));
    assert_eq!(created["items"][1]["name"], "Peace Corps");
    assert!(created["created"].as_u64().is_some_and(|c| c > 1_600_000_000_000), "{created}");

    assert_eq!(list(&server, key, &[]), vec![created.clone()], "read your writes: the list shows it at once");

    let updated = server.put_json(&format!("/glossary/{id}"), key, &json!({"name": "Speeches", "names": ["JFK"]})).ok();
    assert_eq!(updated["id"], id.as_str());
    assert_eq!(updated["name"], "Speeches");
    assert_eq!(updated["names"], json!(["JFK"]));
    assert_eq!(updated["items"], json!([]), "a PUT replaces the whole content");
    assert_eq!(updated["created"], created["created"], "created does not change");
    assert_eq!(list(&server, key, &[]), vec![updated]);

    let deleted = server.delete(&format!("/glossary/{id}"), key, &[]).ok();
    assert!(deleted["message"].as_str().is_some_and(|m| !m.is_empty()), "{deleted}");
    assert!(list(&server, key, &[]).is_empty());
    server.put_json(&format!("/glossary/{id}"), key, &json!({"name": "Again"})).error(410, Some("glossaryId"));
    server.delete(&format!("/glossary/{id}"), key, &[]).error(410, Some("glossaryId"));
    // A deleted glossary cannot be given to a job.
    let short = paths::corpus_file(clips::SHORT);
    server.upload(key, &short, &[("glossaryId", &id)]).error(410, Some("glossaryId"));
}

#[test]
fn list_sorts_by_field_and_direction() {
    let server = TestServer::start();
    let key = server.key();
    let mut created = Vec::new();
    for name in ["Bravo", "Alpha", "Charlie"] {
        created.push(server.create_glossary(key, &json!({"name": name}))["id"].as_str().unwrap().to_owned());
    }
    let names = |q: &[(&str, &str)]| -> Vec<String> {
        list(&server, key, q).iter().map(|g| g["name"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(
        ids(&list(&server, key, &[]), "id"),
        created.iter().rev().cloned().collect::<Vec<_>>(),
        "default: created DESC"
    );
    assert_eq!(ids(&list(&server, key, &[("sortDirection", "ASC")]), "id"), created, "created ASC");
    assert_eq!(names(&[("sortBy", "name"), ("sortDirection", "ASC")]), ["Alpha", "Bravo", "Charlie"]);
    assert_eq!(names(&[("sortBy", "name"), ("sortDirection", "DESC")]), ["Charlie", "Bravo", "Alpha"]);
    assert_eq!(names(&[("sortBy", "name")]), ["Charlie", "Bravo", "Alpha"], "default direction DESC");

    server.get("/glossary", key, &[("sortDirection", "UP")]).error(400, Some("sortDirection"));
    server.get("/glossary", key, &[("sortBy", "colour")]).error(400, Some("sortBy"));
}

#[test]
fn bounds_of_the_spec_are_enforced_naming_the_entry() {
    let server = TestServer::start();
    let key = server.key();
    let s = |n: usize| "x".repeat(n);
    let names = |count: usize| (0..count).map(|i| format!("n{i}")).collect::<Vec<_>>();
    let items = |count: usize| (0..count).map(|i| json!({"name": format!("t{i}")})).collect::<Vec<_>>();

    // At the limits: accepted.
    let at_limits = json!({
        "name": s(60),
        "names": names(250).into_iter().enumerate().map(|(i, n)| if i == 0 { s(20) } else { n }).collect::<Vec<_>>(),
        "items": items(750).into_iter().enumerate()
            .map(|(i, it)| if i == 0 { json!({"name": s(60), "description": s(200)}) } else { it })
            .collect::<Vec<_>>(),
    });
    let created = server.create_glossary(key, &at_limits);
    assert_eq!(created["names"].as_array().unwrap().len(), 250);
    assert_eq!(created["items"].as_array().unwrap().len(), 750);

    // One past each limit: 400 naming the entry, on create and on update.
    let id = created["id"].as_str().unwrap().to_owned();
    let cases = [
        (json!({"name": s(61)}), "name"),
        (json!({"name": ""}), "name"),
        (json!({"name": "ok", "names": names(251)}), "names"),
        (json!({"name": "ok", "names": ["fine", s(21)]}), "names[1]"),
        (json!({"name": "ok", "items": items(751)}), "items"),
        (json!({"name": "ok", "items": [{"name": "a"}, {"name": "b"}, {"name": s(61)}]}), "items[2].name"),
        (json!({"name": "ok", "items": [{"name": "a", "description": s(201)}]}), "items[0].description"),
    ];
    for (body, field) in &cases {
        server.post_json("/glossary", key, body).error(400, Some(field));
        server.put_json(&format!("/glossary/{id}"), key, body).error(400, Some(field));
    }
    // A body without the required name.
    server.post_json("/glossary", key, &json!({"names": ["a"]})).error(400, Some("name"));
    assert_eq!(list(&server, key, &[]).len(), 1, "no refused body created a glossary");
}

#[test]
fn other_accounts_glossaries_are_forbidden_and_unknown_ones_not_found() {
    let server = TestServer::start();
    let admin = server.key().to_owned();
    let bob = server.create_key("bob", None);
    let glossary = server.create_glossary(&admin, &json!({"name": "Private"}));
    let id = glossary["id"].as_str().unwrap().to_owned();

    assert!(list(&server, &bob, &[]).is_empty(), "bob does not see admin's glossary");
    server.put_json(&format!("/glossary/{id}"), &bob, &json!({"name": "Mine now"})).error(403, Some("glossaryId"));
    server.delete(&format!("/glossary/{id}"), &bob, &[]).error(403, Some("glossaryId"));
    let short = paths::corpus_file(clips::SHORT);
    server.upload(&bob, &short, &[("glossaryId", &id)]).error(403, Some("glossaryId"));
    assert_eq!(list(&server, &admin, &[]), vec![glossary], "unchanged by bob's attempts");

    let unknown = "5f0e4a51-7d0c-4c55-9a43-2b1b0f0f0f0f";
    server.put_json(&format!("/glossary/{unknown}"), &admin, &json!({"name": "x"})).error(404, Some("glossaryId"));
    server.delete(&format!("/glossary/{unknown}"), &admin, &[]).error(404, Some("glossaryId"));
    server.upload(&admin, &short, &[("glossaryId", unknown)]).error(404, Some("glossaryId"));
}

#[test]
fn a_glossary_can_be_given_to_a_job() {
    let server = TestServer::start();
    let key = server.key();
    let glossary = server.create_glossary(key, &json!({"name": "Weather", "names": ["New York"]}));
    let id = glossary["id"].as_str().unwrap();
    let job = server.upload_ok(key, &paths::corpus_file(clips::SHORT), &[("glossaryId", id)]);
    assert_eq!(job["status"], "OPEN");
    let url_job = server
        .post_json(
            "/jobs/upload-media-from-url",
            key,
            &json!({"sourceUrl": "http://127.0.0.1:9/a.wav", "glossaryId": id}),
        )
        .ok();
    assert_eq!(url_job["jobStatus"]["status"], "OPEN");
}

/// The first four words of a finished job's transcript (JSON export), lower case, letters only.
fn first_words(server: &TestServer, key: &str, id: &str) -> String {
    let done = server.wait_for_status(key, id, &["DONE", "ERROR"], scribe_tests::ASR_TIMEOUT);
    assert_eq!(done["status"], "DONE", "{done}");
    let json = server.get("/jobs/export-json", key, &[("jobId", id)]).ok();
    let text: Vec<String> = json["segments"]
        .as_array()
        .expect("segments")
        .iter()
        .flat_map(|s| {
            s["words"].as_array().expect("words").iter().map(|w| w["text"].as_str().unwrap_or_default().to_lowercase())
        })
        .take(4)
        .collect();
    let letters: String = text.join(" ").chars().map(|c| if c.is_alphabetic() { c } else { ' ' }).collect();
    letters.split_whitespace().take(4).collect::<Vec<_>>().join(" ")
}

#[test]
fn a_glossary_puts_a_misheard_term_right() {
    // The synthetic Gettysburg Address opens with "Four score", which the engine hears as
    // "Force Corps" on its own; the glossary's terms reach the recogniser and set it right.
    let server = TestServer::start();
    let key = server.key();
    let clip = paths::corpus_file("audio/en_synth_gettysburg_2voices.wav");
    let glossary = server.create_glossary(
        key,
        &json!({"name": "Gettysburg", "names": ["Abraham Lincoln"], "items": [{"name": "Four score", "description": "eighty"}, {"name": "Gettysburg"}]}),
    );
    let plain = server.upload_ok(key, &clip, &[("language", "en")]);
    let with_glossary =
        server.upload_ok(key, &clip, &[("language", "en"), ("glossaryId", glossary["id"].as_str().unwrap())]);
    let plain = first_words(&server, key, plain["jobId"].as_str().unwrap());
    let with_glossary = first_words(&server, key, with_glossary["jobId"].as_str().unwrap());
    assert!(
        !plain.starts_with("four score"),
        "without the glossary the term is misheard (else this test proves nothing): {plain}"
    );
    assert!(with_glossary.starts_with("four score and seven"), "with the glossary: {with_glossary}");
}
