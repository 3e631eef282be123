//! TLS to the team database, with libpq's `sslmode` meanings over rustls.
//!
//! `prefer` (the default) uses TLS when the server offers it and plain TCP when it does not;
//! `require` insists on TLS; neither checks who the server is (libpq's `require` does not
//! either): they protect against listening, not against a server pretending to be yours.
//! `verify-full` checks the certificate chain against the system's roots and the host name.
//! `disable` never tries. `allow` and `verify-ca` are refused rather than silently changed.
//! The crypto provider is rustls' aws-lc-rs, the one reqwest already builds.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use rustls_platform_verifier::BuilderVerifierExt;
use tokio_postgres::config::SslMode;
use tokio_postgres_rustls::MakeRustlsConnect;

/// The `sslmode` values this client honours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TlsMode {
    Disable,
    #[default]
    Prefer,
    Require,
    VerifyFull,
}

impl TlsMode {
    /// The mode a URL's `sslmode` names, or why it cannot be used.
    pub fn parse(value: &str) -> Result<Self, String> {
        match value {
            "disable" => Ok(Self::Disable),
            "prefer" => Ok(Self::Prefer),
            "require" => Ok(Self::Require),
            "verify-full" => Ok(Self::VerifyFull),
            "allow" | "verify-ca" => Err(format!(
                "sslmode={value} is not supported (use disable, prefer, require or verify-full)"
            )),
            other => Err(format!(
                "unknown sslmode '{other}' (use disable, prefer, require or verify-full)"
            )),
        }
    }

    /// What tokio-postgres negotiates for this mode.
    pub fn ssl_mode(self) -> SslMode {
        match self {
            Self::Disable => SslMode::Disable,
            Self::Prefer => SslMode::Prefer,
            Self::Require | Self::VerifyFull => SslMode::Require,
        }
    }
}

/// The TLS connector for `mode`.
pub fn connector(mode: TlsMode) -> Result<MakeRustlsConnect, String> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let config = if mode == TlsMode::VerifyFull {
        builder
            .with_platform_verifier()
            .map_err(|e| format!("cannot load the system's certificate roots: {e}"))?
            .with_no_client_auth()
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(EncryptOnly {
                algorithms: provider.signature_verification_algorithms,
            }))
            .with_no_client_auth()
    };
    Ok(MakeRustlsConnect::new(config))
}

/// Accepts the server's certificate without checking who issued it or for which name (libpq's
/// `prefer` and `require`), while still checking the handshake's signatures, so the server
/// must hold the key of the certificate it shows.
#[derive(Debug)]
struct EncryptOnly {
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for EncryptOnly {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn sslmode_values_map_to_libpq_meanings_and_unsupported_ones_are_refused() {
        assert_eq!(
            TlsMode::parse("require").unwrap().ssl_mode(),
            SslMode::Require
        );
        assert_eq!(
            TlsMode::parse("verify-full").unwrap().ssl_mode(),
            SslMode::Require
        );
        assert_eq!(
            TlsMode::parse("disable").unwrap().ssl_mode(),
            SslMode::Disable
        );
        assert_eq!(TlsMode::default().ssl_mode(), SslMode::Prefer);
        assert!(
            TlsMode::parse("verify-ca")
                .unwrap_err()
                .contains("not supported")
        );
        assert!(
            TlsMode::parse("bogus")
                .unwrap_err()
                .contains("unknown sslmode 'bogus'")
        );
    }

    #[test]
    fn every_mode_builds_a_connector() {
        for mode in [TlsMode::Prefer, TlsMode::Require, TlsMode::VerifyFull] {
            connector(mode).unwrap();
        }
    }
}
