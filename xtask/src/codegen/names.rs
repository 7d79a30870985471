//! Rust names for model names: types, fields and enum variants, clear of keywords and of
//! the names the runtime uses.

pub(super) fn namespace(ns: &str) -> String {
    // Real AWS answers with a trailing slash even where the model has none.
    if ns.ends_with('/') {
        ns.to_string()
    } else {
        format!("{ns}/")
    }
}

pub(super) fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Names Rust or our generated module already uses; shapes named so get a suffix.
pub(super) const RESERVED_TYPES: &[&str] = &[
    "String",
    "Option",
    "Result",
    "Vec",
    "Box",
    "Self",
    "Default",
    "Clone",
    "DateTime",
    "Blob",
    "ApiError",
    "Decode",
    "Encode",
    "EncodeMembers",
    "FormReader",
    "XmlWriter",
    "Action",
    "Api",
];

pub(super) fn type_name(shape: &str) -> String {
    let base: String = shape
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    if RESERVED_TYPES.contains(&base.as_str()) {
        format!("{base}Shape")
    } else {
        base
    }
}

pub(super) const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];

/// `VpcId` -> `vpc_id`, `DNSName` -> `dns_name`, `CanonicalHostedZoneNameID` ->
/// `canonical_hosted_zone_name_id`; Rust keywords become raw identifiers.
pub(super) fn field_name(member: &str) -> String {
    let chars: Vec<char> = member.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev = i.checked_sub(1).map(|j| chars[j]);
            let next = chars.get(i + 1).copied();
            let boundary = match prev {
                Some(p) if p.is_ascii_lowercase() || p.is_ascii_digit() => true,
                Some(p) if p.is_ascii_uppercase() => next.is_some_and(|n| n.is_ascii_lowercase()),
                _ => false,
            };
            if boundary && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    if KEYWORDS.contains(&out.as_str()) {
        format!("r#{out}")
    } else {
        out
    }
}

/// `t2.micro` -> `T2Micro`, `ipv6-only` -> `Ipv6Only`, `1` -> `V1`.
pub(super) fn variant_name(value: &str) -> String {
    let mut out = String::new();
    for part in value.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut cs = part.chars();
        if let Some(f) = cs.next() {
            out.push(f.to_ascii_uppercase());
            out.extend(cs);
        }
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'V');
    }
    if out == "Self" {
        out.push('_');
    }
    out
}
