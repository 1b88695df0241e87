//! `google.protobuf.Timestamp` as the A2A spec narrows it: UTC, `Z`, milliseconds.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Datelike, Timelike, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer, de};

/// A point in time as A2A puts it on the wire (`2025-10-28T10:30:00.000Z`).
///
/// The spec asks for UTC with millisecond precision, so values are kept at
/// millisecond precision everywhere ([`Timestamp::now`], `From`, parsing):
/// a value read back from JSON then compares equal to the one written.
/// Input with any RFC 3339 offset is accepted and converted to UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub DateTime<Utc>);

/// Returned when a string is not an RFC 3339 timestamp.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid timestamp `{value}`: expected RFC 3339, e.g. `2025-10-28T10:30:00.000Z`")]
pub struct ParseTimestampError {
    value: String,
}

impl ParseTimestampError {
    /// The rejected input, so callers can echo it back in their own errors.
    pub fn value(&self) -> &str {
        &self.value
    }
}

/// Drops sub-millisecond digits, which the wire format cannot carry.
fn truncate_to_millis(dt: DateTime<Utc>) -> DateTime<Utc> {
    let nanos = dt.nanosecond();
    dt.with_nanosecond(nanos - nanos % 1_000_000).unwrap_or(dt)
}

impl Timestamp {
    /// The current time, at wire precision, for status and event timestamps.
    pub fn now() -> Self {
        thread_local! {
            /// The last millisecond this thread turned into a date: a busy server stamps many
            /// events within one millisecond, and the calendar math is most of the cost.
            static LAST: std::cell::Cell<Option<(i64, Timestamp)>> = const { std::cell::Cell::new(None) };
        }
        let Ok(since_epoch) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)
        else {
            return Self(truncate_to_millis(Utc::now()));
        };
        let Ok(millis) = i64::try_from(since_epoch.as_millis()) else {
            return Self(truncate_to_millis(Utc::now()));
        };
        LAST.with(|last| match last.get() {
            Some((at, ts)) if at == millis => ts,
            _ => {
                let ts = DateTime::from_timestamp_millis(millis)
                    .map_or_else(|| Self(truncate_to_millis(Utc::now())), Self);
                last.set(Some((millis, ts)));
                ts
            }
        })
    }

    /// The underlying `chrono` value, for arithmetic and comparisons.
    pub fn as_datetime(&self) -> &DateTime<Utc> {
        &self.0
    }
}

impl From<DateTime<Utc>> for Timestamp {
    /// Truncates to milliseconds so the value survives a JSON round trip.
    fn from(dt: DateTime<Utc>) -> Self {
        Self(truncate_to_millis(dt))
    }
}

impl From<Timestamp> for DateTime<Utc> {
    fn from(ts: Timestamp) -> Self {
        ts.0
    }
}

impl Timestamp {
    /// The wire form in a fixed buffer, written digit by digit: chrono's format strings are
    /// ~10x slower, and every status update carries a timestamp. `None` for years outside
    /// 0..=9999, which need chrono's general form.
    pub(crate) fn wire_bytes(&self) -> Option<[u8; 24]> {
        thread_local! {
            /// The last millisecond this thread wrote: a busy server writes many statuses
            /// stamped within one, and the calendar math is most of the cost.
            static LAST: std::cell::Cell<Option<(i64, [u8; 24])>> = const { std::cell::Cell::new(None) };
        }
        // A leap second (nanoseconds >= 1e9) would share its millisecond count with the next
        // second's: never cached.
        if self.0.nanosecond() >= 1_000_000_000 {
            return self.format_wire();
        }
        let millis = self.0.timestamp_millis();
        LAST.with(|last| match last.get() {
            Some((at, b)) if at == millis => Some(b),
            _ => {
                let b = self.format_wire()?;
                last.set(Some((millis, b)));
                Some(b)
            }
        })
    }

    fn format_wire(&self) -> Option<[u8; 24]> {
        let dt = &self.0;
        let year = u32::try_from(dt.year()).ok().filter(|y| *y <= 9999)?;
        let mut b = *b"0000-00-00T00:00:00.000Z";
        let mut put = |at: usize, width: usize, mut v: u32| {
            for i in (at..at + width).rev() {
                b[i] = b'0' + (v % 10) as u8;
                v /= 10;
            }
        };
        put(0, 4, year);
        put(5, 2, dt.month());
        put(8, 2, dt.day());
        put(11, 2, dt.hour());
        put(14, 2, dt.minute());
        // A leap second is carried in the nanoseconds (>= 1e9) and shows as second 60.
        let nanos = dt.nanosecond();
        put(17, 2, dt.second() + nanos / 1_000_000_000);
        put(20, 3, (nanos % 1_000_000_000) / 1_000_000);
        Some(b)
    }
}

impl fmt::Display for Timestamp {
    /// Writes the wire form: UTC, exactly three fractional digits, `Z`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.wire_bytes() {
            // The buffer is ASCII digits and separators.
            Some(b) => f.write_str(std::str::from_utf8(&b).map_err(|_| fmt::Error)?),
            None => write!(f, "{}", self.0.format("%Y-%m-%dT%H:%M:%S%.3fZ")),
        }
    }
}

impl FromStr for Timestamp {
    type Err = ParseTimestampError;

    /// Accepts any RFC 3339 timestamp (any offset, any precision).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DateTime::parse_from_rfc3339(s)
            .map(|dt| Self::from(dt.with_timezone(&Utc)))
            .map_err(|_| ParseTimestampError {
                value: s.to_owned(),
            })
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.wire_bytes() {
            Some(b) => s.serialize_str(std::str::from_utf8(&b).map_err(serde::ser::Error::custom)?),
            None => s.collect_str(self),
        }
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct TimestampVisitor;

        impl de::Visitor<'_> for TimestampVisitor {
            type Value = Timestamp;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an RFC 3339 timestamp string")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Timestamp, E> {
                v.parse().map_err(E::custom)
            }
        }

        d.deserialize_str(TimestampVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The digit-by-digit wire form is exactly chrono's `%Y-%m-%dT%H:%M:%S%.3fZ`, and
        /// parses back to the same value.
        #[test]
        fn wire_form_matches_chrono(secs in -62_167_219_200i64..253_402_300_799, ms in 0u32..1000) {
            let ts = Timestamp(DateTime::from_timestamp(secs, ms * 1_000_000).unwrap());
            let fast = ts.to_string();
            prop_assert_eq!(&fast, &ts.0.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string());
            prop_assert_eq!(fast.parse::<Timestamp>().unwrap(), ts);
            prop_assert_eq!(serde_json::to_string(&ts).unwrap(), format!("\"{fast}\""));
        }
    }

    #[test]
    fn now_is_the_clock_at_millisecond_precision() {
        for _ in 0..10_000 {
            let before = Utc::now();
            let ts = Timestamp::now();
            let after = Utc::now();
            assert_eq!(ts.0.nanosecond() % 1_000_000, 0, "milliseconds only");
            assert!(
                truncate_to_millis(before) <= ts.0 && ts.0 <= after,
                "{before} {ts} {after}"
            );
        }
    }

    proptest! {
        /// The per-thread cache of the last written millisecond never returns another's:
        /// repeats, neighbours and leap seconds all write as chrono does.
        #[test]
        fn cached_wire_form_is_always_the_timestamps(
            picks in prop::collection::vec((0usize..4, 0u32..3), 1..40),
        ) {
            let base = 1_767_225_599i64; // 2025-12-31T23:59:59Z
            for (second, ms) in picks {
                // Seconds 0..3 after `base`, and 3 is a leap second on `base`.
                let dt = match second {
                    3 => DateTime::from_timestamp(base, 1_000_000_000 + ms * 1_000_000),
                    s => DateTime::from_timestamp(base + s as i64, ms * 1_000_000),
                }
                .unwrap();
                let ts = Timestamp(dt);
                prop_assert_eq!(ts.to_string(), dt.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string());
            }
        }
    }

    #[test]
    fn years_past_9999_use_the_general_form() {
        let ts = Timestamp(DateTime::from_timestamp(253_402_300_800, 0).unwrap());
        assert_eq!(ts.to_string(), "+10000-01-01T00:00:00.000Z");
    }
}
