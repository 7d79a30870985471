//! The state file (`fakeaws --state-file PATH`): the whole account on disk, so a standalone
//! fake keeps its world across restarts.
//!
//! What it holds: every region (its resources, tags, ClientToken ledger, id generator,
//! scheduled state changes and clock) and the request-id generator. What it does not: the
//! bad day (throttling, consistency windows, fault rules, transition delays) and the quotas,
//! which come from the flags at each start; and the call log.
//!
//! The format is JSON with a header: `{"format": "fakeaws-state", "version": 1, ...}`. A file
//! of another format, of another version, or that does not parse is refused with a message
//! saying so, and left as it is.
//!
//! Saving is atomic: the state is written to a temporary file beside the target, synced,
//! renamed over the target, and the directory synced. A `kill -9` at any moment therefore
//! leaves either the previous complete state or the new one, never a mix. The fake saves
//! after every call that can change state, before answering it (so whatever a client was told
//! is on disk), after the control endpoint changes the clock or resets, and at shutdown.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::region::Region;

/// The `format` of a state file.
pub const FORMAT: &str = "fakeaws-state";
/// The `version` of the state file format this fake writes and reads.
pub const VERSION: u32 = 1;

/// Why a state file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The file exists but cannot be read.
    #[error("cannot read the state file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The state cannot be written.
    #[error("cannot write the state file {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not a complete fakeaws state.
    #[error(
        "the state file {path} is not a fakeaws state ({detail}); it was left as it is: move \
         it away, or name another file"
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// The file is a fakeaws state of another format version.
    #[error(
        "the state file {path} is format version {found}, and this fakeaws reads version \
         {VERSION} only; it was left as it is"
    )]
    Incompatible {
        /// The file.
        path: PathBuf,
        /// The version the file says it is.
        found: String,
    },
    /// The file is the state of another account.
    #[error(
        "the state file {path} holds account {found}, not {expected}: start with \
         --account-id {found}, or name another file"
    )]
    Account {
        /// The file.
        path: PathBuf,
        /// The account the file holds.
        found: String,
        /// The account the fake was started for.
        expected: String,
    },
}

/// The account as it is written.
#[derive(Serialize)]
struct Written<'a> {
    format: &'static str,
    version: u32,
    account_id: &'a str,
    request_ids: &'a crate::ids::IdGen,
    regions: BTreeMap<&'a str, &'a Region>,
}

/// The account as it is read.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Read {
    #[allow(dead_code)]
    format: String,
    #[allow(dead_code)]
    version: u32,
    account_id: String,
    request_ids: crate::ids::IdGen,
    regions: BTreeMap<String, Region>,
}

/// Just the header, read first, so that a file of another version is told apart from a
/// broken one.
#[derive(Deserialize)]
struct Header {
    format: Option<String>,
    version: Option<serde_json::Value>,
}

/// An account read from a state file.
#[derive(Debug)]
pub struct Loaded {
    /// The request-id generator.
    pub request_ids: crate::ids::IdGen,
    /// The regions by name, as written (`Region::restored` applies a configuration).
    pub regions: BTreeMap<String, Region>,
}

/// Reads the account in `path`: `Ok(None)` when there is no such file (a first start).
pub fn load(path: &Path, account_id: &str) -> Result<Option<Loaded>, StateError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(StateError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let corrupt = |detail: String| StateError::Corrupt {
        path: path.to_path_buf(),
        detail,
    };
    let header: Header = serde_json::from_slice(&bytes)
        .map_err(|e| corrupt(format!("it does not parse as JSON: {e}")))?;
    if header.format.as_deref() != Some(FORMAT) {
        return Err(corrupt(format!("its \"format\" is not \"{FORMAT}\"")));
    }
    match header.version {
        Some(serde_json::Value::Number(n)) if n.as_u64() == Some(u64::from(VERSION)) => {}
        other => {
            return Err(StateError::Incompatible {
                path: path.to_path_buf(),
                found: other.map_or_else(|| "(none)".to_string(), |v| v.to_string()),
            });
        }
    }
    let read: Read = serde_json::from_slice(&bytes).map_err(|e| corrupt(e.to_string()))?;
    if read.account_id != account_id {
        return Err(StateError::Account {
            path: path.to_path_buf(),
            found: read.account_id,
            expected: account_id.to_string(),
        });
    }
    for (name, region) in &read.regions {
        if region.name != *name {
            return Err(corrupt(format!(
                "region {name} holds the state of {}",
                region.name
            )));
        }
    }
    Ok(Some(Loaded {
        request_ids: read.request_ids,
        regions: read.regions,
    }))
}

/// Writes the account to `path` atomically: a temporary file beside it, synced, renamed over
/// it, and the directory synced.
pub fn save(
    path: &Path,
    account_id: &str,
    request_ids: &crate::ids::IdGen,
    regions: BTreeMap<&str, &Region>,
) -> Result<(), StateError> {
    let written = Written {
        format: FORMAT,
        version: VERSION,
        account_id,
        request_ids,
        regions,
    };
    let failed = |source: std::io::Error| StateError::Write {
        path: path.to_path_buf(),
        source,
    };
    let bytes = serde_json::to_vec(&written).map_err(|e| failed(std::io::Error::other(e)))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "state".to_string());
    let temporary = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(&bytes)?;
        file.write_all(b"\n")?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&temporary, path)?;
        // The rename is durable once the directory is.
        #[cfg(unix)]
        std::fs::File::open(&dir)?.sync_all()?;
        Ok(())
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        failed(e)
    })
}

/// serde helpers for the types serde does not know, used by the records and the generated
/// answer shapes (`#[serde(with = "crate::state::with::time")]`).
pub mod with {
    /// A smithy `DateTime`, as an RFC 3339 timestamp.
    pub mod time {
        use aws_smithy_types::DateTime;
        use aws_smithy_types::date_time::Format;
        use serde::{Deserialize, Deserializer, Serializer};

        /// Writes `t` as RFC 3339.
        pub fn serialize<S: Serializer>(t: &DateTime, s: S) -> Result<S::Ok, S::Error> {
            let text = t.fmt(Format::DateTime).map_err(serde::ser::Error::custom)?;
            s.serialize_str(&text)
        }

        /// Reads an RFC 3339 timestamp.
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime, D::Error> {
            let text = String::deserialize(d)?;
            DateTime::from_str(&text, Format::DateTime).map_err(serde::de::Error::custom)
        }
    }

    /// An optional smithy `DateTime`.
    pub mod time_opt {
        use aws_smithy_types::DateTime;
        use serde::{Deserialize, Deserializer, Serializer};

        /// Writes `t` as RFC 3339, or null.
        pub fn serialize<S: Serializer>(t: &Option<DateTime>, s: S) -> Result<S::Ok, S::Error> {
            match t {
                Some(t) => super::time::serialize(t, s),
                None => s.serialize_none(),
            }
        }

        /// Reads an RFC 3339 timestamp or null.
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DateTime>, D::Error> {
            #[derive(Deserialize)]
            struct Wrapped(#[serde(with = "super::time")] DateTime);
            Ok(Option::<Wrapped>::deserialize(d)?.map(|Wrapped(t)| t))
        }
    }

    /// A smithy `Blob`, as base64.
    pub mod blob {
        use aws_smithy_types::Blob;
        use serde::{Deserialize, Deserializer, Serializer};

        /// Writes `b` as base64.
        pub fn serialize<S: Serializer>(b: &Blob, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str(&aws_smithy_types::base64::encode(b.as_ref()))
        }

        /// Reads base64.
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Blob, D::Error> {
            let text = String::deserialize(d)?;
            aws_smithy_types::base64::decode(&text)
                .map(Blob::new)
                .map_err(serde::de::Error::custom)
        }
    }

    /// An optional smithy `Blob`.
    pub mod blob_opt {
        use aws_smithy_types::Blob;
        use serde::{Deserialize, Deserializer, Serializer};

        /// Writes `b` as base64, or null.
        pub fn serialize<S: Serializer>(b: &Option<Blob>, s: S) -> Result<S::Ok, S::Error> {
            match b {
                Some(b) => super::blob::serialize(b, s),
                None => s.serialize_none(),
            }
        }

        /// Reads base64 or null.
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Blob>, D::Error> {
            #[derive(Deserialize)]
            struct Wrapped(#[serde(with = "super::blob")] Blob);
            Ok(Option::<Wrapped>::deserialize(d)?.map(|Wrapped(b)| b))
        }
    }

    /// A value written as its text (`Display`) and read back with `FromStr`, such as a CIDR.
    pub mod text {
        use std::fmt::Display;
        use std::str::FromStr;

        use serde::{Deserialize, Deserializer, Serializer};

        /// Writes `v` as its text.
        pub fn serialize<T: Display, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
            s.collect_str(v)
        }

        /// Reads a value from its text.
        pub fn deserialize<'de, T, D>(d: D) -> Result<T, D::Error>
        where
            T: FromStr,
            T::Err: Display,
            D: Deserializer<'de>,
        {
            let raw = String::deserialize(d)?;
            raw.parse().map_err(serde::de::Error::custom)
        }
    }

    /// A list of values, each as its text.
    pub mod text_list {
        use std::fmt::Display;
        use std::str::FromStr;

        use serde::{Deserialize, Deserializer, Serializer};

        /// Writes each of `v` as its text.
        pub fn serialize<T: Display, S: Serializer>(v: &[T], s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(v.iter().map(|x| x.to_string()))
        }

        /// Reads each value from its text.
        pub fn deserialize<'de, T, D>(d: D) -> Result<Vec<T>, D::Error>
        where
            T: FromStr,
            T::Err: Display,
            D: Deserializer<'de>,
        {
            Vec::<String>::deserialize(d)?
                .iter()
                .map(|raw| raw.parse().map_err(serde::de::Error::custom))
                .collect()
        }
    }

    /// A map whose keys are not strings, as a list of pairs (JSON keys are strings).
    pub mod pairs {
        use std::collections::BTreeMap;

        use serde::{Deserialize, Deserializer, Serialize, Serializer};

        /// Writes the map as `[[key, value], ...]`.
        pub fn serialize<K: Serialize, V: Serialize, S: Serializer>(
            map: &BTreeMap<K, V>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            s.collect_seq(map.iter())
        }

        /// Reads `[[key, value], ...]`.
        pub fn deserialize<'de, K, V, D>(d: D) -> Result<BTreeMap<K, V>, D::Error>
        where
            K: Deserialize<'de> + Ord,
            V: Deserialize<'de>,
            D: Deserializer<'de>,
        {
            Ok(Vec::<(K, V)>::deserialize(d)?.into_iter().collect())
        }
    }
}
