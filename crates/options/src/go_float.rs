//! Go's `strconv.ParseFloat(s, 64)`, the number grammar k6 uses for threshold values,
//! percentiles and durations given as numbers of milliseconds.
//!
//! It accepts more than Rust's `f64::from_str`: `_` between digits (`1_000`), hexadecimal
//! mantissas with a binary exponent (`0x1p-2`), and refuses what Rust takes: a signed NaN,
//! and any finite-looking text that overflows (`1e400` is a range error, not infinity).

/// Why a text is not a Go float.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum GoFloatError {
    /// Not a number in Go's syntax (`strconv.ErrSyntax`).
    #[error("invalid syntax")]
    Syntax,
    /// A number whose magnitude does not fit a float64 (`strconv.ErrRange`).
    #[error("value out of range")]
    Range,
}

/// Parses `s` exactly as Go's `strconv.ParseFloat(s, 64)` decides: the same texts accepted,
/// the same values (correctly rounded), the same errors.
pub fn parse_go_float(s: &str) -> Result<f64, GoFloatError> {
    if let Some((v, n)) = special(s) {
        return if n == s.len() {
            Ok(v)
        } else {
            Err(GoFloatError::Syntax)
        };
    }
    let shape = scan(s).ok_or(GoFloatError::Syntax)?;
    if shape.len != s.len() {
        return Err(GoFloatError::Syntax);
    }
    let v = if shape.hex {
        hex_value(s)?
    } else {
        let digits: String = s.chars().filter(|&c| c != '_').collect();
        // The grammar is Rust's too once the underscores are gone; Rust rounds correctly.
        digits.parse::<f64>().map_err(|_| GoFloatError::Syntax)?
    };
    if v.is_infinite() {
        return Err(GoFloatError::Range);
    }
    Ok(v)
}

/// Go's `special`: an optional sign with `inf`/`infinity`, or an unsigned `nan`, any case.
/// Returns the value and how many bytes it took.
fn special(s: &str) -> Option<(f64, usize)> {
    let b = s.as_bytes();
    let (sign, rest, nsign) = match b.first()? {
        b'+' => (1.0, &b[1..], 1),
        b'-' => (-1.0, &b[1..], 1),
        b'n' | b'N' => {
            return (common_prefix_ignore_case(b, b"nan") == 3).then_some((f64::NAN, 3));
        }
        _ => (1.0, b, 0),
    };
    if !matches!(rest.first(), Some(b'i' | b'I')) {
        return None;
    }
    let n = match common_prefix_ignore_case(rest, b"infinity") {
        // More than "inf" but not all of "infinity": only "inf" is taken.
        4..=7 => 3,
        n => n,
    };
    (n == 3 || n == 8).then_some((sign * f64::INFINITY, nsign + n))
}

fn common_prefix_ignore_case(s: &[u8], prefix: &[u8]) -> usize {
    s.iter()
        .zip(prefix)
        .take_while(|(a, b)| a.eq_ignore_ascii_case(b))
        .count()
}

/// What [`scan`] learnt about a number's text.
struct Shape {
    /// Bytes that form the number.
    len: usize,
    /// A `0x` mantissa with a `p` exponent.
    hex: bool,
}

/// Go's `readFloat` as a recogniser: the longest prefix that is a decimal or hexadecimal
/// float (with Go's underscore rules), or `None`.
fn scan(s: &str) -> Option<Shape> {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i = 1;
    }
    let hex = i + 2 < b.len() && b[i] == b'0' && b[i + 1].eq_ignore_ascii_case(&b'x');
    if hex {
        i += 2;
    }
    let (mut underscores, mut saw_dot, mut saw_digits) = (false, false, false);
    while i < b.len() {
        let c = b[i];
        match c {
            b'_' => underscores = true,
            b'.' if saw_dot => break,
            b'.' => saw_dot = true,
            b'0'..=b'9' => saw_digits = true,
            b'a'..=b'f' | b'A'..=b'F' if hex => saw_digits = true,
            _ => break,
        }
        i += 1;
    }
    if !saw_digits {
        return None;
    }
    let exp_char = if hex { b'p' } else { b'e' };
    if i < b.len() && b[i].eq_ignore_ascii_case(&exp_char) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !b.get(i).is_some_and(u8::is_ascii_digit) {
            return None;
        }
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            underscores |= b[i] == b'_';
            i += 1;
        }
    } else if hex {
        // A hexadecimal mantissa must have an exponent.
        return None;
    }
    if underscores && !underscore_ok(&s[..i]) {
        return None;
    }
    Some(Shape { len: i, hex })
}

/// Go's `underscoreOK`: every `_` sits between digits, or between a base prefix and a digit.
fn underscore_ok(s: &str) -> bool {
    let mut b = s.as_bytes();
    if matches!(b.first(), Some(b'+' | b'-')) {
        b = &b[1..];
    }
    // What the previous byte was: '^' start, '0' digit or prefix, '_' underscore, '!' other.
    let mut saw = b'^';
    let mut i = 0;
    let mut hex = false;
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        i = 2;
        saw = b'0';
        hex = b[1].eq_ignore_ascii_case(&b'x');
    }
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() || hex && c.is_ascii_hexdigit() {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
        i += 1;
    }
    saw != b'_'
}

/// The value of a hexadecimal float [`scan`] accepted: mantissa × 2^exponent, rounded to
/// nearest-even once, with subnormals; overflow is a range error as in Go.
fn hex_value(s: &str) -> Result<f64, GoFloatError> {
    let (neg, body) = match s.as_bytes()[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let body = &body[2..];
    let (mantissa_text, exp_text) = body.split_once(['p', 'P']).ok_or(GoFloatError::Syntax)?;
    // Up to 16 significant hex digits fit a u64; any non-zero digit beyond is "sticky".
    let (mut m, mut digits, mut sticky, mut point_shift) = (0u64, 0u32, false, 0i64);
    let mut after_point = false;
    for c in mantissa_text.chars() {
        match c {
            '_' => continue,
            '.' => after_point = true,
            _ => {
                let d = u64::from(c.to_digit(16).ok_or(GoFloatError::Syntax)?);
                if m == 0 && d == 0 {
                    if after_point {
                        point_shift -= 4;
                    }
                } else if digits < 16 {
                    m = (m << 4) | d;
                    digits += 1;
                    if after_point {
                        point_shift -= 4;
                    }
                } else {
                    sticky |= d != 0;
                    if !after_point {
                        point_shift += 4;
                    }
                }
            }
        }
    }
    let exp_digits: String = exp_text.chars().filter(|&c| c != '_').collect();
    // Go caps the exponent's magnitude (it only needs to exceed any float's range).
    let (exp_neg, exp_abs) = match exp_digits.as_bytes().first() {
        Some(b'-') => (true, &exp_digits[1..]),
        Some(b'+') => (false, &exp_digits[1..]),
        _ => (false, &exp_digits[..]),
    };
    let mut e: i64 = 0;
    for b in exp_abs.bytes() {
        if e < 100_000 {
            e = e * 10 + i64::from(b - b'0');
        }
    }
    if exp_neg {
        e = -e;
    }
    let sign = if neg { -1.0 } else { 1.0 };
    if m == 0 {
        return Ok(sign * 0.0);
    }
    // value = m × 2^(e + point_shift); normalise m to bit 63.
    let lz = m.leading_zeros();
    let m = m << lz;
    // Unbiased exponent of the leading bit.
    let big_e = e + point_shift + 63 - i64::from(lz);
    if big_e > 1023 {
        return Err(GoFloatError::Range);
    }
    // Bits to drop: 11 for a normal number, more below the normal range.
    let shift = if big_e >= -1022 {
        11
    } else {
        11 + (-1022 - big_e)
    };
    let (kept, rounded_up) = if shift >= 64 {
        // Everything is below the smallest subnormal's half unless exactly at it.
        let half_is_top = shift == 64;
        let above_half = half_is_top && (m > 1 << 63 || sticky);
        (0u64, above_half)
    } else {
        let kept = m >> shift;
        let rem = m & ((1u64 << shift) - 1);
        let half = 1u64 << (shift - 1);
        let up = rem > half || (rem == half && (sticky || kept & 1 == 1));
        (kept, up)
    };
    let kept = kept + u64::from(rounded_up);
    let bits = if big_e >= -1022 {
        // kept is in [2^52, 2^53]; rounding may carry into the next binade.
        let (kept, big_e) = if kept == 1 << 53 {
            (kept >> 1, big_e + 1)
        } else {
            (kept, big_e)
        };
        if big_e > 1023 {
            return Err(GoFloatError::Range);
        }
        (((big_e + 1023) as u64) << 52) | (kept & ((1 << 52) - 1))
    } else {
        // Subnormal: the exponent field is zero, and a carry to 2^52 is the smallest normal.
        kept
    };
    Ok(sign * f64::from_bits(bits))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> f64 {
        parse_go_float(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn decimal_forms() {
        assert_eq!(ok("1"), 1.0);
        assert_eq!(ok("-1.5"), -1.5);
        assert_eq!(ok("+2"), 2.0);
        assert_eq!(ok(".5"), 0.5);
        assert_eq!(ok("1."), 1.0);
        assert_eq!(ok("1e3"), 1000.0);
        assert_eq!(ok("1.e3"), 1000.0);
        assert_eq!(ok("1E-2"), 0.01);
        assert_eq!(ok("1_000"), 1000.0);
        assert_eq!(ok("1_0.2_5e1_0"), 10.25e10);
        assert_eq!(ok("1e-400"), 0.0, "underflow is not an error");
        assert_eq!(ok("0.1"), 0.1);
    }

    #[test]
    fn specials() {
        assert_eq!(ok("inf"), f64::INFINITY);
        assert_eq!(ok("+Inf"), f64::INFINITY);
        assert_eq!(ok("-INFINITY"), f64::NEG_INFINITY);
        assert!(ok("NaN").is_nan());
        assert!(ok("nan").is_nan());
        for bad in ["+nan", "-NaN", "infin", "nanx", "info", "in", "i"] {
            assert_eq!(parse_go_float(bad), Err(GoFloatError::Syntax), "{bad}");
        }
    }

    #[test]
    fn hexadecimal_forms() {
        assert_eq!(ok("0x1p4"), 16.0);
        assert_eq!(ok("0X1P-2"), 0.25);
        assert_eq!(ok("0x1.8p1"), 3.0);
        assert_eq!(ok("-0x.8p0"), -0.5);
        assert_eq!(ok("0x_1p0"), 1.0);
        assert_eq!(ok("0x1p-1074"), f64::from_bits(1), "smallest subnormal");
        assert_eq!(ok("0x1p-1075"), 0.0, "half of it rounds to even: zero");
        assert_eq!(ok("0x1.8p-1075"), f64::from_bits(1));
        assert_eq!(ok("0x1.fffffffffffffp1023"), f64::MAX);
        assert_eq!(
            parse_go_float("0x1.fffffffffffff8p1023"),
            Err(GoFloatError::Range),
            "rounds up past the largest float"
        );
        assert_eq!(
            ok("0x123456789abcdef0123p0"),
            0x0123_4567_89ab_cdef_0123_u128 as f64
        );
        assert_eq!(parse_go_float("0x1p1024"), Err(GoFloatError::Range));
        for bad in ["0x10", "0x", "0xp1", "0x1.p", "0x1e1"] {
            assert_eq!(parse_go_float(bad), Err(GoFloatError::Syntax), "{bad}");
        }
    }

    #[test]
    fn syntax_and_range_errors() {
        for bad in [
            "", "+", "-", ".", "e1", "1e", "1e+", "1x", " 1", "1 ", "_1", "1_", "1__0", "1_.5",
            "1._5", "1e_1", "0b1", "0o7", "1.2.3", "--1", "0x1p_1",
        ] {
            assert_eq!(parse_go_float(bad), Err(GoFloatError::Syntax), "{bad:?}");
        }
        assert_eq!(parse_go_float("1e400"), Err(GoFloatError::Range));
        assert_eq!(parse_go_float("-1e400"), Err(GoFloatError::Range));
        assert_eq!(ok("1e1_0"), 1e10, "underscores in the exponent too");
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(crate::prop_config(4000))]

        /// Any text: a decision, never a panic.
        #[test]
        fn any_text_is_decided(text in "\\PC{0,24}") {
            let _ = parse_go_float(&text);
        }

        /// Texts of the float alphabet (hex, exponents, underscores, specials) near the edges.
        #[test]
        fn float_alphabet_is_decided(text in "[-+]?(0[xX])?[0-9a-fA-F_.pPeEinIN+-]{0,16}") {
            let _ = parse_go_float(&text);
        }

        /// Rust's shortest round-trip text of a finite float reads back to the same float
        /// (Go's grammar includes Rust's float output).
        #[test]
        fn finite_floats_round_trip(v in any::<f64>().prop_filter("finite", |v| v.is_finite())) {
            prop_assert_eq!(parse_go_float(&v.to_string()).map(f64::to_bits), Ok(v.to_bits()));
            prop_assert_eq!(parse_go_float(&format!("{v:e}")).map(f64::to_bits), Ok(v.to_bits()));
        }

        /// Underscores between digit groups are Go's separators: `1_000` is `1000`; doubled,
        /// leading or trailing ones are syntax errors.
        #[test]
        fn underscores_between_digits(groups in prop::collection::vec("[0-9]{1,3}", 2..4)) {
            let joined = groups.join("_");
            let plain: String = groups.concat();
            prop_assert_eq!(parse_go_float(&joined), plain.parse::<f64>().map_err(|_| GoFloatError::Syntax));
            prop_assert_eq!(parse_go_float(&groups.join("__")), Err(GoFloatError::Syntax));
            prop_assert_eq!(parse_go_float(&format!("{joined}_")), Err(GoFloatError::Syntax));
        }
    }
}
