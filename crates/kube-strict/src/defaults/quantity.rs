//! Resource quantities as apimachinery's `resource.Quantity` parses, rounds, compares and
//! prints them. The API server stores quantities in canonical form (`0.5` becomes `500m`,
//! `1024Mi` becomes `1Gi`) and quotes canonical values in validation messages, so the
//! simulator has to reproduce the exact rules, including when Go keeps the input verbatim.

use std::cmp::Ordering;

use serde_json::Value;

/// How a quantity is printed, chosen by the suffix it was written with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `m`, `k`, `M`, ... or no suffix.
    DecimalSi,
    /// `Ki`, `Mi`, `Gi`, ...
    BinarySi,
    /// `e3`, `E6`, ...
    DecimalExponent,
}

/// Why a quantity string is not a quantity (messages are Go's, verbatim).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    #[error(
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )]
    Format,
    #[error("unable to parse quantity's suffix")]
    Suffix,
    #[error("unable to parse numeric part of quantity")]
    Numeric,
}

/// An exact quantity: `mantissa * 10^scale`, plus the text Go would print verbatim.
#[derive(Clone, Debug)]
pub struct Quantity {
    mantissa: i128,
    scale: i32,
    format: Format,
    verbatim: Option<String>,
}

/// Go rounds anything finer than a nano-unit up to one.
const NANO_SCALE: i32 = -9;

impl Quantity {
    /// Parses like `resource.ParseQuantity`.
    pub fn parse(text: &str) -> Result<Self, QuantityError> {
        if text.is_empty() {
            return Err(QuantityError::Format);
        }
        if text == "0" {
            return Ok(Quantity {
                mantissa: 0,
                scale: 0,
                format: Format::DecimalSi,
                verbatim: Some(text.to_string()),
            });
        }
        let parts = split(text)?;
        let (base, exponent, format) = interpret_suffix(parts.suffix)?;
        let shifted = format!("{}{}", parts.num, parts.denom);
        let sign: i128 = if parts.positive { 1 } else { -1 };

        // Go's fast path keeps well-formed input verbatim; reproduce when it does.
        if base == 10 {
            let precision = 18 - (parts.num.len() + parts.denom.len()) as i64;
            let scale = exponent - parts.denom.len() as i32;
            if precision >= 0 && scale >= NANO_SCALE {
                let value: i128 = shifted.parse().map_err(|_| QuantityError::Numeric)?;
                let keep = scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0');
                return Ok(Quantity {
                    mantissa: sign * value,
                    scale,
                    format,
                    verbatim: keep.then(|| text.to_string()),
                });
            }
        } else if parts.denom.is_empty() {
            let precision = 15 - parts.num.len() as i64 - (exponent as f32 * 3.0 / 10.0) as i64 - 1;
            if precision >= 0 {
                let value: i128 = shifted.parse().map_err(|_| QuantityError::Numeric)?;
                let keep = exponent % 10 == 0 && value & 0x07 != 0;
                return Ok(Quantity {
                    mantissa: sign * (value << exponent),
                    scale: 0,
                    format,
                    verbatim: keep.then(|| text.to_string()),
                });
            }
        }

        // Slow path: exact decimal arithmetic, then round up to nano-units.
        let mut mantissa: i128 = shifted.parse().map_err(|_| QuantityError::Numeric)?;
        let mut scale = -(parts.denom.len() as i32);
        if base == 10 {
            scale += exponent;
        } else {
            mantissa = mantissa
                .checked_mul(1i128 << exponent)
                .ok_or(QuantityError::Numeric)?;
        }
        let mut quantity = Quantity {
            mantissa: sign * mantissa,
            scale,
            format,
            verbatim: None,
        };
        quantity.round_up_to(NANO_SCALE);
        if quantity.format == Format::BinarySi && quantity.between_zero_and_one() {
            quantity.format = Format::DecimalSi;
        }
        Ok(quantity)
    }

    /// Parses a JSON quantity, which may be a string or a bare number.
    pub fn from_json(value: &Value) -> Option<Result<Self, QuantityError>> {
        match value {
            Value::String(s) => Some(Self::parse(s)),
            Value::Number(n) => Some(Self::parse(&n.to_string())),
            _ => None,
        }
    }

    /// `RoundUp(-3)`, which the defaulters apply to every resource list.
    pub fn round_up_to_milli(&mut self) {
        self.round_up_to(-3);
    }

    fn round_up_to(&mut self, scale: i32) {
        if self.scale >= scale {
            return;
        }
        self.verbatim = None;
        let divisor = pow10((scale - self.scale) as u32);
        let (quotient, remainder) = match divisor {
            Some(d) => (self.mantissa / d, self.mantissa % d),
            None => (0, self.mantissa),
        };
        // Away from zero: one more unit in the remainder's direction.
        self.mantissa = quotient + remainder.signum();
        self.scale = scale;
    }

    fn between_zero_and_one(&self) -> bool {
        let one = Quantity::from_int(1);
        self.mantissa > 0 && self.cmp_value(&one) == Ordering::Less
    }

    fn from_int(value: i128) -> Self {
        Quantity {
            mantissa: value,
            scale: 0,
            format: Format::DecimalSi,
            verbatim: None,
        }
    }

    pub fn is_zero(&self) -> bool {
        self.mantissa == 0
    }

    pub fn is_negative(&self) -> bool {
        self.mantissa < 0
    }

    /// Compares the amounts (formats are irrelevant).
    pub fn cmp_value(&self, other: &Quantity) -> Ordering {
        match align(self, other) {
            Some((a, b, _)) => a.cmp(&b),
            None => self
                .approx()
                .partial_cmp(&other.approx())
                .unwrap_or(Ordering::Equal),
        }
    }

    /// Sum of two quantities, in the first one's format (as Go's `Add`).
    pub fn add(&self, other: &Quantity) -> Quantity {
        let (a, b, scale) = align(self, other).unwrap_or((self.mantissa, 0, self.scale));
        Quantity {
            mantissa: a.saturating_add(b),
            scale,
            format: self.format,
            verbatim: None,
        }
    }

    fn approx(&self) -> f64 {
        self.mantissa as f64 * 10f64.powi(self.scale)
    }

    /// The text Go's `Quantity.String()` returns.
    pub fn canonical(&self) -> String {
        if let Some(text) = &self.verbatim {
            return text.clone();
        }
        if self.mantissa == 0 {
            return "0".to_string();
        }
        let mut format = self.format;
        if format == Format::BinarySi {
            let small = self.cmp_value(&Quantity::from_int(1024)) == Ordering::Less
                && self.cmp_value(&Quantity::from_int(-1024)) == Ordering::Greater;
            if small || self.integer_value().is_none() {
                format = Format::DecimalSi;
            }
        }
        if let (Format::BinarySi, Some(value)) = (format, self.integer_value()) {
            let (mut amount, mut power) = (value, 0usize);
            while amount % 1024 == 0 && power < 6 {
                amount /= 1024;
                power += 1;
            }
            let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][power];
            format!("{amount}{suffix}")
        } else {
            let (amount, exponent) = self.decimal_canonical();
            format!("{amount}{}", decimal_suffix(exponent, format))
        }
    }

    fn integer_value(&self) -> Option<i128> {
        if self.scale >= 0 {
            pow10(self.scale as u32).and_then(|p| self.mantissa.checked_mul(p))
        } else {
            let p = pow10((-self.scale) as u32)?;
            (self.mantissa % p == 0).then(|| self.mantissa / p)
        }
    }

    /// Mantissa without trailing zeros, with the exponent lowered to a multiple of 3.
    fn decimal_canonical(&self) -> (i128, i32) {
        let (mut amount, mut exponent) = (self.mantissa, self.scale);
        while amount != 0 && amount % 10 == 0 {
            amount /= 10;
            exponent += 1;
        }
        while exponent % 3 != 0 {
            amount *= 10;
            exponent -= 1;
        }
        (amount, exponent)
    }
}

/// Canonical text of a JSON quantity after the milli rounding defaulting applies; `None`
/// when the value is not a quantity (left for the decoder's error, not ours).
pub fn canonical_json(value: &Value) -> Option<String> {
    let mut quantity = Quantity::from_json(value)?.ok()?;
    quantity.round_up_to_milli();
    Some(quantity.canonical())
}

fn decimal_suffix(exponent: i32, format: Format) -> String {
    if format == Format::DecimalExponent {
        return if exponent == 0 {
            String::new()
        } else {
            format!("e{exponent}")
        };
    }
    match exponent {
        -9 => "n".into(),
        -6 => "u".into(),
        -3 => "m".into(),
        0 => String::new(),
        3 => "k".into(),
        6 => "M".into(),
        9 => "G".into(),
        12 => "T".into(),
        15 => "P".into(),
        18 => "E".into(),
        other => format!("e{other}"),
    }
}

fn pow10(exp: u32) -> Option<i128> {
    10i128.checked_pow(exp)
}

/// Both mantissas at the smaller scale, when that fits.
fn align(a: &Quantity, b: &Quantity) -> Option<(i128, i128, i32)> {
    let scale = a.scale.min(b.scale);
    let am = a.mantissa.checked_mul(pow10((a.scale - scale) as u32)?)?;
    let bm = b.mantissa.checked_mul(pow10((b.scale - scale) as u32)?)?;
    Some((am, bm, scale))
}

struct Parts<'a> {
    positive: bool,
    num: &'a str,
    denom: &'a str,
    suffix: &'a str,
}

/// Go's `parseQuantityString`: sign, digits (leading zeros dropped), fraction, suffix.
fn split(text: &str) -> Result<Parts<'_>, QuantityError> {
    let bytes = text.as_bytes();
    let end = bytes.len();
    let mut pos = 0;
    let mut positive = true;
    match bytes.first() {
        Some(b'-') => {
            positive = false;
            pos += 1;
        }
        Some(b'+') => pos += 1,
        _ => {}
    }
    while pos < end && bytes[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        return Ok(Parts {
            positive,
            num: "0",
            denom: "",
            suffix: "",
        });
    }
    let num_start = pos;
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    let num = if pos == num_start {
        "0"
    } else {
        &text[num_start..pos]
    };
    let mut denom = "";
    if pos < end && bytes[pos] == b'.' {
        pos += 1;
        let start = pos;
        while pos < end && bytes[pos].is_ascii_digit() {
            pos += 1;
        }
        denom = &text[start..pos];
    }
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&bytes[pos]) {
        pos += 1;
    }
    if pos < end && (bytes[pos] == b'-' || bytes[pos] == b'+') {
        pos += 1;
    }
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return Err(QuantityError::Format);
    }
    Ok(Parts {
        positive,
        num,
        denom,
        suffix: &text[suffix_start..],
    })
}

/// (base, exponent, format) of a suffix; base 2 exponents are bit shifts.
fn interpret_suffix(suffix: &str) -> Result<(u32, i32, Format), QuantityError> {
    let decimal = |e| Ok((10, e, Format::DecimalSi));
    let binary = |e| Ok((2, e, Format::BinarySi));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        s if s.len() > 1 && (s.starts_with('e') || s.starts_with('E')) => s[1..]
            .parse::<i32>()
            .map(|e| (10, e, Format::DecimalExponent))
            .map_err(|_| QuantityError::Suffix),
        _ => Err(QuantityError::Suffix),
    }
}
