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
use crate::region::{ids_of_kind, is_of_kind};

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

    /// The ids of the kind with the id prefix `prefix` (`nat`) that can possibly match, from the
    /// tag index and the resource's own `index` (name, exact value -> what it holds of that
    /// value); `None` when no filter is served by an index. Of the filters an index serves,
    /// the one naming the fewest ids of the kind gives them: every record still goes through
    /// [`matches`](Self::matches), which applies every filter, so no intersection is needed,
    /// and nothing the indexes hold is copied. The indexes hold ids of every kind, in id
    /// order, so a kind's ids are one range of each set.
    pub fn candidates<'a>(
        &'a self,
        tags: &'a TagStore,
        prefix: &str,
        index: impl Fn(&str, &'a str) -> Option<Served<'a>>,
    ) -> Option<BTreeSet<&'a str>> {
        let mut best: Option<(usize, Served<'a>)> = None;
        for (name, values) in &self.list {
            if values.is_empty() || values.iter().any(|v| v.contains(['*', '?', '\\'])) {
                continue;
            }
            let lookup = |v: &'a str| -> Option<Served<'a>> {
                if let Some(key) = name.strip_prefix("tag:") {
                    Some(Served::sets(tags.sets_with(key, Some(v))))
                } else if name == "tag-key" {
                    Some(Served::sets(tags.sets_with(v, None)))
                } else {
                    index(name, v)
                }
            };
            let mut served = Served::default();
            let mut all_served = true;
            for v in values {
                match lookup(v) {
                    Some(more) => {
                        served.sets.extend(more.sets);
                        served.ids.extend(more.ids);
                    }
                    None => {
                        all_served = false;
                        break;
                    }
                }
            }
            if !all_served {
                continue;
            }
            let size = served.len(prefix);
            if best.as_ref().is_none_or(|(fewest, _)| size < *fewest) {
                best = Some((size, served));
            }
        }
        best.map(|(_, served)| served.of_kind(prefix).collect())
    }

    /// Whether `record` (with `tags`) passes every filter.
    pub fn matches<R: Filterable>(
        &self,
        record: &R,
        tags: Option<&BTreeMap<String, String>>,
    ) -> bool {
        self.list.iter().all(|(name, wanted)| {
            if let Some(key) = name.strip_prefix("tag:") {
                any_match(
                    wanted,
                    tags.and_then(|t| t.get(key))
                        .map(String::as_str)
                        .into_iter(),
                )
            } else if name == "tag-key" {
                any_match(
                    wanted,
                    tags.into_iter().flat_map(|t| t.keys()).map(String::as_str),
                )
            } else if name == "tag-value" {
                any_match(
                    wanted,
                    tags.into_iter()
                        .flat_map(|t| t.values())
                        .map(String::as_str),
                )
            } else {
                any_match(wanted, record.values(name).iter().map(String::as_str))
            }
        })
    }
}

/// What an index holds for one filter value: its sets of ids, borrowed, and ids it names
/// outright (the value of a kind's own id filter, such as `nat-gateway-id`).
#[derive(Debug, Default)]
pub struct Served<'a> {
    sets: Vec<&'a BTreeSet<String>>,
    ids: Vec<&'a str>,
}

impl<'a> Served<'a> {
    /// The ids of `sets`.
    pub fn sets(sets: Vec<&'a BTreeSet<String>>) -> Self {
        Served {
            sets,
            ids: Vec::new(),
        }
    }

    /// The ids `ids`, named outright.
    pub fn ids(ids: Vec<&'a str>) -> Self {
        Served {
            sets: Vec::new(),
            ids,
        }
    }

    /// The ids with the id prefix `prefix` (`nat`), one twice when two sets hold it.
    fn of_kind<'s>(&'s self, prefix: &'s str) -> impl Iterator<Item = &'a str> + 's {
        let in_sets = self
            .sets
            .iter()
            .flat_map(move |set| ids_of_kind(set, prefix).map(String::as_str));
        in_sets.chain(
            self.ids
                .iter()
                .copied()
                .filter(move |id| is_of_kind(id, prefix)),
        )
    }

    /// How many ids of the kind: what choosing this filter costs.
    fn len(&self, prefix: &str) -> usize {
        self.of_kind(prefix).count()
    }
}

/// Whether any of `have` matches any `wanted` pattern.
fn any_match<'t>(wanted: &[String], have: impl Iterator<Item = &'t str> + Clone) -> bool {
    wanted
        .iter()
        .any(|pattern| have.clone().any(|v| glob(pattern, v)))
}

/// Matches `text` against an EC2 filter value: `*` any run, `?` one character, `\` escapes.
pub fn glob(pattern: &str, text: &str) -> bool {
    if !pattern.contains(['*', '?', '\\']) {
        return pattern == text;
    }
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
