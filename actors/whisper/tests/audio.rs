//! Decoding real media: every format copy of jfk, broken and non-media files, streaming, and one
//! channel of a stereo file alone (through symphonia and through ffmpeg).

use std::path::{Path, PathBuf};
use std::process::Command;

use scribe_whisper::audio::{self, AudioError, SAMPLE_RATE};

fn corpus() -> PathBuf {
    let dir = std::env::var_os("SCRIBE_CORPUS_DIR").map(PathBuf::from).unwrap_or_else(|| {
        Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()))
            .join("../../../shared/corpus")
    });
    assert!(dir.join("manifest.tsv").exists(), "speech corpus not found at {} (set SCRIBE_CORPUS_DIR)", dir.display());
    dir
}

fn seconds(samples: usize) -> f64 {
    samples as f64 / SAMPLE_RATE as f64
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("scribe-audio-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn wav_decodes_to_its_duration() {
    let path = corpus().join("audio/en_jfk.wav");
    let info = audio::probe(&path).unwrap();
    assert_eq!(info.container, "wave");
    assert!((info.duration_s - 11.0).abs() < 0.01, "{info:?}");
    let samples = audio::decode_all(&path).unwrap();
    assert_eq!(samples.len(), 176_000);
    let peak = samples.iter().fold(0f32, |m, x| m.max(x.abs()));
    assert!(peak > 0.1 && peak <= 1.0, "peak {peak}");
}

#[test]
fn every_format_copy_of_jfk_has_the_same_duration_and_signal() {
    let reference = audio::decode_all(&corpus().join("audio/en_jfk.wav")).unwrap();
    let variants = corpus().join("audio/variants");
    for ext in ["mp3", "m4a", "ogg", "opus", "flac", "mp4"] {
        let path = variants.join(format!("en_jfk.{ext}"));
        let info = audio::probe(&path).unwrap_or_else(|e| panic!("{ext}: {e}"));
        let samples = audio::decode_all(&path).unwrap_or_else(|e| panic!("{ext}: {e}"));
        let got = seconds(samples.len());
        assert!((got - 11.0).abs() <= 0.05, "{ext}: decoded {got:.3} s ({info:?})");
        assert!((info.duration_s - 11.0).abs() <= 0.1, "{ext}: probe says {info:?}");
        // Same signal, not just the same length: energy within 10% of the wav's (lossy codecs
        // and resampling change details, not loudness).
        let energy = |s: &[f32]| s.iter().map(|x| x * x).sum::<f32>() / s.len() as f32;
        let ratio = energy(&samples) / energy(&reference);
        assert!((0.9..1.1).contains(&ratio), "{ext}: energy ratio {ratio}");
    }
}

#[test]
fn format_is_chosen_by_content_not_name() {
    let path = scratch("actually_flac.wav");
    std::fs::copy(corpus().join("audio/variants/en_jfk.flac"), &path).unwrap();
    let info = audio::probe(&path).unwrap();
    assert_eq!(info.codec, "flac", "{info:?}");
    let got = seconds(audio::decode_all(&path).unwrap().len());
    assert!((got - 11.0).abs() <= 0.05, "{got}");
}

#[test]
fn truncated_mp3_is_a_clear_error() {
    let path = corpus().join("audio/variants/corrupt_truncated.mp3");
    let err = audio::decode_all(&path).expect_err("a 1500-byte fragment of an 11 s mp3 decoded as if whole");
    assert!(matches!(err, AudioError::Truncated { .. }), "{err:?}");
    assert!(err.to_string().starts_with("The file is cut short"), "{err}");
    // Looking at the header alone is fine: it announces the full 11 s.
    assert!(audio::probe(&path).is_ok());
}

#[test]
fn random_bytes_are_not_media() {
    let path = corpus().join("audio/variants/corrupt_random_bytes.mp3");
    let err = audio::decode_all(&path).expect_err("random bytes decoded");
    assert!(matches!(err, AudioError::NotMedia | AudioError::Corrupt { .. }), "{err:?}");
    assert!(audio::probe(&path).is_err() || matches!(err, AudioError::Corrupt { .. }));
}

#[test]
fn text_renamed_wav_is_not_media() {
    let path = scratch("notes.wav");
    std::fs::write(&path, "Meeting notes\nThis is a text file, not a recording.\n".repeat(50)).unwrap();
    let err = audio::probe(&path).unwrap_err();
    assert!(matches!(err, AudioError::NotMedia), "{err:?}");
    assert_eq!(err.to_string(), "The file is not a recognised audio or video format");
    assert!(matches!(audio::open(&path).err(), Some(AudioError::NotMedia)));
}

#[test]
fn empty_and_missing_files() {
    let path = scratch("empty.mp3");
    std::fs::write(&path, b"").unwrap();
    assert!(matches!(audio::probe(&path), Err(AudioError::Empty)));
    let missing = scratch("does-not-exist.wav");
    let err = audio::open(&missing).err().unwrap();
    assert!(matches!(err, AudioError::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("does-not-exist.wav"), "{err}");
}

#[test]
fn video_without_audio_has_no_audio_track() {
    for ext in ["mp4", "avi"] {
        let path = scratch(&format!("silent_video.{ext}"));
        let status = Command::new("ffmpeg")
            .args(["-y", "-v", "error", "-f", "lavfi", "-i", "color=c=black:s=64x64:d=1", "-an"])
            .arg(&path)
            .status()
            .expect("ffmpeg is needed (bash ops/setup.sh)");
        assert!(status.success());
        let err = audio::probe(&path).unwrap_err();
        assert!(matches!(err, AudioError::NoAudioTrack), "{ext}: {err:?}");
        assert_eq!(err.to_string(), "The media contains no audio track");
        assert!(matches!(audio::open(&path).err(), Some(AudioError::NoAudioTrack)), "{ext}");
    }
}

#[test]
fn ffmpeg_only_formats_decode() {
    // wma and mpeg-ps (vob/mpg) are not symphonia's: they go through ffmpeg.
    let src = corpus().join("audio/en_jfk.wav");
    for (ext, codec_args) in
        [("wma", vec!["-c:a", "wmav2"]), ("mpg", vec!["-c:a", "mp2"]), ("avi", vec!["-c:a", "mp3"])]
    {
        let path = scratch(&format!("jfk.{ext}"));
        let status = Command::new("ffmpeg")
            .args(["-y", "-v", "error", "-i"])
            .arg(&src)
            .args(&codec_args)
            .arg(&path)
            .status()
            .expect("ffmpeg is needed (bash ops/setup.sh)");
        assert!(status.success(), "{ext}");
        let got = seconds(audio::decode_all(&path).unwrap_or_else(|e| panic!("{ext}: {e}")).len());
        assert!((got - 11.0).abs() <= 0.1, "{ext}: {got}");
    }
}

#[test]
fn long_files_stream_in_bounded_pieces() {
    // 100 s of speech, at 44.1 kHz stereo mp3 (symphonia + resampler) and as opus (ffmpeg).
    let src = corpus().join("audio/en_synth_gettysburg_2voices.wav");
    for (ext, args) in [("mp3", vec!["-ar", "44100", "-ac", "2"]), ("opus", vec!["-ac", "2"])] {
        let path = scratch(&format!("long.{ext}"));
        let status =
            Command::new("ffmpeg").args(["-y", "-v", "error", "-i"]).arg(&src).args(&args).arg(&path).status().unwrap();
        assert!(status.success());
        let mut stream = audio::open(&path).unwrap();
        let max = 16_000;
        let (mut total, mut pieces) = (0usize, 0usize);
        while let Some(piece) = stream.read(max).unwrap() {
            assert!(!piece.is_empty() && piece.len() <= max, "{ext}: piece of {}", piece.len());
            total += piece.len();
            pieces += 1;
        }
        assert!((seconds(total) - 100.16).abs() < 0.1, "{ext}: {}", seconds(total));
        assert!(pieces >= 100, "{ext}: {pieces} pieces");
        assert!(stream.read(max).unwrap().is_none());
    }
}

/// A stereo WAV at `rate`: 1 s of a 440 Hz tone on the left, silence on the right.
fn tone_left_silence_right(name: &str, rate: u32) -> PathBuf {
    let path = scratch(name);
    let spec =
        hound::WavSpec { channels: 2, sample_rate: rate, bits_per_sample: 16, sample_format: hound::SampleFormat::Int };
    let mut w = hound::WavWriter::create(&path, spec).unwrap();
    for x in sine(rate, 1.0) {
        w.write_sample((x * 32767.0) as i16).unwrap();
        w.write_sample(0i16).unwrap();
    }
    w.finalize().unwrap();
    path
}

fn rms(samples: &[f32]) -> f32 {
    (samples.iter().map(|x| x * x).sum::<f32>() / samples.len().max(1) as f32).sqrt()
}

/// The RMS of channel `index` of `path`, opened alone, and the channel count the stream reports.
fn channel_rms(path: &Path, index: usize) -> (f32, usize) {
    let mut stream = audio::open_channel(path, index).unwrap_or_else(|e| panic!("channel {index}: {e}"));
    let channels = stream.info().channels;
    let mut all = Vec::new();
    while let Some(piece) = stream.read(4_000).unwrap() {
        all.extend(piece);
    }
    assert!((seconds(all.len()) - 1.0).abs() < 0.05, "channel {index}: {} s", seconds(all.len()));
    (rms(&all), channels)
}

#[test]
fn one_channel_of_a_stereo_wav_is_read_alone() {
    // Given a stereo WAV (at 16 kHz, and at 44.1 kHz through the resampler) with a tone on the
    // left and silence on the right,
    for rate in [16_000, 44_100] {
        let path = tone_left_silence_right(&format!("left_tone_{rate}.wav"), rate);
        assert_eq!(audio::probe(&path).unwrap().channels, 2);
        // when each channel is opened alone, then the left has the tone (RMS 0.5/√2) and the
        // right nothing;
        let (left, channels) = channel_rms(&path, 0);
        let (right, _) = channel_rms(&path, 1);
        assert_eq!(channels, 2);
        assert!((left - 0.354).abs() < 0.02, "{rate} Hz: left RMS {left}");
        assert!(right < 1e-4, "{rate} Hz: right RMS {right}");
        // the two mixed down are half the tone;
        let mixed = rms(&audio::decode_all(&path).unwrap());
        assert!((mixed - left / 2.0).abs() < 0.01, "{rate} Hz: mixed RMS {mixed}");
        // and a third channel does not exist.
        let err = audio::open_channel(&path, 2).err().unwrap();
        assert!(matches!(err, AudioError::NoSuchChannel { index: 2, channels: 2 }), "{err:?}");
        assert_eq!(err.to_string(), "The media has no audio channel 3: it has 2");
    }
}

#[test]
fn one_channel_of_a_stereo_file_is_read_alone_through_ffmpeg() {
    // Given the same stereo tone as Ogg/Opus (which only ffmpeg decodes here),
    let wav = tone_left_silence_right("left_tone_for_opus.wav", 48_000);
    let path = scratch("left_tone.opus");
    let status = Command::new("ffmpeg")
        .args(["-y", "-v", "error", "-i"])
        .arg(&wav)
        .args(["-c:a", "libopus", "-b:a", "96k"])
        .arg(&path)
        .status()
        .expect("ffmpeg is needed (bash ops/setup.sh)");
    assert!(status.success());
    let info = audio::probe(&path).unwrap();
    assert_eq!((info.codec.as_str(), info.channels), ("opus", 2), "{info:?}");
    // when each channel is opened alone (ffmpeg's pan filter), then the left has the tone and the
    // right (nearly) nothing: lossy coding leaks a trace across, far below the tone;
    let (left, channels) = channel_rms(&path, 0);
    let (right, _) = channel_rms(&path, 1);
    assert_eq!(channels, 2);
    assert!((left - 0.354).abs() < 0.03, "left RMS {left}");
    assert!(right < left / 100.0, "right RMS {right} (left {left})");
    // and a channel the file does not have is refused before ffmpeg runs.
    assert!(matches!(audio::open_channel(&path, 5).err(), Some(AudioError::NoSuchChannel { index: 5, channels: 2 })));
}

#[test]
fn a_mono_file_has_one_channel_whichever_decoder_reads_it() {
    for name in ["audio/en_jfk.wav", "audio/variants/en_jfk.opus", "audio/variants/en_jfk.mp3"] {
        let path = corpus().join(name);
        let stream = audio::open_channel(&path, 0).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(stream.info().channels, 1, "{name}");
        let err = audio::open_channel(&path, 1).err().unwrap_or_else(|| panic!("{name}: channel 2 opened"));
        assert!(matches!(err, AudioError::NoSuchChannel { index: 1, channels: 1 }), "{name}: {err:?}");
    }
    // Channel 0 of a mono file is the file.
    let path = corpus().join("audio/en_jfk.wav");
    let mut alone = audio::open_channel(&path, 0).unwrap();
    let mut first = Vec::new();
    while let Some(p) = alone.read(16_000).unwrap() {
        first.extend(p);
    }
    assert_eq!(first, audio::decode_all(&path).unwrap());
}

/// `seconds` of a 440 Hz sine at `rate`, amplitude 0.5.
fn sine(rate: u32, seconds: f64) -> Vec<f32> {
    let n = (rate as f64 * seconds) as usize;
    (0..n).map(|k| 0.5 * (2.0 * std::f64::consts::PI * 440.0 * k as f64 / rate as f64).sin() as f32).collect()
}

/// Upward zero crossings per second over `samples` at 16 kHz.
fn frequency(samples: &[f32]) -> f64 {
    let ups = samples.windows(2).filter(|w| w[0] < 0.0 && w[1] >= 0.0).count();
    ups as f64 / seconds(samples.len())
}

#[test]
fn stream_resampler_brings_every_live_rate_to_16k() {
    for rate in [8_000, 22_050, 44_100, 48_000] {
        // Given 2 s of a 440 Hz tone, pushed in pieces of awkward sizes
        let input = sine(rate, 2.0);
        let mut r = audio::StreamResampler::new(rate).unwrap();
        let mut out = Vec::new();
        let mut rest = &input[..];
        for size in [1usize, 100, 1_234, 7, 4_410, 999].iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (piece, tail) = rest.split_at((*size).min(rest.len()));
            out.extend(r.push(piece));
            rest = tail;
        }
        out.extend(r.finish());
        // Then 2 s come out at 16 kHz: the right length, pitch, level and phase (no delay)
        let expected = (input.len() as u64 * 16_000).div_ceil(rate as u64) as usize;
        assert!(out.len().abs_diff(expected) <= 1024, "{rate} Hz: {} samples, expected {expected}", out.len());
        let middle = &out[4_000..28_000];
        let f = frequency(middle);
        assert!((f - 440.0).abs() < 2.0, "{rate} Hz: {f} Hz");
        let worst = middle
            .iter()
            .enumerate()
            .map(|(k, &x)| {
                let t = (k + 4_000) as f64 / 16_000.0;
                (x as f64 - 0.5 * (2.0 * std::f64::consts::PI * 440.0 * t).sin()).abs()
            })
            .fold(0f64, f64::max);
        // rubato's delay is removed in whole output samples: what remains is a fraction of one
        // (0.05 is 0.6 of a sample's phase step at 440 Hz).
        eprintln!("{rate} Hz: {} samples, largest difference from the ideal tone {worst:.4}", out.len());
        assert!(worst < 0.05, "{rate} Hz: differs from the ideal tone by {worst}");
        // And the pieces do not change the result: one push gives the same samples
        let mut whole = audio::StreamResampler::new(rate).unwrap();
        let mut once = whole.push(&input);
        once.extend(whole.finish());
        assert_eq!(once, out, "{rate} Hz");
    }
}

#[test]
fn stream_resampler_passes_16k_through_and_refuses_other_rates() {
    let input = sine(16_000, 0.5);
    let mut r = audio::StreamResampler::new(16_000).unwrap();
    assert_eq!(r.push(&input[..1000]), &input[..1000]);
    assert_eq!(r.push(&input[1000..]), &input[1000..]);
    assert!(r.finish().is_empty());
    for rate in [0, 7_999, 48_001, 96_000] {
        let err = audio::StreamResampler::new(rate).err().unwrap();
        assert!(err.to_string().contains(&format!("{rate} Hz")), "{err}");
    }
}
