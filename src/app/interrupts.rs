//! SIGINT and SIGTERM, listened to from the start of a run, so that an interruption
//! completes the check run as cancelled instead of leaving it in progress.

/// SIGINT and SIGTERM, listened to from the moment they are installed.
pub struct Interrupts {
    #[cfg(unix)]
    streams: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
}

impl Interrupts {
    pub fn install() -> Interrupts {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let streams = signal(SignalKind::interrupt())
                .ok()
                .zip(signal(SignalKind::terminate()).ok());
            Interrupts { streams }
        }
        #[cfg(not(unix))]
        {
            Interrupts {}
        }
    }

    /// Resolves with the signal number on SIGINT (2) or SIGTERM (15).
    pub async fn next(&mut self) -> u8 {
        #[cfg(unix)]
        {
            let Some((int, term)) = self.streams.as_mut() else {
                return std::future::pending().await;
            };
            tokio::select! {
                _ = int.recv() => 2,
                _ = term.recv() => 15,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            2
        }
    }
}
