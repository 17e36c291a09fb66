//! Sample times as the outputs print them.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds and nanoseconds since the Unix epoch (0 for earlier times).
pub(crate) fn unix(time: SystemTime) -> (i64, u32) {
    time.duration_since(UNIX_EPOCH)
        .map_or((0, 0), |d| (d.as_secs() as i64, d.subsec_nanos()))
}

/// UTC time in RFC 3339; with `nanos`, the fraction has up to 9 digits and no trailing
/// zeros (none at all for a whole second), as Go prints `time.RFC3339Nano`.
pub(crate) fn rfc3339(time: SystemTime, nanos: bool) -> String {
    if !nanos {
        return humantime::format_rfc3339_seconds(time).to_string();
    }
    // humantime prints all nine fraction digits; Go trims trailing zeros.
    let full = humantime::format_rfc3339_nanos(time).to_string();
    let body = full
        .trim_end_matches('Z')
        .trim_end_matches('0')
        .trim_end_matches('.');
    format!("{body}Z")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn rfc3339_nanos_trims_zeros() {
        let t = UNIX_EPOCH + Duration::new(1_796_003_284, 251_320_880);
        assert_eq!(rfc3339(t, true), "2026-11-30T01:48:04.25132088Z");
        assert_eq!(rfc3339(t, false), "2026-11-30T01:48:04Z");
        let whole = UNIX_EPOCH + Duration::from_secs(1_796_003_284);
        assert_eq!(rfc3339(whole, true), "2026-11-30T01:48:04Z");
        assert_eq!(rfc3339(UNIX_EPOCH, true), "1970-01-01T00:00:00Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(rfc3339(leap, false), "2000-02-29T00:00:00Z");
    }
}
