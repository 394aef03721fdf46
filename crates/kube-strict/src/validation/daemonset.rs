//! DaemonSet validation: a nil selector is not reported as missing (only as not matching
//! the template), and the rolling update must surge or make unavailable, not both.

use serde_json::{Map, Value};

use super::error::Cause;
use super::gofmt::{go_quote, int_or_string, label_selector, scalar, string_map};
use super::meta::non_negative;
use super::path::Path;
use super::pod::validate_pod_template;
use super::selector::{as_selector, is_empty_selector, validate_label_selector};
use super::workload::{
    int_or_percent_value, not_more_than_100_percent, positive_int_or_percent,
    restart_policy_always, template_labels,
};

pub(crate) fn validate_daemon_set_spec(spec: &Value, errs: &mut Vec<Cause>) {
    let path = Path::root("spec");
    let selector = spec.get("selector").filter(|s| !s.is_null());
    if let Some(selector) = selector {
        validate_label_selector(selector, &path.child("selector"), errs);
    }
    if let Ok(matcher) = as_selector(selector)
        && !matcher.matches(template_labels(spec))
    {
        errs.push(Cause::invalid(
            &path.children(&["template", "metadata", "labels"]),
            &string_map(template_labels(spec)),
            "`selector` does not match template `labels`",
        ));
    }
    if let Some(selector) = selector.filter(|s| is_empty_selector(s)) {
        errs.push(Cause::invalid(
            &path.child("selector"),
            &label_selector(Some(selector)),
            "empty selector is invalid for daemonset",
        ));
    }
    let empty = Value::Object(Map::new());
    let template = spec.get("template").unwrap_or(&empty);
    validate_pod_template(template, &path.child("template"), errs);
    restart_policy_always(template, &path, errs);
    if let Some(deadline) = template
        .get("spec")
        .and_then(|s| s.get("activeDeadlineSeconds"))
        .filter(|v| !v.is_null())
    {
        errs.push(Cause::invalid(
            &path.children(&["template", "spec", "activeDeadlineSeconds"]),
            &scalar(Some(deadline)),
            "activeDeadlineSeconds in DaemonSet is not Supported",
        ));
    }
    non_negative(
        spec.get("minReadySeconds"),
        &path.child("minReadySeconds"),
        errs,
    );
    validate_daemon_set_strategy(
        spec.get("updateStrategy"),
        &path.child("updateStrategy"),
        errs,
    );
    non_negative(
        spec.get("revisionHistoryLimit"),
        &path.child("revisionHistoryLimit"),
        errs,
    );
}

fn validate_daemon_set_strategy(strategy: Option<&Value>, path: &Path, errs: &mut Vec<Cause>) {
    let kind = strategy
        .and_then(|s| s.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("");
    match kind {
        "OnDelete" => {}
        "RollingUpdate" => {
            let Some(rolling) = strategy
                .and_then(|s| s.get("rollingUpdate"))
                .filter(|r| !r.is_null())
            else {
                errs.push(Cause::required(&path.child("rollingUpdate"), ""));
                return;
            };
            let rolling_path = path.child("rollingUpdate");
            let unavailable = rolling.get("maxUnavailable");
            let surge = rolling.get("maxSurge");
            positive_int_or_percent(unavailable, &rolling_path.child("maxUnavailable"), errs);
            positive_int_or_percent(surge, &rolling_path.child("maxSurge"), errs);
            not_more_than_100_percent(unavailable, &rolling_path.child("maxUnavailable"), errs);
            not_more_than_100_percent(surge, &rolling_path.child("maxSurge"), errs);
            let has_unavailable = int_or_percent_value(unavailable) != 0;
            let has_surge = int_or_percent_value(surge) != 0;
            if has_unavailable && has_surge {
                errs.push(Cause::invalid(
                    &rolling_path.child("maxSurge"),
                    &int_or_string(surge),
                    "may not be set when maxUnavailable is non-zero",
                ));
            } else if !has_unavailable && !has_surge {
                errs.push(Cause::required(
                    &rolling_path.child("maxUnavailable"),
                    "cannot be 0 when maxSurge is 0",
                ));
            }
        }
        other => errs.push(Cause::not_supported(
            path,
            &format!(
                "apps.DaemonSetUpdateStrategy{{Type:{}, RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}}",
                go_quote(other)
            ),
            &["RollingUpdate", "OnDelete"],
        )),
    }
}
