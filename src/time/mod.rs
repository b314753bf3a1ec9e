//! Time, as pure functions: the wire timestamp format, HTTP dates, and the `Clock` seam. Real time
//! comes from the host ([`crate::SystemClock`]); tests use a [`ManualClock`], so
//! expiry and timers are tested exactly, without sleeping. Nothing here reads the host's clock.

mod manual;

pub use manual::ManualClock;

use crate::base::future::BoxFuture;
use crate::base::number::push_digits;

/// Microseconds since the Unix epoch, UTC. Microseconds because that is the wire precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

impl Timestamp {
    /// The instant `micros` microseconds after the Unix epoch.
    pub const fn from_micros(micros: i64) -> Timestamp {
        Timestamp(micros)
    }

    /// Microseconds since the Unix epoch.
    pub const fn as_micros(self) -> i64 {
        self.0
    }

    /// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z: what the wire format (and Python's
    /// `datetime`) can express.
    pub const WIRE_MIN: Timestamp = Timestamp(-62_135_596_800_000_000);
    pub const WIRE_MAX: Timestamp = Timestamp(253_402_300_799_999_999);

    /// Can this instant be written as `YYYY-MM-DDTHH:MM:SS.ffffffZ`?
    pub fn is_on_wire(self) -> bool {
        (Self::WIRE_MIN..=Self::WIRE_MAX).contains(&self)
    }

    /// Milliseconds since the epoch (what a JS `Date` holds).
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1000.0
    }

    /// A JS time (milliseconds, `Date.now()`'s unit), to the nearest microsecond.
    #[cfg(target_arch = "wasm32")]
    pub fn from_millis_f64(millis: f64) -> Timestamp {
        Timestamp((millis * 1000.0).round() as i64)
    }

    /// Seconds from `self` to `later` (negative when `later` is earlier).
    pub fn secs_until(self, later: Timestamp) -> f64 {
        later.0.saturating_sub(self.0) as f64 / 1e6
    }

    /// `self + secs`, saturating instead of overflowing on absurd inputs.
    pub fn plus_secs(self, secs: f64) -> Self {
        // `as` saturates: seconds too many to count in microseconds (over about 1.8e302, whose
        // product is infinite) are the farthest time either way, never no time at all (NaN: 0).
        let delta = (secs * 1_000_000.0).round() as i64;
        Timestamp(self.0.saturating_add(delta))
    }

    /// `YYYY-MM-DDTHH:MM:SS.ffffffZ`, the format CairnDB writes.
    pub fn to_rfc3339(self) -> String {
        let secs = self.0.div_euclid(1_000_000);
        let micros = self.0.rem_euclid(1_000_000);
        let days = secs.div_euclid(86_400);
        let sod = secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        // Written field by field (it runs for every lease document and snapshot written), as
        // `format!("{y:04}-{m:02}-…")` would: a year's sign counts in its width of four.
        let mut out = String::with_capacity(27);
        if y < 0 {
            out.push('-');
        }
        push_digits(&mut out, y.unsigned_abs(), if y < 0 { 3 } else { 4 });
        let (hour, minute, second) = (sod / 3600, sod % 3600 / 60, sod % 60);
        for (separator, n, width) in
            [("-", m, 2), ("-", d, 2), ("T", hour, 2), (":", minute, 2), (":", second, 2), (".", micros, 6)]
        {
            out.push_str(separator);
            push_digits(&mut out, n.unsigned_abs(), width);
        }
        out.push('Z');
        out
    }

    /// Any RFC 3339 date-time: `T`, `t` or a space between date and time; optional fraction of any
    /// length (truncated to microseconds); `Z`, `z` or a `±HH:MM` offset. Also accepts a missing
    /// offset as UTC, since Python's `isoformat()` of a naive datetime omits it.
    pub fn parse_rfc3339(s: &str) -> Option<Self> {
        let b = s.as_bytes();
        let num = |from: usize, len: usize| -> Option<i64> {
            let part = b.get(from..from + len)?;
            if !part.iter().all(u8::is_ascii_digit) {
                return None;
            }
            crate::base::number::parse_i64(std::str::from_utf8(part).ok()?)
        };
        let year = num(0, 4)?;
        let month = num(5, 2)?;
        let day = num(8, 2)?;
        if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') || !matches!(b.get(10), Some(b'T' | b't' | b' ')) {
            return None;
        }
        let hour = num(11, 2)?;
        let minute = num(14, 2)?;
        let second = num(17, 2)?;
        if b.get(13) != Some(&b':') || b.get(16) != Some(&b':') {
            return None;
        }
        if !(1..=12).contains(&month)
            || day < 1
            || day > days_in_month(year, month)
            || hour > 23
            || minute > 59
            || second > 60
        {
            return None;
        }
        let mut i = 19;
        let mut micros = 0i64;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                if i - start < 6 {
                    micros = micros * 10 + i64::from(b[i] - b'0');
                }
                i += 1;
            }
            if i == start {
                return None;
            }
            for _ in (i - start)..6 {
                micros *= 10;
            }
        }
        let offset_secs = match b.get(i) {
            None => 0,
            Some(b'Z' | b'z') if i + 1 == b.len() => 0,
            Some(sign @ (b'+' | b'-')) if b.len() == i + 6 && b[i + 3] == b':' => {
                let (oh, om) = (num(i + 1, 2)?, num(i + 4, 2)?);
                if oh > 23 || om > 59 {
                    return None;
                }
                let off = oh * 3600 + om * 60;
                if *sign == b'+' { off } else { -off }
            }
            _ => return None,
        };
        let days = days_from_civil(year, month, day);
        let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_secs;
        Some(Timestamp(secs * 1_000_000 + micros))
    }
    /// The IMF-fixdate form of an HTTP date, `Sun, 06 Nov 1994 08:49:37 GMT` (whole seconds):
    /// Azure's `x-ms-date`.
    pub fn to_http_date(self) -> String {
        const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
        let secs = self.0.div_euclid(1_000_000);
        let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
        let (y, m, d) = civil_from_days(days);
        let weekday = WEEKDAYS.get(days.rem_euclid(7) as usize).unwrap_or(&"Thu");
        let month = MONTHS.get((m - 1) as usize).unwrap_or(&"Jan");
        format!("{weekday}, {d:02} {month} {y:04} {:02}:{:02}:{:02} GMT", sod / 3600, sod % 3600 / 60, sod % 60)
    }

    /// An HTTP `Date` header in the IMF-fixdate form every current server sends
    /// (`Sun, 06 Nov 1994 08:49:37 GMT`); `None` for anything else (the obsolete forms included:
    /// a store clock estimate is optional, a wrong one is not).
    pub fn parse_http_date(s: &str) -> Option<Self> {
        let (_weekday, rest) = crate::base::text::split_once(s.trim(), ", ")?;
        let mut parts = rest.split(' ');
        let (day, month, year, time, zone) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() || zone != "GMT" || day.len() != 2 || year.len() != 4 || time.len() != 8 {
            return None;
        }
        let month = MONTHS.iter().position(|m| *m == month)? + 1;
        Self::parse_rfc3339(&format!("{year}-{month:02}-{day}T{time}Z"))
    }
}

const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

// Howard Hinnant's civil-date algorithms (public domain), valid for the whole proleptic calendar.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { yoe + era * 400 + 1 } else { yoe + era * 400 }, m, d)
}

/// Where "now" comes from, and how to wait. Lease expiry compares the stored deadline with `now()`;
/// retries and `wait_for` polls wait with `sleep()`. `now` may fail (a user-supplied clock): the
/// error reaches the caller, never replaced by another time.
pub trait Clock: crate::base::sync::MaybeSend + crate::base::sync::MaybeSync {
    fn now(&self) -> crate::base::error::Result<Timestamp>;
    fn sleep(&self, secs: f64) -> BoxFuture<'static, ()>;

    /// A uniformly random float in [0, 1) for what fencepost spreads out in time or space (backoff
    /// and poll jitter, a semaphore's first slot, a counter's shard), or `None` (the default) for
    /// the host's randomness. A [`ManualClock`] draws from a generator seeded by its start, so a
    /// test under it takes the same waits, and makes the same requests, on every run.
    fn jitter(&self) -> Option<f64> {
        None
    }
}

/// Which clock lease deadlines are written and judged in.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum ClockSource {
    /// The configured clock ([`crate::Options::clock`], the system clock by default).
    #[default]
    Local,
    /// The store's clock, estimated from its responses (S3: the `Date` header) as an offset to the
    /// configured clock; the configured clock serves where a store reports no time (memory, R2
    /// binding), and until its first answer. So a client whose clock is minutes off neither steals
    /// a live lease nor writes deadlines that others see as already past.
    Store,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plus_secs_saturates_at_any_size() {
        let now = Timestamp(1_767_225_600_000_000);
        assert_eq!(now.plus_secs(1.5), Timestamp(1_767_225_601_500_000));
        // Seconds whose count in microseconds is infinite are the farthest time, not no time.
        for secs in [1.8e302, 1e308, f64::INFINITY] {
            assert_eq!(now.plus_secs(secs), Timestamp(i64::MAX), "{secs}");
            assert_eq!(now.plus_secs(-secs), Timestamp(now.0 + i64::MIN), "{secs}");
        }
        assert_eq!(now.plus_secs(f64::NAN), now);
    }

    #[test]
    fn formats_with_microseconds() {
        assert_eq!(Timestamp(0).to_rfc3339(), "1970-01-01T00:00:00.000000Z");
        assert_eq!(Timestamp(1_767_225_600_123_456).to_rfc3339(), "2026-01-01T00:00:00.123456Z");
        assert_eq!(Timestamp(951_782_400_000_001).to_rfc3339(), "2000-02-29T00:00:00.000001Z");
        assert_eq!(Timestamp(-1).to_rfc3339(), "1969-12-31T23:59:59.999999Z");
        // Field by field, as `format!` with widths writes it: across and beyond the wire's years.
        let by_format = |t: Timestamp| {
            let (secs, micros) = (t.0.div_euclid(1_000_000), t.0.rem_euclid(1_000_000));
            let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
            let (y, m, d) = civil_from_days(days);
            format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{micros:06}Z", sod / 3600, sod % 3600 / 60, sod % 60)
        };
        let mut next = crate::test_support::xorshift(0x9E37_79B9_7F4A_7C15);
        let edges = [Timestamp::WIRE_MIN, Timestamp::WIRE_MAX, Timestamp(Timestamp::WIRE_MIN.0 - 1)];
        let far = [
            Timestamp(Timestamp::WIRE_MAX.0 + 1),
            Timestamp(-70_000_000_000_000_000),
            Timestamp(400_000_000_000_000_000),
        ];
        let random =
            (0..20_000).map(|_| Timestamp((next() % 600_000_000_000_000_000) as i64 - 300_000_000_000_000_000));
        for t in edges.into_iter().chain(far).chain(random) {
            assert_eq!(t.to_rfc3339(), by_format(t), "{}", t.0);
        }
    }

    #[test]
    fn formats_http_dates() {
        let rfc9110 = Timestamp::parse_rfc3339("1994-11-06T08:49:37.9Z").unwrap();
        assert_eq!(rfc9110.to_http_date(), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(Timestamp(0).to_http_date(), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(Timestamp(-1).to_http_date(), "Wed, 31 Dec 1969 23:59:59 GMT");
        let t = Timestamp(1_767_225_600_000_000);
        assert_eq!(Timestamp::parse_http_date(&t.to_http_date()), Some(t));
    }

    #[test]
    fn parses_rfc3339_leniently() {
        let t = Timestamp(1_767_225_600_123_456);
        for s in [
            "2026-01-01T00:00:00.123456Z",
            "2026-01-01t00:00:00.123456z",
            "2026-01-01 00:00:00.123456+00:00",
            "2026-01-01T01:30:00.123456+01:30",
            "2025-12-31T19:00:00.1234567-05:00",
            "2026-01-01T00:00:00.123456",
        ] {
            assert_eq!(Timestamp::parse_rfc3339(s), Some(t), "{s}");
        }
        assert_eq!(Timestamp::parse_rfc3339("2026-01-01T00:00:00Z"), Some(Timestamp(1_767_225_600_000_000)));
        assert_eq!(Timestamp::parse_rfc3339("2026-01-01T00:00:00.5Z"), Some(Timestamp(1_767_225_600_500_000)));
        for bad in [
            "",
            "2026-13-01T00:00:00Z",
            "2026-02-30T00:00:00Z",
            "2026-01-01T00:00:00.Z",
            "2026-01-01",
            "2026-01-01T00:00:00+0100",
            "nope",
            "2026-01-01T00:00:00Zjunk",
            "２０２６-01-01T00:00:00Z",
        ] {
            assert_eq!(Timestamp::parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn parses_http_dates() {
        assert_eq!(Timestamp::parse_http_date("Thu, 01 Jan 2026 00:00:07 GMT"), Some(Timestamp(1_767_225_607_000_000)));
        assert_eq!(Timestamp::parse_http_date(" Sun, 06 Nov 1994 08:49:37 GMT "), Some(Timestamp(784_111_777_000_000)));
        for bad in [
            "",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 6 Nov 1994 08:49:37 GMT",
            "Sun, 31 Feb 1994 08:49:37 GMT",
            "Sun, 06 Nox 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT x",
            "Sun, 06 Nov 1994 8:49:37Z GMT",
        ] {
            assert_eq!(Timestamp::parse_http_date(bad), None, "{bad}");
        }
    }

    #[test]
    fn round_trips() {
        for us in [0, 1, 999_999, 1_767_225_600_123_456, 4_102_444_800_000_000, -86_400_000_001] {
            let t = Timestamp(us);
            assert_eq!(Timestamp::parse_rfc3339(&t.to_rfc3339()), Some(t));
        }
    }
}
