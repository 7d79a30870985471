//! A network ACL's numbered entries: CreateNetworkAclEntry, ReplaceNetworkAclEntry,
//! DeleteNetworkAclEntry, checked as AWS checks them (rule numbers 1 to 32766, one entry per
//! number and direction, a protocol by number or name, a port range for TCP and UDP, an ICMP
//! type and code for ICMP and ICMPv6, an IPv4 or IPv6 CIDR, the `rules per network ACL` quota
//! per direction).

use ipnet::IpNet;

use crate::ec2::Kind;
use crate::ec2::error::Code;
use crate::ec2::vpc::parse_cidr;
use crate::ec2::vpc_ipv6::parse_ipv6_cidr;
use crate::generated::ec2::{
    CreateNetworkAclEntryRequest, DeleteNetworkAclEntryRequest, IcmpTypeCode, PortRange,
    ReplaceNetworkAclEntryRequest, RuleAction,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// One numbered entry of an ACL.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    /// The rule number, 1 to 32766.
    pub number: i32,
    /// Outbound (`true`) or inbound.
    pub egress: bool,
    /// Allow or deny.
    pub action: RuleAction,
    /// The protocol number, `-1` for all.
    pub protocol: String,
    /// The range it matches, IPv4 or IPv6.
    #[serde(with = "crate::state::with::text")]
    pub cidr: IpNet,
    /// The ports (TCP, UDP): from, to.
    pub ports: Option<(i32, i32)>,
    /// The ICMP type and code (`-1`: all).
    pub icmp: Option<(i32, i32)>,
}

/// The highest rule number one can give (32767 is the `*` rule).
const MAX_RULE: i32 = 32766;

/// The protocol number of `protocol` as AWS takes it: a number 0 to 255, `-1` (or `all`) for
/// every protocol, or `tcp`, `udp`, `icmp`.
fn protocol_number(protocol: &str) -> Option<String> {
    let named = match protocol.to_ascii_lowercase().as_str() {
        "-1" | "all" => Some("-1"),
        "tcp" => Some("6"),
        "udp" => Some("17"),
        "icmp" => Some("1"),
        _ => None,
    };
    if let Some(n) = named {
        return Some(n.to_string());
    }
    let n: u8 = protocol.parse().ok()?;
    Some(n.to_string())
}

/// An entry as a Create or ReplaceNetworkAclEntry request gives it, checked.
struct Requested<'a> {
    number: i32,
    egress: bool,
    action: RuleAction,
    protocol: &'a str,
    cidr: Option<&'a str>,
    ipv6_cidr: Option<&'a str>,
    ports: Option<&'a PortRange>,
    icmp: Option<&'a IcmpTypeCode>,
}

/// The [`Requested`] entry of a Create or ReplaceNetworkAclEntry request (the two models
/// have the same members).
macro_rules! requested {
    ($input:expr) => {
        Requested {
            number: $input.rule_number,
            egress: $input.egress,
            action: $input.rule_action,
            protocol: &$input.protocol,
            cidr: $input.cidr_block.as_deref(),
            ipv6_cidr: $input.ipv6_cidr_block.as_deref(),
            ports: $input.port_range.as_ref(),
            icmp: $input.icmp_type_code.as_ref(),
        }
    };
}

impl Requested<'_> {
    fn entry(&self) -> Result<Entry, ApiError> {
        check_rule_number(self.number)?;
        let protocol = protocol_number(self.protocol).ok_or_else(|| {
            ApiError::invalid_parameter(
                "protocol",
                self.protocol,
                "Specify a protocol number (0 to 255), -1 for all protocols, or tcp, udp or icmp.",
            )
        })?;
        let cidr = match (self.cidr, self.ipv6_cidr) {
            (Some(_), Some(_)) => {
                return Err(ApiError::invalid_combination(
                    "Specify either CidrBlock or Ipv6CidrBlock, not both.",
                ));
            }
            (Some(raw), None) => IpNet::V4(parse_cidr(raw, "cidrBlock")?),
            (None, Some(raw)) => IpNet::V6(parse_ipv6_cidr(raw, "ipv6CidrBlock")?),
            (None, None) => {
                return Err(ApiError::missing_parameter("CidrBlock or Ipv6CidrBlock"));
            }
        };
        let ports = match (protocol.as_str(), self.ports) {
            ("6" | "17", None) => return Err(ApiError::missing_parameter("PortRange")),
            ("6" | "17", Some(p)) => {
                let (Some(from), Some(to)) = (p.from, p.to) else {
                    return Err(ApiError::missing_parameter(
                        "PortRange.From and PortRange.To",
                    ));
                };
                let port = 0..=65535;
                if !port.contains(&from) || !port.contains(&to) || from > to {
                    return Err(ApiError::invalid_value(format!(
                        "Invalid value for portRange. Must specify a valid fromPort and toPort, \
                         got {from}..{to}"
                    )));
                }
                Some((from, to))
            }
            _ => None,
        };
        let icmp = match (protocol.as_str(), self.icmp) {
            ("1" | "58", None) => return Err(ApiError::missing_parameter("Icmp")),
            ("1" | "58", Some(i)) => {
                let (Some(t), Some(c)) = (i.r#type, i.code) else {
                    return Err(ApiError::missing_parameter("Icmp.Type and Icmp.Code"));
                };
                let valid = -1..=255;
                if !valid.contains(&t) || !valid.contains(&c) {
                    return Err(ApiError::invalid_value(format!(
                        "Invalid ICMP type {t} or code {c}: each is -1 (all) to 255."
                    )));
                }
                Some((t, c))
            }
            _ => None,
        };
        Ok(Entry {
            number: self.number,
            egress: self.egress,
            action: self.action,
            protocol,
            cidr,
            ports,
            icmp,
        })
    }
}

fn check_rule_number(number: i32) -> Result<(), ApiError> {
    if (1..=MAX_RULE).contains(&number) {
        Ok(())
    } else {
        Err(ApiError::invalid_parameter(
            "ruleNumber",
            &number.to_string(),
            &format!("A rule number is 1 to {MAX_RULE}."),
        ))
    }
}

fn not_found(number: i32) -> ApiError {
    ApiError::new(
        Code::InvalidNetworkAclEntryNotFound,
        format!("The network acl entry identified by {number} could not be found."),
    )
}

/// The entries of the ACL `id`, to change.
fn entries_mut<'a>(region: &'a mut Region, id: &str) -> Result<&'a mut Vec<Entry>, ApiError> {
    let acl = Kind::NetworkAcl.get_mut(&mut region.network_acls.0, id)?;
    let (is_default, ipv6) = (acl.is_default, acl.ipv6);
    Ok(acl
        .entries
        .get_or_insert_with(|| super::made_with(is_default, ipv6)))
}

/// `CreateNetworkAclEntry`.
pub fn create_network_acl_entry(
    region: &mut Region,
    input: CreateNetworkAclEntryRequest,
) -> Result<(), ApiError> {
    Kind::NetworkAcl.get(&region.network_acls, &input.network_acl_id)?;
    let entry = requested!(input).entry()?;
    let limit = region.limits.rules_per_network_acl;
    let entries = entries_mut(region, &input.network_acl_id)?;
    if entries
        .iter()
        .any(|e| e.number == entry.number && e.egress == entry.egress)
    {
        return Err(ApiError::new(
            Code::NetworkAclEntryAlreadyExists,
            format!(
                "The network acl entry identified by {} already exists.",
                entry.number
            ),
        ));
    }
    if entries.iter().filter(|e| e.egress == entry.egress).count() >= limit {
        return Err(ApiError::new(
            Code::NetworkAclEntryLimitExceeded,
            format!(
                "The maximum number of {} rules in a network ACL ({limit}) has been reached.",
                if entry.egress { "outbound" } else { "inbound" }
            ),
        ));
    }
    entries.push(entry);
    Ok(())
}

/// `ReplaceNetworkAclEntry`: an existing entry, changed whole.
pub fn replace_network_acl_entry(
    region: &mut Region,
    input: ReplaceNetworkAclEntryRequest,
) -> Result<(), ApiError> {
    Kind::NetworkAcl.get(&region.network_acls, &input.network_acl_id)?;
    let entry = requested!(input).entry()?;
    let entries = entries_mut(region, &input.network_acl_id)?;
    let Some(slot) = entries
        .iter_mut()
        .find(|e| e.number == entry.number && e.egress == entry.egress)
    else {
        return Err(not_found(entry.number));
    };
    *slot = entry;
    Ok(())
}

/// `DeleteNetworkAclEntry`: a numbered entry (the `*` rule stays).
pub fn delete_network_acl_entry(
    region: &mut Region,
    input: DeleteNetworkAclEntryRequest,
) -> Result<(), ApiError> {
    Kind::NetworkAcl.get(&region.network_acls, &input.network_acl_id)?;
    check_rule_number(input.rule_number)?;
    let entries = entries_mut(region, &input.network_acl_id)?;
    let before = entries.len();
    entries.retain(|e| !(e.number == input.rule_number && e.egress == input.egress));
    if entries.len() == before {
        return Err(not_found(input.rule_number));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::protocol_number;

    #[test]
    fn protocols_are_taken_by_number_or_name() {
        for (given, number) in [
            ("-1", "-1"),
            ("all", "-1"),
            ("TCP", "6"),
            ("udp", "17"),
            ("icmp", "1"),
            ("6", "6"),
            ("50", "50"),
        ] {
            assert_eq!(protocol_number(given).as_deref(), Some(number), "{given}");
        }
        for bad in ["", "256", "-2", "gre", "06 "] {
            assert_eq!(protocol_number(bad), None, "{bad}");
        }
    }
}
