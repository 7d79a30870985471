//! Ownership: the tags the provider puts on what it creates, and the one decision of managed
//! versus pre-existing. Only resources carrying `<cluster key>=owned` are modified or deleted.

use std::collections::BTreeMap;

/// The prefix of the cluster ownership key.
pub const CLUSTER_KEY_PREFIX: &str = "sigs.k8s.io/cluster-api-provider-aws/cluster/";
/// The role tag key.
pub const ROLE_KEY: &str = "sigs.k8s.io/cluster-api-provider-aws/role";
/// The keys of the user's additional tags the provider last put on a resource, joined by
/// commas (tag keys cannot hold one), so that a tag removed from the spec is removed from the
/// resource while tags others added stay.
pub const LAST_APPLIED_KEY: &str = "sigs.k8s.io/cluster-api-provider-aws/last-applied-tags";
/// The value of the cluster key on what the provider created.
pub const OWNED: &str = "owned";

/// The ownership key of `cluster`.
pub fn cluster_key(cluster: &str) -> String {
    format!("{CLUSTER_KEY_PREFIX}{cluster}")
}

/// The tags a created resource carries: owned, role, Name, and the user's additional tags.
pub fn tags_for(
    cluster: &str,
    role: &str,
    name: &str,
    additional: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut t = additional.clone();
    t.insert(cluster_key(cluster), OWNED.to_string());
    t.insert(ROLE_KEY.to_string(), role.to_string());
    t.insert("Name".to_string(), name.to_string());
    t.insert(
        LAST_APPLIED_KEY.to_string(),
        additional.keys().cloned().collect::<Vec<_>>().join(","),
    );
    t
}

/// The additional tag keys recorded on a resource whose tags include `last_applied`.
pub fn last_applied(value: Option<&str>) -> Vec<String> {
    value
        .unwrap_or_default()
        .split(',')
        .filter(|k| !k.is_empty())
        .map(String::from)
        .collect()
}

/// Whether a resource with `tags` is managed by (owned by) `cluster`.
pub fn is_managed<'a>(cluster: &str, tags: impl IntoIterator<Item = (&'a str, &'a str)>) -> bool {
    let key = cluster_key(cluster);
    tags.into_iter().any(|(k, v)| k == key && v == OWNED)
}

/// EC2 tags as pairs.
pub fn ec2_pairs(tags: &[aws_sdk_ec2::types::Tag]) -> impl Iterator<Item = (&str, &str)> {
    tags.iter()
        .map(|t| (t.key().unwrap_or_default(), t.value().unwrap_or_default()))
}

/// The value of tag `key`.
pub fn ec2_tag<'a>(tags: &'a [aws_sdk_ec2::types::Tag], key: &str) -> Option<&'a str> {
    tags.iter()
        .find(|t| t.key() == Some(key))
        .and_then(|t| t.value())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_only_for_this_cluster() {
        let t = tags_for("c1", "vpc", "c1-vpc", &BTreeMap::new());
        let pairs = || t.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        assert!(is_managed("c1", pairs()));
        assert!(!is_managed("c2", pairs()));
        assert!(!is_managed("c1", [(cluster_key("c1").as_str(), "shared")]));
    }
}
