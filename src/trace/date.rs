//! Civil dates to Unix seconds, without a date crate (for the Philly
//! trace's wall-clock timestamps and for window starts given as dates).
//!
//! Times are *naive*: no time zone, no leap seconds. The proleptic Gregorian
//! calendar is used for every year (Howard Hinnant's `days_from_civil`).
//!
//! ```
//! use dmlsched::trace::date::{parse_date, parse_datetime};
//! assert_eq!(parse_date("1970-01-01"), Some(0));
//! assert_eq!(parse_datetime("2017-10-07 01:11:39").unwrap() - parse_date("2017-10-07").unwrap(), 4299);
//! ```

/// Seconds in a day.
pub const DAY_S: i64 = 86_400;

/// Days from 1970-01-01 to the given date (negative before it).
///
/// `month` is 1–12 and `day` 1–31; the caller validates them (see
/// [`is_valid_date`]).
///
/// ```
/// use dmlsched::trace::date::days_from_civil;
///
/// assert_eq!(days_from_civil(1970, 1, 1), 0);
/// assert_eq!(days_from_civil(1969, 12, 31), -1);
/// assert_eq!(days_from_civil(2000, 3, 1), 11_017);
/// assert_eq!(days_from_civil(2017, 10, 7), 17_446);
/// ```
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400; // [0, 399]
    let mp = (i64::from(month) + 9) % 12; // March = 0
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1; // [0, 365]
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; // [0, 146096]
    era * 146_097 + doe - 719_468
}

/// The date `(year, month, day)` of a day count from 1970-01-01; the
/// inverse of [`days_from_civil`].
///
/// ```
/// use dmlsched::trace::date::{civil_from_days, days_from_civil};
///
/// assert_eq!(civil_from_days(17_446), (2017, 10, 7));
/// assert_eq!(civil_from_days(-1), (1969, 12, 31));
/// assert_eq!(civil_from_days(days_from_civil(2000, 2, 29)), (2000, 2, 29));
/// ```
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097; // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11]
    let day = doy - (153 * mp + 2) / 5 + 1; // [1, 31]
    let month = if mp < 10 { mp + 3 } else { mp - 9 }; // [1, 12]
    let year = yoe + era * 400 + i64::from(month <= 2);
    // Both values are in range by construction.
    (year, month as u32, day as u32)
}

/// Whether `year` is a Gregorian leap year.
///
/// ```
/// use dmlsched::trace::date::is_leap_year;
///
/// assert!(is_leap_year(2024) && is_leap_year(2000));
/// assert!(!is_leap_year(2023) && !is_leap_year(1900));
/// ```
pub fn is_leap_year(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// Days in `month` (1–12) of `year`; 0 for an invalid month.
///
/// ```
/// use dmlsched::trace::date::days_in_month;
///
/// assert_eq!(days_in_month(2024, 2), 29);
/// assert_eq!(days_in_month(2023, 2), 28);
/// assert_eq!(days_in_month(2023, 4), 30);
/// assert_eq!(days_in_month(2023, 13), 0);
/// ```
pub fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Whether the date exists.
///
/// ```
/// use dmlsched::trace::date::is_valid_date;
///
/// assert!(is_valid_date(2024, 2, 29));
/// assert!(!is_valid_date(2023, 2, 29));
/// assert!(!is_valid_date(2023, 0, 1) && !is_valid_date(2023, 1, 0));
/// ```
pub fn is_valid_date(year: i64, month: u32, day: u32) -> bool {
    (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month)
}

fn digits(text: &str, min: usize, max: usize) -> Option<u32> {
    if (min..=max).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit()) {
        text.parse().ok()
    } else {
        None
    }
}

/// Unix seconds of `YYYY-MM-DD` at 00:00:00; `None` if the text is not a
/// valid date (month and day may have one or two digits).
///
/// ```
/// use dmlsched::trace::date::parse_date;
///
/// assert_eq!(parse_date("2017-10-07"), Some(1_507_334_400));
/// assert_eq!(parse_date("2017-9-7"), parse_date("2017-09-07"));
/// assert_eq!(parse_date("2017-02-30"), None); // no such day
/// assert_eq!(parse_date("17-10-07"), None); // four-digit years only
/// ```
pub fn parse_date(text: &str) -> Option<i64> {
    let mut parts = text.trim().split('-');
    let year = digits(parts.next()?, 4, 4)?;
    let month = digits(parts.next()?, 1, 2)?;
    let day = digits(parts.next()?, 1, 2)?;
    if parts.next().is_some() || !is_valid_date(i64::from(year), month, day) {
        return None;
    }
    Some(days_from_civil(i64::from(year), month, day) * DAY_S)
}

/// Unix seconds of `YYYY-MM-DD HH:MM:SS` (a `T` may replace the space);
/// `None` if the text is not a valid naive date-time.
///
/// ```
/// use dmlsched::trace::date::{parse_date, parse_datetime};
///
/// let midnight = parse_date("2017-10-07").unwrap();
/// assert_eq!(parse_datetime("2017-10-07 01:11:39"), Some(midnight + 4299));
/// assert_eq!(parse_datetime("2017-10-07T01:11:39"), Some(midnight + 4299));
/// assert_eq!(parse_datetime("2017-10-07 24:00:00"), None);
/// assert_eq!(parse_datetime("2017-10-07"), None); // a time is required
/// ```
pub fn parse_datetime(text: &str) -> Option<i64> {
    let text = text.trim();
    let (date, time) = text.split_once([' ', 'T'])?;
    let mut hms = time.trim().split(':');
    let h = digits(hms.next()?, 1, 2)?;
    let m = digits(hms.next()?, 1, 2)?;
    let s = digits(hms.next()?, 1, 2)?;
    if hms.next().is_some() || h > 23 || m > 59 || s > 59 {
        return None;
    }
    Some(parse_date(date)? + i64::from(h) * 3600 + i64::from(m) * 60 + i64::from(s))
}

/// `YYYY-MM-DD HH:MM:SS` of Unix seconds (naive).
///
/// ```
/// use dmlsched::trace::date::{format_datetime, parse_datetime};
///
/// assert_eq!(format_datetime(1_507_338_699), "2017-10-07 01:11:39");
/// assert_eq!(format_datetime(-1), "1969-12-31 23:59:59");
/// assert_eq!(parse_datetime(&format_datetime(951_782_400)), Some(951_782_400));
/// ```
pub fn format_datetime(unix_s: i64) -> String {
    let (y, mo, d) = civil_from_days(unix_s.div_euclid(DAY_S));
    let s = unix_s.rem_euclid(DAY_S);
    format!(
        "{y:04}-{mo:02}-{d:02} {:02}:{:02}:{:02}",
        s / 3600,
        (s / 60) % 60,
        s % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_days() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(2017, 10, 7), 17_446);
        // 2017-10-07 00:00:00 UTC is 1507334400.
        assert_eq!(parse_date("2017-10-07"), Some(1_507_334_400));
        assert_eq!(parse_datetime("2017-10-07 01:11:39"), Some(1_507_338_699));
        assert_eq!(parse_datetime("2017-10-07T01:11:39"), Some(1_507_338_699));
    }

    #[test]
    fn round_trip_over_four_centuries() {
        for days in (-146_097..2 * 146_097).step_by(97) {
            let (y, m, d) = civil_from_days(days);
            assert!(is_valid_date(y, m, d));
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(format_datetime(1_507_338_699), "2017-10-07 01:11:39");
        assert_eq!(format_datetime(-1), "1969-12-31 23:59:59");
    }

    #[test]
    fn rejects_invalid_dates() {
        for bad in [
            "2017-02-29",
            "2017-13-01",
            "2017-00-10",
            "2017-1-32",
            "17-01-01",
            "2017/01/01",
            "2017-01-01-01",
            "",
        ] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
        assert_eq!(
            parse_date("2016-02-29"),
            Some(days_from_civil(2016, 2, 29) * DAY_S)
        );
        for bad in [
            "2017-10-07",
            "2017-10-07 24:00:00",
            "2017-10-07 01:60:00",
            "2017-10-07 01:00",
            "2017-10-07 01:00:00:00",
            "2017-10-07 aa:00:00",
        ] {
            assert_eq!(parse_datetime(bad), None, "{bad}");
        }
    }
}
