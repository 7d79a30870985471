//! VPC peering connections between two VPCs of the region: CreateVpcPeeringConnection,
//! AcceptVpcPeeringConnection, RejectVpcPeeringConnection, DeleteVpcPeeringConnection,
//! DescribeVpcPeeringConnections and ModifyVpcPeeringConnectionOptions, along AWS's
//! lifecycle (the VPC user guide's "VPC peering connection lifecycle"):
//!
//! - A request is `initiating-request`, then (the clock's next step, subject
//!   `vpcPeeringConnection`) `pending-acceptance`, or `failed` when the accepter VPC does not
//!   exist, is the requester itself, or has an IPv4 range overlapping one of the requester's
//!   (`Failed due to incorrect VPC-ID, Account ID, or overlapping CIDR range`).
//! - A request waits for its accepter 7 days (`ExpirationTime`), then is `expired`.
//! - Accepted: `provisioning`, then `active`; rejected: `rejected`; deleted (by either side,
//!   while pending or active): `deleting`, then `deleted`.
//! - Ended connections stay listed as AWS keeps them: a failed one 2 hours, a rejected,
//!   expired or deleted one 2 days.
//! - A request to a VPC of another account (`PeerOwnerId`) stays `pending-acceptance`: that
//!   account is not in the fake, and only the accepter's owner may accept
//!   (`OperationNotPermitted` for anyone else).
//! - The requester's ranges are shown from the start, the accepter's only while the
//!   connection is `active`, and each side's peering options (DNS resolution from the remote
//!   VPC) too, which ModifyVpcPeeringConnectionOptions changes on an active connection only
//!   (`Peering pcx-... is not active. Peering options can be added only to active peerings.`).
//! - A security group may reference the groups of a VPC an active connection joins to its
//!   own (`crate::ec2::security_group`); such a rule goes stale when the connection ends.
//! - A VPC with an active connection cannot be deleted (`DependencyViolation`); deleting the
//!   VPC of a request still pending deletes the request.
//! - Routes may target a connection (`VpcPeeringConnectionId`, `crate::ec2::route_table`):
//!   `active` while it is, `blackhole` otherwise.
//! - Quotas (Service Quotas' names): active connections per VPC (50) and outstanding
//!   requests per VPC (25).

use std::time::Duration;

use aws_smithy_types::DateTime;

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::{Kind, page, tags};
use crate::generated::ec2::{
    AcceptVpcPeeringConnectionRequest, AcceptVpcPeeringConnectionResult, CidrBlock,
    CreateVpcPeeringConnectionRequest, CreateVpcPeeringConnectionResult,
    DeleteVpcPeeringConnectionRequest, DeleteVpcPeeringConnectionResult,
    DescribeVpcPeeringConnectionsRequest, DescribeVpcPeeringConnectionsResult, Ipv6CidrBlock,
    ModifyVpcPeeringConnectionOptionsRequest, ModifyVpcPeeringConnectionOptionsResult,
    PeeringConnectionOptions, PeeringConnectionOptionsRequest, RejectVpcPeeringConnectionRequest,
    RejectVpcPeeringConnectionResult, ResourceType, VpcPeeringConnection as PeeringOut,
    VpcPeeringConnectionOptionsDescription, VpcPeeringConnectionStateReason,
    VpcPeeringConnectionStateReasonCode as State, VpcPeeringConnectionVpcInfo,
};
use crate::protocol::error::ApiError;
use crate::region::Region;
use crate::sim::transitions::Subject;

crate::region::table! {
    /// VPC peering connections by id.
    VpcPeerings of Peering
}

/// How long a request waits for its accepter before it expires.
pub const ACCEPT_WITHIN: Duration = Duration::from_secs(7 * 24 * 3600);
/// How long a failed request stays listed.
const FAILED_KEPT: Duration = Duration::from_secs(2 * 3600);
/// How long a rejected, expired or deleted connection stays listed.
const ENDED_KEPT: Duration = Duration::from_secs(2 * 24 * 3600);

/// One VPC peering connection.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Peering {
    /// `pcx-...`.
    pub id: String,
    /// The requester's VPC (always one of this region's).
    pub requester: Side,
    /// The accepter's VPC.
    pub accepter: Side,
    /// Its state.
    pub state: State,
    /// When it was requested.
    #[serde(with = "crate::state::with::time")]
    pub created: DateTime,
    /// When it ended (failed, rejected, expired or deleted).
    #[serde(default, with = "crate::state::with::time_opt")]
    pub ended: Option<DateTime>,
    /// The status message of a failure a fault rule asked for (AWS's own otherwise).
    #[serde(default)]
    pub failure: Option<String>,
}

/// One side of a connection.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Side {
    /// The VPC.
    pub vpc_id: String,
    /// Its owner.
    pub owner_id: String,
    /// Its region.
    pub region: String,
    /// The side's peering options.
    #[serde(default)]
    pub options: Options,
}

impl Side {
    /// Whether the side's VPC is one of `region`'s (this account's, in that region).
    fn is_in(&self, region: &Region) -> bool {
        self.owner_id == region.account_id && self.region == region.name
    }
}

/// A side's peering options.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Options {
    /// `AllowDnsResolutionFromRemoteVpc`.
    pub dns_from_remote: bool,
    /// `AllowEgressFromLocalClassicLinkToRemoteVpc`.
    pub classic_link_to_remote: bool,
    /// `AllowEgressFromLocalVpcToRemoteClassicLink`.
    pub local_to_remote_classic_link: bool,
}

impl Peering {
    /// Whether it is one of the states a connection leaves only by a call or by time:
    /// requested, accepted or active.
    fn is_live(&self) -> bool {
        matches!(
            self.state,
            State::InitiatingRequest
                | State::PendingAcceptance
                | State::Provisioning
                | State::Active
        )
    }

    /// Whether it joins `a` and `b`, either way round.
    fn joins(&self, a: &str, b: &str) -> bool {
        (self.requester.vpc_id == a && self.accepter.vpc_id == b)
            || (self.requester.vpc_id == b && self.accepter.vpc_id == a)
    }

    /// Whether the accepter's VPC is one of `region`'s.
    fn accepter_is_in(&self, region: &Region) -> bool {
        self.accepter.is_in(region)
    }

    fn message(&self, account: &str) -> String {
        match self.state {
            State::InitiatingRequest => format!("Initiating Request to {}", self.accepter.owner_id),
            State::PendingAcceptance => format!("Pending Acceptance by {}", self.accepter.owner_id),
            State::Provisioning => "Provisioning".to_string(),
            State::Active => "Active".to_string(),
            State::Failed => self.failure.clone().unwrap_or_else(|| {
                "Failed due to incorrect VPC-ID, Account ID, or overlapping CIDR range".to_string()
            }),
            State::Rejected => format!("Rejected by {account}"),
            State::Expired => "Expired".to_string(),
            State::Deleting => "Deleting".to_string(),
            State::Deleted => format!("Deleted by {account}"),
        }
    }
}

/// The connection `id`, or the kind's Malformed / NotFound error.
pub fn find<'a>(region: &'a Region, id: &str) -> Result<&'a Peering, ApiError> {
    Kind::VpcPeeringConnection.get(&region.vpc_peerings, id)
}

/// The connection joining the region's VPCs `a` and `b` that a security group reference
/// between them goes through: the active one, else the latest requested (ended ones are kept
/// a while, then forgotten).
pub fn between<'a>(region: &'a Region, a: &str, b: &str) -> Option<&'a Peering> {
    let joining = || {
        region
            .by_vpc
            .of_kind(a, Kind::VpcPeeringConnection.prefix())
            .filter_map(|id| region.vpc_peerings.get(id))
            .filter(|p| p.joins(a, b))
    };
    joining()
        .find(|p| p.state == State::Active)
        .or_else(|| joining().max_by(|x, y| x.created.cmp(&y.created).then(x.id.cmp(&y.id))))
}

/// Whether an active connection joins the region's VPCs `a` and `b`.
pub fn peered(region: &Region, a: &str, b: &str) -> bool {
    between(region, a, b).is_some_and(|p| p.state == State::Active)
}

/// Whether a route to the connection `id` carries traffic (else it is a `blackhole`).
pub fn is_active(region: &Region, id: &str) -> bool {
    region
        .vpc_peerings
        .get(id)
        .is_some_and(|p| p.state == State::Active)
}

/// Checks that a route of a table of `vpc_id` may target the connection `id`: one of the
/// VPC's, not ended.
pub fn check_route_target(region: &Region, vpc_id: &str, id: &str) -> Result<(), ApiError> {
    let p = find(region, id)?;
    if !p.is_live() {
        return Err(Kind::VpcPeeringConnection.not_found(&[id]));
    }
    if p.requester.vpc_id != vpc_id && p.accepter.vpc_id != vpc_id {
        return Err(ApiError::invalid_value(format!(
            "The VPC peering connection {id} does not connect the VPC {vpc_id} of the route \
             table."
        )));
    }
    Ok(())
}

/// Whether the connection `id` keeps its VPC from deletion: an accepted or active one.
pub fn holds_vpc(region: &Region, id: &str) -> bool {
    region
        .vpc_peerings
        .get(id)
        .is_some_and(|p| matches!(p.state, State::Provisioning | State::Active))
}

/// The VPC `vpc_id` is being deleted: its requests still pending are deleted with it.
pub fn vpc_deleted(region: &mut Region, vpc_id: &str) {
    let pending: Vec<String> = region
        .by_vpc
        .of_kind(vpc_id, Kind::VpcPeeringConnection.prefix())
        .filter(|id| {
            region.vpc_peerings.get(*id).is_some_and(|p| {
                matches!(p.state, State::InitiatingRequest | State::PendingAcceptance)
            })
        })
        .cloned()
        .collect();
    for id in pending {
        end(region, &id, State::Deleted);
    }
}

/// Ends the connection `id` in `state` and schedules its purge.
fn end(region: &mut Region, id: &str, state: State) {
    let now = region.clock.now_datetime();
    if let Some(p) = region.vpc_peerings.0.get_mut(id) {
        p.state = state;
        p.ended = Some(now);
    }
    let now = region.clock.now();
    region
        .transitions
        .schedule(now, Subject::VpcPeeringPurge, id);
}

impl Filterable for (&Peering, &Region) {
    const NAMES: &'static [&'static str] = &[
        "accepter-vpc-info.cidr-block",
        "accepter-vpc-info.owner-id",
        "accepter-vpc-info.vpc-id",
        "expiration-time",
        "requester-vpc-info.cidr-block",
        "requester-vpc-info.owner-id",
        "requester-vpc-info.vpc-id",
        "status-code",
        "status-message",
        "vpc-peering-connection-id",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        let (p, region) = *self;
        match name {
            "accepter-vpc-info.cidr-block" => shown_cidrs(region, p, &p.accepter, false),
            "accepter-vpc-info.owner-id" => one(p.accepter.owner_id.clone()),
            "accepter-vpc-info.vpc-id" => one(p.accepter.vpc_id.clone()),
            "expiration-time" => expiration(p)
                .and_then(|t| t.fmt(aws_smithy_types::date_time::Format::DateTime).ok())
                .into_iter()
                .collect(),
            "requester-vpc-info.cidr-block" => shown_cidrs(region, p, &p.requester, true),
            "requester-vpc-info.owner-id" => one(p.requester.owner_id.clone()),
            "requester-vpc-info.vpc-id" => one(p.requester.vpc_id.clone()),
            "status-code" => one(p.state.as_str()),
            "status-message" => one(p.message(&region.account_id)),
            "vpc-peering-connection-id" => one(p.id.clone()),
            _ => Vec::new(),
        }
    }
}

/// When a request not yet accepted expires.
fn expiration(p: &Peering) -> Option<DateTime> {
    matches!(p.state, State::InitiatingRequest | State::PendingAcceptance).then(|| {
        let secs = i64::try_from(ACCEPT_WITHIN.as_secs()).unwrap_or(i64::MAX);
        DateTime::from_secs(p.created.secs().saturating_add(secs))
    })
}

/// The IPv4 ranges of `side`'s VPC as the connection shows them: the requester's from the
/// start, the accepter's while the connection is active; none of a VPC not in this region.
fn shown_cidrs(region: &Region, p: &Peering, side: &Side, requester: bool) -> Vec<String> {
    if !requester && p.state != State::Active {
        return Vec::new();
    }
    if !side.is_in(region) {
        return Vec::new();
    }
    region
        .vpcs
        .get(&side.vpc_id)
        .map(|v| v.cidrs().map(|c| crate::ec2::vpc::cidr_text(&c)).collect())
        .unwrap_or_default()
}

fn render_side(
    region: &Region,
    p: &Peering,
    side: &Side,
    requester: bool,
) -> VpcPeeringConnectionVpcInfo {
    let cidrs = shown_cidrs(region, p, side, requester);
    let ipv6 = (!cidrs.is_empty())
        .then(|| region.vpcs.get(&side.vpc_id))
        .flatten()
        .map(|v| {
            v.ipv6
                .iter()
                .map(|b| Ipv6CidrBlock {
                    ipv6_cidr_block: Some(b.cidr.to_string()),
                })
                .collect::<Vec<_>>()
        })
        .filter(|v| !v.is_empty());
    let active = p.state == State::Active;
    VpcPeeringConnectionVpcInfo {
        cidr_block: cidrs.first().cloned(),
        cidr_block_set: (!cidrs.is_empty()).then(|| {
            cidrs
                .iter()
                .map(|c| CidrBlock {
                    cidr_block: Some(c.clone()),
                })
                .collect()
        }),
        ipv6_cidr_block_set: ipv6,
        owner_id: Some(side.owner_id.clone()),
        peering_options: active.then(|| VpcPeeringConnectionOptionsDescription {
            allow_dns_resolution_from_remote_vpc: Some(side.options.dns_from_remote),
            allow_egress_from_local_classic_link_to_remote_vpc: Some(
                side.options.classic_link_to_remote,
            ),
            allow_egress_from_local_vpc_to_remote_classic_link: Some(
                side.options.local_to_remote_classic_link,
            ),
            ..Default::default()
        }),
        vpc_id: Some(side.vpc_id.clone()),
        region: Some(side.region.clone()),
    }
}

fn render(region: &Region, p: &Peering) -> PeeringOut {
    PeeringOut {
        accepter_vpc_info: Some(render_side(region, p, &p.accepter, false)),
        expiration_time: expiration(p),
        requester_vpc_info: Some(render_side(region, p, &p.requester, true)),
        status: Some(VpcPeeringConnectionStateReason {
            code: Some(p.state),
            message: Some(p.message(&region.account_id)),
        }),
        tags: region.tags.listed(&p.id),
        vpc_peering_connection_id: Some(p.id.clone()),
        ..Default::default()
    }
}

/// `CreateVpcPeeringConnection`: a request from one of the region's VPCs to `PeerVpcId`
/// (of `PeerOwnerId`, this account by default), `initiating-request`.
pub fn create_vpc_peering_connection(
    region: &mut Region,
    input: CreateVpcPeeringConnectionRequest,
) -> Result<CreateVpcPeeringConnectionResult, ApiError> {
    let requester_vpc = Kind::Vpc.get(&region.vpcs, &input.vpc_id)?.id.clone();
    let peer_vpc = input
        .peer_vpc_id
        .clone()
        .filter(|p| !p.is_empty())
        .ok_or_else(|| ApiError::missing_parameter("PeerVpcId"))?;
    Kind::Vpc.check_shape(&peer_vpc)?;
    let peer_owner = match input.peer_owner_id.as_deref() {
        None | Some("") => region.account_id.clone(),
        Some(owner) if owner.len() == 12 && owner.bytes().all(|b| b.is_ascii_digit()) => {
            owner.to_string()
        }
        Some(owner) => {
            return Err(ApiError::invalid_parameter(
                "PeerOwnerId",
                owner,
                "An account ID is 12 digits.",
            ));
        }
    };
    let peer_region = match input.peer_region.as_deref() {
        None | Some("") => region.name.clone(),
        Some(r) if r == region.name => r.to_string(),
        Some(r) => {
            return Err(ApiError::invalid_parameter(
                "PeerRegion",
                r,
                "fakeaws peers VPCs within one region: a connection to a VPC of another \
                 region (inter-Region peering) is not served.",
            ));
        }
    };
    if input
        .requester_peering_connection_options
        .as_ref()
        .is_some_and(|o| {
            o.allow_multipath_resilience == Some(true) || o.multipath_resilience_mode.is_some()
        })
    {
        return Err(ApiError::invalid_value(
            "Multipath resilience is supported only for inter-Region VPC peering connections.",
        ));
    }
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::VpcPeeringConnection,
    )?;
    let mut outstanding = 0;
    for id in region
        .by_vpc
        .of_kind(&requester_vpc, Kind::VpcPeeringConnection.prefix())
    {
        let Some(p) = region.vpc_peerings.get(id) else {
            continue;
        };
        if p.is_live() && p.joins(&requester_vpc, &peer_vpc) {
            return Err(ApiError::new(
                Code::VpcPeeringConnectionAlreadyExists,
                format!(
                    "A VPC peering connection between {requester_vpc} and {peer_vpc} already \
                     exists: {}",
                    p.id
                ),
            ));
        }
        if p.requester.vpc_id == requester_vpc
            && matches!(p.state, State::InitiatingRequest | State::PendingAcceptance)
        {
            outstanding += 1;
        }
    }
    if outstanding >= region.limits.outstanding_peerings_per_vpc {
        return Err(ApiError::new(
            Code::OutstandingVpcPeeringConnectionLimitExceeded,
            format!(
                "The VPC {requester_vpc} has reached its limit of {} outstanding VPC peering \
                 connection requests.",
                region.limits.outstanding_peerings_per_vpc
            ),
        ));
    }
    let id = region.ids.resource("pcx");
    let side = |vpc_id: String, owner_id: String, region_name: String| Side {
        vpc_id,
        owner_id,
        region: region_name,
        options: Options::default(),
    };
    let peering = Peering {
        id: id.clone(),
        requester: side(
            requester_vpc.clone(),
            region.account_id.clone(),
            region.name.clone(),
        ),
        accepter: side(peer_vpc.clone(), peer_owner, peer_region),
        state: State::InitiatingRequest,
        created: region.clock.now_datetime(),
        ended: None,
        failure: None,
    };
    region.tags.insert(&id, tags);
    region.by_vpc.insert(&requester_vpc, &id);
    if peering.accepter_is_in(region) && region.vpcs.contains_key(&peer_vpc) {
        region.by_vpc.insert(&peer_vpc, &id);
    }
    let out = render(region, &peering);
    region.vpc_peerings.0.insert(id.clone(), peering);
    let now = region.clock.now();
    region.transitions.schedule(now, Subject::VpcPeering, &id);
    region
        .transitions
        .schedule(now, Subject::VpcPeeringExpiry, &id);
    Ok(CreateVpcPeeringConnectionResult {
        vpc_peering_connection: Some(out),
    })
}

/// Moves a connection out of `initiating-request`, `provisioning` or `deleting`.
pub fn advance(region: &mut Region, id: &str) {
    let Some(p) = region.vpc_peerings.get(id) else {
        return;
    };
    match p.state {
        State::InitiatingRequest => {
            let asked = region.transitions.take_failure(Subject::VpcPeering);
            let fails = asked.is_some() || (p.accepter_is_in(region) && !peerable(region, p));
            if fails {
                if let Some(p) = region.vpc_peerings.0.get_mut(id) {
                    p.failure = asked.map(|(_, message)| message);
                }
                end(region, id, State::Failed);
            } else if let Some(p) = region.vpc_peerings.0.get_mut(id) {
                p.state = State::PendingAcceptance;
            }
        }
        State::Provisioning => {
            if let Some(p) = region.vpc_peerings.0.get_mut(id) {
                p.state = State::Active;
            }
        }
        State::Deleting => end(region, id, State::Deleted),
        _ => {}
    }
}

/// Whether the accepter's VPC (one of the region's) can be peered with the requester's: it
/// exists, is another VPC, and no IPv4 range of one overlaps a range of the other.
fn peerable(region: &Region, p: &Peering) -> bool {
    let (Some(a), Some(b)) = (
        region.vpcs.get(&p.requester.vpc_id),
        region.vpcs.get(&p.accepter.vpc_id),
    ) else {
        return false;
    };
    a.id != b.id
        && !a.cidrs().any(|x| {
            b.cidrs()
                .any(|y| x.contains(&y.network()) || y.contains(&x.network()))
        })
}

/// A request not accepted in time expires.
pub fn expire(region: &mut Region, id: &str) {
    if region
        .vpc_peerings
        .get(id)
        .is_some_and(|p| matches!(p.state, State::InitiatingRequest | State::PendingAcceptance))
    {
        end(region, id, State::Expired);
    }
}

/// Forgets an ended connection once AWS would no longer list it (checked again later when
/// its time has not come: a failed one goes sooner than the others).
pub fn purge(region: &mut Region, id: &str) {
    let Some(p) = region.vpc_peerings.get(id) else {
        return;
    };
    let Some(ended) = p.ended else {
        return;
    };
    let kept = if p.state == State::Failed {
        FAILED_KEPT
    } else {
        ENDED_KEPT
    };
    let now = region.clock.now_datetime();
    let elapsed = u64::try_from(now.secs().saturating_sub(ended.secs())).unwrap_or(0);
    if elapsed < kept.as_secs() {
        let now = region.clock.now();
        region
            .transitions
            .schedule(now, Subject::VpcPeeringPurge, id);
        return;
    }
    let vpcs = [p.requester.vpc_id.clone(), p.accepter.vpc_id.clone()];
    region.vpc_peerings.0.remove(id);
    for vpc in vpcs {
        region.by_vpc.remove(&vpc, id);
    }
    region.tags.remove_resource(id);
}

fn transition_error(id: &str, from: State, to: &str) -> ApiError {
    ApiError::new(
        Code::InvalidStateTransition,
        format!(
            "Invalid state transition for {id}, attempted to transition from {} to {to}",
            from.as_str()
        ),
    )
}

/// The connection `id`, pending acceptance by this account, for `verb` (`accept`,
/// `reject`) to take it to `to`; else `OperationNotPermitted` (another account's VPC accepts)
/// or `InvalidStateTransition`.
fn pending_here<'a>(
    region: &'a Region,
    id: &str,
    verb: &str,
    to: &str,
) -> Result<&'a Peering, ApiError> {
    let p = find(region, id)?;
    if !p.accepter_is_in(region) {
        return Err(ApiError::new(
            Code::OperationNotPermitted,
            format!(
                "User {} cannot {verb} peering {id}: the accepter VPC {} is owned by {}",
                region.account_id, p.accepter.vpc_id, p.accepter.owner_id
            ),
        ));
    }
    if p.state != State::PendingAcceptance {
        return Err(transition_error(id, p.state, to));
    }
    Ok(p)
}

/// `AcceptVpcPeeringConnection`: a request pending acceptance by this account, to one of
/// the region's VPCs, goes `provisioning`, then `active`.
pub fn accept_vpc_peering_connection(
    region: &mut Region,
    input: AcceptVpcPeeringConnectionRequest,
) -> Result<AcceptVpcPeeringConnectionResult, ApiError> {
    let id = input.vpc_peering_connection_id;
    let p = pending_here(region, &id, "accept", "provisioning")?;
    let limit = region.limits.active_peerings_per_vpc;
    for vpc in [&p.requester.vpc_id, &p.accepter.vpc_id] {
        let active = region
            .by_vpc
            .of_kind(vpc, Kind::VpcPeeringConnection.prefix())
            .filter(|other| holds_vpc(region, other))
            .count();
        if active >= limit {
            return Err(ApiError::new(
                Code::ActiveVpcPeeringConnectionPerVpcLimitExceeded,
                format!(
                    "The VPC {vpc} has reached its limit of {limit} active VPC peering connections."
                ),
            ));
        }
    }
    if let Some(p) = region.vpc_peerings.0.get_mut(&id) {
        p.state = State::Provisioning;
    }
    let now = region.clock.now();
    region.transitions.schedule(now, Subject::VpcPeering, &id);
    let p = find(region, &id)?;
    Ok(AcceptVpcPeeringConnectionResult {
        vpc_peering_connection: Some(render(region, p)),
    })
}

/// `RejectVpcPeeringConnection`: a request pending acceptance by this account is
/// `rejected`.
pub fn reject_vpc_peering_connection(
    region: &mut Region,
    input: RejectVpcPeeringConnectionRequest,
) -> Result<RejectVpcPeeringConnectionResult, ApiError> {
    let id = input.vpc_peering_connection_id;
    pending_here(region, &id, "reject", "rejected")?;
    end(region, &id, State::Rejected);
    Ok(RejectVpcPeeringConnectionResult {
        r#return: Some(true),
    })
}

/// `DeleteVpcPeeringConnection`: a request still pending, or an accepted connection, goes
/// `deleting`, then `deleted`.
pub fn delete_vpc_peering_connection(
    region: &mut Region,
    input: DeleteVpcPeeringConnectionRequest,
) -> Result<DeleteVpcPeeringConnectionResult, ApiError> {
    let id = input.vpc_peering_connection_id;
    let p = find(region, &id)?;
    match p.state {
        State::InitiatingRequest
        | State::PendingAcceptance
        | State::Provisioning
        | State::Active => {
            if let Some(p) = region.vpc_peerings.0.get_mut(&id) {
                p.state = State::Deleting;
            }
            let now = region.clock.now();
            region.transitions.schedule(now, Subject::VpcPeering, &id);
        }
        // Deleting again changes nothing.
        State::Deleting => {}
        other => return Err(transition_error(&id, other, "deleting")),
    }
    Ok(DeleteVpcPeeringConnectionResult {
        r#return: Some(true),
    })
}

/// `DescribeVpcPeeringConnections`.
pub fn describe_vpc_peering_connections(
    region: &mut Region,
    input: DescribeVpcPeeringConnectionsRequest,
) -> Result<DescribeVpcPeeringConnectionsResult, ApiError> {
    let filters = Filters::parse::<(&Peering, &Region)>(input.filters)?;
    let region = &*region;
    let found = Kind::VpcPeeringConnection.describe(
        &region.consistency,
        &region.vpc_peerings,
        input.vpc_peering_connection_ids.as_deref(),
        region.candidates(Kind::VpcPeeringConnection, &filters),
        |p| filters.matches(&(p, region), region.tags.get(&p.id)),
    )?;
    let (items, next) = page::page(
        found,
        |p| p.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeVpcPeeringConnectionsResult {
        vpc_peering_connections: Some(items.into_iter().map(|p| render(region, p)).collect()),
        next_token: next,
    })
}

/// Applies a side's options request to its options.
fn apply(options: &mut Options, asked: &PeeringConnectionOptionsRequest) -> Result<(), ApiError> {
    if asked.allow_multipath_resilience == Some(true) || asked.multipath_resilience_mode.is_some() {
        return Err(ApiError::invalid_value(
            "Multipath resilience is supported only for inter-Region VPC peering connections.",
        ));
    }
    if let Some(v) = asked.allow_dns_resolution_from_remote_vpc {
        options.dns_from_remote = v;
    }
    if let Some(v) = asked.allow_egress_from_local_classic_link_to_remote_vpc {
        options.classic_link_to_remote = v;
    }
    if let Some(v) = asked.allow_egress_from_local_vpc_to_remote_classic_link {
        options.local_to_remote_classic_link = v;
    }
    Ok(())
}

fn shown_options(options: &Options) -> PeeringConnectionOptions {
    PeeringConnectionOptions {
        allow_dns_resolution_from_remote_vpc: Some(options.dns_from_remote),
        allow_egress_from_local_classic_link_to_remote_vpc: Some(options.classic_link_to_remote),
        allow_egress_from_local_vpc_to_remote_classic_link: Some(
            options.local_to_remote_classic_link,
        ),
        ..Default::default()
    }
}

/// `ModifyVpcPeeringConnectionOptions`: an active connection's options, for either side (the
/// account owns both here); answers each side's options as they now are.
pub fn modify_vpc_peering_connection_options(
    region: &mut Region,
    input: ModifyVpcPeeringConnectionOptionsRequest,
) -> Result<ModifyVpcPeeringConnectionOptionsResult, ApiError> {
    let id = input.vpc_peering_connection_id;
    let p = find(region, &id)?;
    if p.state != State::Active {
        return Err(ApiError::new(
            Code::OperationNotPermitted,
            format!(
                "Peering {id} is not active. Peering options can be added only to active \
                 peerings."
            ),
        ));
    }
    let (requester, accepter) = (
        input.requester_peering_connection_options,
        input.accepter_peering_connection_options,
    );
    if requester.is_none() && accepter.is_none() {
        return Err(ApiError::missing_parameter(
            "RequesterPeeringConnectionOptions or AccepterPeeringConnectionOptions",
        ));
    }
    if accepter.is_some() && !p.accepter_is_in(region) {
        return Err(ApiError::new(
            Code::OperationNotPermitted,
            format!(
                "User {} cannot modify the accepter options of peering {id}: the accepter VPC \
                 is owned by {}",
                region.account_id, p.accepter.owner_id
            ),
        ));
    }
    // Both checked before either side changes.
    let mut changed = p.clone();
    if let Some(asked) = &requester {
        apply(&mut changed.requester.options, asked)?;
    }
    if let Some(asked) = &accepter {
        apply(&mut changed.accepter.options, asked)?;
    }
    let out = ModifyVpcPeeringConnectionOptionsResult {
        requester_peering_connection_options: requester
            .is_some()
            .then(|| shown_options(&changed.requester.options)),
        accepter_peering_connection_options: accepter
            .is_some()
            .then(|| shown_options(&changed.accepter.options)),
    };
    region.vpc_peerings.0.insert(id, changed);
    Ok(out)
}
