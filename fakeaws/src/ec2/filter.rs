//! EC2 `Filter.N.Name` / `Filter.N.Value.M` semantics: values of one filter are ORed, filters
//! are ANDed, values may use `*` and `?` wildcards, `tag:KEY`, `tag-key` and `tag-value` work
//! on every taggable resource, and an unknown filter name is an error naming it. A call takes
//! at most [`MAX_FILTER_VALUES`] values in all (`FilterLimitExceeded`, as EC2 answers), each
//! at most [`MAX_FILTER_VALUE_LEN`] characters, so that matching a call costs at most a
//! bounded amount per record: linear in what the region holds.

use std::collections::{BTreeMap, BTreeSet};

use crate::ec2::tags::TagStore;
use crate::generated::ec2::Filter;
use crate::protocol::error::ApiError;

/// The most filter values one call may carry, across its filters (EC2's limit).
pub const MAX_FILTER_VALUES: usize = 200;

/// The longest filter value taken: longer than any value a filter can match (a tag value
/// has at most 256 characters, a name or id fewer).
pub const MAX_FILTER_VALUE_LEN: usize = 1024;

/// Validated filters of one Describe call.
#[derive(Debug, Default)]
pub struct Filters {
    list: Vec<(String, Vec<String>)>,
}

/// What a resource exposes to filtering.
pub trait Filterable {
    /// The filter names the resource's Describe call documents (besides the tag filters).
    const NAMES: &'static [&'static str];
    /// The names among [`NAMES`](Self::NAMES) of properties the fake's records never have
    /// (IPv6, outposts, spot requests, scheduled events, ...): they match no record, as on
    /// AWS for a record without the property. Every other name is answered by `values`.
    const NEVER_SET: &'static [&'static str] = &[];
    /// Whether `tag:KEY`, `tag-key` and `tag-value` apply.
    const TAGGABLE: bool = true;
    /// The values of the filter `name` for this record (empty when it has none).
    fn values(&self, name: &str) -> Vec<String>;
}

impl Filters {
    /// Validates the filters of a request against the names `R` documents.
    pub fn parse<R: Filterable>(input: Option<Vec<Filter>>) -> Result<Self, ApiError> {
        let mut list = Vec::new();
        let input = input.unwrap_or_default();
        let count: usize = input
            .iter()
            .map(|f| f.values.as_ref().map_or(0, Vec::len))
            .sum();
        if count > MAX_FILTER_VALUES {
            return Err(ApiError::new(
                crate::ec2::error::Code::FilterLimitExceeded,
                format!(
                    "The maximum number of filter values specified on a single call is \
                     {MAX_FILTER_VALUES}"
                ),
            ));
        }
        if let Some(long) = input
            .iter()
            .flat_map(|f| f.values.iter().flatten())
            .find(|v| v.chars().count() > MAX_FILTER_VALUE_LEN)
        {
            return Err(ApiError::invalid_value(format!(
                "A filter value of {} characters is longer than the {MAX_FILTER_VALUE_LEN} \
                 taken",
                long.chars().count()
            )));
        }
        for f in input {
            let Some(name) = f.name else {
                return Err(ApiError::invalid_value("The filter 'null' is invalid"));
            };
            let tag_filter = name.starts_with("tag:") || name == "tag-key" || name == "tag-value";
            let known = if tag_filter {
                R::TAGGABLE && name != "tag:"
            } else {
                R::NAMES.contains(&name.as_str())
            };
            if !known {
                return Err(ApiError::invalid_value(format!(
                    "The filter '{name}' is invalid"
                )));
            }
            list.push((name, f.values.unwrap_or_default()));
        }
        Ok(Filters { list })
    }

    /// The ids that can possibly match, from the tag index and the resource's own `index`
    /// (name, exact value -> ids); `None` when no filter is served by an index.
    pub fn candidates(
        &self,
        tags: &TagStore,
        index: impl Fn(&str, &str) -> Option<BTreeSet<String>>,
    ) -> Option<BTreeSet<String>> {
        let mut result: Option<BTreeSet<String>> = None;
        for (name, values) in &self.list {
            if values.is_empty() || values.iter().any(|v| v.contains(['*', '?', '\\'])) {
                continue;
            }
            let lookup = |v: &str| -> Option<BTreeSet<String>> {
                if let Some(key) = name.strip_prefix("tag:") {
                    Some(tags.ids_with(key, Some(v)))
                } else if name == "tag-key" {
                    Some(tags.ids_with(v, None))
                } else {
                    index(name, v)
                }
            };
            let mut set = BTreeSet::new();
            let mut served = true;
            for v in values {
                match lookup(v) {
                    Some(ids) => set.extend(ids),
                    None => {
                        served = false;
                        break;
                    }
                }
            }
            if served {
                result = Some(match result {
                    None => set,
                    Some(r) => r.intersection(&set).cloned().collect(),
                });
            }
        }
        result
    }

    /// Whether `record` (with `tags`) passes every filter.
    pub fn matches<R: Filterable>(
        &self,
        record: &R,
        tags: Option<&BTreeMap<String, String>>,
    ) -> bool {
        self.list.iter().all(|(name, wanted)| {
            let have: Vec<String> = if let Some(key) = name.strip_prefix("tag:") {
                tags.and_then(|t| t.get(key)).cloned().into_iter().collect()
            } else if name == "tag-key" {
                tags.map(|t| t.keys().cloned().collect())
                    .unwrap_or_default()
            } else if name == "tag-value" {
                tags.map(|t| t.values().cloned().collect())
                    .unwrap_or_default()
            } else {
                record.values(name)
            };
            wanted
                .iter()
                .any(|pattern| have.iter().any(|v| glob(pattern, v)))
        })
    }
}

/// Matches `text` against an EC2 filter value: `*` any run, `?` one character, `\` escapes.
pub fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
                continue;
            }
            Some('?') => {
                pi += 1;
                ti += 1;
                continue;
            }
            Some('\\') if p.get(pi + 1).is_some_and(|c| Some(c) == t.get(ti)) => {
                pi += 2;
                ti += 1;
                continue;
            }
            Some(&c) if c != '\\' && t.get(ti) == Some(&c) => {
                pi += 1;
                ti += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((sp, st)) => {
                pi = sp + 1;
                ti = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    p.iter().skip(pi).all(|&c| c == '*')
}

/// `true`/`false` as filter values.
pub fn flag(b: bool) -> Vec<String> {
    vec![b.to_string()]
}

/// One optional value.
pub fn one(v: impl Into<String>) -> Vec<String> {
    vec![v.into()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards() {
        assert!(glob(
            "capa-ami-ubuntu-24.04-?1.31.0-*",
            "capa-ami-ubuntu-24.04-v1.31.0-1700000000"
        ));
        assert!(glob("*", ""));
        assert!(glob("a*c", "abbbc"));
        assert!(!glob("a*c", "abbbd"));
        assert!(glob("a\\*", "a*"));
        assert!(!glob("a\\*", "ab"));
        assert!(!glob("a?", "a"));
    }
}
