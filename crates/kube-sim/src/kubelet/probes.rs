//! Readiness probes: when the kubelet probes a container and what a failed probe reports.
//!
//! A container without a `readinessProbe` is ready as soon as it runs, as in Kubernetes.
//! One with a probe is probed `initialDelaySeconds` after start and every `periodSeconds`
//! after that; it turns ready at the first probe at or after the image's `ready` delay. Each
//! earlier probe fails as against an app that is not listening yet (connection refused), and
//! an image that is never ready fails every probe as an app answering unhealthy (HTTP 503),
//! each failure recording a `Warning Unhealthy` event (merged, so its count rises).

use serde_json::Value;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Http {
        scheme: String,
        host: Option<String>,
        port: String,
        path: String,
    },
    Tcp {
        port: String,
    },
    Grpc {
        port: String,
    },
    Exec,
}

/// A container's readiness probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    pub initial_delay: Duration,
    pub period: Duration,
    kind: Kind,
}

fn seconds(v: &Value, default: u64) -> Duration {
    Duration::from_secs(v.as_u64().unwrap_or(default))
}

/// A named port resolves through the container's ports; numbers stay as they are.
fn port(container: &Value, p: &Value) -> String {
    if let Some(n) = p.as_u64() {
        return n.to_string();
    }
    let name = p.as_str().unwrap_or_default();
    container["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|cp| cp["name"] == name)
        .and_then(|cp| cp["containerPort"].as_u64())
        .map_or_else(|| name.to_owned(), |n| n.to_string())
}

/// The container's readiness probe, if it has one.
pub fn readiness(container: &Value) -> Option<Probe> {
    let p = container.get("readinessProbe").filter(|p| p.is_object())?;
    let kind = if let Some(h) = p.get("httpGet") {
        Kind::Http {
            scheme: h["scheme"].as_str().unwrap_or("HTTP").to_ascii_lowercase(),
            host: h["host"]
                .as_str()
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
            port: port(container, &h["port"]),
            path: h["path"].as_str().unwrap_or_default().to_owned(),
        }
    } else if let Some(t) = p.get("tcpSocket") {
        Kind::Tcp {
            port: port(container, &t["port"]),
        }
    } else if let Some(g) = p.get("grpc") {
        Kind::Grpc {
            port: port(container, &g["port"]),
        }
    } else {
        Kind::Exec
    };
    Some(Probe {
        initial_delay: seconds(&p["initialDelaySeconds"], 0),
        period: seconds(&p["periodSeconds"], 10),
        kind,
    })
}

impl Probe {
    /// The `Unhealthy` event message for a failed probe against a pod at `ip`; `listening`
    /// tells an app that answers unhealthy from one that is not up yet.
    pub fn failure(&self, ip: &str, listening: bool) -> String {
        let detail = match &self.kind {
            Kind::Http {
                scheme,
                host,
                port,
                path,
            } => {
                let host = host.as_deref().unwrap_or(ip);
                if listening {
                    "HTTP probe failed with statuscode: 503".to_owned()
                } else {
                    format!(
                        "Get \"{scheme}://{host}:{port}{path}\": dial tcp {host}:{port}: connect: connection refused"
                    )
                }
            }
            Kind::Tcp { port } => format!("dial tcp {ip}:{port}: connect: connection refused"),
            Kind::Grpc { .. } if listening => {
                "service unhealthy (responded with \"NOT_SERVING\")".to_owned()
            }
            Kind::Grpc { port } => {
                format!("timeout: failed to connect service \":{port}\" within 1s")
            }
            Kind::Exec => String::new(),
        };
        format!("Readiness probe failed: {detail}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn http_probes_resolve_named_ports_and_report_like_the_prober() {
        let c = json!({"name": "web", "ports": [{"name": "http", "containerPort": 8080}],
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"},
                               "initialDelaySeconds": 5, "periodSeconds": 3}});
        let p = readiness(&c).unwrap();
        assert_eq!(
            (p.initial_delay, p.period),
            (Duration::from_secs(5), Duration::from_secs(3))
        );
        assert_eq!(
            p.failure("10.244.1.2", true),
            "Readiness probe failed: HTTP probe failed with statuscode: 503"
        );
        assert_eq!(
            p.failure("10.244.1.2", false),
            "Readiness probe failed: Get \"http://10.244.1.2:8080/healthz\": dial tcp 10.244.1.2:8080: connect: connection refused"
        );
    }

    #[test]
    fn other_probe_kinds_and_absence() {
        let tcp = json!({"readinessProbe": {"tcpSocket": {"port": 5432}}});
        assert_eq!(
            readiness(&tcp).unwrap().failure("10.244.2.7", true),
            "Readiness probe failed: dial tcp 10.244.2.7:5432: connect: connection refused"
        );
        let exec = json!({"readinessProbe": {"exec": {"command": ["test", "-f", "/tmp/ready"]}}});
        assert_eq!(
            readiness(&exec).unwrap().failure("x", true),
            "Readiness probe failed: "
        );
        assert_eq!(readiness(&json!({"name": "web"})), None);
    }
}
