//! HTTPS for a served cluster: a certificate authority made at start and the serving
//! certificate it signs (for `localhost`, `127.0.0.1`, `::1` and the address served on),
//! so that kubectl and kube-rs verify kube-sim as they verify a real API server, through
//! the `certificate-authority-data` of the kubeconfig it writes.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::sync::Arc;

/// Why a certificate or TLS configuration could not be made.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("failed to generate a certificate")]
    Certificate(#[from] rcgen::Error),
    #[error("failed to configure TLS")]
    Config(#[from] rustls::Error),
}

/// A CA and a serving certificate signed by it.
pub struct ServingCerts {
    /// The CA certificate (PEM): what a kubeconfig's `certificate-authority-data` holds.
    pub ca_pem: String,
    /// The serving certificate (PEM).
    pub cert_pem: String,
    cert_der: CertificateDer<'static>,
    key_der: Vec<u8>,
}

impl std::fmt::Debug for ServingCerts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServingCerts")
            .field("ca_pem", &self.ca_pem)
            .finish_non_exhaustive()
    }
}

impl ServingCerts {
    /// A new CA (`kube-sim-ca`) and a certificate for `kube-apiserver` valid for
    /// `localhost`, `127.0.0.1`, `::1`, `kubernetes.default.svc` and `hosts`.
    pub fn generate(hosts: &[String]) -> Result<Self, TlsError> {
        let mut ca = CertificateParams::new(Vec::<String>::new())?;
        ca.distinguished_name
            .push(DnType::CommonName, "kube-sim-ca");
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_key = KeyPair::generate()?;
        let ca_cert = ca.self_signed(&ca_key)?;
        let issuer = Issuer::from_params(&ca, &ca_key);

        let mut names: Vec<String> = [
            "localhost",
            "127.0.0.1",
            "::1",
            "kubernetes",
            "kubernetes.default",
            "kubernetes.default.svc",
        ]
        .into_iter()
        .map(str::to_owned)
        .collect();
        for h in hosts {
            if !names.contains(h) {
                names.push(h.clone());
            }
        }
        let mut leaf = CertificateParams::new(names)?;
        leaf.distinguished_name
            .push(DnType::CommonName, "kube-apiserver");
        leaf.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let key = KeyPair::generate()?;
        let cert = leaf.signed_by(&key, &issuer)?;
        Ok(ServingCerts {
            ca_pem: ca_cert.pem(),
            cert_pem: cert.pem(),
            cert_der: cert.der().clone(),
            key_der: key.serialize_der(),
        })
    }

    /// A rustls server configuration (ring, HTTP/1.1) serving this certificate.
    pub fn server_config(&self) -> Result<Arc<rustls::ServerConfig>, TlsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.key_der.clone()));
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(vec![self.cert_der.clone()], key)?;
        // The router speaks HTTP/1.1 only; say so, or Go clients would try h2.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}
