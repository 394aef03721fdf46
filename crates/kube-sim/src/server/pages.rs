//! Paginated lists served as the real API server serves them: every page of a list at the
//! first page's resourceVersion. A continue token names that version and the last key
//! served; the objects the first page was cut from are kept for the later pages, as etcd
//! keeps old revisions until it compacts them. A client that watches from a paged list's
//! resourceVersion (every informer) misses nothing changed between two of its pages.

use super::status::ApiError;
use crate::store::ObjectKey;
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a continue token stays good: kube-apiserver compacts etcd every 5 minutes
/// (`--etcd-compaction-interval`), after which a token older than that is refused.
pub const KEPT_FOR: Duration = Duration::from_secs(300);

/// How many paged lists are kept at once; the oldest goes first, as if compacted.
const MOST_KEPT: usize = 64;

/// What the API server answers a continue token it can no longer serve consistently.
pub const TOO_OLD: &str = "The provided continue parameter is too old to display a \
    consistent list result. You can start a new list without the continue parameter.";

/// Where a continued list resumes: the version every page is served at, and the last key
/// the previous page ended with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Continue {
    pub rv: u64,
    pub after: String,
}

impl Continue {
    /// The opaque token a page hands out (hex, like the real one is base64: clients must
    /// not read it).
    pub fn encode(&self) -> String {
        hex(&format!("{}/{}", self.rv, self.after))
    }

    pub fn decode(token: &str) -> Result<Continue, ApiError> {
        let bad = || {
            ApiError::bad_request(
                "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
            )
        };
        if !token.len().is_multiple_of(2) {
            return Err(bad());
        }
        let bytes: Vec<u8> = (0..token.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&token[i..i + 2], 16))
            .collect::<Result<_, _>>()
            .map_err(|_| bad())?;
        let text = String::from_utf8(bytes).map_err(|_| bad())?;
        let (rv, after) = text.split_once('/').ok_or_else(bad)?;
        Ok(Continue {
            rv: rv.parse().map_err(|_| bad())?,
            after: after.to_owned(),
        })
    }
}

fn hex(text: &str) -> String {
    use std::fmt::Write;
    text.bytes().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// One list whose first page left objects to serve: the collection as it stood.
struct Kept {
    rv: u64,
    /// The store collection the list read (group, plural and namespace, as the first key
    /// of its range): a continue token for one collection does not serve another.
    collection: ObjectKey,
    /// When it was taken, on the cluster's clock.
    at: Duration,
    items: Arc<[Arc<Value>]>,
}

/// The collections that paged lists underway were cut from.
#[derive(Default)]
pub struct Pages {
    kept: Mutex<VecDeque<Kept>>,
}

impl Pages {
    /// Keeps `items`, the collection read at `rv`, for the pages after the first; `now` is
    /// the cluster clock's time. Lists older than [`KEPT_FOR`] are dropped.
    pub fn keep(&self, collection: ObjectKey, rv: u64, items: Arc<[Arc<Value>]>, now: Duration) {
        let mut kept = self
            .kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        kept.retain(|k| now.saturating_sub(k.at) < KEPT_FOR);
        if kept
            .iter()
            .any(|k| k.rv == rv && k.collection == collection)
        {
            return;
        }
        while kept.len() >= MOST_KEPT {
            kept.pop_front();
        }
        kept.push_back(Kept {
            rv,
            collection,
            at: now,
            items,
        });
    }

    /// The collection as it stood at `rv`, if a first page kept it and it is not older than
    /// [`KEPT_FOR`]; else the API server's 410.
    pub fn at(
        &self,
        collection: &ObjectKey,
        rv: u64,
        now: Duration,
    ) -> Result<Arc<[Arc<Value>]>, ApiError> {
        let kept = self
            .kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        kept.iter()
            .find(|k| k.rv == rv && &k.collection == collection)
            .filter(|k| now.saturating_sub(k.at) < KEPT_FOR)
            .map(|k| k.items.clone())
            .ok_or_else(|| ApiError::expired(TOO_OLD))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn collection(plural: &str) -> ObjectKey {
        ObjectKey::new("", plural, "default", "")
    }

    fn items(names: &[&str]) -> Arc<[Arc<Value>]> {
        names
            .iter()
            .map(|n| Arc::new(json!({"metadata": {"name": n}})))
            .collect()
    }

    #[test]
    fn a_token_carries_its_version_and_key_and_refuses_anything_else() {
        let c = Continue {
            rv: 1234,
            after: "default/web-1".into(),
        };
        assert_eq!(Continue::decode(&c.encode()).unwrap(), c);
        // Odd length, not hex, no version, a key without one.
        for bad in ["abc", "zz", "6162", &hex("default/web")] {
            let err = Continue::decode(bad).unwrap_err();
            assert_eq!(err.code, 400, "{bad}");
        }
    }

    #[test]
    fn a_kept_list_serves_its_collection_until_compaction() {
        let pages = Pages::default();
        pages.keep(collection("pods"), 7, items(&["a", "b"]), Duration::ZERO);
        let at = |plural, rv, now| pages.at(&collection(plural), rv, now).map(|i| i.len());
        assert_eq!(at("pods", 7, Duration::from_secs(299)).unwrap(), 2);
        // Another version or another collection was never kept.
        assert_eq!(at("pods", 8, Duration::ZERO).unwrap_err().code, 410);
        assert_eq!(at("services", 7, Duration::ZERO).unwrap_err().code, 410);
        // Five minutes on, it is compacted away: the real message, and 410 Expired.
        let err = pages.at(&collection("pods"), 7, KEPT_FOR).unwrap_err();
        assert_eq!((err.code, err.reason), (410, "Expired"));
        assert_eq!(err.message, TOO_OLD);
    }

    #[test]
    fn the_oldest_list_goes_first_when_too_many_are_underway() {
        let pages = Pages::default();
        for rv in 0..=MOST_KEPT as u64 {
            pages.keep(collection("pods"), rv, items(&["a"]), Duration::ZERO);
        }
        assert!(pages.at(&collection("pods"), 0, Duration::ZERO).is_err());
        assert!(pages.at(&collection("pods"), 1, Duration::ZERO).is_ok());
        assert!(
            pages
                .at(&collection("pods"), MOST_KEPT as u64, Duration::ZERO)
                .is_ok()
        );
    }
}
