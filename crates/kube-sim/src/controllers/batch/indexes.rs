//! Completion indexes of Indexed Jobs: the index a pod carries and the interval notation
//! of `status.completedIndexes` ("0-2,5").

use crate::controllers::workloads::objects::str_at;
use serde_json::Value;
use std::collections::BTreeSet;

pub(crate) const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";

/// The completion index annotation of a pod, if valid.
pub(crate) fn pod_index(pod: &Value) -> Option<i64> {
    let key = format!(
        "/metadata/annotations/{}",
        COMPLETION_INDEX.replace('/', "~1")
    );
    str_at(pod, &key).parse().ok().filter(|i| *i >= 0)
}

/// Parse "0-2,5" into a set.
pub(crate) fn parse(intervals: &str) -> BTreeSet<i64> {
    let mut set = BTreeSet::new();
    for part in intervals
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<i64>(), b.parse::<i64>()) {
                    set.extend(a..=b);
                }
            }
            None => set.extend(part.parse::<i64>().ok()),
        }
    }
    set
}

/// Format a set as intervals, runs of consecutive indexes joined with `-`.
pub(crate) fn format(set: &BTreeSet<i64>) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut iter = set.iter().copied().peekable();
    while let Some(start) = iter.next() {
        let mut end = start;
        while iter.peek() == Some(&(end + 1)) {
            end += 1;
            iter.next();
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_round_trip() {
        for text in ["", "0", "0-2", "0-2,5", "1,3-4,7-9"] {
            assert_eq!(format(&parse(text)), text);
        }
        assert_eq!(format(&[4, 0, 1, 2, 6].into_iter().collect()), "0-2,4,6");
    }
}
