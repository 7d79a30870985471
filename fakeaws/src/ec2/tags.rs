//! EC2 tags: the one store of every resource's tags, `TagSpecifications` on creates, and
//! CreateTags / DeleteTags / DescribeTags.

use std::collections::{BTreeMap, BTreeSet};

use crate::ec2::Kind;
use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::page;
use crate::generated::ec2::{
    CreateTagsRequest, DeleteTagsRequest, DescribeTagsRequest, DescribeTagsResult, ResourceType,
    Tag, TagDescription, TagSpecification,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// AWS's limit of user tags on one resource.
pub const MAX_TAGS: usize = 50;

/// Tags by resource id, indexed by key and value so that tag filters never scan. The state
/// file keeps the tags by resource; the index is built again as they are read.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(from = "BTreeMap<String, BTreeMap<String, String>>")]
pub struct TagStore {
    by_resource: BTreeMap<String, BTreeMap<String, String>>,
    /// key -> value -> resource ids.
    index: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
}

impl From<BTreeMap<String, BTreeMap<String, String>>> for TagStore {
    fn from(by_resource: BTreeMap<String, BTreeMap<String, String>>) -> Self {
        let mut store = TagStore::default();
        for (id, tags) in by_resource {
            store.insert(&id, tags);
        }
        store
    }
}

impl serde::Serialize for TagStore {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.by_resource.serialize(s)
    }
}

impl TagStore {
    /// The tags of `id`, if it has any.
    pub fn get(&self, id: &str) -> Option<&BTreeMap<String, String>> {
        self.by_resource.get(id).filter(|t| !t.is_empty())
    }

    /// The `tagSet` of `id` for a response (absent when it has no tags, as AWS does).
    pub fn tag_set(&self, id: &str) -> Option<Vec<Tag>> {
        self.get(id).map(|t| {
            t.iter()
                .map(|(k, v)| Tag {
                    key: Some(k.clone()),
                    value: Some(v.clone()),
                })
                .collect()
        })
    }

    /// The `tagSet` of `id` for the answers in which AWS lists it even when empty (the aws
    /// CLI's documented outputs show `"Tags": []` for an untagged key pair, network ACL, route
    /// table, security group rule and network interface, and in the answers of RunInstances,
    /// CreateVolume and CreateSnapshot), so that a client reading it finds a list.
    pub fn listed(&self, id: &str) -> Option<Vec<Tag>> {
        Some(self.tag_set(id).unwrap_or_default())
    }

    /// Gives a newly created resource its tags.
    pub fn insert(&mut self, id: &str, tags: BTreeMap<String, String>) {
        if tags.is_empty() {
            return;
        }
        if self.by_resource.get(id).is_some_and(|t| !t.is_empty()) {
            for (k, v) in tags {
                self.set(id, k, v);
            }
            return;
        }
        // A resource without tags yet (every create): its map is kept as given, and each
        // pair indexed, the key and value copied only when the index lacks them.
        for (k, v) in &tags {
            let values = match self.index.get_mut(k) {
                Some(values) => values,
                None => self.index.entry(k.clone()).or_default(),
            };
            let ids = match values.get_mut(v) {
                Some(ids) => ids,
                None => values.entry(v.clone()).or_default(),
            };
            ids.insert(id.to_string());
        }
        self.by_resource.insert(id.to_string(), tags);
    }

    /// Sets one tag.
    pub fn set(&mut self, id: &str, key: String, value: String) {
        // The maps are searched by the borrowed names before an owned copy is made: a
        // resource's id, a tag's key and most values are already there.
        let tags = match self.by_resource.get_mut(id) {
            Some(tags) => tags,
            None => self.by_resource.entry(id.to_string()).or_default(),
        };
        let old = match tags.get_mut(&key) {
            Some(v) if *v == value => return,
            Some(v) => Some(std::mem::replace(v, value.clone())),
            None => {
                tags.insert(key.clone(), value.clone());
                None
            }
        };
        if let Some(old) = old {
            self.unindex(id, &key, &old);
        }
        let values = match self.index.get_mut(&key) {
            Some(values) => values,
            None => self.index.entry(key).or_default(),
        };
        let ids = match values.get_mut(&value) {
            Some(ids) => ids,
            None => values.entry(value).or_default(),
        };
        ids.insert(id.to_string());
    }

    /// Removes one tag.
    pub fn remove(&mut self, id: &str, key: &str) {
        let Some(entry) = self.by_resource.get_mut(id) else {
            return;
        };
        if let Some(old) = entry.remove(key) {
            if entry.is_empty() {
                self.by_resource.remove(id);
            }
            self.unindex(id, key, &old);
        }
    }

    fn unindex(&mut self, id: &str, key: &str, value: &str) {
        if let Some(values) = self.index.get_mut(key) {
            if let Some(ids) = values.get_mut(value) {
                ids.remove(id);
                if ids.is_empty() {
                    values.remove(value);
                }
            }
            if values.is_empty() {
                self.index.remove(key);
            }
        }
    }

    /// Forgets a deleted resource's tags.
    pub fn remove_resource(&mut self, id: &str) {
        if let Some(tags) = self.by_resource.remove(id) {
            for (k, v) in tags {
                self.unindex(id, &k, &v);
            }
        }
    }

    /// The sets of ids carrying tag `key` (with `value`, when given), borrowed from the
    /// index: one per value.
    pub fn sets_with(&self, key: &str, value: Option<&str>) -> Vec<&BTreeSet<String>> {
        let Some(values) = self.index.get(key) else {
            return Vec::new();
        };
        match value {
            Some(v) => values.get(v).into_iter().collect(),
            None => values.values().collect(),
        }
    }
}

/// The tags a create call's `TagSpecification`s give a resource of type `resource_type`,
/// validated before anything is created.
pub fn from_specs(
    specs: Option<&[TagSpecification]>,
    resource_type: ResourceType,
) -> Result<BTreeMap<String, String>, ApiError> {
    let mut by_type = from_specs_for(specs, &[resource_type])?;
    Ok(by_type.remove(&resource_type).unwrap_or_default())
}

/// The tags per resource type of a create call that makes resources of several `types`.
pub fn from_specs_for(
    specs: Option<&[TagSpecification]>,
    types: &[ResourceType],
) -> Result<BTreeMap<ResourceType, BTreeMap<String, String>>, ApiError> {
    let mut out: BTreeMap<ResourceType, BTreeMap<String, String>> = BTreeMap::new();
    for spec in specs.unwrap_or_default() {
        let Some(rt) = spec.resource_type else {
            return Err(ApiError::invalid_value(
                "Tag specification resource type must have a value",
            ));
        };
        if !types.contains(&rt) {
            return Err(ApiError::invalid_value(format!(
                "'{}' is not a valid taggable resource type for this operation.",
                rt.as_str()
            )));
        }
        if out.contains_key(&rt) {
            return Err(ApiError::invalid_value(format!(
                "The tag specification for resource type '{}' is specified more than once",
                rt.as_str()
            )));
        }
        let mut tags = BTreeMap::new();
        for tag in spec.tags.as_deref().unwrap_or_default() {
            let (k, v) = validate_tag(tag)?;
            tags.insert(k, v);
        }
        if tags.len() > MAX_TAGS {
            return Err(tag_limit());
        }
        out.insert(rt, tags);
    }
    Ok(out)
}

fn tag_limit() -> ApiError {
    ApiError::new(
        Code::TagLimitExceeded,
        format!("The maximum number of tags per resource ({MAX_TAGS}) has been reached."),
    )
}

/// Whether `key` starts with `aws:`, in any case: AWS keeps those tag keys for itself. (The
/// first four bytes are compared as they are, without a lower-cased copy of the key.)
pub(crate) fn is_reserved_key(key: &str) -> bool {
    key.as_bytes()
        .get(..4)
        .is_some_and(|head| head.eq_ignore_ascii_case(b"aws:"))
}

fn validate_tag(tag: &Tag) -> Result<(String, String), ApiError> {
    let key = tag.key.clone().unwrap_or_default();
    let value = tag.value.clone().unwrap_or_default();
    if key.is_empty() {
        return Err(ApiError::invalid_value("Tag key must have a value"));
    }
    // No more characters than bytes: the count is needed only past the limit in bytes.
    if key.len() > 128 && key.chars().count() > 128 {
        return Err(ApiError::invalid_parameter(
            "Tag.Key",
            &key,
            "Tag keys can be at most 128 characters long.",
        ));
    }
    if value.len() > 256 && value.chars().count() > 256 {
        return Err(ApiError::invalid_parameter(
            "Tag.Value",
            &value,
            "Tag values can be at most 256 characters long.",
        ));
    }
    if is_reserved_key(&key) {
        return Err(ApiError::invalid_value(format!(
            "Tag key '{key}' is invalid: tag keys starting with 'aws:' are reserved for internal use"
        )));
    }
    Ok((key, value))
}

/// `CreateTags`: adds or overwrites tags on every listed resource, all or nothing.
pub fn create_tags(region: &mut Region, input: CreateTagsRequest) -> Result<(), ApiError> {
    let tags: Vec<(String, String)> = input
        .tags
        .iter()
        .map(validate_tag)
        .collect::<Result<_, _>>()?;
    for id in &input.resources {
        region.check_taggable(id)?;
        let current = region.tags.by_resource.get(id);
        let mut keys: std::collections::BTreeSet<&str> = current
            .map(|c| c.keys().map(String::as_str).collect())
            .unwrap_or_default();
        keys.extend(tags.iter().map(|(k, _)| k.as_str()));
        if keys.len() > MAX_TAGS {
            return Err(tag_limit());
        }
    }
    for id in &input.resources {
        for (k, v) in &tags {
            region.tags.set(id, k.clone(), v.clone());
        }
    }
    Ok(())
}

/// `DeleteTags`: removes tags by key, or by key and value when a value is given; no tags
/// means every user tag.
pub fn delete_tags(region: &mut Region, input: DeleteTagsRequest) -> Result<(), ApiError> {
    for id in &input.resources {
        region.check_taggable(id)?;
    }
    for id in &input.resources {
        let Some(current) = region.tags.by_resource.get(id) else {
            continue;
        };
        let doomed: Vec<String> = match &input.tags {
            None => current.keys().cloned().collect(),
            Some(tags) => tags
                .iter()
                .filter_map(|t| {
                    let key = t.key.as_ref()?;
                    let matches = match &t.value {
                        None => current.contains_key(key),
                        Some(v) => current.get(key) == Some(v),
                    };
                    matches.then(|| key.clone())
                })
                .collect(),
        };
        for key in doomed {
            region.tags.remove(id, &key);
        }
    }
    Ok(())
}

struct TagRow<'a> {
    resource_id: &'a str,
    resource_type: &'static str,
    key: &'a str,
    value: &'a str,
    sort_key: String,
}

impl Filterable for TagRow<'_> {
    const NAMES: &'static [&'static str] = &["key", "resource-id", "resource-type", "value"];
    fn values(&self, name: &str) -> Vec<String> {
        match name {
            "key" => one(self.key),
            "resource-id" => one(self.resource_id),
            "resource-type" => one(self.resource_type),
            "value" => one(self.value),
            _ => Vec::new(),
        }
    }
}

/// `DescribeTags`: every tag of every resource, filtered and paginated.
pub fn describe_tags(
    region: &Region,
    input: DescribeTagsRequest,
) -> Result<DescribeTagsResult, ApiError> {
    page::check_max_results(input.max_results, 5, 1000)?;
    let filters = Filters::parse::<TagRow>(input.filters)?;
    let mut rows = Vec::new();
    for (id, tags) in &region.tags.by_resource {
        let Some(rt) = resource_type_of(id) else {
            continue;
        };
        if region.consistency.hides(id) {
            continue;
        }
        for (k, v) in tags {
            let row = TagRow {
                resource_id: id,
                resource_type: rt.as_str(),
                key: k,
                value: v,
                sort_key: format!("{id}\u{0}{k}"),
            };
            if filters.matches(&row, Some(tags)) {
                rows.push(row);
            }
        }
    }
    let (rows, next) = page::page(
        rows,
        |r| r.sort_key.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeTagsResult {
        next_token: next,
        tags: Some(
            rows.into_iter()
                .map(|r| TagDescription {
                    key: Some(r.key.to_string()),
                    resource_id: Some(r.resource_id.to_string()),
                    resource_type: resource_type_of(r.resource_id),
                    value: Some(r.value.to_string()),
                })
                .collect(),
        ),
    })
}

/// The resource type of an id, from the kind table.
pub fn resource_type_of(id: &str) -> Option<ResourceType> {
    Kind::of_id(id).map(Kind::resource_type)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// The ids the index holds for `key` (and `value`), sorted.
    fn indexed(store: &TagStore, key: &str, value: Option<&str>) -> Vec<String> {
        let mut ids: Vec<String> = store
            .sets_with(key, value)
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        ids.sort();
        ids.dedup();
        ids
    }

    #[test]
    fn reserved_keys_are_found_in_any_case() {
        for key in ["aws:x", "AWS:", "Aws:cloudformation:stack"] {
            assert!(is_reserved_key(key), "{key}");
        }
        for key in ["aws", "awsx:", "x-aws:", "", "é:aws:"] {
            assert!(!is_reserved_key(key), "{key}");
        }
    }

    #[test]
    fn inserted_tags_are_kept_and_indexed_as_set_ones_are() {
        let mut by_insert = TagStore::default();
        let mut by_set = TagStore::default();
        let given = [("Name", "a"), ("cluster", "owned")];
        by_insert.insert("vpc-1", tags(&given));
        for (k, v) in given {
            by_set.set("vpc-1", k.to_string(), v.to_string());
        }
        by_insert.insert("vpc-2", tags(&[("cluster", "owned")]));
        by_set.set("vpc-2", "cluster".into(), "owned".into());
        for store in [&by_insert, &by_set] {
            assert_eq!(store.get("vpc-1"), Some(&tags(&given)));
            assert_eq!(indexed(store, "cluster", Some("owned")), ["vpc-1", "vpc-2"]);
            assert_eq!(indexed(store, "Name", None), ["vpc-1"]);
        }
        assert_eq!(by_insert.index, by_set.index);
    }

    #[test]
    fn insert_onto_tags_already_held_replaces_values_and_unindexes_the_old() {
        let mut store = TagStore::default();
        store.insert("vpc-1", tags(&[("Name", "a"), ("keep", "1")]));
        store.insert("vpc-1", tags(&[("Name", "b")]));
        assert_eq!(
            store.get("vpc-1"),
            Some(&tags(&[("Name", "b"), ("keep", "1")]))
        );
        assert!(indexed(&store, "Name", Some("a")).is_empty());
        assert_eq!(indexed(&store, "Name", Some("b")), ["vpc-1"]);
        store.insert("vpc-2", BTreeMap::new());
        assert_eq!(store.get("vpc-2"), None);
        store.remove_resource("vpc-1");
        assert!(store.index.is_empty(), "{:?}", store.index);
    }
}
