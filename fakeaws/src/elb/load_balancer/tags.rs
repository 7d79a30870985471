//! A load balancer's tags: AddTags, RemoveTags, DescribeTags.

use std::collections::BTreeMap;

use crate::elb::error::Code;
use crate::generated::elb::{
    AddTagsInput, AddTagsOutput, DescribeTagsInput, DescribeTagsOutput, RemoveTagsInput,
    RemoveTagsOutput, Tag, TagDescription,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::*;

/// AWS's limit of tags on one load balancer.
pub(super) const MAX_TAGS: usize = 50;

pub(super) fn check_tags(tags: &[Tag]) -> Result<BTreeMap<String, String>, ApiError> {
    let mut out = BTreeMap::new();
    for t in tags {
        if t.key.is_empty() || t.key.len() > 128 || t.value.as_ref().is_some_and(|v| v.len() > 256)
        {
            return Err(validation(format!("Invalid tag '{}'", t.key)));
        }
        if crate::ec2::tags::is_reserved_key(&t.key) {
            return Err(validation(format!(
                "Tag key '{}' uses the reserved prefix aws:",
                t.key
            )));
        }
        if out
            .insert(t.key.clone(), t.value.clone().unwrap_or_default())
            .is_some()
        {
            return Err(ApiError::new(
                Code::DuplicateTagKeys,
                format!("Tag key '{}' is given more than once", t.key),
            ));
        }
    }
    Ok(out)
}

/// `AddTags`: to every named load balancer, all or nothing.
pub fn add_tags(region: &mut Region, input: AddTagsInput) -> Result<AddTagsOutput, ApiError> {
    let tags = check_tags(&input.tags)?;
    for name in &input.load_balancer_names {
        let lb = get(region, name)?;
        let mut keys: Vec<&String> = lb.tags.keys().collect();
        keys.extend(tags.keys().filter(|k| !lb.tags.contains_key(*k)));
        if keys.len() > MAX_TAGS {
            return Err(ApiError::new(
                Code::TooManyTags,
                format!("Load balancer {name} would have more than {MAX_TAGS} tags"),
            ));
        }
    }
    for name in &input.load_balancer_names {
        let lb = get_mut(region, name)?;
        lb.tags.extend(tags.clone());
    }
    Ok(AddTagsOutput {})
}

/// `RemoveTags`.
pub fn remove_tags(
    region: &mut Region,
    input: RemoveTagsInput,
) -> Result<RemoveTagsOutput, ApiError> {
    for name in &input.load_balancer_names {
        get(region, name)?;
    }
    for name in &input.load_balancer_names {
        let lb = get_mut(region, name)?;
        for k in input.tags.iter().filter_map(|t| t.key.as_ref()) {
            lb.tags.remove(k);
        }
    }
    Ok(RemoveTagsOutput {})
}

/// `DescribeTags`: up to 20 load balancers.
pub fn describe_tags(
    region: &mut Region,
    input: DescribeTagsInput,
) -> Result<DescribeTagsOutput, ApiError> {
    let mut out = Vec::new();
    for name in &input.load_balancer_names {
        let lb = get(region, name)?;
        out.push(TagDescription {
            load_balancer_name: Some(lb.name.clone()),
            tags: Some(
                lb.tags
                    .iter()
                    .map(|(k, v)| Tag {
                        key: k.clone(),
                        value: Some(v.clone()),
                    })
                    .collect(),
            ),
        });
    }
    Ok(DescribeTagsOutput {
        tag_descriptions: Some(out),
    })
}
