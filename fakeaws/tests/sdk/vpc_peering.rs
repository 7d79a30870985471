//! VPC peering connections through the SDK, as Terraform's `aws_vpc_peering_connection` and
//! the aws CLI drive them: a request `initiating-request`, then `pending-acceptance`; accepted,
//! `provisioning`, then `active`; the ranges and options an active connection shows; routes to
//! it; the VPC it holds; deletion (`deleting`, `deleted`), rejection, failure (overlapping
//! ranges), expiry, how long ended connections stay listed; the error codes AWS answers.

use std::time::Duration;

use aws_sdk_ec2::client::Waiters;
use aws_sdk_ec2::types::{
    PeeringConnectionOptionsRequest, ResourceType, VpcPeeringConnection,
    VpcPeeringConnectionStateReasonCode as Code,
};

use crate::{
    advance, code, code_and_message, empty_fake, filter, group, route_table, tag_spec, vpc,
};

const ACCOUNT: &str = "123456789012";

async fn request(ec2: &aws_sdk_ec2::Client, from: &str, to: &str) -> VpcPeeringConnection {
    tagged_request(ec2, from, to, &[]).await
}

/// A request from `from` to `to` with `tags` (none: no tag specification).
async fn tagged_request(
    ec2: &aws_sdk_ec2::Client,
    from: &str,
    to: &str,
    tags: &[(&str, &str)],
) -> VpcPeeringConnection {
    ec2.create_vpc_peering_connection()
        .vpc_id(from)
        .peer_vpc_id(to)
        .set_tag_specifications(
            (!tags.is_empty()).then(|| vec![tag_spec(ResourceType::VpcPeeringConnection, tags)]),
        )
        .send()
        .await
        .unwrap()
        .vpc_peering_connection()
        .unwrap()
        .clone()
}

async fn peering(ec2: &aws_sdk_ec2::Client, id: &str) -> VpcPeeringConnection {
    let out = ec2
        .describe_vpc_peering_connections()
        .vpc_peering_connection_ids(id)
        .send()
        .await
        .unwrap();
    let [p] = out.vpc_peering_connections() else {
        panic!("one connection: {out:?}");
    };
    p.clone()
}

fn status(p: &VpcPeeringConnection) -> (Code, String) {
    let s = p.status().unwrap();
    (s.code().unwrap().clone(), s.message().unwrap().to_string())
}

#[tokio::test]
async fn a_request_is_accepted_routed_to_and_deleted() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let a = vpc(&ec2, "10.0.0.0/16").await;
    let b = vpc(&ec2, "10.1.0.0/16").await;

    let made = &tagged_request(&ec2, &a, &b, &[("Name", "a-to-b")]).await;
    let id = made.vpc_peering_connection_id().unwrap().to_string();
    assert!(id.starts_with("pcx-"), "{id}");
    assert_eq!(
        status(made),
        (
            Code::InitiatingRequest,
            format!("Initiating Request to {ACCOUNT}")
        )
    );
    assert_eq!(made.tags()[0].value(), Some("a-to-b"));
    // A week to accept it.
    let created = fake.fake().with_region("us-east-1", |r| r.clock.now());
    let expires = made.expiration_time().unwrap().secs();
    let created = created
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert_eq!(expires - i64::try_from(created).unwrap(), 7 * 24 * 3600);
    // The requester's range from the start, the accepter's once active.
    let (requester, accepter) = (
        made.requester_vpc_info().unwrap(),
        made.accepter_vpc_info().unwrap(),
    );
    assert_eq!(requester.vpc_id(), Some(a.as_str()));
    assert_eq!(requester.cidr_block(), Some("10.0.0.0/16"));
    assert_eq!(requester.owner_id(), Some(ACCOUNT));
    assert_eq!(requester.region(), Some("us-east-1"));
    assert_eq!(accepter.vpc_id(), Some(b.as_str()));
    assert_eq!(accepter.owner_id(), Some(ACCOUNT));
    assert_eq!(accepter.cidr_block(), None);

    let pending = peering(&ec2, &id).await;
    assert_eq!(
        status(&pending),
        (
            Code::PendingAcceptance,
            format!("Pending Acceptance by {ACCOUNT}")
        )
    );
    // Options only on an active connection: DNS resolution from the remote VPC, for the
    // requester's side.
    let dns_for_requester = || {
        ec2.modify_vpc_peering_connection_options()
            .vpc_peering_connection_id(&id)
            .requester_peering_connection_options(
                PeeringConnectionOptionsRequest::builder()
                    .allow_dns_resolution_from_remote_vpc(true)
                    .build(),
            )
            .send()
    };
    let (got, message) = code_and_message(dns_for_requester().await);
    assert_eq!(got, "OperationNotPermitted");
    assert_eq!(
        message,
        format!(
            "Peering {id} is not active. Peering options can be added only to active peerings."
        )
    );

    let accepted = ec2
        .accept_vpc_peering_connection()
        .vpc_peering_connection_id(&id)
        .send()
        .await
        .unwrap();
    let accepted = accepted.vpc_peering_connection().unwrap();
    assert_eq!(status(accepted).0, Code::Provisioning);
    let on = peering(&ec2, &id).await;
    assert_eq!(status(&on), (Code::Active, "Active".to_string()));
    assert_eq!(on.expiration_time(), None);
    let accepter = on.accepter_vpc_info().unwrap();
    assert_eq!(accepter.cidr_block(), Some("10.1.0.0/16"));
    assert_eq!(
        accepter.cidr_block_set()[0].cidr_block(),
        Some("10.1.0.0/16")
    );
    let options = accepter.peering_options().unwrap();
    assert_eq!(options.allow_dns_resolution_from_remote_vpc(), Some(false));

    // Now taken.
    let modified = dns_for_requester().await.unwrap();
    assert_eq!(
        modified
            .requester_peering_connection_options()
            .unwrap()
            .allow_dns_resolution_from_remote_vpc(),
        Some(true)
    );
    assert!(modified.accepter_peering_connection_options().is_none());
    let on = peering(&ec2, &id).await;
    let dns = |info: Option<&aws_sdk_ec2::types::VpcPeeringConnectionVpcInfo>| {
        info.unwrap()
            .peering_options()
            .unwrap()
            .allow_dns_resolution_from_remote_vpc()
    };
    assert_eq!(dns(on.requester_vpc_info()), Some(true));
    assert_eq!(dns(on.accepter_vpc_info()), Some(false));

    // A route of each side to the other, through the connection.
    let (ta, tb) = (route_table(&ec2, &a).await, route_table(&ec2, &b).await);
    for (table, to) in [(&ta, "10.1.0.0/16"), (&tb, "10.0.0.0/16")] {
        ec2.create_route()
            .route_table_id(table)
            .destination_cidr_block(to)
            .vpc_peering_connection_id(&id)
            .send()
            .await
            .unwrap();
    }
    let route_state = |ec2: aws_sdk_ec2::Client, table: String| async move {
        let out = ec2
            .describe_route_tables()
            .route_table_ids(table)
            .send()
            .await
            .unwrap();
        let route = out.route_tables()[0]
            .routes()
            .iter()
            .find(|r| r.vpc_peering_connection_id().is_some())
            .unwrap()
            .clone();
        (
            route.vpc_peering_connection_id().unwrap().to_string(),
            route.state().unwrap().as_str().to_string(),
        )
    };
    assert_eq!(
        route_state(ec2.clone(), ta.clone()).await,
        (id.clone(), "active".to_string())
    );
    let routed = ec2
        .describe_route_tables()
        .filters(filter("route.vpc-peering-connection-id", &[&id]))
        .send()
        .await
        .unwrap();
    let mut tables: Vec<&str> = routed
        .route_tables()
        .iter()
        .filter_map(|t| t.route_table_id())
        .collect();
    tables.sort_unstable();
    let mut both = vec![ta.as_str(), tb.as_str()];
    both.sort_unstable();
    assert_eq!(tables, both);

    // An active connection holds both VPCs.
    for v in [&a, &b] {
        let (got, message) = code_and_message(ec2.delete_vpc().vpc_id(v).send().await);
        assert_eq!(got, "DependencyViolation");
        assert_eq!(
            message,
            format!("The vpc '{v}' has dependencies and cannot be deleted.")
        );
    }

    let deleted = ec2
        .delete_vpc_peering_connection()
        .vpc_peering_connection_id(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.r#return(), Some(true));
    // `deleting` for the call, `deleted` at the clock's next step, as the SDK's waiter wants.
    ec2.wait_until_vpc_peering_connection_deleted()
        .vpc_peering_connection_ids(&id)
        .wait(Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(
        status(&peering(&ec2, &id).await),
        (Code::Deleted, format!("Deleted by {ACCOUNT}"))
    );
    assert_eq!(
        route_state(ec2.clone(), ta.clone()).await,
        (id.clone(), "blackhole".to_string())
    );
    // Deleting an ended connection is a transition AWS refuses; a route to it too.
    let (got, message) = code_and_message(
        ec2.delete_vpc_peering_connection()
            .vpc_peering_connection_id(&id)
            .send()
            .await,
    );
    assert_eq!(got, "InvalidStateTransition");
    assert_eq!(
        message,
        format!(
            "Invalid state transition for {id}, attempted to transition from deleted to deleting"
        )
    );
    let routed_again = ec2
        .create_route()
        .route_table_id(&ta)
        .destination_cidr_block("10.9.0.0/16")
        .vpc_peering_connection_id(&id)
        .send()
        .await;
    assert_eq!(code(routed_again), "InvalidVpcPeeringConnectionID.NotFound");
    // The VPCs go once their routes do (the blackhole route's table is not the main one).
    for table in [&ta, &tb] {
        ec2.delete_route_table()
            .route_table_id(table)
            .send()
            .await
            .unwrap();
    }
    for v in [&a, &b] {
        ec2.delete_vpc().vpc_id(v).send().await.unwrap();
    }
    // Listed two days after its deletion, then gone.
    advance(&fake, 2 * 24 * 3600 - 60);
    assert_eq!(status(&peering(&ec2, &id).await).0, Code::Deleted);
    advance(&fake, 2 * 3600);
    let gone = ec2
        .describe_vpc_peering_connections()
        .vpc_peering_connection_ids(&id)
        .send()
        .await;
    assert_eq!(
        code_and_message(gone),
        (
            "InvalidVpcPeeringConnectionID.NotFound".to_string(),
            format!("The vpcPeeringConnection ID '{id}' does not exist")
        )
    );
}

#[tokio::test]
async fn overlapping_or_missing_peers_fail_and_go_after_two_hours() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let a = vpc(&ec2, "10.0.0.0/16").await;
    let inside = vpc(&ec2, "10.0.128.0/20").await;
    let failed_message = "Failed due to incorrect VPC-ID, Account ID, or overlapping CIDR range";
    let mut failed = Vec::new();
    for to in [inside.as_str(), a.as_str(), "vpc-0123456789abcdef0"] {
        let p = request(&ec2, &a, to).await;
        assert_eq!(status(&p).0, Code::InitiatingRequest);
        let id = p.vpc_peering_connection_id().unwrap().to_string();
        assert_eq!(
            status(&peering(&ec2, &id).await),
            (Code::Failed, failed_message.to_string()),
            "to {to}"
        );
        failed.push(id);
    }
    // A failed request can be neither accepted nor deleted.
    let (got, message) = code_and_message(
        ec2.accept_vpc_peering_connection()
            .vpc_peering_connection_id(&failed[0])
            .send()
            .await,
    );
    assert_eq!(got, "InvalidStateTransition");
    assert!(message.contains("from failed to provisioning"), "{message}");
    let deleting = ec2
        .delete_vpc_peering_connection()
        .vpc_peering_connection_id(&failed[0])
        .send()
        .await;
    assert_eq!(code(deleting), "InvalidStateTransition");
    // It does not hold its VPC.
    ec2.delete_vpc().vpc_id(&inside).send().await.unwrap();
    // Listed two hours, then gone.
    advance(&fake, 3600);
    let listed = ec2
        .describe_vpc_peering_connections()
        .filters(filter("status-code", &["failed"]))
        .send()
        .await
        .unwrap();
    assert_eq!(listed.vpc_peering_connections().len(), 3);
    advance(&fake, 3601);
    let listed = ec2.describe_vpc_peering_connections().send().await.unwrap();
    assert!(listed.vpc_peering_connections().is_empty(), "{listed:?}");
}

#[tokio::test]
async fn a_rejected_request_and_an_expired_one_end_as_aws_ends_them() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let a = vpc(&ec2, "10.0.0.0/16").await;
    let b = vpc(&ec2, "10.1.0.0/16").await;
    let c = vpc(&ec2, "10.2.0.0/16").await;
    let to_b = request(&ec2, &a, &b).await;
    let to_b = to_b.vpc_peering_connection_id().unwrap();
    let to_c = request(&ec2, &a, &c).await;
    let to_c = to_c.vpc_peering_connection_id().unwrap();

    let rejected = ec2
        .reject_vpc_peering_connection()
        .vpc_peering_connection_id(to_b)
        .send()
        .await
        .unwrap();
    assert_eq!(rejected.r#return(), Some(true));
    assert_eq!(
        status(&peering(&ec2, to_b).await),
        (Code::Rejected, format!("Rejected by {ACCOUNT}"))
    );
    // AWS deletes a rejected connection itself.
    let (got, message) = code_and_message(
        ec2.delete_vpc_peering_connection()
            .vpc_peering_connection_id(to_b)
            .send()
            .await,
    );
    assert_eq!(got, "InvalidStateTransition");
    assert_eq!(
        message,
        format!(
            "Invalid state transition for {to_b}, attempted to transition from rejected to deleting"
        )
    );
    // Once rejected, the two VPCs may be asked again.
    let again = request(&ec2, &b, &a).await;
    let again = again.vpc_peering_connection_id().unwrap();

    // Not accepted within a week: expired.
    advance(&fake, 7 * 24 * 3600);
    for id in [to_c, again] {
        let p = peering(&ec2, id).await;
        assert_eq!(status(&p), (Code::Expired, "Expired".to_string()));
        assert_eq!(p.expiration_time(), None);
    }
    let accepting = ec2
        .accept_vpc_peering_connection()
        .vpc_peering_connection_id(to_c)
        .send()
        .await;
    assert_eq!(code(accepting), "InvalidStateTransition");
}

#[tokio::test]
async fn requests_to_other_accounts_wait_and_go_with_their_vpc() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let a = vpc(&ec2, "10.0.0.0/16").await;
    let made = ec2
        .create_vpc_peering_connection()
        .vpc_id(&a)
        .peer_vpc_id("vpc-0a1b2c3d4e5f60718")
        .peer_owner_id("210987654321")
        .send()
        .await
        .unwrap();
    let id = made
        .vpc_peering_connection()
        .unwrap()
        .vpc_peering_connection_id()
        .unwrap()
        .to_string();
    let p = peering(&ec2, &id).await;
    assert_eq!(
        status(&p),
        (
            Code::PendingAcceptance,
            "Pending Acceptance by 210987654321".to_string()
        )
    );
    assert_eq!(
        p.accepter_vpc_info().unwrap().owner_id(),
        Some("210987654321")
    );
    // Only the accepter's owner accepts or rejects.
    for result in [
        code(
            ec2.accept_vpc_peering_connection()
                .vpc_peering_connection_id(&id)
                .send()
                .await,
        ),
        code(
            ec2.reject_vpc_peering_connection()
                .vpc_peering_connection_id(&id)
                .send()
                .await,
        ),
    ] {
        assert_eq!(result, "OperationNotPermitted");
    }
    // The requester's VPC deleted before acceptance deletes the request.
    ec2.delete_vpc().vpc_id(&a).send().await.unwrap();
    assert_eq!(status(&peering(&ec2, &id).await).0, Code::Deleted);
}

#[tokio::test]
async fn connections_are_found_by_filter_and_paged() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let hub = vpc(&ec2, "10.0.0.0/16").await;
    let mut spokes = Vec::new();
    for i in 1..=4 {
        spokes.push(vpc(&ec2, &format!("10.{i}.0.0/16")).await);
    }
    let mut ids = Vec::new();
    for spoke in &spokes {
        let p = tagged_request(&ec2, &hub, spoke, &[("Role", "spoke")]).await;
        ids.push(p.vpc_peering_connection_id().unwrap().to_string());
    }
    ec2.accept_vpc_peering_connection()
        .vpc_peering_connection_id(&ids[0])
        .send()
        .await
        .unwrap();
    let found = |filters: Vec<aws_sdk_ec2::types::Filter>| {
        let ec2 = ec2.clone();
        async move {
            let out = ec2
                .describe_vpc_peering_connections()
                .set_filters(Some(filters))
                .send()
                .await
                .unwrap();
            let mut ids: Vec<String> = out
                .vpc_peering_connections()
                .iter()
                .map(|p| p.vpc_peering_connection_id().unwrap().to_string())
                .collect();
            ids.sort_unstable();
            ids
        }
    };
    let mut all = ids.clone();
    all.sort_unstable();
    assert_eq!(
        found(vec![filter("requester-vpc-info.vpc-id", &[&hub])]).await,
        all
    );
    assert_eq!(
        found(vec![filter("accepter-vpc-info.vpc-id", &[&spokes[2]])]).await,
        [ids[2].clone()]
    );
    assert_eq!(
        found(vec![filter("status-code", &["active"])]).await,
        [ids[0].clone()]
    );
    assert_eq!(
        found(vec![filter("status-code", &["pending-acceptance"])])
            .await
            .len(),
        3
    );
    // The accepter's range is known to the filter once active, as it is shown.
    assert_eq!(
        found(vec![filter(
            "accepter-vpc-info.cidr-block",
            &["10.1.0.0/16"]
        )])
        .await,
        [ids[0].clone()]
    );
    assert!(
        found(vec![filter(
            "accepter-vpc-info.cidr-block",
            &["10.2.0.0/16"]
        )])
        .await
        .is_empty()
    );
    assert_eq!(found(vec![filter("tag:Role", &["spoke"])]).await, all);
    assert_eq!(
        found(vec![filter("status-message", &["Active"])]).await,
        [ids[0].clone()]
    );
    // Pages of the model's smallest size.
    let mut token = None;
    let mut paged = Vec::new();
    loop {
        let out = ec2
            .describe_vpc_peering_connections()
            .max_results(5)
            .set_next_token(token)
            .send()
            .await
            .unwrap();
        paged.extend(
            out.vpc_peering_connections()
                .iter()
                .map(|p| p.vpc_peering_connection_id().unwrap().to_string()),
        );
        token = out.next_token().map(str::to_string);
        if token.is_none() {
            break;
        }
    }
    assert_eq!(paged, all);
}

#[tokio::test]
async fn bad_requests_get_aws_codes_and_change_nothing() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let a = vpc(&ec2, "10.0.0.0/16").await;
    let b = vpc(&ec2, "10.1.0.0/16").await;
    let first = request(&ec2, &a, &b).await;
    let first = first.vpc_peering_connection_id().unwrap();

    // The same two VPCs again, either way round.
    for (from, to) in [(&a, &b), (&b, &a)] {
        let (got, message) = code_and_message(
            ec2.create_vpc_peering_connection()
                .vpc_id(from)
                .peer_vpc_id(to)
                .send()
                .await,
        );
        assert_eq!(got, "VpcPeeringConnectionAlreadyExists");
        assert!(message.contains(first), "{message}");
    }
    let create = |vpc: &str, peer: Option<&str>, owner: Option<&str>, peer_region: Option<&str>| {
        ec2.create_vpc_peering_connection()
            .vpc_id(vpc)
            .set_peer_vpc_id(peer.map(str::to_string))
            .set_peer_owner_id(owner.map(str::to_string))
            .set_peer_region(peer_region.map(str::to_string))
            .send()
    };
    let unknown = "vpc-0123456789abcdef0";
    for (vpc, peer, owner, peer_region, expected) in [
        (a.as_str(), None, None, None, "MissingParameter"),
        (
            unknown,
            Some(b.as_str()),
            None,
            None,
            "InvalidVpcID.NotFound",
        ),
        (
            a.as_str(),
            Some("subnet-1234"),
            None,
            None,
            "InvalidVpcID.Malformed",
        ),
        (
            a.as_str(),
            Some(b.as_str()),
            Some("12345"),
            None,
            "InvalidParameterValue",
        ),
        (
            a.as_str(),
            Some(b.as_str()),
            None,
            Some("eu-west-1"),
            "InvalidParameterValue",
        ),
    ] {
        let got = code(create(vpc, peer, owner, peer_region).await);
        assert_eq!(
            got, expected,
            "{vpc} to {peer:?} of {owner:?} in {peer_region:?}"
        );
    }

    for id in ["pcx-zz", "vpc-12345678"] {
        let accepted = ec2
            .accept_vpc_peering_connection()
            .vpc_peering_connection_id(id)
            .send()
            .await;
        assert_eq!(code(accepted), "InvalidVpcPeeringConnectionId.Malformed");
    }
    let (got, message) = code_and_message(
        ec2.delete_vpc_peering_connection()
            .vpc_peering_connection_id("pcx-0123456789abcdef0")
            .send()
            .await,
    );
    assert_eq!(got, "InvalidVpcPeeringConnectionID.NotFound");
    assert_eq!(
        message,
        "The vpcPeeringConnection ID 'pcx-0123456789abcdef0' does not exist"
    );
    // A route of a VPC the connection does not join.
    let c = vpc(&ec2, "10.2.0.0/16").await;
    let table = route_table(&ec2, &c).await;
    let foreign = ec2
        .create_route()
        .route_table_id(&table)
        .destination_cidr_block("10.1.0.0/16")
        .vpc_peering_connection_id(first)
        .send()
        .await;
    assert_eq!(code(foreign), "InvalidParameterValue");

    // Nothing of the refused calls was made.
    let listed = ec2.describe_vpc_peering_connections().send().await.unwrap();
    assert_eq!(listed.vpc_peering_connections().len(), 1);
    let routes = ec2
        .describe_route_tables()
        .route_table_ids(&table)
        .send()
        .await
        .unwrap();
    assert_eq!(routes.route_tables()[0].routes().len(), 1);
}

#[tokio::test]
async fn the_quotas_on_requests_and_active_connections_hold() {
    let mut limits = fakeaws::region::Limits::default();
    limits.set("outstanding-peerings-per-vpc", 2).unwrap();
    limits.set("active-peerings-per-vpc", 1).unwrap();
    limits.set("vpcs", 10).unwrap();
    let fake = fakeaws::spawn_with(fakeaws::Config {
        default_vpc: false,
        limits,
        ..Default::default()
    })
    .await
    .unwrap();
    let ec2 = fake.ec2_client();
    let hub = vpc(&ec2, "10.0.0.0/16").await;
    let mut spokes = Vec::new();
    for i in 1..=3 {
        spokes.push(vpc(&ec2, &format!("10.{i}.0.0/16")).await);
    }
    let one = request(&ec2, &hub, &spokes[0]).await;
    let two = request(&ec2, &hub, &spokes[1]).await;
    let third = ec2
        .create_vpc_peering_connection()
        .vpc_id(&hub)
        .peer_vpc_id(&spokes[2])
        .send()
        .await;
    assert_eq!(code(third), "OutstandingVpcPeeringConnectionLimitExceeded");
    ec2.accept_vpc_peering_connection()
        .vpc_peering_connection_id(one.vpc_peering_connection_id().unwrap())
        .send()
        .await
        .unwrap();
    let second_active = ec2
        .accept_vpc_peering_connection()
        .vpc_peering_connection_id(two.vpc_peering_connection_id().unwrap())
        .send()
        .await;
    assert_eq!(
        code(second_active),
        "ActiveVpcPeeringConnectionPerVpcLimitExceeded"
    );
    assert_eq!(
        status(&peering(&ec2, two.vpc_peering_connection_id().unwrap()).await).0,
        Code::PendingAcceptance
    );
}

#[tokio::test]
async fn a_peer_vpcs_groups_are_referenced_while_the_connection_is_active_then_go_stale() {
    use aws_sdk_ec2::types::{IpPermission, UserIdGroupPair};
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let a = vpc(&ec2, "10.0.0.0/16").await;
    let b = vpc(&ec2, "10.1.0.0/16").await;
    let (ga, gb) = (group(&ec2, &a, "app").await, group(&ec2, &b, "db").await);
    let from_gb = IpPermission::builder()
        .ip_protocol("tcp")
        .from_port(5432)
        .to_port(5432)
        .user_id_group_pairs(UserIdGroupPair::builder().group_id(&gb).build())
        .build();
    let authorize = || {
        ec2.authorize_security_group_ingress()
            .group_id(&ga)
            .ip_permissions(from_gb.clone())
            .send()
    };
    // Not before the two VPCs are peered.
    assert_eq!(code(authorize().await), "InvalidGroup.NotFound");
    let pcx = request(&ec2, &a, &b).await;
    let pcx = pcx.vpc_peering_connection_id().unwrap().to_string();
    ec2.accept_vpc_peering_connection()
        .vpc_peering_connection_id(&pcx)
        .send()
        .await
        .unwrap();
    let made = authorize().await.unwrap();
    let info = made.security_group_rules()[0]
        .referenced_group_info()
        .unwrap();
    assert_eq!(info.group_id(), Some(gb.as_str()));
    assert_eq!(info.vpc_id(), Some(b.as_str()));
    assert_eq!(info.vpc_peering_connection_id(), Some(pcx.as_str()));
    assert_eq!(info.peering_status(), Some("active"));
    let pair = |ec2: aws_sdk_ec2::Client, ga: String| async move {
        let out = ec2
            .describe_security_groups()
            .group_ids(ga)
            .send()
            .await
            .unwrap();
        out.security_groups()[0].ip_permissions()[0].user_id_group_pairs()[0].clone()
    };
    let described = pair(ec2.clone(), ga.clone()).await;
    assert_eq!(described.vpc_id(), Some(b.as_str()));
    assert_eq!(described.vpc_peering_connection_id(), Some(pcx.as_str()));
    assert_eq!(described.peering_status(), Some("active"));
    let references = ec2
        .describe_security_group_references()
        .group_id(&gb)
        .send()
        .await
        .unwrap();
    let [reference] = references.security_group_reference_set() else {
        panic!("one reference: {references:?}");
    };
    assert_eq!(reference.group_id(), Some(gb.as_str()));
    assert_eq!(reference.referencing_vpc_id(), Some(a.as_str()));
    assert_eq!(reference.vpc_peering_connection_id(), Some(pcx.as_str()));
    let stale = |ec2: aws_sdk_ec2::Client, vpc: String| async move {
        ec2.describe_stale_security_groups()
            .vpc_id(vpc)
            .send()
            .await
            .unwrap()
            .stale_security_group_set()
            .to_vec()
    };
    assert!(stale(ec2.clone(), a.clone()).await.is_empty());

    // The connection deleted, the rule stays, stale.
    ec2.delete_vpc_peering_connection()
        .vpc_peering_connection_id(&pcx)
        .send()
        .await
        .unwrap();
    let found = stale(ec2.clone(), a.clone()).await;
    let [g] = found.as_slice() else {
        panic!("one stale group: {found:?}");
    };
    assert_eq!(g.group_id(), Some(ga.as_str()));
    assert_eq!(g.group_name(), Some("app"));
    assert_eq!(g.vpc_id(), Some(a.as_str()));
    assert!(g.stale_ip_permissions_egress().is_empty());
    let [permission] = g.stale_ip_permissions() else {
        panic!("one stale permission: {g:?}");
    };
    assert_eq!(permission.from_port(), Some(5432));
    let stale_pair = &permission.user_id_group_pairs()[0];
    assert_eq!(stale_pair.group_id(), Some(gb.as_str()));
    assert_eq!(stale_pair.peering_status(), Some("deleted"));
    // A group referenced only from a peer VPC can be deleted; the reference stays stale.
    ec2.delete_security_group()
        .group_id(&gb)
        .send()
        .await
        .unwrap();
    assert_eq!(stale(ec2.clone(), a.clone()).await.len(), 1);
    // A stale rule is revoked by naming it as it was made.
    ec2.revoke_security_group_ingress()
        .group_id(&ga)
        .ip_permissions(from_gb.clone())
        .send()
        .await
        .unwrap();
    assert!(stale(ec2.clone(), a.clone()).await.is_empty());
    let unknown = ec2
        .describe_stale_security_groups()
        .vpc_id("vpc-0123456789abcdef0")
        .send()
        .await;
    assert_eq!(code(unknown), "InvalidVpcID.NotFound");
    let gone = ec2
        .describe_security_group_references()
        .group_id(&gb)
        .send()
        .await;
    assert_eq!(code(gone), "InvalidGroup.NotFound");
}
