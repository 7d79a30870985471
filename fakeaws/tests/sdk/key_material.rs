//! Key pairs' key material, checked by the programs that use it: the private keys CreateKeyPair
//! answers are read by ssh-keygen, openssl and puttygen, and every fingerprint is the one those
//! programs compute the way the user guide's "Verify the fingerprint of your key pair" says.

use std::path::{Path, PathBuf};
use std::process::Command;

use aws_sdk_ec2::primitives::Blob;
use aws_sdk_ec2::types::{KeyFormat, KeyPairInfo, KeyType};

use crate::{code_and_message, empty_fake};

/// A fresh scratch directory for one test.
fn scratch(what: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fakeaws-keys-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `program` with `args`, which must succeed; its standard output.
fn tool(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} (Debian's package; .ci/run installs it): {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `text` written to `dir/name`, readable by its owner alone (as ssh wants a private key).
fn private_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    file
}

/// openssl's digest of `file` as `openssl dgst -c` prints it: hex pairs joined by `:`.
fn openssl_digest(algorithm: &str, file: &Path) -> String {
    let out = tool("openssl", &["dgst", algorithm, "-c", path(file)]);
    out.trim().rsplit("= ").next().unwrap().to_string()
}

/// The type and base64 of an OpenSSH public key line, without its comment.
fn key_only(line: &str) -> String {
    line.split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The SHA-256 fingerprint ssh-keygen prints for `file`, without `SHA256:`.
fn ssh_keygen_sha256(file: &Path) -> String {
    let out = tool("ssh-keygen", &["-l", "-E", "sha256", "-f", path(file)]);
    let field = out.split_whitespace().nth(1).unwrap();
    field.strip_prefix("SHA256:").unwrap().to_string()
}

/// The key pair `name` as DescribeKeyPairs gives it, its public key included.
async fn described(ec2: &aws_sdk_ec2::Client, name: &str) -> KeyPairInfo {
    let out = ec2
        .describe_key_pairs()
        .key_names(name)
        .include_public_key(true)
        .send()
        .await
        .unwrap();
    out.key_pairs()[0].clone()
}

#[tokio::test]
async fn created_keys_are_real_keys_with_ec2s_fingerprints() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let dir = scratch("created");
    for (key_type, format) in [
        (KeyType::Rsa, KeyFormat::Pem),
        (KeyType::Rsa, KeyFormat::Ppk),
        (KeyType::Ed25519, KeyFormat::Pem),
        (KeyType::Ed25519, KeyFormat::Ppk),
    ] {
        let name = format!("{}-{}", key_type.as_str(), format.as_str());
        let made = ec2
            .create_key_pair()
            .key_name(&name)
            .key_type(key_type.clone())
            .key_format(format.clone())
            .send()
            .await
            .unwrap();
        let fingerprint = made.key_fingerprint().unwrap();
        let info = described(&ec2, &name).await;
        assert_eq!(info.key_fingerprint(), Some(fingerprint), "{name}");
        assert_eq!(info.key_type(), Some(&key_type), "{name}");
        let public = info.public_key().unwrap();
        let material = made.key_material().unwrap();
        let header = match (&key_type, &format) {
            (_, KeyFormat::Ppk) => format!("PuTTY-User-Key-File-3: ssh-{}\n", key_type.as_str()),
            (KeyType::Rsa, _) => "-----BEGIN RSA PRIVATE KEY-----\n".to_string(),
            _ => "-----BEGIN OPENSSH PRIVATE KEY-----\n".to_string(),
        };
        assert!(material.starts_with(&header), "{name}: {material}");
        let key = private_file(&dir, &name, material);

        // The private key in OpenSSH's or PEM's form: a key file ssh reads, whose public
        // half is the one EC2 holds.
        let openssh = if format == KeyFormat::Ppk {
            // puttygen reads the PuTTY file (checking its MAC) and writes it as OpenSSH's.
            let converted = dir.join(format!("{name}.openssh"));
            tool(
                "puttygen",
                &[path(&key), "-O", "private-openssh", "-o", path(&converted)],
            );
            let from_putty = tool("puttygen", &[path(&key), "-O", "public-openssh"]);
            assert_eq!(key_only(&from_putty), public, "{name}");
            converted
        } else {
            key
        };
        let derived = tool("ssh-keygen", &["-y", "-f", path(&openssh)]);
        assert_eq!(key_only(&derived), public, "{name}");

        if key_type == KeyType::Rsa {
            // openssl finds the RSA key consistent, and the SHA-1 of its PKCS#8 DER is the
            // fingerprint EC2 gave.
            let pem = &openssh;
            let check = tool("openssl", &["rsa", "-in", path(pem), "-check", "-noout"]);
            assert!(check.contains("RSA key ok"), "{check}");
            let text = tool("openssl", &["rsa", "-in", path(pem), "-noout", "-text"]);
            assert!(text.contains("Private-Key: (2048 bit"), "{text}");
            let der = dir.join(format!("{name}.pk8"));
            tool(
                "openssl",
                &[
                    "pkcs8",
                    "-topk8",
                    "-nocrypt",
                    "-in",
                    path(pem),
                    "-outform",
                    "DER",
                    "-out",
                    path(&der),
                ],
            );
            assert_eq!(openssl_digest("-sha1", &der), fingerprint, "{name}");
        } else {
            // The base64 SHA-256 ssh-keygen prints, with the padding EC2 adds.
            assert_eq!(
                format!("{}=", ssh_keygen_sha256(&openssh)),
                fingerprint,
                "{name}"
            );
        }
    }
    // Every key is new.
    let all = ec2.describe_key_pairs().send().await.unwrap();
    let mut fingerprints: Vec<_> = all
        .key_pairs()
        .iter()
        .map(|k| k.key_fingerprint().unwrap())
        .collect();
    fingerprints.sort();
    fingerprints.dedup();
    assert_eq!(fingerprints.len(), 4);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn imported_keys_get_ec2s_fingerprints_in_every_format() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let dir = scratch("imported");
    for (kind, args) in [
        ("rsa", &["-t", "rsa", "-b", "2048"][..]),
        ("rsa3072", &["-t", "rsa", "-b", "3072"]),
        ("ed25519", &["-t", "ed25519"]),
    ] {
        let key = dir.join(kind);
        let mut keygen = vec!["-q", "-N", "", "-C", "me@laptop", "-f", path(&key)];
        keygen.extend(args);
        tool("ssh-keygen", &keygen);
        let pub_file = dir.join(format!("{kind}.pub"));
        let openssh = std::fs::read_to_string(&pub_file).unwrap();
        // What the fingerprint must be: MD5 of the public key's DER for RSA, by openssl; the
        // SHA-256 ssh-keygen prints for Ed25519.
        let expected = if kind.starts_with("rsa") {
            let spki = dir.join(format!("{kind}.spki.pem"));
            std::fs::write(
                &spki,
                tool("ssh-keygen", &["-e", "-m", "PKCS8", "-f", path(&pub_file)]),
            )
            .unwrap();
            let der = dir.join(format!("{kind}.spki.der"));
            tool(
                "openssl",
                &[
                    "pkey",
                    "-pubin",
                    "-in",
                    path(&spki),
                    "-outform",
                    "DER",
                    "-out",
                    path(&der),
                ],
            );
            openssl_digest("-md5", &der)
        } else {
            format!("{}=", ssh_keygen_sha256(&pub_file))
        };
        // The same key in OpenSSH's format, RFC 4716's, and (RSA) base64 DER in PEM armour.
        let mut forms = vec![
            ("openssh", openssh.clone()),
            (
                "rfc4716",
                tool(
                    "ssh-keygen",
                    &["-e", "-m", "RFC4716", "-f", path(&pub_file)],
                ),
            ),
        ];
        if kind.starts_with("rsa") {
            forms.push((
                "pkcs8",
                tool("ssh-keygen", &["-e", "-m", "PKCS8", "-f", path(&pub_file)]),
            ));
            forms.push((
                "pkcs1",
                tool("ssh-keygen", &["-e", "-m", "PEM", "-f", path(&pub_file)]),
            ));
        }
        for (form, text) in forms {
            let name = format!("{kind}-{form}");
            let imported = ec2
                .import_key_pair()
                .key_name(&name)
                .public_key_material(Blob::new(text.as_bytes()))
                .send()
                .await
                .unwrap();
            assert_eq!(
                imported.key_fingerprint(),
                Some(expected.as_str()),
                "{name}"
            );
            let info = described(&ec2, &name).await;
            assert_eq!(info.key_fingerprint(), Some(expected.as_str()), "{name}");
            assert_eq!(
                info.public_key(),
                Some(key_only(&openssh).as_str()),
                "{name}"
            );
            let key_type = if kind == "ed25519" {
                KeyType::Ed25519
            } else {
                KeyType::Rsa
            };
            assert_eq!(info.key_type(), Some(&key_type), "{name}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// An SSH blob: each field length-prefixed.
fn blob(fields: &[&[u8]]) -> String {
    let bytes: Vec<u8> = fields
        .iter()
        .flat_map(|f| [&(f.len() as u32).to_be_bytes()[..], f].concat())
        .collect();
    aws_smithy_types::base64::encode(bytes)
}

#[tokio::test]
async fn keys_ec2_does_not_take_are_refused_and_nothing_is_kept() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let dir = scratch("refused");
    let ecdsa = dir.join("ecdsa");
    tool(
        "ssh-keygen",
        &["-q", "-t", "ecdsa", "-N", "", "-f", path(&ecdsa)],
    );
    let ecdsa = std::fs::read_to_string(dir.join("ecdsa.pub")).unwrap();
    // An RSA modulus of 4097 bits, past the 4096 EC2 takes.
    let big = [&[1u8][..], &[0xff; 512]].concat();
    let rsa_big = format!("ssh-rsa {}", blob(&[b"ssh-rsa", &[1, 0, 1], &big]));
    let dss = format!(
        "ssh-dss {}",
        blob(&[b"ssh-dss", &[7; 129], &[7; 21], &[7; 129], &[7; 129]])
    );
    // A well-formed Ed25519 blob under the wrong type name, and one key 31 bytes long.
    let ed = blob(&[b"ssh-ed25519", &[7; 32]]);
    let short = format!("ssh-ed25519 {}", blob(&[b"ssh-ed25519", &[7; 31]]));
    for (what, material) in [
        ("ecdsa", ecdsa),
        ("rsa 4097 bits", rsa_big),
        ("dsa", dss),
        ("type mismatch", format!("ssh-rsa {ed}")),
        ("short ed25519", short),
        ("not base64", "ssh-rsa !!!!".to_string()),
        ("text", "not a key".to_string()),
        ("empty", String::new()),
    ] {
        let refused = ec2
            .import_key_pair()
            .key_name("refused")
            .public_key_material(Blob::new(material.as_bytes()))
            .send()
            .await;
        assert_eq!(
            code_and_message(refused),
            (
                "InvalidKey.Format".to_string(),
                "Key is not in valid OpenSSH public key format".to_string()
            ),
            "{what}"
        );
    }
    let all = ec2.describe_key_pairs().send().await.unwrap();
    assert!(all.key_pairs().is_empty(), "{:?}", all.key_pairs());
    let _ = std::fs::remove_dir_all(&dir);
}
