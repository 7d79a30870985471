//! Step 1: the full model and the allowlist give the trimmed model (every operation's name;
//! the allowlisted operations and the shapes they reach, without documentation, save the
//! filter names each operation's `Filters` member documents, kept as `documentedFilters`).

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
        let filters = def["input"]["shape"]
            .as_str()
            .and_then(|input| shapes.get(input))
            .and_then(|input| input["members"].as_object())
            .and_then(|members| members.get("Filters").or_else(|| members.get("Filter")))
            .and_then(|member| member["documentation"].as_str())
            .map(documented_filters);
        if let Some(o) = def.as_object_mut() {
            o.remove("http");
            if let Some(names) = filters.filter(|n| !n.is_empty()) {
                o.insert(
                    "documentedFilters".into(),
                    Value::Array(names.into_iter().map(Value::String).collect()),
                );
            }
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

/// The filter names a `Filters` member's documentation lists: each item of its outermost list
/// that opens with a `<code>` name (a nested list holds a filter's values, not names), in
/// order, each once; `tag:<key>` spelled as the model spells it, `tag:&lt;key&gt;`, is left out
/// (every resource's tag filters are taken alike).
pub(super) fn documented_filters(doc: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut depth = 0usize;
    let mut rest = doc;
    while let Some(i) = rest.find('<') {
        rest = &rest[i..];
        if let Some(r) = rest.strip_prefix("<ul>") {
            depth += 1;
            rest = r;
        } else if let Some(r) = rest.strip_prefix("</ul>") {
            depth = depth.saturating_sub(1);
            rest = r;
        } else if let Some(r) = rest.strip_prefix("<li>") {
            rest = r;
            let item = r.trim_start();
            let item = item.strip_prefix("<p>").unwrap_or(item).trim_start();
            if depth == 1
                && let Some(code) = item.strip_prefix("<code>")
                && let Some(end) = code.find("</code>")
            {
                let name = code[..end].trim();
                // `<code>tag</code>:&lt;key&gt;`, and a bare `<code>tag</code>` ("the key/value
                // combination of a tag"), are the `tag:<key>` filter too.
                let tag_key =
                    name == "tag" || code[end..].trim_start_matches("</code>").starts_with(':');
                if !name.is_empty()
                    && !tag_key
                    && !name.starts_with("tag:")
                    && !name.contains(char::is_whitespace)
                    && !names.iter().any(|n| n == name)
                {
                    names.push(name.to_string());
                }
            }
        } else {
            rest = &rest[1..];
        }
    }
    names
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

#[cfg(test)]
mod tests {
    use super::documented_filters;

    #[test]
    fn filter_names_are_the_outer_list_items_opening_with_code() {
        let doc = "<p>The filters.</p> <ul> <li> <p> <code>state</code> - The state \
                   (<code>pending</code> | <code>available</code>).</p> </li> <li> <p> \
                   <code>scan-result.label</code> - The label:</p> <ul> <li> <p> \
                   <code>critical</code> </p> </li> </ul> </li> <li> <p> <code>tag</code>:\
                   &lt;key&gt; - A tag.</p> </li> <li> <p> <code>tag</code> - The key/value \
                   combination.</p> </li> <li> <p>The <code>owner-id</code> is ...</p> </li> \
                   <li> <p> <code>vpc-id</code> - The VPC.</p> </li> <li> <p> \
                   <code>state</code> - Again.</p> </li> </ul>";
        assert_eq!(
            documented_filters(doc),
            ["state", "scan-result.label", "vpc-id"]
        );
    }
}
