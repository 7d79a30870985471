//! What machines need to bootstrap one Kubernetes cluster with kubeadm, made here rather than
//! typed into specs: the cluster's PKI (the cluster CA, the front-proxy CA, the etcd CA and
//! the service-account key pair, as kubeadm lays them out under `/etc/kubernetes/pki`), a
//! bootstrap token in kubeadm's format with its expiry, the CA pin joins check
//! (`sha256:` of the CA certificate's SubjectPublicKeyInfo, as kubeadm computes it), and the
//! certificate key with which `kubeadm init --upload-certs` encrypts the control-plane
//! certificates for the control-plane joins.
//!
//! Keys are ECDSA P-256 (kubeadm's `ECDSA-P256` encryption algorithm), made by rcgen with
//! ring's system random source. Nothing here depends on the time of a call: a machine's user
//! data is the same whenever it is rendered, so a launch retried under its ClientToken sends
//! the same parameters. Every secret is a [`Secret`]: it never shows in `Debug`
//! output, logs or errors. Where the material is kept is the caller's business (`capa`
//! keeps it in a state directory).

use std::fmt::Write as _;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, PublicKeyData,
};
use ring::rand::{SecureRandom, SystemRandom};
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::spec::machine::Secret;

/// How long the bootstrap token lives once init creates it (kubeadm's default), as kubeadm
/// writes a duration.
pub const TOKEN_TTL: &str = "24h0m0s";

/// How long the CAs live (kubeadm's default for the CAs it makes: ten years).
const CA_YEARS: i32 = 10;

/// How long an admin client certificate lives (kubeadm's default for its own: one year).
const CLIENT_DAYS: i64 = 365;

fn bad(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Bootstrap(format!("{what}: {e}"))
}

/// A certificate and its private key, both PEM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CertAndKey {
    /// The certificate (PEM).
    pub cert: String,
    /// Its private key (PKCS#8 PEM).
    pub key: Secret,
}

/// The three CAs' common names, as kubeadm names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ca {
    /// The cluster CA (`ca.crt`): signs the API server's and the kubelets' certificates.
    Cluster,
    /// The front-proxy CA (`front-proxy-ca.crt`).
    FrontProxy,
    /// The etcd CA (`etcd/ca.crt`).
    Etcd,
}

impl Ca {
    /// The CA's common name.
    pub fn common_name(self) -> &'static str {
        match self {
            Ca::Cluster => "kubernetes",
            Ca::FrontProxy => "front-proxy-ca",
            Ca::Etcd => "etcd-ca",
        }
    }

    /// Its certificate's file, relative to `/etc/kubernetes/pki` (the key is beside it,
    /// `.key` for `.crt`).
    pub fn cert_file(self) -> &'static str {
        match self {
            Ca::Cluster => "ca.crt",
            Ca::FrontProxy => "front-proxy-ca.crt",
            Ca::Etcd => "etcd/ca.crt",
        }
    }

    /// Its key's file, relative to `/etc/kubernetes/pki`.
    pub fn key_file(self) -> &'static str {
        match self {
            Ca::Cluster => "ca.key",
            Ca::FrontProxy => "front-proxy-ca.key",
            Ca::Etcd => "etcd/ca.key",
        }
    }

    /// The parameters of the CA's certificate: always the same for one CA, so that a CA read
    /// back from its key signs as the CA it was made as (same name, same key identifier).
    fn params(self) -> CertificateParams {
        let mut p = CertificateParams::default();
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, self.common_name());
        p.distinguished_name = dn;
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
            KeyUsagePurpose::KeyCertSign,
        ];
        p
    }
}

/// The cluster's PKI: the files kubeadm finds under `/etc/kubernetes/pki` on the first
/// control plane and then uses instead of making its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pki {
    /// The cluster CA.
    pub ca: CertAndKey,
    /// The front-proxy CA.
    pub front_proxy_ca: CertAndKey,
    /// The etcd CA.
    pub etcd_ca: CertAndKey,
    /// The service-account signing key (`sa.key`, PKCS#8 PEM).
    pub sa_key: Secret,
    /// Its public key (`sa.pub`, SubjectPublicKeyInfo PEM).
    pub sa_pub: String,
}

fn new_key() -> Result<KeyPair, Error> {
    KeyPair::generate().map_err(|e| bad("generating a key", e))
}

fn make_ca(ca: Ca, now: time::OffsetDateTime) -> Result<CertAndKey, Error> {
    let key = new_key()?;
    let mut p = ca.params();
    p.not_before = now - time::Duration::minutes(5);
    p.not_after = now
        .replace_year(now.year() + CA_YEARS)
        .unwrap_or(now + time::Duration::days(3650));
    let cert = p
        .self_signed(&key)
        .map_err(|e| bad("signing a CA certificate", e))?;
    Ok(CertAndKey {
        cert: cert.pem(),
        key: Secret(key.serialize_pem()),
    })
}

impl Pki {
    /// A new PKI: three CAs and a service-account key pair.
    pub fn generate() -> Result<Pki, Error> {
        let now = time::OffsetDateTime::now_utc();
        let sa = new_key()?;
        Ok(Pki {
            ca: make_ca(Ca::Cluster, now)?,
            front_proxy_ca: make_ca(Ca::FrontProxy, now)?,
            etcd_ca: make_ca(Ca::Etcd, now)?,
            sa_key: Secret(sa.serialize_pem()),
            sa_pub: sa.public_key_pem(),
        })
    }

    /// The CA of `which`.
    pub fn of(&self, which: Ca) -> &CertAndKey {
        match which {
            Ca::Cluster => &self.ca,
            Ca::FrontProxy => &self.front_proxy_ca,
            Ca::Etcd => &self.etcd_ca,
        }
    }

    /// Every file of the PKI: its path under `/etc/kubernetes/pki`, its content, and whether
    /// it is secret (a key: mode 0600; certificates and the public key 0644).
    pub fn files(&self) -> Vec<(&'static str, &str, bool)> {
        let mut out = Vec::new();
        for ca in [Ca::Cluster, Ca::FrontProxy, Ca::Etcd] {
            let c = self.of(ca);
            out.push((ca.cert_file(), c.cert.as_str(), false));
            out.push((ca.key_file(), c.key.0.as_str(), true));
        }
        out.push(("sa.key", self.sa_key.0.as_str(), true));
        out.push(("sa.pub", self.sa_pub.as_str(), false));
        out
    }

    /// The pin of the cluster CA, as kubeadm's `caCertHashes` take it: `sha256:` and the hex
    /// SHA-256 of the CA's SubjectPublicKeyInfo (DER).
    pub fn ca_cert_hash(&self) -> Result<String, Error> {
        let key = KeyPair::from_pem(&self.ca.key.0).map_err(|e| bad("reading the CA key", e))?;
        let spki = key.subject_public_key_info();
        let digest = ring::digest::digest(&ring::digest::SHA256, &spki);
        Ok(format!("sha256:{}", hex(digest.as_ref())))
    }

    /// A client certificate for `user` in `groups`, signed by the cluster CA, with its key.
    pub fn client_cert(&self, user: &str, groups: &[&str]) -> Result<CertAndKey, Error> {
        let ca_key = KeyPair::from_pem(&self.ca.key.0).map_err(|e| bad("reading the CA key", e))?;
        let issuer = Issuer::new(Ca::Cluster.params(), ca_key);
        let key = new_key()?;
        let mut p = CertificateParams::default();
        let mut dn = DistinguishedName::new();
        for g in groups {
            dn.push(DnType::OrganizationName, *g);
        }
        dn.push(DnType::CommonName, user);
        p.distinguished_name = dn;
        p.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        p.use_authority_key_identifier_extension = true;
        let now = time::OffsetDateTime::now_utc();
        p.not_before = now - time::Duration::minutes(5);
        p.not_after = now + time::Duration::days(CLIENT_DAYS);
        let cert = p
            .signed_by(&key, &issuer)
            .map_err(|e| bad("signing a client certificate", e))?;
        Ok(CertAndKey {
            cert: cert.pem(),
            key: Secret(key.serialize_pem()),
        })
    }

    /// An admin kubeconfig for cluster `name` whose API answers at `server`
    /// (`https://host:6443`): a client certificate of `kubernetes-admin` in
    /// `system:masters`, and the cluster CA to check the server by.
    pub fn admin_kubeconfig(&self, name: &str, server: &str) -> Result<String, Error> {
        let client = self.client_cert("kubernetes-admin", &["system:masters"])?;
        let b64 = |s: &str| aws_smithy_types::base64::encode(s.as_bytes());
        let user = format!("{name}-admin");
        let context = format!("{user}@{name}");
        let doc = serde_json::json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{
                "name": name,
                "cluster": {
                    "server": server,
                    "certificate-authority-data": b64(&self.ca.cert),
                }
            }],
            "users": [{
                "name": user,
                "user": {
                    "client-certificate-data": b64(&client.cert),
                    "client-key-data": b64(&client.key.0),
                }
            }],
            "contexts": [{
                "name": context,
                "context": {"cluster": name, "user": user}
            }],
            "current-context": context,
            "preferences": {},
        });
        serde_yaml_ng::to_string(&doc).map_err(|e| bad("rendering the kubeconfig", e))
    }
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn random(n: usize) -> Result<Vec<u8>, Error> {
    let mut buf = vec![0u8; n];
    SystemRandom::new()
        .fill(&mut buf)
        .map_err(|_| Error::Bootstrap("the system's random source failed".into()))?;
    Ok(buf)
}

/// `n` characters of `[a-z0-9]`, uniformly (rejection sampling: no modulo bias).
fn token_chars(n: usize) -> Result<String, Error> {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut out = String::with_capacity(n);
    while out.len() < n {
        for b in random(n * 2)? {
            // 252 = 7 * 36: the bytes below it map evenly onto the alphabet.
            if b < 252 && out.len() < n {
                out.push(char::from(ALPHABET[usize::from(b) % ALPHABET.len()]));
            }
        }
    }
    Ok(out)
}

/// Whether `t` is a bootstrap token in kubeadm's format, `[a-z0-9]{6}.[a-z0-9]{16}`.
pub fn is_token(t: &str) -> bool {
    let ok = |s: &str, n: usize| {
        s.len() == n
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    t.split_once('.')
        .is_some_and(|(id, secret)| ok(id, 6) && ok(secret, 16))
}

/// Whether `h` is a CA pin as kubeadm takes it: `sha256:` and 64 hex digits.
pub fn is_ca_cert_hash(h: &str) -> bool {
    h.strip_prefix("sha256:")
        .is_some_and(|d| d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Whether `k` is a certificate key as kubeadm takes it: 32 bytes, 64 hex digits.
pub fn is_certificate_key(k: &str) -> bool {
    k.len() == 64 && k.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Everything a cluster's machines bootstrap with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bootstrap {
    /// The PKI.
    pub pki: Pki,
    /// The bootstrap token the init machine creates (valid [`TOKEN_TTL`] from then) and
    /// every join presents.
    pub token: Secret,
    /// The key of the certificates `init --upload-certs` uploads.
    pub certificate_key: Secret,
}

impl Bootstrap {
    /// New material: a PKI, a token, a certificate key.
    pub fn generate() -> Result<Bootstrap, Error> {
        Ok(Bootstrap {
            pki: Pki::generate()?,
            token: Secret(format!("{}.{}", token_chars(6)?, token_chars(16)?)),
            certificate_key: Secret(hex(&random(32)?)),
        })
    }

    /// Checks material read back from where it was kept: every key and certificate parses,
    /// the token and certificate key have kubeadm's formats.
    pub fn check(&self) -> Result<(), Error> {
        let mut problems = Vec::new();
        for ca in [Ca::Cluster, Ca::FrontProxy, Ca::Etcd] {
            let c = self.pki.of(ca);
            if KeyPair::from_pem(&c.key.0).is_err() {
                problems.push(format!("{} does not hold a private key", ca.key_file()));
            }
            if !c.cert.starts_with("-----BEGIN CERTIFICATE-----") {
                problems.push(format!("{} does not hold a certificate", ca.cert_file()));
            }
        }
        if KeyPair::from_pem(&self.pki.sa_key.0).is_err() {
            problems.push("sa.key does not hold a private key".into());
        }
        if !is_token(&self.token.0) {
            problems.push("the bootstrap token is not of the form [a-z0-9]{6}.[a-z0-9]{16}".into());
        }
        if !is_certificate_key(&self.certificate_key.0) {
            problems.push("the certificate key is not 64 hex digits".into());
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(Error::Bootstrap(problems.join("; ")))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn generated_material_has_kubeadms_formats_and_holds_no_secret_in_debug() {
        let b = Bootstrap::generate().unwrap();
        b.check().unwrap();
        assert!(is_token(&b.token.0));
        assert!(is_certificate_key(&b.certificate_key.0));
        assert!(is_ca_cert_hash(&b.pki.ca_cert_hash().unwrap()));
        let shown = format!("{b:?}");
        assert!(!shown.contains(&b.token.0));
        assert!(!shown.contains("PRIVATE KEY"));
        let other = Bootstrap::generate().unwrap();
        assert_ne!(other.token, b.token);
        assert_ne!(
            other.pki.ca_cert_hash().unwrap(),
            b.pki.ca_cert_hash().unwrap()
        );
    }

    #[test]
    fn formats_are_checked() {
        assert!(is_token("abcdef.0123456789abcdef"));
        assert!(!is_token("ABCDEF.0123456789abcdef"));
        assert!(!is_token("abcdef0123456789abcdef"));
        assert!(!is_token("abcde.0123456789abcdefg"));
        assert!(is_ca_cert_hash(&format!("sha256:{}", "a".repeat(64))));
        assert!(!is_ca_cert_hash(&"a".repeat(64)));
        assert!(!is_ca_cert_hash(&format!("sha256:{}", "g".repeat(64))));
        assert!(!is_certificate_key(&"f".repeat(63)));
    }
}
