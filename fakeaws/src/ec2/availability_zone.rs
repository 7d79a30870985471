//! Availability zones: `a`, `b` and `c` in every region, with zone ids in AWS's style
//! (`use1-az1`), and DescribeAvailabilityZones.

use crate::ec2::filter::{Filterable, Filters, one};
use crate::generated::ec2::{
    AvailabilityZone, AvailabilityZoneOptInStatus, AvailabilityZoneState,
    DescribeAvailabilityZonesRequest, DescribeAvailabilityZonesResult,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// One availability zone.
#[derive(Debug, Clone)]
pub struct Zone {
    /// `us-east-1a`.
    pub name: String,
    /// `use1-az1`.
    pub id: String,
    /// The region's name.
    pub region: String,
}

/// The zones of `region`.
pub fn zones_of(region: &str) -> Vec<Zone> {
    let code = region_code(region);
    ["a", "b", "c"]
        .iter()
        .enumerate()
        .map(|(i, letter)| Zone {
            name: format!("{region}{letter}"),
            id: format!("{code}-az{}", i + 1),
            region: region.to_string(),
        })
        .collect()
}

/// `us-east-1` -> `use1`, `ap-southeast-2` -> `apse2`, `eu-central-1` -> `euc1`.
fn region_code(region: &str) -> String {
    let parts: Vec<&str> = region.split('-').collect();
    let mut out = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i == 0 || p.chars().all(|c| c.is_ascii_digit()) {
            out.push_str(p);
            continue;
        }
        let short = match *p {
            "east" => "e",
            "west" => "w",
            "north" => "n",
            "south" => "s",
            "central" => "c",
            "northeast" => "ne",
            "northwest" => "nw",
            "southeast" => "se",
            "southwest" => "sw",
            other => other.get(..1).unwrap_or(""),
        };
        out.push_str(short);
    }
    out
}

impl Filterable for Zone {
    const NAMES: &'static [&'static str] = &[
        "group-long-name",
        "group-name",
        "message",
        "opt-in-status",
        "parent-zone-id",
        "parent-zone-name",
        "region-name",
        "state",
        "zone-id",
        "zone-name",
        "zone-type",
    ];
    // Zones here are plain availability zones without messages or parent zones.
    const NEVER_SET: &'static [&'static str] = &[
        "group-long-name",
        "message",
        "parent-zone-id",
        "parent-zone-name",
    ];
    const TAGGABLE: bool = false;

    fn values(&self, name: &str) -> Vec<String> {
        match name {
            "group-name" => one(self.region.clone()),
            "opt-in-status" => one("opt-in-not-required"),
            "region-name" => one(self.region.clone()),
            "state" => one("available"),
            "zone-id" => one(self.id.clone()),
            "zone-name" => one(self.name.clone()),
            "zone-type" => one("availability-zone"),
            _ => Vec::new(),
        }
    }
}

impl Region {
    /// The zone called `name`, if the region has it.
    pub fn zone(&self, name: &str) -> Option<&Zone> {
        self.zones.iter().find(|z| z.name == name)
    }

    /// The zone with id `id`, if the region has it.
    pub fn zone_by_id(&self, id: &str) -> Option<&Zone> {
        self.zones.iter().find(|z| z.id == id)
    }

    /// The name of the zone a create call names by `AvailabilityZone` or
    /// `AvailabilityZoneId` (one of them: `InvalidParameterCombination`, `MissingParameter`);
    /// one the region lacks is `InvalidParameterValue` `Invalid availability zone: [...]`.
    pub fn zone_named(&self, name: Option<&str>, id: Option<&str>) -> Result<String, ApiError> {
        let zone = match (name, id) {
            (Some(_), Some(_)) => {
                return Err(ApiError::invalid_combination(
                    "Only one of AvailabilityZone or AvailabilityZoneId may be specified.",
                ));
            }
            (Some(name), None) => self.zone(name),
            (None, Some(id)) => self.zone_by_id(id),
            (None, None) => return Err(ApiError::missing_parameter("AvailabilityZone")),
        };
        zone.map(|z| z.name.clone()).ok_or_else(|| {
            ApiError::invalid_value(format!(
                "Invalid availability zone: [{}]",
                name.or(id).unwrap_or_default()
            ))
        })
    }
}

/// `DescribeAvailabilityZones`.
pub fn describe_availability_zones(
    region: &Region,
    input: DescribeAvailabilityZonesRequest,
) -> Result<DescribeAvailabilityZonesResult, ApiError> {
    let filters = Filters::parse::<Zone>(input.filters)?;
    for name in input.zone_names.iter().flatten() {
        if region.zone(name).is_none() {
            return Err(ApiError::invalid_parameter(
                "ZoneName",
                name,
                "The zone does not exist in this region.",
            ));
        }
    }
    for id in input.zone_ids.iter().flatten() {
        if region.zone_by_id(id).is_none() {
            return Err(ApiError::invalid_parameter(
                "ZoneId",
                id,
                "The zone does not exist in this region.",
            ));
        }
    }
    let zones = region
        .zones
        .iter()
        .filter(|z| {
            input
                .zone_names
                .as_ref()
                .is_none_or(|n| n.is_empty() || n.contains(&z.name))
        })
        .filter(|z| {
            input
                .zone_ids
                .as_ref()
                .is_none_or(|n| n.is_empty() || n.contains(&z.id))
        })
        .filter(|z| filters.matches(*z, None))
        .map(|z| AvailabilityZone {
            opt_in_status: Some(AvailabilityZoneOptInStatus::OptInNotRequired),
            messages: Some(Vec::new()),
            region_name: Some(z.region.clone()),
            zone_name: Some(z.name.clone()),
            zone_id: Some(z.id.clone()),
            group_name: Some(z.region.clone()),
            network_border_group: Some(z.region.clone()),
            zone_type: Some("availability-zone".into()),
            state: Some(AvailabilityZoneState::Available),
            ..Default::default()
        })
        .collect();
    Ok(DescribeAvailabilityZonesResult {
        availability_zones: Some(zones),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zone_ids_follow_aws_style() {
        assert_eq!(region_code("us-east-1"), "use1");
        assert_eq!(region_code("ap-southeast-2"), "apse2");
        let z = zones_of("eu-west-1");
        assert_eq!(z[2].name, "eu-west-1c");
        assert_eq!(z[2].id, "euw1-az3");
    }
}
