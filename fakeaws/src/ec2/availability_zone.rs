//! Zones: the availability zones `a`, `b` and `c` of every region, with zone ids in AWS's
//! style (`use1-az1`); the Local Zones and Wavelength Zones of the regions that have them,
//! which an account uses once it opts in to their zone group (ModifyAvailabilityZoneGroup);
//! and DescribeAvailabilityZones.

use std::collections::BTreeSet;

use crate::ec2::filter::{Filterable, Filters, one};
use crate::generated::ec2::{
    AvailabilityZone, AvailabilityZoneOptInStatus, AvailabilityZoneState,
    DescribeAvailabilityZonesRequest, DescribeAvailabilityZonesResult,
    ModifyAvailabilityZoneGroupRequest, ModifyAvailabilityZoneGroupResult,
    ModifyAvailabilityZoneOptInStatus,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// What kind of zone a zone is (DescribeAvailabilityZones' `ZoneType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoneType {
    /// An availability zone of the region.
    Availability,
    /// A Local Zone: AWS infrastructure in a metropolitan area, tied to a parent zone.
    Local,
    /// A Wavelength Zone: AWS infrastructure in a carrier's 5G network, reached through a
    /// carrier gateway.
    Wavelength,
}

impl ZoneType {
    /// The name AWS gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            ZoneType::Availability => "availability-zone",
            ZoneType::Local => "local-zone",
            ZoneType::Wavelength => "wavelength-zone",
        }
    }
}

/// One zone.
#[derive(Debug, Clone)]
pub struct Zone {
    /// `us-east-1a`, `us-east-1-nyc-1a`, `us-east-1-wl1-nyc-wlz-1`.
    pub name: String,
    /// `use1-az1`, `use1-nyc1-az1`, `use1-wl1-nyc-wlz1`.
    pub id: String,
    /// The region's name.
    pub region: String,
    /// Its type.
    pub kind: ZoneType,
    /// Its zone group, which an account opts in to (the region's name for an availability
    /// zone).
    pub group: String,
    /// Its network border group, where its public addresses come from.
    pub border_group: String,
    /// An edge zone's parent availability zone (name, id).
    pub parent: Option<(String, String)>,
    /// An edge zone group's long name.
    pub group_long_name: Option<String>,
}

impl Zone {
    /// Whether it is a Local Zone or a Wavelength Zone.
    pub fn is_edge(&self) -> bool {
        self.kind != ZoneType::Availability
    }
}

/// The regions whose availability zones open to an account are not `a`, `b` and `c` with
/// the AZ ids `az1` to `az3`: each zone's letter and AZ id number, as AWS's list of AZ ids
/// gives them (us-east-1 six, us-west-2 and ap-northeast-2 four; us-west-1 two of its
/// three, as to accounts made since its third closed to them; ca-central-1's third is `d`,
/// `cac1-az4`; ap-northeast-1's are `a`, `c` and `d`, `apne1-az4`, `az1` and `az2`). In the
/// regions that map zones to letters per account (us-east-1, us-west-1, us-west-2,
/// ap-northeast-1), which letter is which AZ id is this fake's choice, as another account's
/// would be.
const ZONE_LETTERS: &[(&str, &[(char, u8)])] = &[
    // `use1-az3` as `e`, the letter AWS's refusals of it show most often.
    (
        "us-east-1",
        &[('a', 1), ('b', 2), ('c', 4), ('d', 5), ('e', 3), ('f', 6)],
    ),
    ("us-west-1", &[('a', 1), ('c', 3)]),
    ("us-west-2", &[('a', 1), ('b', 2), ('c', 3), ('d', 4)]),
    ("ap-northeast-1", &[('a', 4), ('c', 1), ('d', 2)]),
    ("ap-northeast-2", &[('a', 1), ('b', 2), ('c', 3), ('d', 4)]),
    ("ca-central-1", &[('a', 1), ('b', 2), ('d', 4)]),
];

/// The AZ ids of zones that offer only the older, Xen-based instance types: `use1-az3`, a
/// constrained zone of us-east-1 (AWS answers `Unsupported` to a launch of `t3.micro`,
/// `t3.small`, `m5.8xlarge`, `r5d.xlarge` there, as stored outputs of terraform, Ansible and
/// Kubernetes' own test infrastructure show, and eksctl avoids it). Which types it still
/// offers is not documented: the fake's rule is the Xen-based ones.
pub const XEN_ONLY_ZONE_IDS: &[&str] = &["use1-az3"];

/// The availability zones of `region`: `a`, `b` and `c` (AZ ids `az1` to `az3`), or those of
/// [`ZONE_LETTERS`].
pub fn zones_of(region: &str) -> Vec<Zone> {
    let code = region_code(region);
    let letters = ZONE_LETTERS
        .iter()
        .find(|(r, _)| *r == region)
        .map_or(&[('a', 1), ('b', 2), ('c', 3)][..], |(_, l)| l);
    letters
        .iter()
        .map(|&(letter, number)| Zone {
            name: format!("{region}{letter}"),
            id: format!("{code}-az{number}"),
            region: region.to_string(),
            kind: ZoneType::Availability,
            group: region.to_string(),
            border_group: region.to_string(),
            parent: None,
            group_long_name: None,
        })
        .collect()
}

/// The Local Zones and Wavelength Zones of the regions the fake gives them, as AWS names
/// them (the EC2 User Guide's and the AWS CLI's examples; the Cluster API provider's edge
/// zone documentation): region, zone, zone id, group, group long name, parent zone letter.
const EDGE_ZONES: &[(&str, ZoneType, &str, &str, &str, &str, &str)] = &[
    (
        "us-east-1",
        ZoneType::Local,
        "us-east-1-bos-1a",
        "use1-bos1-az1",
        "us-east-1-bos-1",
        "US East (Boston)",
        "a",
    ),
    (
        "us-east-1",
        ZoneType::Local,
        "us-east-1-nyc-1a",
        "use1-nyc1-az1",
        "us-east-1-nyc-1",
        "US East (New York City)",
        "b",
    ),
    (
        "us-east-1",
        ZoneType::Wavelength,
        "us-east-1-wl1-bos-wlz-1",
        "use1-wl1-bos-wlz1",
        "us-east-1-wl1",
        "US East (Verizon) - Boston",
        "a",
    ),
    (
        "us-east-1",
        ZoneType::Wavelength,
        "us-east-1-wl1-nyc-wlz-1",
        "use1-wl1-nyc-wlz1",
        "us-east-1-wl1",
        "US East (Verizon) - New York",
        "b",
    ),
    (
        "us-east-1",
        ZoneType::Wavelength,
        "us-east-1-wl1-was-wlz-1",
        "use1-wl1-was-wlz1",
        "us-east-1-wl1",
        "US East (Verizon) - Washington DC",
        "c",
    ),
    (
        "us-west-2",
        ZoneType::Local,
        "us-west-2-lax-1a",
        "usw2-lax1-az1",
        "us-west-2-lax-1",
        "US West (Los Angeles)",
        "a",
    ),
    (
        "us-west-2",
        ZoneType::Local,
        "us-west-2-lax-1b",
        "usw2-lax1-az2",
        "us-west-2-lax-1",
        "US West (Los Angeles)",
        "b",
    ),
    (
        "us-west-2",
        ZoneType::Wavelength,
        "us-west-2-wl1-sfo-wlz-1",
        "usw2-wl1-sfo-wlz1",
        "us-west-2-wl1",
        "US West (Verizon) - San Francisco Bay Area",
        "a",
    ),
];

/// The Local Zones and Wavelength Zones of `region` (none for most regions).
pub fn edge_zones_of(region: &str) -> Vec<Zone> {
    let parents = zones_of(region);
    EDGE_ZONES
        .iter()
        .filter(|z| z.0 == region)
        .map(|&(_, kind, name, id, group, long_name, parent)| {
            let parent = parents
                .iter()
                .find(|p| p.name.strip_prefix(region) == Some(parent))
                .map(|p| (p.name.clone(), p.id.clone()));
            Zone {
                name: name.to_string(),
                id: id.to_string(),
                region: region.to_string(),
                kind,
                group: group.to_string(),
                // A Local Zone's addresses come from its group; each Wavelength Zone is a
                // network border group of its own.
                border_group: match kind {
                    ZoneType::Wavelength => name.to_string(),
                    _ => group.to_string(),
                },
                parent,
                group_long_name: Some(long_name.to_string()),
            }
        })
        .collect()
}

/// The zone groups the account has opted in to, per region.
pub type OptedIn = BTreeSet<String>;

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

impl Filterable for (&Zone, &Region) {
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
    // No zone here carries a message.
    const NEVER_SET: &'static [&'static str] = &["message"];
    const TAGGABLE: bool = false;

    fn values(&self, name: &str) -> Vec<String> {
        let (z, region) = *self;
        match name {
            "group-long-name" => z.group_long_name.clone().into_iter().collect(),
            "group-name" => one(z.group.clone()),
            "opt-in-status" => one(region.opt_in_status(z).as_str()),
            "parent-zone-id" => z.parent.iter().map(|p| p.1.clone()).collect(),
            "parent-zone-name" => z.parent.iter().map(|p| p.0.clone()).collect(),
            "region-name" => one(z.region.clone()),
            "state" => one("available"),
            "zone-id" => one(z.id.clone()),
            "zone-name" => one(z.name.clone()),
            "zone-type" => one(z.kind.as_str()),
            _ => Vec::new(),
        }
    }
}

impl Region {
    /// The zone called `name`, if the region has it: an availability zone, or a Local or
    /// Wavelength Zone whether or not the account opted in to it.
    pub fn zone(&self, name: &str) -> Option<&Zone> {
        self.zones
            .iter()
            .chain(&self.edge_zones)
            .find(|z| z.name == name)
    }

    /// The zone with id `id`, if the region has it (as [`zone`](Self::zone)).
    pub fn zone_by_id(&self, id: &str) -> Option<&Zone> {
        self.zones
            .iter()
            .chain(&self.edge_zones)
            .find(|z| z.id == id)
    }

    /// Whether the account may use `zone`: an availability zone, or an edge zone of a group
    /// it opted in to.
    pub fn zone_usable(&self, zone: &Zone) -> bool {
        !zone.is_edge() || self.opted_in_groups.contains(&zone.group)
    }

    /// The zones the account may use, availability zones first.
    pub fn usable_zones(&self) -> impl Iterator<Item = &Zone> {
        self.zones
            .iter()
            .chain(self.edge_zones.iter().filter(|z| self.zone_usable(z)))
    }

    /// `zone`'s opt-in status for the account.
    pub fn opt_in_status(&self, zone: &Zone) -> AvailabilityZoneOptInStatus {
        if !zone.is_edge() {
            AvailabilityZoneOptInStatus::OptInNotRequired
        } else if self.zone_usable(zone) {
            AvailabilityZoneOptInStatus::OptedIn
        } else {
            AvailabilityZoneOptInStatus::NotOptedIn
        }
    }

    /// The name of the zone a create call names by `AvailabilityZone` or
    /// `AvailabilityZoneId` (one of them: `InvalidParameterCombination`, `MissingParameter`);
    /// one the region lacks, or an edge zone the account has not opted in to, is
    /// `InvalidParameterValue` `Invalid availability zone: [...]`.
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
        zone.filter(|z| self.zone_usable(z))
            .map(|z| z.name.clone())
            .ok_or_else(|| {
                ApiError::invalid_value(format!(
                    "Invalid availability zone: [{}]",
                    name.or(id).unwrap_or_default()
                ))
            })
    }
}

/// `DescribeAvailabilityZones`: the zones the account may use, or with
/// `AllAvailabilityZones` every zone of the region whatever its opt-in status; zones named by
/// name or id are answered whatever their status.
pub fn describe_availability_zones(
    region: &Region,
    input: DescribeAvailabilityZonesRequest,
) -> Result<DescribeAvailabilityZonesResult, ApiError> {
    let filters = Filters::parse::<(&Zone, &Region)>(input.filters)?;
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
    let names = input.zone_names.unwrap_or_default();
    let ids = input.zone_ids.unwrap_or_default();
    let all = input.all_availability_zones == Some(true) || !names.is_empty() || !ids.is_empty();
    let zones = region
        .zones
        .iter()
        .chain(&region.edge_zones)
        .filter(|z| all || region.zone_usable(z))
        .filter(|z| names.is_empty() || names.contains(&z.name))
        .filter(|z| ids.is_empty() || ids.contains(&z.id))
        .filter(|z| filters.matches(&(*z, region), None))
        .map(|z| AvailabilityZone {
            opt_in_status: Some(region.opt_in_status(z)),
            messages: Some(Vec::new()),
            region_name: Some(z.region.clone()),
            zone_name: Some(z.name.clone()),
            zone_id: Some(z.id.clone()),
            group_name: Some(z.group.clone()),
            network_border_group: Some(z.border_group.clone()),
            zone_type: Some(z.kind.as_str().into()),
            parent_zone_name: z.parent.as_ref().map(|p| p.0.clone()),
            parent_zone_id: z.parent.as_ref().map(|p| p.1.clone()),
            group_long_name: z.group_long_name.clone(),
            state: Some(AvailabilityZoneState::Available),
            ..Default::default()
        })
        .collect();
    Ok(DescribeAvailabilityZonesResult {
        availability_zones: Some(zones),
    })
}

/// `ModifyAvailabilityZoneGroup`: opts the account in to a Local Zone or Wavelength Zone
/// group of the region. Opting out is for AWS Support, as the model documents: the API takes
/// `opted-in` only.
pub fn modify_availability_zone_group(
    region: &mut Region,
    input: ModifyAvailabilityZoneGroupRequest,
) -> Result<ModifyAvailabilityZoneGroupResult, ApiError> {
    let group = input.group_name;
    let known = region.edge_zones.iter().any(|z| z.group == group);
    if !known {
        let why = if region.zones.iter().any(|z| z.group == group) {
            "The availability zones of a region need no opt-in."
        } else {
            "No Local Zone or Wavelength Zone group of that name in this region."
        };
        return Err(ApiError::invalid_parameter("GroupName", &group, why));
    }
    if input.opt_in_status != ModifyAvailabilityZoneOptInStatus::OptedIn {
        return Err(ApiError::invalid_parameter(
            "OptInStatus",
            input.opt_in_status.as_str(),
            "The only valid value is opted-in: contact AWS Support to opt out of a zone group.",
        ));
    }
    region.opted_in_groups.insert(group);
    Ok(ModifyAvailabilityZoneGroupResult {
        r#return: Some(true),
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
        assert!(edge_zones_of("eu-west-1").is_empty());
        let edge = edge_zones_of("us-east-1");
        let nyc = edge
            .iter()
            .find(|z| z.name == "us-east-1-wl1-nyc-wlz-1")
            .unwrap();
        assert_eq!(nyc.group, "us-east-1-wl1");
        assert_eq!(nyc.border_group, "us-east-1-wl1-nyc-wlz-1");
        assert_eq!(nyc.parent, Some(("us-east-1b".into(), "use1-az2".into())));
    }
}
