//! Container logs written by the simulated kubelet and served by `pods/log`: the current
//! instance and the previous one (after a restart), as the kubelet keeps them.

use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Debug, Default, Clone)]
struct ContainerLogs {
    current: Vec<String>,
    previous: Option<Vec<String>>,
    started: bool,
}

/// Logs by (namespace, pod, container).
#[derive(Debug, Default)]
pub struct LogStore {
    logs: Mutex<HashMap<(String, String, String), ContainerLogs>>,
}

impl LogStore {
    /// A new container instance starts: its predecessor's lines become `previous`.
    pub fn start_instance(&self, namespace: &str, pod: &str, container: &str, lines: &[String]) {
        let mut logs = self.logs.lock().expect("logs lock");
        let entry = logs
            .entry((namespace.into(), pod.into(), container.into()))
            .or_default();
        if entry.started {
            entry.previous = Some(std::mem::take(&mut entry.current));
        }
        entry.started = true;
        entry.current = lines.to_vec();
    }

    /// Lines of the current (or previous) instance; `None` if that instance never ran.
    pub fn read(
        &self,
        namespace: &str,
        pod: &str,
        container: &str,
        previous: bool,
    ) -> Option<Vec<String>> {
        let logs = self.logs.lock().expect("logs lock");
        let entry = logs.get(&(namespace.into(), pod.into(), container.into()))?;
        if previous {
            entry.previous.clone()
        } else {
            entry.started.then(|| entry.current.clone())
        }
    }

    /// Forget a deleted pod's logs.
    pub fn forget_pod(&self, namespace: &str, pod: &str) {
        self.logs
            .lock()
            .expect("logs lock")
            .retain(|(ns, p, _), _| !(ns == namespace && p == pod));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restart_moves_current_lines_to_previous() {
        let logs = LogStore::default();
        assert_eq!(logs.read("ns", "p", "c", false), None);
        logs.start_instance("ns", "p", "c", &["one".into()]);
        assert_eq!(logs.read("ns", "p", "c", true), None);
        logs.start_instance("ns", "p", "c", &["two".into()]);
        assert_eq!(logs.read("ns", "p", "c", false), Some(vec!["two".into()]));
        assert_eq!(logs.read("ns", "p", "c", true), Some(vec!["one".into()]));
        logs.forget_pod("ns", "p");
        assert_eq!(logs.read("ns", "p", "c", false), None);
    }
}
