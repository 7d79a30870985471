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

/// Kubernetes' own cluster tag key, `kubernetes.io/cluster/<name>`: what the cloud controller
/// manager looks for (on subnets and the `lb` group) and puts on what it makes (`owned`).
pub fn kubernetes_cluster_key(cluster: &str) -> String {
    format!("kubernetes.io/cluster/{cluster}")
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

/// FNV-1a over `bytes` from `seed`: a stable, dependency-free hash for names and tokens
/// (not for secrets).
pub fn fnv1a(seed: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(seed, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A deterministic ClientToken (at most 64 characters) for a create identified by `parts`
/// (cluster, what, the VPC or subnet it goes in, ...): the same create retried after a crash
/// reuses it, so AWS answers the first result instead of making a twin; a create in a new VPC
/// (the cluster deleted and made again) gets a new one.
pub fn client_token(parts: &[&str]) -> String {
    let h = fnv1a(0xcbf2_9ce4_8422_2325, parts.join("/").as_bytes());
    let readable: String = parts
        .iter()
        .take(2)
        .copied()
        .collect::<Vec<_>>()
        .join("-")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(40)
        .collect();
    format!("capa-{readable}-{h:016x}")
}

/// What brings `current` to `want`: the tags to set (missing or changed), and the tags to
/// remove (additional tags recorded in the last-applied tag that `want` no longer has; tags
/// others put on the resource are never among them).
pub fn tag_changes(
    current: &[aws_sdk_ec2::types::Tag],
    want: &BTreeMap<String, String>,
) -> (Vec<aws_sdk_ec2::types::Tag>, Vec<aws_sdk_ec2::types::Tag>) {
    use aws_sdk_ec2::types::Tag;
    let missing = want
        .iter()
        .filter(|(k, v)| ec2_tag(current, k) != Some(v.as_str()))
        .map(|(k, v)| Tag::builder().key(k).value(v).build())
        .collect();
    let dropped = last_applied(ec2_tag(current, LAST_APPLIED_KEY))
        .into_iter()
        .filter(|k| !want.contains_key(k) && ec2_tag(current, k).is_some())
        .map(|k| Tag::builder().key(k).build())
        .collect();
    (missing, dropped)
}

/// EC2 tags as pairs.
pub fn ec2_pairs(tags: &[aws_sdk_ec2::types::Tag]) -> impl Iterator<Item = (&str, &str)> {
    tags.iter()
        .map(|t| (t.key().unwrap_or_default(), t.value().unwrap_or_default()))
}

/// Classic ELB tags as pairs.
pub fn elb_pairs(
    tags: &[aws_sdk_elasticloadbalancing::types::Tag],
) -> impl Iterator<Item = (&str, &str)> {
    tags.iter()
        .map(|t| (t.key(), t.value().unwrap_or_default()))
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
    fn tokens_are_stable_short_and_distinct() {
        let a = client_token(&[
            "a-very-long-cluster-name-indeed-for-testing",
            "bastion",
            "vpc-1",
            "0",
        ]);
        assert!(a.len() <= 64, "{a}");
        assert_eq!(
            a,
            client_token(&[
                "a-very-long-cluster-name-indeed-for-testing",
                "bastion",
                "vpc-1",
                "0"
            ])
        );
        assert_ne!(
            a,
            client_token(&[
                "a-very-long-cluster-name-indeed-for-testing",
                "bastion",
                "vpc-2",
                "0"
            ])
        );
    }

    #[test]
    fn owned_only_for_this_cluster() {
        let t = tags_for("c1", "vpc", "c1-vpc", &BTreeMap::new());
        let pairs = || t.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        assert!(is_managed("c1", pairs()));
        assert!(!is_managed("c2", pairs()));
        assert!(!is_managed("c1", [(cluster_key("c1").as_str(), "shared")]));
    }
}
