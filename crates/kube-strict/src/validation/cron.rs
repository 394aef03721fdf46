//! The schedule check of CronJob validation: robfig/cron's `ParseStandard` (five fields or
//! an @descriptor), with its error texts, which the API server passes through verbatim.

/// Field bounds and names of the five standard fields.
const FIELDS: [(u32, u32, &[&str]); 5] = [
    (0, 59, &[]),
    (0, 23, &[]),
    (1, 31, &[]),
    (
        1,
        12,
        &[
            "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
        ],
    ),
    (0, 6, &["sun", "mon", "tue", "wed", "thu", "fri", "sat"]),
];

const DESCRIPTORS: &[&str] = &[
    "@yearly",
    "@annually",
    "@monthly",
    "@weekly",
    "@daily",
    "@midnight",
    "@hourly",
];

/// `Err(message)` as cron's parser words it.
pub(crate) fn parse_standard(spec: &str) -> Result<(), String> {
    if spec.is_empty() {
        return Err("empty spec string".into());
    }
    let mut spec = spec;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        match spec.split_once(' ') {
            Some((_, rest)) => spec = rest.trim_start(),
            None => {
                return Err(format!(
                    "provided bad location {}: unknown time zone",
                    &spec[spec.find('=').map_or(0, |i| i + 1)..]
                ));
            }
        }
    }
    if spec.starts_with('@') {
        return descriptor(spec);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    for (field, (min, max, names)) in fields.iter().zip(FIELDS) {
        for expr in field.split(',').filter(|e| !e.is_empty()) {
            range(expr, min, max, names)?;
        }
    }
    Ok(())
}

fn descriptor(spec: &str) -> Result<(), String> {
    if DESCRIPTORS.contains(&spec) {
        return Ok(());
    }
    if let Some(duration) = spec.strip_prefix("@every ") {
        return if go_duration(duration) {
            Ok(())
        } else {
            Err(format!(
                "failed to parse duration {spec}: time: invalid duration {}",
                super::gofmt::go_quote(duration)
            ))
        };
    }
    Err(format!("unrecognized descriptor: {spec}"))
}

/// A rough `time.ParseDuration` acceptance check ("1h30m", "90s", "1.5h").
fn go_duration(text: &str) -> bool {
    let mut rest = text.trim_start_matches(['+', '-']);
    if rest == "0" {
        return true;
    }
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        if digits == 0 {
            return false;
        }
        rest = &rest[digits..];
        let unit = ["ns", "us", "µs", "ms", "s", "m", "h"]
            .into_iter()
            .find(|u| rest.starts_with(u));
        match unit {
            Some(u) => rest = &rest[u.len()..],
            None => return false,
        }
    }
    true
}

/// `getRange`: `*`, `?`, `a`, `a-b`, each optionally `/step`.
fn range(expr: &str, min: u32, max: u32, names: &[&str]) -> Result<(), String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let single = low_and_high.len() == 1;
    let (start, mut end) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (min, max)
    } else {
        let start = int_or_name(low_and_high[0], names)?;
        let end = match low_and_high.len() {
            1 => start,
            2 => int_or_name(low_and_high[1], names)?,
            _ => return Err(format!("too many hyphens: {expr}")),
        };
        (start, end)
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = must_parse_int(range_and_step[1])?;
            if single {
                end = max;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({min}): {expr}"
        ));
    }
    if end > max {
        return Err(format!(
            "end of range ({end}) above maximum ({max}): {expr}"
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(())
}

fn int_or_name(expr: &str, names: &[&str]) -> Result<u32, String> {
    let lower = expr.to_lowercase();
    if let Some(i) = names.iter().position(|n| *n == lower) {
        // Months are 1-based, weekdays 0-based.
        return Ok(if names.len() == 12 {
            i as u32 + 1
        } else {
            i as u32
        });
    }
    must_parse_int(expr)
}

fn must_parse_int(expr: &str) -> Result<u32, String> {
    let digits = expr.strip_prefix(['+', '-']).unwrap_or(expr);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing {}: invalid syntax",
            super::gofmt::go_quote(expr)
        ));
    }
    let value: i64 = expr.parse().map_err(|_| {
        format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing {}: value out of range",
            super::gofmt::go_quote(expr)
        )
    })?;
    if value < 0 {
        return Err(format!("negative number ({value}) not allowed: {expr}"));
    }
    u32::try_from(value).map_err(|_| format!("end of range ({value}) above maximum: {expr}"))
}
