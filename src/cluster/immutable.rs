//! Reading the API server's refusal of a change to a field that cannot change in place (a
//! Job's template, a Service's clusterIP, a workload's selector), so the verdict can name
//! the field, point at its line and say how to proceed.

/// The annotation that lets a deploy delete and recreate an object whose change the API
/// server refuses in place (kapp's fallback-on-replace).
pub const REPLACE_ANNOTATION: &str = "deploy-action.io/replace";

/// What the API server says when a field may not change.
const IMMUTABLE: [&str; 3] = [
    "field is immutable",
    "may not change once set",
    "is immutable",
];

/// The field paths (`spec.template`, `spec.clusterIPs[0]`) the server refused to change in
/// place, in its order; empty when the refusal is about something else.
pub fn fields(message: &str) -> Vec<String> {
    let mut found = Vec::new();
    for marker in [": Invalid value: ", ": Forbidden: "] {
        let mut from = 0;
        while let Some(at) = message[from..].find(marker).map(|i| i + from) {
            // The detail runs to the next field error (`, <path>: `) or the end.
            let rest = &message[at + marker.len()..];
            let detail_end = rest
                .find(", spec")
                .or_else(|| rest.find(", metadata"))
                .unwrap_or(rest.len());
            let detail = &rest[..detail_end];
            let path_start = message[..at].rfind(' ').map_or(0, |i| i + 1);
            let path = message[path_start..at].trim_start_matches('[');
            if IMMUTABLE.iter().any(|m| detail.contains(m))
                && !path.is_empty()
                && !found.iter().any(|f: &String| f == path)
            {
                found.push(path.to_owned());
            }
            from = at + marker.len();
        }
    }
    found
}

/// `spec.clusterIPs[0]` as a JSON pointer into the manifest (`/spec/clusterIPs/0`), to find
/// its line.
pub fn pointer(path: &str) -> String {
    let mut out = String::new();
    for part in path.split('.') {
        let (name, index) = match part.split_once('[') {
            Some((n, i)) => (n, Some(i.trim_end_matches(']'))),
            None => (part, None),
        };
        out.push('/');
        out.push_str(name);
        if let Some(i) = index {
            out.push('/');
            out.push_str(i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_fields_the_server_will_not_change_in_place() {
        // kube-apiserver's words (a Job's template carries a Go dump of the whole object)
        let job = "Job.batch \"migrate\" is invalid: spec.template: Invalid value: core.PodTemplateSpec{ObjectMeta:v1.ObjectMeta{Name:\"\", Labels:map[string]string{\"job-name\":\"migrate\"}}, Spec:core.PodSpec{Containers:[]core.Container{core.Container{Name:\"migrate\", Image:\"registry.local/shop/migrate:2\", ...}}, ...}}: field is immutable";
        assert_eq!(fields(job), ["spec.template"]);
        let selector = "Deployment.apps \"web\" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web\", \"track\":\"stable\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable";
        assert_eq!(fields(selector), ["spec.selector"]);
        let service = "Service \"web\" is invalid: [spec.clusterIPs[0]: Invalid value: []string{\"10.96.0.12\"}: may not change once set, spec.ipFamilies[0]: Invalid value: \"IPv6\": may not change once set]";
        assert_eq!(
            fields(service),
            ["spec.clusterIPs[0]", "spec.ipFamilies[0]"]
        );
        let pvc = "PersistentVolumeClaim \"data\" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims";
        assert_eq!(fields(pvc), ["spec"]);
        let other = "Deployment.apps \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0";
        assert!(fields(other).is_empty());
        assert_eq!(pointer("spec.clusterIPs[0]"), "/spec/clusterIPs/0");
        assert_eq!(pointer("spec.template"), "/spec/template");
    }
}
