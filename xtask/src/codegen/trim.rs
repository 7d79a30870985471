//! Step 1: the full model and the allowlist give the trimmed model (every operation's name;
//! the allowlisted operations and the shapes they reach, without documentation).

use std::collections::BTreeSet;

use anyhow::{Context, Result};
use serde_json::{Map, Value};

/// Keys of a shape or member definition that carry no wire or validation meaning.
pub(super) const DROPPED_KEYS: &[&str] = &[
    "documentation",
    "deprecated",
    "deprecatedMessage",
    "deprecatedSince",
    "documentationUrl",
    "examples",
];

pub(super) fn trim(full: &Value, allowed: &Map<String, Value>) -> Result<Value> {
    let ops = full["operations"]
        .as_object()
        .context("model has no operations")?;
    let shapes = full["shapes"].as_object().context("model has no shapes")?;
    let mut names: Vec<&String> = ops.keys().collect();
    names.sort();
    let mut kept_ops = Map::new();
    let mut roots = Vec::new();
    for op in allowed.keys() {
        let def = ops
            .get(op)
            .with_context(|| format!("allowlisted operation {op} is not in the model"))?;
        let mut def = strip(def);
        if let Some(o) = def.as_object_mut() {
            o.remove("http");
        }
        for key in ["input", "output"] {
            if let Some(s) = def[key]["shape"].as_str() {
                roots.push(s.to_string());
            }
        }
        for e in def["errors"].as_array().into_iter().flatten() {
            if let Some(s) = e["shape"].as_str() {
                roots.push(s.to_string());
            }
        }
        kept_ops.insert(op.clone(), def);
    }
    let mut seen = BTreeSet::new();
    while let Some(name) = roots.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let shape = shapes
            .get(&name)
            .with_context(|| format!("shape {name} is not in the model"))?;
        for target in referenced(shape) {
            roots.push(target);
        }
    }
    // Error shapes of the whole service are kept too: they define its error codes.
    for (name, shape) in shapes {
        if shape.get("error").is_some() {
            seen.insert(name.clone());
        }
    }
    let mut kept_shapes = Map::new();
    for name in &seen {
        kept_shapes.insert(name.clone(), strip(&shapes[name]));
    }
    let mut out = Map::new();
    out.insert("metadata".into(), full["metadata"].clone());
    out.insert(
        "operationNames".into(),
        Value::Array(
            names
                .into_iter()
                .map(|n| Value::String(n.clone()))
                .collect(),
        ),
    );
    out.insert("operations".into(), Value::Object(kept_ops));
    out.insert("shapes".into(), Value::Object(kept_shapes));
    Ok(Value::Object(out))
}

pub(super) fn strip(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !DROPPED_KEYS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), strip(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
        other => other.clone(),
    }
}

pub(super) fn referenced(shape: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(members) = shape["members"].as_object() {
        for m in members.values() {
            if let Some(s) = m["shape"].as_str() {
                out.push(s.to_string());
            }
        }
    }
    for key in ["member", "key", "value"] {
        if let Some(s) = shape[key]["shape"].as_str() {
            out.push(s.to_string());
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Step 2: generate.
