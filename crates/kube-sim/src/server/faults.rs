//! Fault injection: a scenario's faults matched against each call by verb, resource,
//! namespace and call number.

use crate::scenario::Fault;
use std::sync::Mutex;

/// The faults of a scenario with a call counter each.
#[derive(Debug, Default)]
pub struct FaultInjector {
    faults: Mutex<Vec<(Fault, u32)>>,
}

impl FaultInjector {
    pub fn new(faults: &[Fault]) -> Self {
        FaultInjector {
            faults: Mutex::new(faults.iter().cloned().map(|f| (f, 0)).collect()),
        }
    }

    /// The fault that applies to this call, if any. Every matching call counts, so `nth`
    /// means "the nth call of this shape".
    pub fn check(&self, verb: &str, resource: &str, namespace: Option<&str>) -> Option<Fault> {
        let mut faults = self.faults.lock().expect("faults lock");
        let mut hit = None;
        for (fault, calls) in faults.iter_mut() {
            let m = &fault.matcher;
            let matches = m.verb.as_deref().is_none_or(|v| v == verb)
                && m.resource.as_deref().is_none_or(|r| r == resource)
                && m.namespace.as_deref().is_none_or(|n| Some(n) == namespace);
            if !matches {
                continue;
            }
            *calls += 1;
            let active = match m.nth {
                None => true,
                Some(nth) => {
                    let count = m.count.unwrap_or(1);
                    *calls >= nth && *calls < nth.saturating_add(count)
                }
            };
            if active && hit.is_none() {
                hit = Some(fault.clone());
            }
        }
        hit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::FaultMatch;

    #[test]
    fn nth_and_count_select_a_window_of_matching_calls() {
        let fault = Fault {
            matcher: FaultMatch {
                verb: Some("patch".into()),
                resource: Some("deployments".into()),
                nth: Some(2),
                count: Some(2),
                ..FaultMatch::default()
            },
            status: Some(429),
            ..Fault::default()
        };
        let inj = FaultInjector::new(&[fault]);
        let hits: Vec<bool> = (0..5)
            .map(|_| inj.check("patch", "deployments", Some("shop")).is_some())
            .collect();
        assert_eq!(hits, [false, true, true, false, false]);
        assert!(inj.check("get", "deployments", None).is_none());
    }
}
