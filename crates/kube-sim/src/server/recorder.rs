//! Counts API calls by verb and resource (and keeps the calls themselves), so tests and
//! benchmarks can show how hard a client leans on the API server.

use std::collections::BTreeMap;
use std::sync::Mutex;

/// One API call as the server saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedCall {
    pub verb: String,
    /// Plural resource, with `/subresource` when there is one.
    pub resource: String,
    pub namespace: Option<String>,
    pub method: String,
    pub path_and_query: String,
}

impl RecordedCall {
    /// The call a request made, with its method and path as sent.
    pub fn of(
        parts: &http::request::Parts,
        verb: &str,
        resource: &str,
        namespace: Option<String>,
    ) -> Self {
        RecordedCall {
            verb: verb.to_owned(),
            resource: resource.to_owned(),
            namespace,
            method: parts.method.to_string(),
            path_and_query: parts
                .uri
                .path_and_query()
                .map(ToString::to_string)
                .unwrap_or_default(),
        }
    }
}

#[derive(Debug, Default)]
pub struct RequestRecorder {
    calls: Mutex<Vec<RecordedCall>>,
}

impl RequestRecorder {
    pub fn record(&self, call: RecordedCall) {
        self.calls.lock().expect("recorder lock").push(call);
    }

    /// Every call so far, in order.
    pub fn calls(&self) -> Vec<RecordedCall> {
        self.calls.lock().expect("recorder lock").clone()
    }

    /// Counts by (verb, resource).
    pub fn counts(&self) -> BTreeMap<(String, String), usize> {
        let mut out = BTreeMap::new();
        for c in self.calls.lock().expect("recorder lock").iter() {
            *out.entry((c.verb.clone(), c.resource.clone())).or_default() += 1;
        }
        out
    }

    pub fn count(&self, verb: &str, resource: &str) -> usize {
        self.calls
            .lock()
            .expect("recorder lock")
            .iter()
            .filter(|c| c.verb == verb && c.resource == resource)
            .count()
    }

    pub fn clear(&self) {
        self.calls.lock().expect("recorder lock").clear();
    }
}
