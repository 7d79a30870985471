//! Route tables through the SDK.

use aws_sdk_ec2::types::{DomainType, ResourceType, RouteOrigin, RouteState};

use crate::{code, empty_fake, filter, gateway, subnet, tag_spec, vpc};

#[tokio::test]
async fn main_table_routes_and_associations() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let main = ec2
        .describe_route_tables()
        .filters(filter("vpc-id", &[&vpc_id]))
        .filters(filter("association.main", &["true"]))
        .send()
        .await
        .unwrap();
    assert_eq!(
        main.route_tables().len(),
        1,
        "every VPC has a main route table"
    );
    let main = &main.route_tables()[0];
    let local = &main.routes()[0];
    assert_eq!(local.destination_cidr_block(), Some("10.0.0.0/16"));
    assert_eq!(local.gateway_id(), Some("local"));
    assert_eq!(local.origin(), Some(&RouteOrigin::CreateRouteTable));
    let main_id = main.route_table_id().unwrap().to_string();
    assert_eq!(
        code(
            ec2.delete_route_table()
                .route_table_id(&main_id)
                .send()
                .await
        ),
        "DependencyViolation"
    );
    let main_assoc = main.associations()[0]
        .route_table_association_id()
        .unwrap()
        .to_string();
    assert_eq!(
        code(
            ec2.disassociate_route_table()
                .association_id(&main_assoc)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );

    let igw = gateway(&ec2, &vpc_id).await;
    let s = subnet(&ec2, &vpc_id, "10.0.0.0/24", "us-east-1a").await;
    let rt = ec2
        .create_route_table()
        .vpc_id(&vpc_id)
        .tag_specifications(tag_spec(ResourceType::RouteTable, &[("Name", "public")]))
        .send()
        .await
        .unwrap()
        .route_table
        .unwrap()
        .route_table_id
        .unwrap();
    let create = ec2
        .create_route()
        .route_table_id(&rt)
        .destination_cidr_block("0.0.0.0/0")
        .gateway_id(&igw)
        .send()
        .await
        .unwrap();
    assert_eq!(create.r#return(), Some(true));
    assert_eq!(
        code(
            ec2.create_route()
                .route_table_id(&rt)
                .destination_cidr_block("0.0.0.0/0")
                .gateway_id(&igw)
                .send()
                .await
        ),
        "RouteAlreadyExists"
    );
    assert_eq!(
        code(
            ec2.create_route()
                .route_table_id(&rt)
                .destination_cidr_block("10.0.5.0/24")
                .gateway_id(&igw)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(
            ec2.create_route()
                .route_table_id(&rt)
                .destination_cidr_block("1.2.3.0/24")
                .gateway_id("igw-0123456789abcdef0")
                .send()
                .await
        ),
        "InvalidInternetGatewayID.NotFound"
    );
    assert_eq!(
        code(
            ec2.create_route()
                .route_table_id(&rt)
                .destination_cidr_block("1.2.3.0/24")
                .send()
                .await
        ),
        "MissingParameter"
    );
    let assoc = ec2
        .associate_route_table()
        .route_table_id(&rt)
        .subnet_id(&s)
        .send()
        .await
        .unwrap()
        .association_id
        .unwrap();
    assert_eq!(
        code(
            ec2.associate_route_table()
                .route_table_id(&main_id)
                .subnet_id(&s)
                .send()
                .await
        ),
        "Resource.AlreadyAssociated"
    );
    let found = ec2
        .describe_route_tables()
        .filters(filter("association.subnet-id", &[&s]))
        .send()
        .await
        .unwrap();
    assert_eq!(found.route_tables()[0].route_table_id(), Some(rt.as_str()));
    let by_route = ec2
        .describe_route_tables()
        .filters(filter("route.gateway-id", &[&igw]))
        .send()
        .await
        .unwrap();
    assert_eq!(by_route.route_tables().len(), 1);
    assert_eq!(
        code(ec2.delete_route_table().route_table_id(&rt).send().await),
        "DependencyViolation"
    );
    assert_eq!(
        code(ec2.delete_vpc().vpc_id(&vpc_id).send().await),
        "DependencyViolation"
    );

    // A detached gateway leaves a blackhole route.
    ec2.detach_internet_gateway()
        .internet_gateway_id(&igw)
        .vpc_id(&vpc_id)
        .send()
        .await
        .unwrap();
    let t = ec2
        .describe_route_tables()
        .route_table_ids(&rt)
        .send()
        .await
        .unwrap();
    let default_route = t.route_tables()[0]
        .routes()
        .iter()
        .find(|r| r.destination_cidr_block() == Some("0.0.0.0/0"))
        .unwrap()
        .clone();
    assert_eq!(default_route.state(), Some(&RouteState::Blackhole));

    ec2.disassociate_route_table()
        .association_id(&assoc)
        .send()
        .await
        .unwrap();
    assert_eq!(
        code(
            ec2.disassociate_route_table()
                .association_id(&assoc)
                .send()
                .await
        ),
        "InvalidAssociationID.NotFound"
    );
    ec2.delete_route()
        .route_table_id(&rt)
        .destination_cidr_block("0.0.0.0/0")
        .send()
        .await
        .unwrap();
    assert_eq!(
        code(
            ec2.delete_route()
                .route_table_id(&rt)
                .destination_cidr_block("0.0.0.0/0")
                .send()
                .await
        ),
        "InvalidRoute.NotFound"
    );
    assert_eq!(
        code(
            ec2.delete_route()
                .route_table_id(&rt)
                .destination_cidr_block("10.0.0.0/16")
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    ec2.delete_route_table()
        .route_table_id(&rt)
        .send()
        .await
        .unwrap();
    assert_eq!(
        code(
            ec2.describe_route_tables()
                .route_table_ids(&rt)
                .send()
                .await
        ),
        "InvalidRouteTableID.NotFound"
    );
    ec2.delete_subnet().subnet_id(&s).send().await.unwrap();
    ec2.delete_internet_gateway()
        .internet_gateway_id(&igw)
        .send()
        .await
        .unwrap();
    // Deleting the VPC takes its main route table with it.
    ec2.delete_vpc().vpc_id(&vpc_id).send().await.unwrap();
    assert_eq!(
        code(
            ec2.describe_route_tables()
                .route_table_ids(&main_id)
                .send()
                .await
        ),
        "InvalidRouteTableID.NotFound"
    );
}

#[tokio::test]
async fn nat_route_replace_and_client_token() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let igw = gateway(&ec2, &vpc_id).await;
    let public = subnet(&ec2, &vpc_id, "10.0.0.0/24", "us-east-1a").await;
    let alloc = ec2
        .allocate_address()
        .domain(DomainType::Vpc)
        .send()
        .await
        .unwrap()
        .allocation_id
        .unwrap();
    let nat = ec2
        .create_nat_gateway()
        .subnet_id(&public)
        .allocation_id(&alloc)
        .send()
        .await
        .unwrap()
        .nat_gateway
        .unwrap()
        .nat_gateway_id
        .unwrap();
    let make = || {
        ec2.create_route_table()
            .vpc_id(&vpc_id)
            .client_token("private-a")
    };
    let rt = make()
        .send()
        .await
        .unwrap()
        .route_table
        .unwrap()
        .route_table_id
        .unwrap();
    let again = make()
        .send()
        .await
        .unwrap()
        .route_table
        .unwrap()
        .route_table_id
        .unwrap();
    assert_eq!(rt, again, "the same ClientToken answers the same table");
    ec2.create_route()
        .route_table_id(&rt)
        .destination_cidr_block("0.0.0.0/0")
        .nat_gateway_id(&nat)
        .send()
        .await
        .unwrap();
    let t = ec2
        .describe_route_tables()
        .filters(filter("route.nat-gateway-id", &[&nat]))
        .send()
        .await
        .unwrap();
    assert_eq!(t.route_tables()[0].route_table_id(), Some(rt.as_str()));
    ec2.replace_route()
        .route_table_id(&rt)
        .destination_cidr_block("0.0.0.0/0")
        .gateway_id(&igw)
        .send()
        .await
        .unwrap();
    let t = ec2
        .describe_route_tables()
        .route_table_ids(&rt)
        .send()
        .await
        .unwrap();
    let r = t.route_tables()[0]
        .routes()
        .iter()
        .find(|r| r.destination_cidr_block() == Some("0.0.0.0/0"))
        .unwrap()
        .clone();
    assert_eq!(r.gateway_id(), Some(igw.as_str()));
    assert_eq!(r.nat_gateway_id(), None);
    assert_eq!(
        code(
            ec2.replace_route()
                .route_table_id(&rt)
                .destination_cidr_block("9.9.9.0/24")
                .gateway_id(&igw)
                .send()
                .await
        ),
        "InvalidRoute.NotFound"
    );
    let other_vpc = vpc(&ec2, "10.1.0.0/16").await;
    let other_rt = ec2
        .create_route_table()
        .vpc_id(&other_vpc)
        .send()
        .await
        .unwrap()
        .route_table
        .unwrap()
        .route_table_id
        .unwrap();
    assert_eq!(
        code(
            ec2.create_route()
                .route_table_id(&other_rt)
                .destination_cidr_block("0.0.0.0/0")
                .nat_gateway_id(&nat)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(
            ec2.associate_route_table()
                .route_table_id(&other_rt)
                .subnet_id(&public)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
}

/// The ids of the tables of `vpc_id` that a DescribeRouteTables with `filters` answers, sorted.
async fn table_ids(
    ec2: &aws_sdk_ec2::Client,
    vpc_id: &str,
    filters: &[(&str, &str)],
) -> Vec<String> {
    let mut call = ec2
        .describe_route_tables()
        .filters(filter("vpc-id", &[vpc_id]));
    for (name, value) in filters {
        call = call.filters(filter(name, &[value]));
    }
    let mut ids: Vec<String> = call
        .send()
        .await
        .unwrap()
        .route_tables()
        .iter()
        .map(|t| t.route_table_id().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

/// The main association of the table `id`.
async fn main_association(
    ec2: &aws_sdk_ec2::Client,
    id: &str,
) -> aws_sdk_ec2::types::RouteTableAssociation {
    let out = ec2
        .describe_route_tables()
        .route_table_ids(id)
        .send()
        .await
        .unwrap();
    out.route_tables()[0]
        .associations()
        .iter()
        .find(|x| x.main() == Some(true))
        .unwrap()
        .clone()
}

#[tokio::test]
async fn replace_route_table_association_moves_a_subnet_and_the_main_table() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let original_main = table_ids(&ec2, &vpc_id, &[("association.main", "true")]).await;
    let s = subnet(&ec2, &vpc_id, "10.0.0.0/24", "us-east-1a").await;
    let a = crate::route_table(&ec2, &vpc_id).await;
    let b = crate::route_table(&ec2, &vpc_id).await;
    let first = ec2
        .associate_route_table()
        .route_table_id(&a)
        .subnet_id(&s)
        .send()
        .await
        .unwrap()
        .association_id
        .unwrap();

    // The subnet moves to b under a new association id; a's association is gone.
    let out = ec2
        .replace_route_table_association()
        .association_id(&first)
        .route_table_id(&b)
        .send()
        .await
        .unwrap();
    let moved = out.new_association_id().unwrap().to_string();
    assert!(moved.starts_with("rtbassoc-") && moved != first, "{moved}");
    assert_eq!(
        out.association_state().unwrap().state(),
        Some(&aws_sdk_ec2::types::RouteTableAssociationStateCode::Associated)
    );
    assert_eq!(
        table_ids(&ec2, &vpc_id, &[("association.subnet-id", &s)]).await,
        [b.as_str()]
    );
    assert_eq!(
        table_ids(
            &ec2,
            &vpc_id,
            &[("association.route-table-association-id", &first)]
        )
        .await,
        Vec::<String>::new()
    );
    // The ended association is unknown from then on, and a is deletable again.
    assert_eq!(
        code(
            ec2.replace_route_table_association()
                .association_id(&first)
                .route_table_id(&b)
                .send()
                .await
        ),
        "InvalidAssociationID.NotFound"
    );

    // The main association: b becomes the VPC's main table, the original an ordinary one.
    let main_assoc = main_association(&ec2, &original_main[0])
        .await
        .route_table_association_id
        .unwrap();
    let new_main = ec2
        .replace_route_table_association()
        .association_id(&main_assoc)
        .route_table_id(&b)
        .send()
        .await
        .unwrap()
        .new_association_id
        .unwrap();
    assert_eq!(
        table_ids(&ec2, &vpc_id, &[("association.main", "true")]).await,
        [b.as_str()]
    );
    let main_of_b = main_association(&ec2, &b).await;
    assert_eq!(
        main_of_b.route_table_association_id(),
        Some(new_main.as_str())
    );
    assert_eq!(main_of_b.subnet_id(), None);
    // The new main table is not deleted, nor its main association undone; the old one is an
    // ordinary table, deleted like any other.
    assert_eq!(
        code(ec2.delete_route_table().route_table_id(&b).send().await),
        "DependencyViolation"
    );
    assert_eq!(
        code(
            ec2.disassociate_route_table()
                .association_id(&new_main)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    ec2.delete_route_table()
        .route_table_id(&original_main[0])
        .send()
        .await
        .unwrap();
    ec2.delete_route_table()
        .route_table_id(&a)
        .send()
        .await
        .unwrap();
    assert_eq!(table_ids(&ec2, &vpc_id, &[]).await, [b.as_str()]);

    // A table of another VPC, or none, is refused, and nothing changes.
    let other_vpc = vpc(&ec2, "10.1.0.0/16").await;
    let foreign = crate::route_table(&ec2, &other_vpc).await;
    for (assoc, table, expected) in [
        (&moved, &foreign, "InvalidParameterValue"),
        (&new_main, &foreign, "InvalidParameterValue"),
        (
            &moved,
            &"rtb-0123456789abcdef0".to_string(),
            "InvalidRouteTableID.NotFound",
        ),
    ] {
        assert_eq!(
            code(
                ec2.replace_route_table_association()
                    .association_id(assoc)
                    .route_table_id(table)
                    .send()
                    .await
            ),
            expected
        );
    }
    assert_eq!(
        table_ids(&ec2, &vpc_id, &[("association.subnet-id", &s)]).await,
        [b.as_str()]
    );
    assert_eq!(
        table_ids(&ec2, &vpc_id, &[("association.main", "true")]).await,
        [b.as_str()]
    );
    let other_main = table_ids(&ec2, &other_vpc, &[("association.main", "true")]).await;
    assert_eq!(other_main.len(), 1);
    assert_ne!(
        other_main[0], foreign,
        "the other VPC keeps its own main table"
    );

    // The VPC is deleted once its subnet is: the main table goes with it.
    ec2.delete_subnet().subnet_id(&s).send().await.unwrap();
    ec2.delete_vpc().vpc_id(&vpc_id).send().await.unwrap();
    assert_eq!(table_ids(&ec2, &vpc_id, &[]).await, Vec::<String>::new());
}
