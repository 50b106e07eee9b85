//! Sizes and durations written the way a person reads them in an `errorMsg` ("40 kB",
//! "10 minutes", "1 h 40 min 3 s"), shared by the download stage and the media-length rule
//! (`job::media_limit`).

use std::time::Duration;

/// A byte count in SI units: "512 bytes", "40 kB", "1.5 MB", "3.2 GB".
pub fn size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1_000_000_000, "GB"), (1_000_000, "MB"), (1_000, "kB")];
    for (scale, unit) in UNITS {
        if bytes >= scale {
            let value = bytes as f64 / scale as f64;
            return if value < 10.0 && !bytes.is_multiple_of(scale) {
                format!("{value:.1} {unit}")
            } else {
                format!("{:.0} {unit}", value.floor())
            };
        }
    }
    if bytes == 1 { "1 byte".to_owned() } else { format!("{bytes} bytes") }
}

/// A limit set by the operator, in words: "10 minutes", "2 hours", "90 seconds", "1 h 30 min".
pub fn limit(d: Duration) -> String {
    let secs = d.as_secs();
    let plural = |n: u64, one: &str| if n == 1 { format!("1 {one}") } else { format!("{n} {one}s") };
    if secs == 0 {
        format!("{} ms", d.as_millis())
    } else if secs.is_multiple_of(3600) {
        plural(secs / 3600, "hour")
    } else if secs.is_multiple_of(60) && secs < 3600 {
        plural(secs / 60, "minute")
    } else if secs < 120 {
        plural(secs, "second")
    } else {
        length(d)
    }
}

/// A media length: "1 h 40 min 3 s", "12 min", "45 s" (whole seconds, zero parts left out).
pub fn length(d: Duration) -> String {
    let total = d.as_secs_f64().round() as u64;
    let (h, m, s) = (total / 3600, total % 3600 / 60, total % 60);
    let mut parts = Vec::new();
    if h > 0 {
        parts.push(format!("{h} h"));
    }
    if m > 0 {
        parts.push(format!("{m} min"));
    }
    if s > 0 || parts.is_empty() {
        parts.push(format!("{s} s"));
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_like_a_person_writes_them() {
        assert_eq!(size(1), "1 byte");
        assert_eq!(size(999), "999 bytes");
        assert_eq!(size(40_960), "40 kB");
        assert_eq!(size(1_500_000), "1.5 MB");
        assert_eq!(size(16_000_000_000), "16 GB");
    }

    #[test]
    fn limits_and_lengths_read_like_a_person_writes_them() {
        assert_eq!(limit(Duration::from_secs(600)), "10 minutes");
        assert_eq!(limit(Duration::from_secs(60)), "1 minute");
        assert_eq!(limit(Duration::from_secs(7200)), "2 hours");
        assert_eq!(limit(Duration::from_secs(5)), "5 seconds");
        assert_eq!(limit(Duration::from_secs(5400)), "1 h 30 min");
        assert_eq!(length(Duration::from_millis(100_400)), "1 min 40 s");
        assert_eq!(length(Duration::from_secs(36_000)), "10 h");
        assert_eq!(length(Duration::from_millis(200)), "0 s");
    }
}
