//! Server-side apply and patches (being replaced by the full engine).

use serde_json::Value;

/// Record an Update operation's managed fields.
pub fn record_update(_old: Option<&Value>, _new: &mut Value, _manager: &str, _api_version: &str, _time: &str, _sub: Option<&str>) {}
