//! VPC endpoints through the SDK: gateway endpoints and the routes they hold, interface
//! endpoints and their interfaces, DNS names and states, ModifyVpcEndpoint, deletion, the
//! services a region offers, and the errors AWS answers. The state of an endpoint is
//! lower case on the wire (`available`), which the SDK's enum (`Available`) keeps as an
//! unknown value: the tests read it with `as_str`.

use aws_sdk_ec2::types::{AttributeBooleanValue, ResourceType, VpcEndpoint, VpcEndpointType};
use fakeaws::sim::transitions::Subject;

use crate::{code, code_and_message, empty_fake, filter, route_table, subnet, tag_spec, vpc};

const S3: &str = "com.amazonaws.us-east-1.s3";
const DYNAMODB: &str = "com.amazonaws.us-east-1.dynamodb";
const SSM: &str = "com.amazonaws.us-east-1.ssm";

/// Turns on both DNS attributes of a VPC, which private DNS needs.
async fn resolve_names(ec2: &aws_sdk_ec2::Client, vpc_id: &str) {
    let on = || AttributeBooleanValue::builder().value(true).build();
    ec2.modify_vpc_attribute()
        .vpc_id(vpc_id)
        .enable_dns_support(on())
        .send()
        .await
        .unwrap();
    ec2.modify_vpc_attribute()
        .vpc_id(vpc_id)
        .enable_dns_hostnames(on())
        .send()
        .await
        .unwrap();
}

/// The routes of `table_id` to prefix lists: (prefix list, gateway id, origin, state).
async fn prefix_routes(
    ec2: &aws_sdk_ec2::Client,
    table_id: &str,
) -> Vec<(String, String, String, String)> {
    let tables = ec2
        .describe_route_tables()
        .route_table_ids(table_id)
        .send()
        .await
        .unwrap();
    tables.route_tables()[0]
        .routes()
        .iter()
        .filter_map(|r| {
            Some((
                r.destination_prefix_list_id()?.to_string(),
                r.gateway_id()?.to_string(),
                r.origin()?.as_str().to_string(),
                r.state()?.as_str().to_string(),
            ))
        })
        .collect()
}

/// The endpoints DescribeVpcEndpoints answers for `filters`, by id.
async fn endpoints(
    ec2: &aws_sdk_ec2::Client,
    filters: Vec<aws_sdk_ec2::types::Filter>,
) -> Vec<VpcEndpoint> {
    ec2.describe_vpc_endpoints()
        .set_filters(Some(filters))
        .send()
        .await
        .unwrap()
        .vpc_endpoints
        .unwrap_or_default()
}

async fn endpoint(ec2: &aws_sdk_ec2::Client, id: &str) -> VpcEndpoint {
    let found = ec2
        .describe_vpc_endpoints()
        .vpc_endpoint_ids(id)
        .send()
        .await
        .unwrap()
        .vpc_endpoints
        .unwrap();
    assert_eq!(found.len(), 1);
    found.into_iter().next().unwrap()
}

fn state(e: &VpcEndpoint) -> &str {
    e.state().unwrap().as_str()
}

async fn gateway_endpoint(
    ec2: &aws_sdk_ec2::Client,
    vpc_id: &str,
    service: &str,
    tables: &[&str],
) -> String {
    let mut call = ec2
        .create_vpc_endpoint()
        .vpc_id(vpc_id)
        .service_name(service);
    for t in tables {
        call = call.route_table_ids(*t);
    }
    call.send()
        .await
        .unwrap()
        .vpc_endpoint
        .unwrap()
        .vpc_endpoint_id
        .unwrap()
}

/// The interfaces DescribeNetworkInterfaces lists in `vpc_id`: (id, subnet, type, groups).
async fn interfaces(
    ec2: &aws_sdk_ec2::Client,
    vpc_id: &str,
) -> Vec<(String, String, String, Vec<String>)> {
    let out = ec2
        .describe_network_interfaces()
        .filters(filter("vpc-id", &[vpc_id]))
        .send()
        .await
        .unwrap();
    let mut found: Vec<_> = out
        .network_interfaces()
        .iter()
        .map(|n| {
            assert_eq!(n.requester_managed(), Some(true));
            (
                n.network_interface_id().unwrap().to_string(),
                n.subnet_id().unwrap().to_string(),
                n.interface_type().unwrap().as_str().to_string(),
                n.groups()
                    .iter()
                    .map(|g| g.group_id().unwrap().to_string())
                    .collect(),
            )
        })
        .collect();
    found.sort();
    found
}

#[tokio::test]
async fn a_gateway_endpoint_routes_its_tables_to_the_service() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let (a, b) = (
        route_table(&ec2, &vpc_id).await,
        route_table(&ec2, &vpc_id).await,
    );
    let created = ec2
        .create_vpc_endpoint()
        .vpc_id(&vpc_id)
        .service_name(S3)
        .route_table_ids(&a)
        .tag_specifications(tag_spec(ResourceType::VpcEndpoint, &[("Name", "s3")]))
        .send()
        .await
        .unwrap()
        .vpc_endpoint
        .unwrap();
    let id = created.vpc_endpoint_id().unwrap().to_string();
    assert!(id.starts_with("vpce-"), "{id}");
    assert_eq!(state(&created), "available");
    assert_eq!(created.vpc_endpoint_type(), Some(&VpcEndpointType::Gateway));
    assert_eq!(created.route_table_ids(), [a.as_str()]);
    assert!(created.subnet_ids().is_empty() && created.network_interface_ids().is_empty());
    assert!(created.policy_document().unwrap().contains("\"Allow\""));
    assert_eq!(created.private_dns_enabled(), Some(false));

    // The route is the endpoint's: to the service's prefix list, made by CreateRoute.
    let routes = prefix_routes(&ec2, &a).await;
    assert_eq!(routes.len(), 1, "{routes:?}");
    let (pl, gw, origin, st) = &routes[0];
    assert!(pl.starts_with("pl-"), "{pl}");
    assert_eq!(
        (gw.as_str(), origin.as_str(), st.as_str()),
        (id.as_str(), "CreateRoute", "active")
    );
    assert!(prefix_routes(&ec2, &b).await.is_empty());
    let by_route = ec2
        .describe_route_tables()
        .filters(filter("route.destination-prefix-list-id", &[pl]))
        .filters(filter("route.gateway-id", &[&id]))
        .send()
        .await
        .unwrap();
    let found: Vec<&str> = by_route
        .route_tables()
        .iter()
        .map(|t| t.route_table_id().unwrap())
        .collect();
    assert_eq!(found, [a.as_str()]);

    // One route per service and table: a second S3 endpoint cannot take table a; DynamoDB can.
    let again = ec2
        .create_vpc_endpoint()
        .vpc_id(&vpc_id)
        .service_name(S3)
        .route_table_ids(&a)
        .send()
        .await;
    assert_eq!(code(again), "RouteAlreadyExists");
    let ddb = gateway_endpoint(&ec2, &vpc_id, DYNAMODB, &[&a]).await;
    let routes = prefix_routes(&ec2, &a).await;
    assert_eq!(routes.len(), 2);
    assert_ne!(
        routes[0].0, routes[1].0,
        "each service has its own prefix list"
    );

    // ModifyVpcEndpoint moves the route from one table to the other.
    ec2.modify_vpc_endpoint()
        .vpc_endpoint_id(&id)
        .add_route_table_ids(&b)
        .remove_route_table_ids(&a)
        .send()
        .await
        .unwrap();
    assert_eq!(endpoint(&ec2, &id).await.route_table_ids(), [b.as_str()]);
    assert_eq!(prefix_routes(&ec2, &b).await[0].1, id);
    let left: Vec<String> = prefix_routes(&ec2, &a)
        .await
        .into_iter()
        .map(|r| r.1)
        .collect();
    assert_eq!(
        left,
        [ddb.as_str()],
        "only DynamoDB's route stays in table a"
    );

    // A deleted table leaves its endpoints, and is then unknown to ModifyVpcEndpoint.
    let c = route_table(&ec2, &vpc_id).await;
    ec2.modify_vpc_endpoint()
        .vpc_endpoint_id(&id)
        .add_route_table_ids(&c)
        .send()
        .await
        .unwrap();
    ec2.delete_route_table()
        .route_table_id(&c)
        .send()
        .await
        .unwrap();
    assert_eq!(endpoint(&ec2, &id).await.route_table_ids(), [b.as_str()]);
    let removed = ec2
        .modify_vpc_endpoint()
        .vpc_endpoint_id(&id)
        .remove_route_table_ids(&c)
        .send()
        .await;
    assert_eq!(code(removed), "InvalidRouteTableID.NotFound");

    // Filters.
    let ids = |list: Vec<VpcEndpoint>| -> Vec<String> {
        let mut ids: Vec<String> = list
            .iter()
            .map(|e| e.vpc_endpoint_id().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(
        ids(endpoints(&ec2, vec![filter("service-name", &[S3])]).await),
        [id.as_str()]
    );
    assert_eq!(
        ids(endpoints(&ec2, vec![filter("tag:Name", &["s3"])]).await),
        [id.as_str()]
    );
    let mut both = vec![id.clone(), ddb.clone()];
    both.sort();
    assert_eq!(
        ids(endpoints(
            &ec2,
            vec![
                filter("vpc-id", &[&vpc_id]),
                filter("vpc-endpoint-type", &["Gateway"]),
                filter("vpc-endpoint-state", &["available"]),
            ]
        )
        .await),
        both
    );
    assert!(
        endpoints(&ec2, vec![filter("vpc-endpoint-type", &["Interface"])])
            .await
            .is_empty()
    );

    // The endpoints keep their VPC; deleting them (with an id that names none) frees it.
    assert_eq!(
        code(ec2.delete_vpc().vpc_id(&vpc_id).send().await),
        "DependencyViolation"
    );
    let out = ec2
        .delete_vpc_endpoints()
        .vpc_endpoint_ids(&id)
        .vpc_endpoint_ids(&ddb)
        .vpc_endpoint_ids("vpce-0123456789abcdef0")
        .send()
        .await
        .unwrap();
    let failed = out.unsuccessful();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].resource_id(), Some("vpce-0123456789abcdef0"));
    assert_eq!(
        failed[0].error().unwrap().code(),
        Some("InvalidVpcEndpoint.NotFound")
    );
    let gone = ec2
        .describe_vpc_endpoints()
        .vpc_endpoint_ids(&id)
        .send()
        .await;
    assert_eq!(code(gone), "InvalidVpcEndpointId.NotFound");
    assert!(prefix_routes(&ec2, &a).await.is_empty());
    assert!(prefix_routes(&ec2, &b).await.is_empty());
    for t in [&a, &b] {
        ec2.delete_route_table()
            .route_table_id(t)
            .send()
            .await
            .unwrap();
    }
    ec2.delete_vpc().vpc_id(&vpc_id).send().await.unwrap();
}

#[tokio::test]
async fn an_interface_endpoint_holds_an_interface_in_each_subnet() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    resolve_names(&ec2, &vpc_id).await;
    let a = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let b = subnet(&ec2, &vpc_id, "10.0.2.0/24", "us-east-1b").await;
    let a2 = subnet(&ec2, &vpc_id, "10.0.3.0/24", "us-east-1a").await;
    let group = ec2
        .create_security_group()
        .vpc_id(&vpc_id)
        .group_name("endpoints")
        .description("endpoints")
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap();
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.hold(Subject::VpcEndpoint));
    let created = ec2
        .create_vpc_endpoint()
        .vpc_endpoint_type(VpcEndpointType::Interface)
        .vpc_id(&vpc_id)
        .service_name(SSM)
        .subnet_ids(&a)
        .subnet_ids(&b)
        .security_group_ids(&group)
        .send()
        .await
        .unwrap()
        .vpc_endpoint
        .unwrap();
    let id = created.vpc_endpoint_id().unwrap().to_string();
    assert_eq!(state(&created), "pending");
    assert_eq!(state(&endpoint(&ec2, &id).await), "pending");
    assert_eq!(created.private_dns_enabled(), Some(true), "AWS's default");
    let names: Vec<&str> = created
        .dns_entries()
        .iter()
        .map(|d| d.dns_name().unwrap())
        .collect();
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(names[0].starts_with(&format!("{id}-")));
    assert!(
        names[0].ends_with(".ssm.us-east-1.vpce.amazonaws.com"),
        "{names:?}"
    );
    assert!(names[1].contains("-us-east-1a.ssm."), "{names:?}");
    assert!(names[2].contains("-us-east-1b.ssm."), "{names:?}");
    assert_eq!(names[3], "ssm.us-east-1.amazonaws.com");

    // Its interfaces, one per subnet, with its group.
    let held = interfaces(&ec2, &vpc_id).await;
    assert_eq!(held.len(), 2);
    for (eni, sub, kind, groups) in &held {
        assert!(created.network_interface_ids().contains(eni));
        assert!(*sub == a || *sub == b);
        assert_eq!(kind, "vpc_endpoint");
        assert_eq!(groups, std::slice::from_ref(&group));
    }
    assert_eq!(
        code(ec2.delete_subnet().subnet_id(&a).send().await),
        "DependencyViolation"
    );
    assert_eq!(
        code(ec2.delete_security_group().group_id(&group).send().await),
        "DependencyViolation"
    );

    // One endpoint answers the service's name in a VPC.
    let (c, m) = code_and_message(
        ec2.create_vpc_endpoint()
            .vpc_endpoint_type(VpcEndpointType::Interface)
            .vpc_id(&vpc_id)
            .service_name(SSM)
            .subnet_ids(&a2)
            .send()
            .await,
    );
    assert_eq!(c, "InvalidParameter");
    assert!(
        m.contains("conflicting DNS domain for ssm.us-east-1.amazonaws.com"),
        "{m}"
    );

    fake.fake()
        .with_region("us-east-1", |r| r.transitions.release(Subject::VpcEndpoint));
    assert_eq!(state(&endpoint(&ec2, &id).await), "available");

    // ModifyVpcEndpoint: one subnet per zone; a removed subnet's interface goes; groups change
    // on every interface.
    let twice = ec2
        .modify_vpc_endpoint()
        .vpc_endpoint_id(&id)
        .add_subnet_ids(&a2)
        .send()
        .await;
    assert_eq!(code(twice), "DuplicateSubnetsInSameZone");
    let default_group = ec2
        .describe_security_groups()
        .filters(filter("vpc-id", &[&vpc_id]))
        .filters(filter("group-name", &["default"]))
        .send()
        .await
        .unwrap()
        .security_groups()[0]
        .group_id()
        .unwrap()
        .to_string();
    ec2.modify_vpc_endpoint()
        .vpc_endpoint_id(&id)
        .remove_subnet_ids(&a)
        .add_subnet_ids(&a2)
        .add_security_group_ids(&default_group)
        .remove_security_group_ids(&group)
        .send()
        .await
        .unwrap();
    let now = endpoint(&ec2, &id).await;
    let mut subnets = now.subnet_ids().to_vec();
    subnets.sort();
    let mut want = vec![a2.clone(), b.clone()];
    want.sort();
    assert_eq!(subnets, want);
    let held = interfaces(&ec2, &vpc_id).await;
    assert_eq!(held.len(), 2);
    assert!(
        held.iter()
            .all(|(_, s, _, g)| *s != a && g == std::slice::from_ref(&default_group))
    );
    ec2.delete_subnet().subnet_id(&a).send().await.unwrap();
    ec2.delete_security_group()
        .group_id(&group)
        .send()
        .await
        .unwrap();

    // Deleting: `deleting` while held, then gone with its interfaces.
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.hold(Subject::VpcEndpoint));
    let out = ec2
        .delete_vpc_endpoints()
        .vpc_endpoint_ids(&id)
        .send()
        .await
        .unwrap();
    assert!(out.unsuccessful().is_empty());
    assert_eq!(state(&endpoint(&ec2, &id).await), "deleting");
    let modify = ec2
        .modify_vpc_endpoint()
        .vpc_endpoint_id(&id)
        .reset_policy(true)
        .send()
        .await;
    assert_eq!(code(modify), "IncorrectState");
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.release(Subject::VpcEndpoint));
    assert!(endpoints(&ec2, vec![]).await.is_empty());
    assert!(interfaces(&ec2, &vpc_id).await.is_empty());
    for s in [&b, &a2] {
        ec2.delete_subnet().subnet_id(s).send().await.unwrap();
    }
    ec2.delete_vpc().vpc_id(&vpc_id).send().await.unwrap();
}

#[tokio::test]
async fn a_failed_interface_endpoint_reports_its_error_and_frees_its_interfaces() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let a = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    fake.fake().with_region("us-east-1", |r| {
        r.transitions.fail_next(
            Subject::VpcEndpoint,
            "InternalError",
            "The endpoint could not be made.",
        )
    });
    let id = ec2
        .create_vpc_endpoint()
        .vpc_endpoint_type(VpcEndpointType::Interface)
        .vpc_id(&vpc_id)
        .service_name("com.amazonaws.us-east-1.ecr.dkr")
        .subnet_ids(&a)
        .private_dns_enabled(false)
        .send()
        .await
        .unwrap()
        .vpc_endpoint
        .unwrap()
        .vpc_endpoint_id
        .unwrap();
    let e = endpoint(&ec2, &id).await;
    assert_eq!(state(&e), "failed");
    let last = e.last_error().unwrap();
    assert_eq!(last.code(), Some("InternalError"));
    assert!(e.dns_entries().is_empty() && e.network_interface_ids().is_empty());
    assert!(interfaces(&ec2, &vpc_id).await.is_empty());
    ec2.delete_subnet().subnet_id(&a).send().await.unwrap();
}

#[tokio::test]
async fn bad_requests_are_refused_and_change_nothing() {
    let fake = fakeaws::spawn_with(fakeaws::Config {
        default_vpc: false,
        limits: fakeaws::Limits {
            gateway_endpoints: 1,
            ..Default::default()
        },
        ..Default::default()
    })
    .await
    .unwrap();
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let other = vpc(&ec2, "10.1.0.0/16").await;
    let t = route_table(&ec2, &vpc_id).await;
    let elsewhere = route_table(&ec2, &other).await;
    let a = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let create = || ec2.create_vpc_endpoint().vpc_id(&vpc_id);
    let cases = [
        (
            create().service_name("com.amazonaws.us-east-1.nope"),
            "InvalidServiceName",
        ),
        (
            create().service_name("com.amazonaws.eu-west-1.s3"),
            "InvalidServiceName",
        ),
        (create().service_name(S3).subnet_ids(&a), "InvalidParameter"),
        (
            create()
                .vpc_endpoint_type(VpcEndpointType::Interface)
                .service_name(SSM)
                .subnet_ids(&a)
                .route_table_ids(&t),
            "InvalidParameter",
        ),
        // Private DNS is the default, and this VPC does not name hosts.
        (
            create()
                .vpc_endpoint_type(VpcEndpointType::Interface)
                .service_name(SSM)
                .subnet_ids(&a),
            "InvalidParameter",
        ),
        (
            create()
                .vpc_endpoint_type(VpcEndpointType::Gateway)
                .service_name(SSM),
            "InvalidParameter",
        ),
        (
            create()
                .vpc_endpoint_type(VpcEndpointType::GatewayLoadBalancer)
                .service_name(S3),
            "InvalidParameter",
        ),
        (
            create()
                .service_name(S3)
                .policy_document("{\"Statement\": ["),
            "InvalidPolicyDocument",
        ),
        (
            create().service_name(S3).route_table_ids(&elsewhere),
            "InvalidParameter",
        ),
        (
            create()
                .service_name(S3)
                .route_table_ids("rtb-0123456789abcdef0"),
            "InvalidRouteTableID.NotFound",
        ),
        (
            create()
                .vpc_endpoint_type(VpcEndpointType::Interface)
                .service_name(SSM)
                .private_dns_enabled(false)
                .subnet_ids("subnet-0123456789abcdef0"),
            "InvalidSubnetID.NotFound",
        ),
        (
            ec2.create_vpc_endpoint()
                .vpc_id("vpc-0123456789abcdef0")
                .service_name(S3),
            "InvalidVpcID.NotFound",
        ),
        (create(), "MissingParameter"),
    ];
    for (call, want) in cases {
        let (got, message) = code_and_message(call.send().await);
        assert_eq!(got, want, "{message}");
    }
    assert!(endpoints(&ec2, vec![]).await.is_empty());
    assert!(interfaces(&ec2, &vpc_id).await.is_empty());
    assert!(prefix_routes(&ec2, &t).await.is_empty());

    // A ClientToken answers the same endpoint again, and refuses another request; the
    // region's one gateway endpoint is then its quota.
    let first = create()
        .service_name(S3)
        .route_table_ids(&t)
        .client_token("s3-endpoint")
        .send()
        .await
        .unwrap();
    let again = create()
        .service_name(S3)
        .route_table_ids(&t)
        .client_token("s3-endpoint")
        .send()
        .await
        .unwrap();
    assert_eq!(
        first.vpc_endpoint().unwrap().vpc_endpoint_id(),
        again.vpc_endpoint().unwrap().vpc_endpoint_id()
    );
    let changed = create()
        .service_name(DYNAMODB)
        .client_token("s3-endpoint")
        .send()
        .await;
    assert_eq!(code(changed), "IdempotentParameterMismatch");
    let over = create().service_name(DYNAMODB).send().await;
    assert_eq!(code(over), "VpcEndpointLimitExceeded");
    let id = first.vpc_endpoint().unwrap().vpc_endpoint_id().unwrap();
    let bad_policy = ec2
        .modify_vpc_endpoint()
        .vpc_endpoint_id(id)
        .policy_document("not json")
        .send()
        .await;
    assert_eq!(code(bad_policy), "InvalidPolicyDocument");
    let both = ec2
        .modify_vpc_endpoint()
        .vpc_endpoint_id(id)
        .policy_document("{}")
        .reset_policy(true)
        .send()
        .await;
    assert_eq!(code(both), "InvalidParameterCombination");
    let subnets = ec2
        .modify_vpc_endpoint()
        .vpc_endpoint_id(id)
        .add_subnet_ids(&a)
        .send()
        .await;
    assert_eq!(code(subnets), "InvalidParameter");
    let policy = r#"{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"*"}]}"#;
    ec2.modify_vpc_endpoint()
        .vpc_endpoint_id(id)
        .policy_document(policy)
        .send()
        .await
        .unwrap();
    assert_eq!(endpoint(&ec2, id).await.policy_document(), Some(policy));
    let unknown = ec2
        .describe_vpc_endpoints()
        .vpc_endpoint_ids("vpce-zz")
        .send()
        .await;
    assert_eq!(code(unknown), "InvalidVpcEndpointId.Malformed");
}

#[tokio::test]
async fn the_region_lists_its_endpoint_services_page_by_page() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let mut details = Vec::new();
    let mut names = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let page = ec2
            .describe_vpc_endpoint_services()
            .max_results(5)
            .set_next_token(token.clone())
            .send()
            .await
            .unwrap();
        assert!(page.service_details().len() <= 5);
        names.extend(page.service_names().iter().cloned());
        details.extend(page.service_details().iter().cloned());
        token = page.next_token().map(String::from);
        if token.is_none() {
            break;
        }
    }
    assert!(names.contains(&SSM.to_string()) && names.contains(&S3.to_string()));
    let s3: Vec<&str> = details
        .iter()
        .filter(|d| d.service_name() == Some(S3))
        .flat_map(|d| {
            d.service_type()
                .iter()
                .map(|t| t.service_type().unwrap().as_str())
        })
        .collect();
    assert_eq!(s3, ["Gateway", "Interface"]);
    let ssm = details
        .iter()
        .find(|d| d.service_name() == Some(SSM))
        .unwrap();
    assert_eq!(ssm.private_dns_name(), Some("ssm.us-east-1.amazonaws.com"));
    assert_eq!(
        ssm.availability_zones(),
        [
            "us-east-1a",
            "us-east-1b",
            "us-east-1c",
            "us-east-1d",
            "us-east-1e",
            "us-east-1f"
        ]
    );
    assert_eq!(ssm.owner(), Some("amazon"));

    let gateways = ec2
        .describe_vpc_endpoint_services()
        .filters(filter("service-type", &["Gateway"]))
        .send()
        .await
        .unwrap();
    assert_eq!(gateways.service_names(), [DYNAMODB, S3]);
    let named = ec2
        .describe_vpc_endpoint_services()
        .service_names(SSM)
        .send()
        .await
        .unwrap();
    assert_eq!(named.service_names(), [SSM]);
    let unknown = ec2
        .describe_vpc_endpoint_services()
        .service_names("com.amazonaws.us-east-1.nope")
        .send()
        .await;
    assert_eq!(code(unknown), "InvalidServiceName");
}
