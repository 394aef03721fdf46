//! The kubelet's and the runtimes' wrappings around a pull error, peeled off so messages
//! for humans show the cause (`429 Too Many Requests`) rather than four layers of context.

/// Prefixes that events and messages put before the error itself.
const FRAMES: [&str; 3] = [
    "(combined from similar events): ",
    "ErrImagePull: ",
    "ImagePullBackOff: ",
];

/// The image and the error of a kubelet `Failed to pull image "X": <error>` event message.
pub fn failed_pull(message: &str) -> Option<(&str, &str)> {
    let rest = strip_frames(message).strip_prefix("Failed to pull image \"")?;
    let (image, error) = rest.split_once("\": ")?;
    Some((image, error.trim()))
}

/// The image and, from Kubernetes 1.32 (PR #127918), the last error of a back-off message:
/// `Back-off pulling image "X"` or `Back-off pulling image "X": ErrImagePull: <error>`.
pub fn back_off(message: &str) -> Option<(&str, Option<&str>)> {
    let rest = strip_frames(message).strip_prefix("Back-off pulling image \"")?;
    let (image, after) = rest.split_once('"')?;
    let error = after
        .strip_prefix(':')
        .map(|e| strip_frames(e.trim()))
        .filter(|e| !e.is_empty());
    Some((image, error))
}

/// The image of a kubelet `Pulling image "X"` event message.
pub fn pulling(message: &str) -> Option<&str> {
    let rest = strip_frames(message).strip_prefix("Pulling image \"")?;
    rest.split_once('"').map(|(image, _)| image)
}

/// The error without the gRPC status and the "failed to pull and unpack image" frame,
/// whose image the message names anyway.
pub fn cause(error: &str) -> &str {
    let mut text = strip_frames(error.trim());
    loop {
        let next =
            strip_rpc(text).or_else(|| after_quoted(text, "failed to pull and unpack image "));
        match next {
            Some(t) => text = t,
            None => return text,
        }
    }
}

/// The gist of an error for a one-line summary: also drops the reference resolution and
/// request frames, leaving e.g. `429 Too Many Requests` or `dial tcp ...: i/o timeout`.
pub fn gist(error: &str) -> &str {
    let mut text = cause(error);
    loop {
        let next = after_quoted(text, "failed to resolve reference ")
            .or_else(|| text.strip_prefix("failed to do request: "))
            .or_else(|| after_request(text))
            .or_else(|| {
                ["Head ", "Get "]
                    .iter()
                    .find_map(|verb| after_quoted(text, verb))
            });
        match next {
            Some(t) => text = t,
            None => return text,
        }
    }
}

fn strip_frames(mut text: &str) -> &str {
    while let Some(rest) = FRAMES.iter().find_map(|f| text.strip_prefix(f)) {
        text = rest;
    }
    text
}

/// `rpc error: code = NotFound desc = <text>`.
fn strip_rpc(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("rpc error: code = ")?;
    rest.split_once(" desc = ").map(|(_, t)| t)
}

/// `<prefix>"<anything>": <text>`.
fn after_quoted<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = text.strip_prefix(prefix)?.strip_prefix('"')?;
    let (_, after) = rest.split_once('"')?;
    after.strip_prefix(": ")
}

/// containerd's `unexpected status from HEAD request to <url>: <text>` (the URL is left
/// out by some versions).
fn after_request(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("unexpected status from ")?;
    let (_, rest) = rest.split_once(" request")?;
    let rest = match rest.strip_prefix(" to ") {
        Some(url) => url.split_once(": ")?.1,
        None => rest.strip_prefix(": ")?,
    };
    Some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: &str = "registry.local/shop/worker:7";

    #[test]
    fn events_and_back_off_messages_name_the_image_and_the_error() {
        let msg = format!(
            "Failed to pull image \"{R}\": rpc error: code = Unknown desc = failed to pull and unpack image \"{R}\": failed to resolve reference \"{R}\": unexpected status from HEAD request to https://registry.local/v2/shop/worker/manifests/7: 429 Too Many Requests"
        );
        let (image, error) = failed_pull(&msg).unwrap();
        assert_eq!(image, R);
        assert_eq!(
            cause(error),
            format!(
                "failed to resolve reference \"{R}\": unexpected status from HEAD request to https://registry.local/v2/shop/worker/manifests/7: 429 Too Many Requests"
            )
        );
        assert_eq!(gist(error), "429 Too Many Requests");
        assert_eq!(
            failed_pull(&format!("(combined from similar events): {msg}")).map(|(i, _)| i),
            Some(R)
        );
        assert_eq!(failed_pull("Error: ErrImagePull"), None);

        assert_eq!(
            back_off(&format!("Back-off pulling image \"{R}\"")),
            Some((R, None))
        );
        assert_eq!(
            back_off(&format!(
                "Back-off pulling image \"{R}\": ErrImagePull: rpc error: code = NotFound desc = failed to pull and unpack image \"{R}\": failed to resolve reference \"{R}\": {R}: not found"
            ))
            .and_then(|(_, e)| e)
            .map(cause),
            Some(format!("failed to resolve reference \"{R}\": {R}: not found").as_str())
        );
        assert_eq!(pulling(&format!("Pulling image \"{R}\"")), Some(R));
    }

    #[test]
    fn gists_keep_the_last_meaningful_words() {
        let timeout = format!(
            "rpc error: code = Unknown desc = failed to pull and unpack image \"{R}\": failed to resolve reference \"{R}\": failed to do request: Head \"https://registry.local/v2/shop/worker/manifests/7\": dial tcp 10.0.0.1:443: i/o timeout"
        );
        assert_eq!(gist(&timeout), "dial tcp 10.0.0.1:443: i/o timeout");
        let crio = "reading manifest 7 in registry.local/shop/worker: toomanyrequests: slow down";
        assert_eq!(gist(crio), crio);
    }
}
