//! A live session saved as a job has its waveform peaks made when its recording goes to be read
//! again, as an upload has them made when it goes to recognition: the editor's first opening of a
//! live job finds them beside its media instead of decoding the recording on that request. A real
//! session over the real-time WebSocket, with real corpus speech and the real engine.

use std::time::{Duration, Instant};

use scribe_tests::live::{self, Session, pcm};
use scribe_tests::{ASR_TIMEOUT, TestServer, clips, web_app};
use serde_json::{Value, json};

#[test]
fn a_saved_live_sessions_peaks_are_made_when_its_recording_is_read_again_not_on_the_first_request() {
    let server = TestServer::start();
    let key = server.key().to_owned();
    let audio = pcm(clips::JFK, 16_000, "s16le");
    let init = json!({
        "messageType": "INIT",
        "language": "en",
        "apiKey": key,
        "audioConfig": {"sample_rate": 16000, "encoding": "s16le"},
        "outputConfig": {"format": "transcription", "partials": false, "saveAsJob": true},
    });
    let run = Session::new(server.ws_url("/api/real-time"), init, &audio, 16_000, "s16le").run();
    assert!(live::is_normal(run.close_code()), "close {:?}; messages {:?}", run.close, run.messages);
    let job_id = run.messages[0].1["message"]["jobId"].as_str().expect("the first Info names the job").to_owned();
    let job = server.wait_for_status(&key, &job_id, &["DONE", "ERROR"], ASR_TIMEOUT);
    assert_eq!(job["status"], "DONE", "{job}");

    // Nobody asked for the waveform: the peaks appear beside the recording on their own.
    let cache = web_app::peaks_file(&server, &job_id);
    let listing = || web_app::media_files(&server, &job_id);
    let asked = Instant::now();
    let deadline = asked + Duration::from_secs(60);
    while !cache.is_file() {
        assert!(
            Instant::now() < deadline,
            "no waveform peaks beside the live job's recording a minute after it was stored: {:?}",
            listing()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    println!("peaks beside the live recording {} ms after the job was DONE", asked.elapsed().as_millis());
    let prepared: Value = serde_json::from_slice(&std::fs::read(&cache).unwrap()).unwrap();

    // The editor's request is answered with them: the whole recording, 20 pairs a second.
    let served = web_app::served_peaks_match(&server, &web_app::peaks_url(&server, &key, &job_id), &prepared);
    let duration = served["duration"].as_f64().unwrap();
    assert!((duration - 11.0).abs() < 0.5, "the JFK clip lasts about 11 s: {duration}");
    assert!(served["max"].as_array().unwrap().iter().any(|v| v.as_f64().unwrap() > 0.05), "speech, not silence");
}
