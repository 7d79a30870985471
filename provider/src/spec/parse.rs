//! Reading spec files: one cluster document, or a file of several documents (`---`
//! separated), each a `Cluster` or a `Machine`, unknown fields rejected.

use serde::Deserialize;

use super::{Cluster, Machine, machine};
use crate::error::Error;

/// Parses a cluster spec from YAML, naming the file in errors.
pub fn parse(yaml: &str, origin: &str) -> Result<Cluster, Error> {
    serde_yaml_ng::from_str(yaml).map_err(|e| Error::InvalidSpec {
        problems: vec![format!("{origin}: {e}")],
    })
}

/// The documents of one spec file: at most one cluster and any number of machines.
#[derive(Debug, Clone, Default)]
pub struct Documents {
    /// The cluster.
    pub cluster: Option<Cluster>,
    /// The machines, in file order.
    pub machines: Vec<Machine>,
}

/// Parses a file of YAML documents (`---` separated), each a `Cluster` or a `Machine`.
pub fn parse_documents(yaml: &str, origin: &str) -> Result<Documents, Error> {
    let mut docs = Documents::default();
    let mut problems = Vec::new();
    for (i, de) in serde_yaml_ng::Deserializer::from_str(yaml).enumerate() {
        let value = match serde_yaml_ng::Value::deserialize(de) {
            Ok(v) => v,
            // A syntax error ends the stream: nothing after it can be read (and the
            // reader would answer the same error for ever).
            Err(e) => {
                problems.push(format!("{origin}: document {}: {e}", i + 1));
                break;
            }
        };
        if value.is_null() {
            continue;
        }
        let kind = value
            .get("kind")
            .and_then(|k| k.as_str())
            .unwrap_or_default()
            .to_string();
        match kind.as_str() {
            "Cluster" => match serde_yaml_ng::from_value::<Cluster>(value) {
                Ok(c) if docs.cluster.is_none() => docs.cluster = Some(c),
                Ok(_) => problems.push(format!("{origin}: more than one Cluster document")),
                Err(e) => problems.push(format!("{origin}: document {} (Cluster): {e}", i + 1)),
            },
            "Machine" => match serde_yaml_ng::from_value::<Machine>(value) {
                Ok(m) => {
                    for p in machine::validate(&m) {
                        problems.push(format!("{origin}: machine {}: {p}", m.metadata.name));
                    }
                    docs.machines.push(m);
                }
                Err(e) => problems.push(format!("{origin}: document {} (Machine): {e}", i + 1)),
            },
            other => problems.push(format!(
                "{origin}: document {}: kind {other:?} is neither Cluster nor Machine",
                i + 1
            )),
        }
    }
    if problems.is_empty() {
        Ok(docs)
    } else {
        Err(Error::InvalidSpec { problems })
    }
}
