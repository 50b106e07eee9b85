//! Media storage on a real directory: streaming with a cap, atomic commit, clean-up of partial
//! files (dropped uploads and crashes), transcripts, deletion.

use scribe_actors::media::{MediaError, MediaStore};

async fn store() -> (tempfile::TempDir, MediaStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = MediaStore::open(dir.path()).await.unwrap();
    (dir, store)
}

fn files_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[tokio::test]
async fn chunks_are_committed_under_the_job_with_a_safe_name() {
    let (_dir, store) = store().await;
    let mut temp = store.create_temp(1_000).await.unwrap();
    temp.write_chunk(b"RIFF").await.unwrap();
    temp.write_chunk(b"-and-the-rest").await.unwrap();
    assert_eq!(temp.written(), 17);
    let stored = store.commit(temp, "job-1", "../../evil/../talk.wav").await.unwrap();
    assert_eq!(stored.file_name, "talk.wav");
    assert_eq!(stored.size, 17);
    assert_eq!(stored.path, store.media_dir().join("job-1").join("talk.wav"));
    assert_eq!(std::fs::read(&stored.path).unwrap(), b"RIFF-and-the-rest");
    assert_eq!(files_in(store.media_dir()), ["job-1"], "no temp file remains after commit");
}

#[tokio::test]
async fn large_files_in_uneven_chunks_arrive_byte_for_byte() {
    let (_dir, store) = store().await;
    // 11 MB crosses several internal write blocks; chunk sizes vary like network reads do.
    let data: Vec<u8> = (0..11_000_003u32).map(|i| (i % 251) as u8).collect();
    let mut temp = store.create_temp(data.len() as u64).await.unwrap();
    let mut offset = 0;
    for size in [1, 7, 65_536, 4 << 20, 333_333].iter().cycle() {
        let end = (offset + size).min(data.len());
        temp.write_chunk(&data[offset..end]).await.unwrap();
        offset = end;
        if offset == data.len() {
            break;
        }
    }
    let stored = store.commit(temp, "job-big", "big.bin").await.unwrap();
    assert_eq!(stored.size, data.len() as u64);
    assert!(std::fs::read(&stored.path).unwrap() == data, "the file holds exactly the bytes written, in order");
}

#[tokio::test]
async fn passing_the_cap_fails_and_leaves_nothing() {
    let (_dir, store) = store().await;
    let mut temp = store.create_temp(10).await.unwrap();
    temp.write_chunk(b"0123456789").await.unwrap(); // exactly the limit is fine
    let error = temp.write_chunk(b"x").await.unwrap_err();
    assert!(matches!(error, MediaError::TooLarge { limit: 10 }), "{error:?}");
    assert_eq!(error.to_string(), "the file is larger than the limit of 10 bytes");
    drop(temp);
    assert!(files_in(store.media_dir()).is_empty());
}

#[tokio::test]
async fn a_dropped_upload_removes_its_partial_file() {
    let (_dir, store) = store().await;
    let mut temp = store.create_temp(1 << 20).await.unwrap();
    temp.write_chunk(&[7u8; 300_000]).await.unwrap();
    let partial = temp.path().to_owned();
    assert!(partial.exists());
    drop(temp); // what happens when the client disconnects and the request future is dropped
    assert!(!partial.exists());
    assert!(files_in(store.media_dir()).is_empty());
}

#[tokio::test]
async fn partial_files_from_a_crash_are_removed_at_open() {
    let (dir, store) = store().await;
    let temp = store.create_temp(100).await.unwrap();
    let partial = temp.path().to_owned();
    std::mem::forget(temp); // like a SIGKILL: Drop never runs
    assert!(partial.exists());
    MediaStore::open(dir.path()).await.unwrap();
    assert!(!partial.exists());
}

#[tokio::test]
async fn transcripts_are_written_atomically_and_deleted_with_the_job() {
    let (_dir, store) = store().await;
    assert_eq!(store.read_transcript("job-9").await.unwrap(), None);
    store.write_transcript("job-9", br#"{"segments":[]}"#).await.unwrap();
    store.write_transcript("job-9", br#"{"segments":[1]}"#).await.unwrap();
    assert_eq!(store.read_transcript("job-9").await.unwrap().unwrap(), br#"{"segments":[1]}"#);
    let transcripts_dir = store.transcript_path("job-9").unwrap().parent().unwrap().to_owned();
    assert_eq!(files_in(&transcripts_dir), ["job-9.json"]);

    let mut temp = store.create_temp(100).await.unwrap();
    temp.write_chunk(b"data").await.unwrap();
    let media = store.commit(temp, "job-9", "a.wav").await.unwrap();
    store.delete_job("job-9").await.unwrap();
    assert!(!media.path.exists() && !store.media_dir().join("job-9").exists());
    assert_eq!(store.read_transcript("job-9").await.unwrap(), None);
    store.delete_job("job-9").await.unwrap(); // deleting twice is fine
}

#[tokio::test]
async fn job_ids_cannot_reach_outside_the_store() {
    let (_dir, store) = store().await;
    for bad in ["..", "../x", "a/b", ""] {
        assert!(matches!(store.delete_job(bad).await, Err(MediaError::InvalidJobId(_))), "{bad:?}");
        assert!(store.transcript_path(bad).is_err());
        let temp = store.create_temp(10).await.unwrap();
        assert!(matches!(store.commit(temp, bad, "a.wav").await, Err(MediaError::InvalidJobId(_))));
    }
    assert!(files_in(store.media_dir()).is_empty(), "a refused commit removes its temp file");
}
