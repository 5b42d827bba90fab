//! Unit constants and conversions.
//!
//! The model stores SI units only: seconds (`f64`), bytes, bytes per second
//! and plain counts. Algorithms that state their formulas in other units
//! (GB, Gbit/s, slots) convert in one documented function with these helpers.
//! Sizes are decimal: 1 MB = 10⁶ bytes, 1 GB = 10⁹ bytes.

/// Bytes in one megabyte (decimal, 10⁶).
pub const MB: f64 = 1e6;
/// Bytes in one gigabyte (decimal, 10⁹).
pub const GB: f64 = 1e9;
/// Bytes per second in one gigabit per second (10⁹ / 8).
pub const GBIT_PER_S: f64 = 1.25e8;
/// Seconds in one hour.
pub const HOUR_S: f64 = 3600.0;

/// Gigabits per second to bytes per second.
///
/// ```
/// assert_eq!(dmlsched::model::units::gbps(10.0), 1.25e9);
/// ```
pub fn gbps(gbit_per_s: f64) -> f64 {
    gbit_per_s * GBIT_PER_S
}

/// Bytes per second to gigabits per second.
///
/// ```
/// use dmlsched::model::units::{gbps, to_gbps};
/// assert_eq!(to_gbps(1.25e9), 10.0);
/// assert_eq!(to_gbps(gbps(25.0)), 25.0);
/// ```
pub fn to_gbps(bytes_per_s: f64) -> f64 {
    bytes_per_s / GBIT_PER_S
}

/// Gigabytes to bytes.
///
/// ```
/// assert_eq!(dmlsched::model::units::gb(16.0), 1.6e10);
/// ```
pub fn gb(gigabytes: f64) -> f64 {
    gigabytes * GB
}

/// Megabytes to bytes.
///
/// ```
/// assert_eq!(dmlsched::model::units::mb(40.0), 4e7);
/// ```
pub fn mb(megabytes: f64) -> f64 {
    megabytes * MB
}

/// The slot (0-based) that contains time `t_s`: `⌊t_s / slot_length_s⌋`.
///
/// A time exactly on a boundary belongs to the slot that starts there.
/// Returns `u32::MAX` for times beyond the representable range.
///
/// ```
/// use dmlsched::model::units::slot_of;
/// assert_eq!(slot_of(59.9, 60.0), 0);
/// assert_eq!(slot_of(60.0, 60.0), 1); // a boundary starts the next slot
/// assert_eq!(slot_of(-1.0, 60.0), 0);
/// assert_eq!(slot_of(1e300, 1.0), u32::MAX);
/// ```
pub fn slot_of(t_s: f64, slot_length_s: f64) -> u32 {
    let s = (t_s / slot_length_s).floor();
    if s <= 0.0 {
        0
    } else if s >= u32::MAX as f64 {
        u32::MAX
    } else {
        s as u32
    }
}

/// Number of whole slots that cover a duration: `max(1, ⌈d / slot_length_s⌉)`,
/// with a relative tolerance of 10⁻⁹ so that `3.0000000000000004` slots count
/// as 3.
///
/// ```
/// use dmlsched::model::units::slots_covering;
/// assert_eq!(slots_covering(150.0, 60.0), 3);
/// assert_eq!(slots_covering(120.0, 60.0), 2);
/// assert_eq!(slots_covering(0.0, 60.0), 1); // at least one slot
/// assert_eq!(slots_covering(10.0 * (0.1 * 3.0), 1.0), 3); // 3.0000000000000004
/// ```
pub fn slots_covering(duration_s: f64, slot_length_s: f64) -> u32 {
    let v = duration_s / slot_length_s;
    let c = ceil_tol(v);
    if c <= 1.0 {
        1
    } else if c >= u32::MAX as f64 {
        u32::MAX
    } else {
        c as u32
    }
}

/// `⌈v − 10⁻⁹·max(1, |v|)⌉`: a ceiling that ignores floating-point noise.
///
/// ```
/// use dmlsched::model::units::ceil_tol;
/// assert_eq!((10.0 * (0.1 * 3.0_f64)).ceil(), 4.0);
/// assert_eq!(ceil_tol(10.0 * (0.1 * 3.0)), 3.0);
/// assert_eq!(ceil_tol(2.5), 3.0);
/// ```
pub fn ceil_tol(v: f64) -> f64 {
    (v - 1e-9 * v.abs().max(1.0)).ceil()
}

/// `⌊v + 10⁻⁹·max(1, |v|)⌋`: a floor that ignores floating-point noise.
///
/// ```
/// use dmlsched::model::units::floor_tol;
/// assert_eq!(2.9999999999999996_f64.floor(), 2.0);
/// assert_eq!(floor_tol(2.9999999999999996), 3.0);
/// assert_eq!(floor_tol(2.5), 2.0);
/// ```
pub fn floor_tol(v: f64) -> f64 {
    (v + 1e-9 * v.abs().max(1.0)).floor()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions() {
        assert_eq!(gbps(1.0), 1.25e8);
        assert_eq!(to_gbps(gbps(25.0)), 25.0);
        assert_eq!(gb(2.0), 2e9);
        assert_eq!(mb(3.0), 3e6);
    }

    #[test]
    fn slots() {
        assert_eq!(slot_of(0.0, 10.0), 0);
        assert_eq!(slot_of(9.999, 10.0), 0);
        assert_eq!(slot_of(10.0, 10.0), 1);
        assert_eq!(slot_of(-5.0, 10.0), 0);
        assert_eq!(slot_of(1e300, 1.0), u32::MAX);
        assert_eq!(slots_covering(0.0, 10.0), 1);
        assert_eq!(slots_covering(10.0, 10.0), 1);
        assert_eq!(slots_covering(10.5, 10.0), 2);
        assert_eq!(slots_covering(10.0 * (0.1 * 3.0), 1.0), 3);
    }

    #[test]
    fn tolerant_rounding() {
        assert_eq!(ceil_tol(10.0 * (0.1 * 3.0)), 3.0);
        assert_eq!(floor_tol(2.9999999999999996), 3.0);
        assert_eq!(ceil_tol(2.5), 3.0);
        assert_eq!(floor_tol(2.5), 2.0);
    }
}

/// A number formatted for messages: plain decimal for magnitudes between
/// 10⁻⁴ and 10¹⁵, scientific notation outside (so `1.797e308` prints in
/// 9 characters instead of 309 digits). A precision (`{:.3}`) is honoured in
/// both forms; non-finite values print as `inf`, `-inf` and `NaN`.
///
/// ```
/// use dmlsched::model::units::Num;
/// assert_eq!(Num(2.5).to_string(), "2.5");
/// assert_eq!(Num(1e300).to_string(), "1e300");
/// assert_eq!(Num(-5e-324).to_string(), "-5e-324");
/// assert_eq!(format!("{:.2}", Num(123456.789)), "123456.79");
/// assert_eq!(format!("{:.2}", Num(1.5e20)), "1.50e20");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Num(pub f64);

impl std::fmt::Display for Num {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let x = self.0;
        let a = x.abs();
        let scientific = x.is_finite() && a != 0.0 && !(1e-4..1e15).contains(&a);
        match (scientific, f.precision()) {
            (true, Some(p)) => write!(f, "{x:.p$e}"),
            (true, None) => write!(f, "{x:e}"),
            (false, Some(p)) => write!(f, "{x:.p$}"),
            (false, None) => write!(f, "{x}"),
        }
    }
}

/// A size in bytes formatted for messages with a decimal unit (`B`, `kB`,
/// `MB`, `GB`, `TB`), the largest whose value is at least 1; the number
/// itself prints as [`Num`] does.
///
/// ```
/// use dmlsched::model::units::{Bytes, gb};
/// assert_eq!(Bytes(gb(256.0)).to_string(), "256 GB");
/// assert_eq!(Bytes(1.5e6).to_string(), "1.5 MB");
/// assert_eq!(Bytes(0.0).to_string(), "0 B");
/// assert_eq!(Bytes(f64::NAN).to_string(), "NaN B");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bytes(pub f64);

/// A bandwidth in bytes per second formatted for messages in bits per second
/// with a decimal unit (`bit/s`, `kbit/s`, `Mbit/s`, `Gbit/s`, `Tbit/s`), the
/// largest whose value is at least 1.
///
/// ```
/// use dmlsched::model::units::{BitRate, gbps};
/// assert_eq!(BitRate(gbps(25.0)).to_string(), "25 Gbit/s");
/// assert_eq!(BitRate(125.0).to_string(), "1 kbit/s");
/// assert_eq!(BitRate(0.0).to_string(), "0 bit/s");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BitRate(pub f64);

/// `value` in the largest of `units` (ascending powers of 1000) whose value
/// is at least 1, formatted as [`Num`] with `f`'s precision.
fn with_unit(f: &mut std::fmt::Formatter<'_>, value: f64, units: [&str; 5]) -> std::fmt::Result {
    let mut scaled = value;
    let mut unit = units[0];
    if value.is_finite() {
        for (i, u) in units.iter().enumerate().skip(1) {
            let s = value / 1000f64.powi(i as i32);
            if s.abs() < 1.0 {
                break;
            }
            (scaled, unit) = (s, u);
        }
    }
    match f.precision() {
        Some(p) => write!(f, "{:.p$} {unit}", Num(scaled)),
        None => write!(f, "{} {unit}", Num(scaled)),
    }
}

impl std::fmt::Display for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        with_unit(f, self.0, ["B", "kB", "MB", "GB", "TB"])
    }
}

impl std::fmt::Display for BitRate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        with_unit(
            f,
            self.0 * 8.0,
            ["bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"],
        )
    }
}
