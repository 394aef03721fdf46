//! Serving a cluster on a socket: plain HTTP (the default), or HTTPS with a CA made at
//! start. TLS handshakes run beside the accept loop, so a client that stalls in one
//! never holds up the next connection.

use crate::kubeconfig::Kubeconfig;
use crate::tls::{ServingCerts, TlsError};
use std::net::SocketAddr;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// How to serve: where, and whether over TLS.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub listen: String,
    pub tls: bool,
}

impl ServeOptions {
    /// Plain HTTP on `listen` (e.g. `127.0.0.1:0`).
    pub fn new(listen: &str) -> Self {
        ServeOptions {
            listen: listen.to_owned(),
            tls: false,
        }
    }

    /// HTTPS, with a CA generated now.
    pub fn tls(mut self) -> Self {
        self.tls = true;
        self
    }
}

/// Why serving could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("failed to listen on {addr}")]
    Listen {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Tls(#[from] TlsError),
}

/// A cluster being served: its address and, over TLS, the CA clients must trust.
#[derive(Debug, Clone)]
pub struct Served {
    pub addr: SocketAddr,
    /// The CA certificate (PEM) when serving HTTPS.
    pub ca_pem: Option<String>,
}

impl Served {
    /// `https://127.0.0.1:PORT` or `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        let scheme = if self.ca_pem.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.addr)
    }

    /// A kubeconfig for this server (its CA included), without credentials: add them with
    /// [`Kubeconfig::token`] or [`Kubeconfig::token_file`].
    pub fn kubeconfig(&self) -> Kubeconfig {
        let config = Kubeconfig::new(&self.url());
        match &self.ca_pem {
            Some(ca) => config.certificate_authority(ca),
            None => config,
        }
    }
}

/// A bound listener, plain or TLS, ready for `axum::serve`.
pub enum Listener {
    Plain(TcpListener),
    Tls(TlsListener),
}

/// Bind `options.listen`; over TLS, also make the certificates.
pub async fn bind(options: &ServeOptions) -> Result<(Listener, Served), ServeError> {
    let listen_error = |source| ServeError::Listen {
        addr: options.listen.clone(),
        source,
    };
    let listener = TcpListener::bind(&options.listen)
        .await
        .map_err(listen_error)?;
    let addr = listener.local_addr().map_err(listen_error)?;
    if !options.tls {
        let served = Served { addr, ca_pem: None };
        return Ok((Listener::Plain(listener), served));
    }
    let certs = ServingCerts::generate(&[addr.ip().to_string()])?;
    let acceptor = TlsAcceptor::from(certs.server_config()?);
    let served = Served {
        addr,
        ca_pem: Some(certs.ca_pem.clone()),
    };
    Ok((
        Listener::Tls(TlsListener::new(listener, acceptor, addr)),
        served,
    ))
}

/// Accepts TCP connections and hands over those whose TLS handshake completed.
pub struct TlsListener {
    rx: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
    accept_loop: tokio::task::JoinHandle<()>,
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.accept_loop.abort();
    }
}

impl TlsListener {
    fn new(listener: TcpListener, acceptor: TlsAcceptor, local: SocketAddr) -> Self {
        let (tx, rx) = mpsc::channel(64);
        let accept_loop = tokio::spawn(async move {
            loop {
                let (tcp, peer) = match listener.accept().await {
                    Ok(conn) => conn,
                    Err(e) => {
                        tracing::debug!("kube-sim accept failed: {e}");
                        tokio::task::yield_now().await;
                        continue;
                    }
                };
                let acceptor = acceptor.clone();
                let tx = tx.clone();
                tokio::spawn(async move {
                    match acceptor.accept(tcp).await {
                        Ok(tls) => {
                            let _ = tx.send((tls, peer)).await;
                        }
                        Err(e) => tracing::debug!("kube-sim TLS handshake with {peer} failed: {e}"),
                    }
                });
            }
        });
        TlsListener {
            rx,
            local,
            accept_loop,
        }
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.rx.recv().await {
            Some(conn) => conn,
            // The accept loop only ends when the listener is dropped.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}
