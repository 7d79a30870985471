//! Placement groups: CreatePlacementGroup, DescribePlacementGroups, DeletePlacementGroup, and
//! the group RunInstances' `Placement` names ([`for_launch`]).
//!
//! A group is `available` once made (AWS answers it so) and gone once deleted. Its strategy is
//! recorded: a `partition` group has 1 to 7 partitions (2 unless told), and each instance
//! launched into it is in one (the one asked for, else the partition holding the fewest); a
//! `spread` group's level is `rack` (`host` is for Outposts); a `cluster` group (the strategy
//! of a group made without one) lies in the one zone of its instances. A group holding an
//! instance that is not terminated cannot be deleted.

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::{Kind, tags};
use crate::generated::ec2::{
    CreatePlacementGroupRequest, CreatePlacementGroupResult, DeletePlacementGroupRequest,
    DescribePlacementGroupsRequest, DescribePlacementGroupsResult, Placement,
    PlacementGroup as PlacementGroupOut, PlacementGroupState, PlacementStrategy, ResourceType,
    SpreadLevel,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

crate::region::table! {
    /// Placement groups by id.
    PlacementGroups of PlacementGroup
}

/// One placement group.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PlacementGroup {
    /// `pg-...`.
    pub id: String,
    /// Its name, unique in the region.
    pub name: String,
    /// Its strategy.
    pub strategy: PlacementStrategy,
    /// A partition group's number of partitions.
    pub partitions: Option<i32>,
    /// A spread group's level.
    pub spread_level: Option<SpreadLevel>,
}

/// The most partitions a partition group has (per zone).
const MAX_PARTITIONS: i32 = 7;

fn unknown(name: &str) -> ApiError {
    ApiError::new(
        Code::InvalidPlacementGroupUnknown,
        format!("The Placement Group '{name}' is unknown."),
    )
}

/// The group named `name`, or `InvalidPlacementGroup.Unknown`.
fn by_name<'a>(region: &'a Region, name: &str) -> Result<&'a PlacementGroup, ApiError> {
    region
        .placement_groups
        .values()
        .find(|g| g.name == name)
        .ok_or_else(|| unknown(name))
}

fn arn(region: &Region, g: &PlacementGroup) -> String {
    format!(
        "arn:{}:ec2:{}:{}:placement-group/{}",
        crate::ec2::account::arn_partition(&region.name),
        region.name,
        region.account_id,
        g.name
    )
}

fn render(region: &Region, g: &PlacementGroup) -> PlacementGroupOut {
    PlacementGroupOut {
        group_name: Some(g.name.clone()),
        state: Some(PlacementGroupState::Available),
        strategy: Some(g.strategy),
        partition_count: g.partitions,
        group_id: Some(g.id.clone()),
        tags: region.tags.tag_set(&g.id),
        group_arn: Some(arn(region, g)),
        spread_level: g.spread_level,
        ..Default::default()
    }
}

impl Filterable for (&PlacementGroup, &Region) {
    const NAMES: &'static [&'static str] = &[
        "group-name",
        "group-arn",
        "spread-level",
        "state",
        "strategy",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        let (g, region) = *self;
        match name {
            "group-name" => one(g.name.clone()),
            "group-arn" => one(arn(region, g)),
            "spread-level" => g.spread_level.map(|l| one(l.as_str())).unwrap_or_default(),
            "state" => one(PlacementGroupState::Available.as_str()),
            "strategy" => one(g.strategy.as_str()),
            _ => Vec::new(),
        }
    }
}

/// `CreatePlacementGroup`.
pub fn create_placement_group(
    region: &mut Region,
    input: CreatePlacementGroupRequest,
) -> Result<CreatePlacementGroupResult, ApiError> {
    let name = input
        .group_name
        .ok_or_else(|| ApiError::missing_parameter("GroupName"))?;
    if name.is_empty() || name.len() > 255 || !name.is_ascii() {
        return Err(ApiError::invalid_parameter(
            "GroupName",
            &name,
            "A placement group name is 1 to 255 ASCII characters.",
        ));
    }
    // The strategy is optional in the API (CloudFormation leaves it out too); a group made
    // without one is a cluster group, as the AWS tools that default it make it.
    let strategy = input.strategy.unwrap_or(PlacementStrategy::Cluster);
    let partitions = match (strategy, input.partition_count) {
        (PlacementStrategy::Partition, None) => Some(2),
        (PlacementStrategy::Partition, Some(n)) if (1..=MAX_PARTITIONS).contains(&n) => Some(n),
        (PlacementStrategy::Partition, Some(n)) => {
            return Err(ApiError::invalid_parameter(
                "PartitionCount",
                &n.to_string(),
                "A partition placement group has 1 to 7 partitions.",
            ));
        }
        (_, Some(_)) => {
            return Err(ApiError::invalid_combination(
                "PartitionCount is valid only for a placement group of the partition strategy.",
            ));
        }
        (_, None) => None,
    };
    let spread_level = match (strategy, input.spread_level) {
        (PlacementStrategy::Spread, None | Some(SpreadLevel::Rack)) => Some(SpreadLevel::Rack),
        (PlacementStrategy::Spread, Some(level)) => {
            return Err(ApiError::invalid_parameter(
                "SpreadLevel",
                level.as_str(),
                "Host-level spread placement groups are for Outposts, which fakeaws does not serve.",
            ));
        }
        (_, Some(_)) => {
            return Err(ApiError::invalid_combination(
                "SpreadLevel is valid only for a placement group of the spread strategy.",
            ));
        }
        (_, None) => None,
    };
    if region.placement_groups.values().any(|g| g.name == name) {
        return Err(ApiError::new(
            Code::InvalidPlacementGroupDuplicate,
            format!("The placement group '{name}' already exists."),
        ));
    }
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::PlacementGroup,
    )?;
    if region.placement_groups.len() >= region.limits.placement_groups {
        return Err(ApiError::new(
            Code::PlacementGroupLimitExceeded,
            "You have reached the maximum number of placement groups for this region.",
        ));
    }
    let group = PlacementGroup {
        id: region.ids.resource("pg"),
        name,
        strategy,
        partitions,
        spread_level,
    };
    region.tags.insert(&group.id, tags);
    let out = render(region, &group);
    region.placement_groups.0.insert(group.id.clone(), group);
    Ok(CreatePlacementGroupResult {
        placement_group: Some(out),
    })
}

/// `DescribePlacementGroups`: by names (`InvalidPlacementGroup.Unknown`), ids or filters.
pub fn describe_placement_groups(
    region: &mut Region,
    input: DescribePlacementGroupsRequest,
) -> Result<DescribePlacementGroupsResult, ApiError> {
    let filters = Filters::parse::<(&PlacementGroup, &Region)>(input.filters)?;
    let region = &*region;
    let names = input.group_names.unwrap_or_default();
    for name in &names {
        by_name(region, name)?;
    }
    let found: Vec<PlacementGroupOut> = Kind::PlacementGroup
        .select(&region.placement_groups, input.group_ids.as_deref())?
        .into_iter()
        .filter(|g| names.is_empty() || names.contains(&g.name))
        .filter(|g| filters.matches(&(*g, region), region.tags.get(&g.id)))
        .map(|g| render(region, g))
        .collect();
    Ok(DescribePlacementGroupsResult {
        placement_groups: Some(found),
    })
}

/// `DeletePlacementGroup`: not while an instance that is not terminated is in it.
pub fn delete_placement_group(
    region: &mut Region,
    input: DeletePlacementGroupRequest,
) -> Result<(), ApiError> {
    let id = by_name(region, &input.group_name)?.id.clone();
    let in_use = region
        .instances
        .values()
        .any(|i| !i.is_gone() && i.placement_group.as_deref() == Some(id.as_str()));
    if in_use {
        return Err(ApiError::new(
            Code::InvalidPlacementGroupInUse,
            format!(
                "The placement group '{}' is in use and may not be deleted.",
                input.group_name
            ),
        ));
    }
    region.placement_groups.0.remove(&id);
    region.tags.remove_resource(&id);
    Ok(())
}

/// Where a launch's instances go in the placement group it names.
pub struct InGroup {
    /// The group's id.
    pub group_id: String,
    /// Each instance's partition, in a partition group.
    pub partitions: Vec<Option<i32>>,
}

impl InGroup {
    /// The partition of the launch's instance `index`.
    pub fn partition(&self, index: usize) -> Option<i32> {
        self.partitions.get(index).copied().flatten()
    }
}

/// The group a launch into `zone` names (by `GroupName` or `GroupId`, not both) and, for a
/// partition group, the partition of each of its `count` instances (the one asked for, else
/// each in the partition holding the fewest). A cluster group lies in one zone: a launch into
/// another while it holds an instance is `InvalidPlacementGroup.InUse`, as on AWS.
pub fn for_launch(
    region: &Region,
    placement: &Placement,
    zone: &str,
    count: usize,
) -> Result<Option<InGroup>, ApiError> {
    let (name, id, partition) = (
        placement.group_name.as_deref(),
        placement.group_id.as_deref(),
        placement.partition_number,
    );
    let group = match (name, id) {
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid_combination(
                "Placement.GroupName and Placement.GroupId cannot be given together.",
            ));
        }
        (Some(name), None) => by_name(region, name)?,
        (None, Some(id)) => Kind::PlacementGroup.get(&region.placement_groups, id)?,
        (None, None) => {
            if partition.is_some() {
                return Err(ApiError::invalid_combination(
                    "Placement.PartitionNumber needs a placement group of the partition strategy.",
                ));
            }
            return Ok(None);
        }
    };
    let members = || {
        region
            .instances
            .values()
            .filter(|i| !i.is_gone() && i.placement_group.as_deref() == Some(group.id.as_str()))
    };
    if group.strategy == PlacementStrategy::Cluster && members().any(|i| i.zone != zone) {
        return Err(ApiError::new(
            Code::InvalidPlacementGroupInUse,
            format!(
                "The placement group '{}' is in use in another availability zone: {zone}",
                group.name
            ),
        ));
    }
    let Some(partitions) = group.partitions else {
        if partition.is_some() {
            return Err(ApiError::invalid_combination(format!(
                "Placement.PartitionNumber is valid only for a partition placement group; '{}' is a {} group.",
                group.name,
                group.strategy.as_str()
            )));
        }
        return Ok(Some(InGroup {
            group_id: group.id.clone(),
            partitions: vec![None; count],
        }));
    };
    if let Some(p) = partition {
        if !(1..=partitions).contains(&p) {
            return Err(ApiError::invalid_parameter(
                "Placement.PartitionNumber",
                &p.to_string(),
                &format!(
                    "The placement group '{}' has partitions 1 to {partitions}.",
                    group.name
                ),
            ));
        }
        return Ok(Some(InGroup {
            group_id: group.id.clone(),
            partitions: vec![Some(p); count],
        }));
    }
    let mut held: Vec<usize> = vec![0; usize::try_from(partitions).unwrap_or(0)];
    for i in members() {
        if let Some(slot) = i
            .partition
            .and_then(|p| usize::try_from(p - 1).ok())
            .and_then(|p| held.get_mut(p))
        {
            *slot += 1;
        }
    }
    let mut chosen = Vec::with_capacity(count);
    for _ in 0..count {
        let (slot, fewest) = held
            .iter_mut()
            .enumerate()
            .min_by_key(|(_, n)| **n)
            .ok_or_else(|| ApiError::invalid_value("The placement group has no partition."))?;
        *fewest += 1;
        chosen.push(i32::try_from(slot + 1).ok());
    }
    Ok(Some(InGroup {
        group_id: group.id.clone(),
        partitions: chosen,
    }))
}

/// The name of the placement group `id`, for an instance's `Placement`.
pub fn name_of(region: &Region, id: &str) -> Option<String> {
    region.placement_groups.get(id).map(|g| g.name.clone())
}
