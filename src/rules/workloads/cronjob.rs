//! CronJobs have nothing to roll out: their Jobs start on a schedule, so existing is enough.

use crate::pointer::Pointer;
use crate::rules::assessment::Assessment;
use serde_json::Value;

pub fn assess(obj: &Value) -> Assessment {
    match obj.at("/spec/schedule").and_then(Value::as_str) {
        Some(schedule) if obj.at("/spec/suspend") == Some(&Value::Bool(true)) => {
            Assessment::succeeded(format!("created, suspended (schedule {schedule:?})"))
        }
        Some(schedule) => Assessment::succeeded(format!("created (schedule {schedule:?})")),
        None => Assessment::succeeded("created"),
    }
}
