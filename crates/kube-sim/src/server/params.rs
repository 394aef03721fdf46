//! Query parameters of API requests.

use std::collections::HashMap;
use std::time::Duration;

/// The query string as a map (last value wins).
#[derive(Debug, Default, Clone)]
pub struct Params(HashMap<String, String>);

impl Params {
    pub fn parse(query: Option<&str>) -> Self {
        let mut map = HashMap::new();
        for pair in query
            .unwrap_or_default()
            .split('&')
            .filter(|p| !p.is_empty())
        {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            map.insert(decode(k), decode(v));
        }
        Params(map)
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    pub fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }

    pub fn seconds(&self, key: &str) -> Option<Duration> {
        self.get(key)?.parse::<u64>().ok().map(Duration::from_secs)
    }

    pub fn dry_run(&self) -> bool {
        self.get("dryRun") == Some("All")
    }
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'+', _) => out.push(b' '),
            (b'%', Some(b)) => {
                out.push(b);
                i += 2;
            }
            (b, _) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_selectors_and_flags() {
        let p = Params::parse(Some(
            "labelSelector=app%3Dweb%2Ctier+in+%28a%29&watch=1&timeoutSeconds=290&dryRun=All&x=%",
        ));
        assert_eq!(p.get("labelSelector"), Some("app=web,tier in (a)"));
        assert!(p.flag("watch"));
        assert_eq!(p.seconds("timeoutSeconds"), Some(Duration::from_secs(290)));
        assert!(p.dry_run());
        assert_eq!(p.get("x"), Some("%"));
        assert_eq!(p.get("missing"), None);
    }
}
