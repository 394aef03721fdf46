//! Label and field selectors, as list and watch requests use them.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
enum LabelReq {
    Eq(String, String),
    NotEq(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// A parsed `labelSelector`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector(Vec<LabelReq>);

impl LabelSelector {
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut reqs = Vec::new();
        for term in split_terms(s) {
            let term = term.trim();
            if term.is_empty() {
                continue;
            }
            let set = |rest: &str| -> Result<Vec<String>, String> {
                let inner = rest
                    .trim()
                    .strip_prefix('(')
                    .and_then(|r| r.strip_suffix(')'))
                    .ok_or_else(|| format!("unable to parse requirement: {term:?}"))?;
                Ok(inner.split(',').map(|v| v.trim().to_owned()).collect())
            };
            let req = if let Some(key) = term.strip_prefix('!') {
                LabelReq::NotExists(key.trim().to_owned())
            } else if let Some((k, v)) = term.split_once("!=") {
                LabelReq::NotEq(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
                LabelReq::Eq(k.trim().into(), v.trim().into())
            } else if let Some((k, rest)) = term.split_once(" notin ") {
                LabelReq::NotIn(k.trim().into(), set(rest)?)
            } else if let Some((k, rest)) = term.split_once(" in ") {
                LabelReq::In(k.trim().into(), set(rest)?)
            } else if term
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
            {
                LabelReq::Exists(term.to_owned())
            } else {
                return Err(format!("unable to parse requirement: {term:?}"));
            };
            reqs.push(req);
        }
        Ok(LabelSelector(reqs))
    }

    pub fn matches(&self, object: &Value) -> bool {
        let labels = object.pointer("/metadata/labels");
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            LabelReq::Eq(k, v) => get(k) == Some(v.as_str()),
            LabelReq::NotEq(k, v) => get(k) != Some(v.as_str()),
            LabelReq::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            LabelReq::NotIn(k, vs) => get(k).is_none_or(|x| !vs.iter().any(|v| v == x)),
            LabelReq::Exists(k) => get(k).is_some(),
            LabelReq::NotExists(k) => get(k).is_none(),
        })
    }
}

/// Split on commas that are not inside parentheses.
fn split_terms(s: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// A parsed `fieldSelector`: dotted paths compared as strings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut reqs = Vec::new();
        for term in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let (path, eq, value) = if let Some((k, v)) = term.split_once("!=") {
                (k, false, v)
            } else if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
                (k, true, v)
            } else {
                return Err(format!(
                    "invalid selector: '{term}'; can't understand '{term}'"
                ));
            };
            reqs.push((path.trim().to_owned(), eq, value.trim().to_owned()));
        }
        Ok(FieldSelector(reqs))
    }

    /// Refuses a field the API server does not let a selector name for objects of
    /// `group`/`kind`, in its words: every kind can be selected by `metadata.name` and
    /// `metadata.namespace`, a few built-in kinds by fields of their own.
    pub fn check_supported(&self, group: &str, kind: &str) -> Result<(), String> {
        let own = selectable_fields(group, kind);
        match self
            .0
            .iter()
            .map(|(path, _, _)| path.as_str())
            .find(|p| !matches!(*p, "metadata.name" | "metadata.namespace") && !own.contains(p))
        {
            // Kinds with fields of their own refuse in their conversion's words; the rest
            // (custom resources too) in the default metadata conversion's.
            Some(path) if own.is_empty() => Err(format!(
                "{path:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
            )),
            Some(path) => Err(format!("field label not supported: {path}")),
            None => Ok(()),
        }
    }

    pub fn matches(&self, object: &Value) -> bool {
        self.0.iter().all(|(path, eq, want)| {
            let pointer = format!("/{}", path.replace('.', "/"));
            let got = match object.pointer(&pointer) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            (got == *want) == *eq
        })
    }
}

/// The fields besides `metadata.name` and `metadata.namespace` a selector may name for a
/// built-in kind (the API server's selectable fields, from its registry of each kind).
fn selectable_fields(group: &str, kind: &str) -> &'static [&'static str] {
    match (group, kind) {
        ("", "Event") => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        ("", "Pod") => &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName",
        ],
        ("", "Secret") => &["type"],
        ("", "Node") => &["spec.unschedulable"],
        ("", "Namespace") => &["status.phase"],
        ("", "ReplicationController") | ("apps", "ReplicaSet") => &["status.replicas"],
        ("batch", "Job") => &["status.successful"],
        ("certificates.k8s.io", "CertificateSigningRequest") => &["spec.signerName"],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_selectors_match_as_kubernetes_does() {
        let pod = json!({"metadata": {"labels": {"app": "web", "tier": "front"}}});
        for (sel, want) in [
            ("app=web", true),
            ("app==web,tier=front", true),
            ("app!=web", false),
            ("app in (api, web)", true),
            ("tier notin (front)", false),
            ("app", true),
            ("!app", false),
            ("!missing", true),
            ("", true),
        ] {
            assert_eq!(
                LabelSelector::parse(sel).unwrap().matches(&pod),
                want,
                "{sel}"
            );
        }
        assert!(LabelSelector::parse("app in web").is_err());
    }

    #[test]
    fn field_selectors_follow_dotted_paths() {
        let ev = json!({"involvedObject": {"kind": "Pod", "name": "web-1"}, "type": "Warning"});
        let sel =
            FieldSelector::parse("involvedObject.kind=Pod,involvedObject.name=web-1").unwrap();
        assert!(sel.matches(&ev));
        assert!(!FieldSelector::parse("type!=Warning").unwrap().matches(&ev));
        assert!(FieldSelector::parse("spec.nodeName=").unwrap().matches(&ev));
        assert!(FieldSelector::parse("nonsense").is_err());
    }

    #[test]
    fn a_selector_may_name_only_the_fields_the_api_server_selects_by() {
        let events =
            FieldSelector::parse("reason!=Scheduled,type=Warning,metadata.name=x").unwrap();
        assert_eq!(events.check_supported("", "Event"), Ok(()));
        assert_eq!(
            events.check_supported("", "Pod"),
            Err("field label not supported: reason".to_owned())
        );
        let pods = FieldSelector::parse("spec.nodeName=n1,status.phase!=Running").unwrap();
        assert_eq!(pods.check_supported("", "Pod"), Ok(()));
        let message = FieldSelector::parse("message=x").unwrap();
        assert_eq!(
            message.check_supported("", "Event"),
            Err("field label not supported: message".to_owned())
        );
        let names = FieldSelector::parse("metadata.namespace=a,metadata.name=b").unwrap();
        assert_eq!(names.check_supported("example.com", "Widget"), Ok(()));
        // A kind with no fields of its own (custom resources too) refuses in the default
        // metadata conversion's words, as kubectl shows for `deployments`.
        assert_eq!(
            FieldSelector::parse("spec.x=1")
                .unwrap()
                .check_supported("example.com", "Widget"),
            Err(r#""spec.x" is not a known field selector: only "metadata.name", "metadata.namespace""#.to_owned())
        );
    }
}
