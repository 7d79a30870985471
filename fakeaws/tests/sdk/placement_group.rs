//! Placement groups through the SDK: strategies and their options, describes and filters,
//! instances launched into a group (and a partition), and deletion refused while in use.

use aws_sdk_ec2::types::{
    InstanceType, Placement, PlacementGroupState, PlacementStrategy, ResourceType, SpreadLevel,
};

use crate::{code, empty_fake, filter, image, subnet, tag_spec, vpc};

async fn group(
    ec2: &aws_sdk_ec2::Client,
    name: &str,
    strategy: PlacementStrategy,
) -> aws_sdk_ec2::types::PlacementGroup {
    ec2.create_placement_group()
        .group_name(name)
        .strategy(strategy)
        .send()
        .await
        .unwrap()
        .placement_group
        .unwrap()
}

/// Launches `count` instances into `placement` in `subnet_id`; answers (id, group, partition).
async fn launch(
    ec2: &aws_sdk_ec2::Client,
    subnet_id: &str,
    placement: Placement,
    count: i32,
) -> Vec<(String, String, Option<i32>)> {
    let ami = image(ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let out = ec2
        .run_instances()
        .image_id(ami)
        .instance_type(InstanceType::C5Large)
        .subnet_id(subnet_id)
        .min_count(count)
        .max_count(count)
        .placement(placement)
        .send()
        .await
        .unwrap();
    out.instances()
        .iter()
        .map(|i| {
            let p = i.placement().unwrap();
            (
                i.instance_id().unwrap().to_string(),
                p.group_name().unwrap().to_string(),
                p.partition_number(),
            )
        })
        .collect()
}

#[tokio::test]
async fn groups_take_instances_and_keep_them() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;

    let cluster = group(&ec2, "hpc", PlacementStrategy::Cluster).await;
    assert_eq!(cluster.state(), Some(&PlacementGroupState::Available));
    assert!(cluster.group_id().unwrap().starts_with("pg-"));
    assert!(
        cluster
            .group_arn()
            .unwrap()
            .ends_with(":placement-group/hpc")
    );
    assert_eq!(cluster.partition_count(), None);
    let spread = group(&ec2, "control-plane", PlacementStrategy::Spread).await;
    assert_eq!(spread.spread_level(), Some(&SpreadLevel::Rack));
    let parts = ec2
        .create_placement_group()
        .group_name("etcd")
        .strategy(PlacementStrategy::Partition)
        .partition_count(3)
        .tag_specifications(tag_spec(ResourceType::PlacementGroup, &[("team", "db")]))
        .send()
        .await
        .unwrap()
        .placement_group
        .unwrap();
    assert_eq!(parts.partition_count(), Some(3));

    // Describes: by name, by id, by filter.
    let named = ec2
        .describe_placement_groups()
        .group_names("hpc")
        .send()
        .await
        .unwrap();
    assert_eq!(named.placement_groups()[0].group_id(), cluster.group_id());
    let by_id = ec2
        .describe_placement_groups()
        .group_ids(parts.group_id().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(by_id.placement_groups()[0].group_name(), Some("etcd"));
    let by_strategy = ec2
        .describe_placement_groups()
        .filters(filter("strategy", &["spread"]))
        .send()
        .await
        .unwrap();
    let names: Vec<&str> = by_strategy
        .placement_groups()
        .iter()
        .map(|g| g.group_name().unwrap())
        .collect();
    assert_eq!(names, ["control-plane"]);
    let by_tag = ec2
        .describe_placement_groups()
        .filters(filter("tag:team", &["db"]))
        .send()
        .await
        .unwrap();
    assert_eq!(by_tag.placement_groups().len(), 1);

    // Instances: into the cluster group by name; into the partition group spread over its
    // partitions, or into the one asked for.
    let in_cluster = launch(&ec2, &s, Placement::builder().group_name("hpc").build(), 2).await;
    assert!(in_cluster.iter().all(|(_, g, p)| g == "hpc" && p.is_none()));
    let spread_over = launch(
        &ec2,
        &s,
        Placement::builder()
            .group_id(parts.group_id().unwrap())
            .build(),
        4,
    )
    .await;
    let partitions: Vec<Option<i32>> = spread_over.iter().map(|(_, _, p)| *p).collect();
    assert_eq!(partitions, [Some(1), Some(2), Some(3), Some(1)]);
    let asked = launch(
        &ec2,
        &s,
        Placement::builder()
            .group_name("etcd")
            .partition_number(3)
            .build(),
        1,
    )
    .await;
    assert_eq!(asked[0].2, Some(3));
    let in_partition_3 = ec2
        .describe_instances()
        .filters(filter("placement-group-name", &["etcd"]))
        .filters(filter("placement-partition-number", &["3"]))
        .send()
        .await
        .unwrap();
    let found: usize = in_partition_3
        .reservations()
        .iter()
        .map(|r| r.instances().len())
        .sum();
    assert_eq!(found, 2);

    // A group in use stays; once its instances are terminated it can go.
    let in_use = ec2.delete_placement_group().group_name("hpc").send().await;
    assert_eq!(code(in_use), "InvalidPlacementGroup.InUse");
    let ids: Vec<String> = in_cluster.into_iter().map(|(id, _, _)| id).collect();
    ec2.terminate_instances()
        .set_instance_ids(Some(ids))
        .send()
        .await
        .unwrap();
    ec2.delete_placement_group()
        .group_name("hpc")
        .send()
        .await
        .unwrap();
    let gone = ec2
        .describe_placement_groups()
        .group_names("hpc")
        .send()
        .await;
    assert_eq!(code(gone), "InvalidPlacementGroup.Unknown");
}

#[tokio::test]
async fn bad_groups_and_launches_are_refused() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    group(&ec2, "hpc", PlacementStrategy::Cluster).await;
    let create = || ec2.create_placement_group().group_name("x");
    let cases = [
        (
            ec2.create_placement_group()
                .group_name("hpc")
                .strategy(PlacementStrategy::Spread),
            "InvalidPlacementGroup.Duplicate",
        ),
        (
            ec2.create_placement_group()
                .strategy(PlacementStrategy::Cluster),
            "MissingParameter",
        ),
        (
            create()
                .strategy(PlacementStrategy::Partition)
                .partition_count(8),
            "InvalidParameterValue",
        ),
        (
            create()
                .strategy(PlacementStrategy::Cluster)
                .partition_count(2),
            "InvalidParameterCombination",
        ),
        (
            create()
                .strategy(PlacementStrategy::Cluster)
                .spread_level(SpreadLevel::Rack),
            "InvalidParameterCombination",
        ),
    ];
    for (call, want) in cases {
        assert_eq!(code(call.send().await), want);
    }
    let listed = ec2.describe_placement_groups().send().await.unwrap();
    assert_eq!(listed.placement_groups().len(), 1, "nothing else was made");

    let ami = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let run = |p: Placement| {
        ec2.run_instances()
            .image_id(&ami)
            .instance_type(InstanceType::C5Large)
            .subnet_id(&s)
            .min_count(1)
            .max_count(1)
            .placement(p)
    };
    let unknown = run(Placement::builder().group_name("nope").build())
        .send()
        .await;
    assert_eq!(code(unknown), "InvalidPlacementGroup.Unknown");
    let partition_of_cluster = run(Placement::builder()
        .group_name("hpc")
        .partition_number(1)
        .build())
    .send()
    .await;
    assert_eq!(code(partition_of_cluster), "InvalidParameterCombination");
    // A cluster group lies in one zone.
    let b = subnet(&ec2, &vpc_id, "10.0.2.0/24", "us-east-1b").await;
    let into = |subnet: &str| {
        ec2.run_instances()
            .image_id(&ami)
            .instance_type(InstanceType::C5Large)
            .subnet_id(subnet)
            .min_count(1)
            .max_count(1)
            .placement(Placement::builder().group_name("hpc").build())
    };
    let first = into(&s).send().await.unwrap();
    let (c, m) = crate::code_and_message(into(&b).send().await);
    assert_eq!(c, "InvalidPlacementGroup.InUse");
    assert!(m.contains("another availability zone"), "{m}");
    let instances = ec2.describe_instances().send().await.unwrap();
    assert_eq!(
        instances.reservations().len(),
        1,
        "no refused launch made an instance"
    );
    assert_eq!(
        instances.reservations()[0].instances()[0].instance_id(),
        first.instances()[0].instance_id()
    );
    // A group made without a strategy is a cluster group.
    let plain = ec2
        .create_placement_group()
        .group_name("plain")
        .send()
        .await
        .unwrap()
        .placement_group
        .unwrap();
    assert_eq!(plain.strategy(), Some(&PlacementStrategy::Cluster));
}

/// The instance `id`'s placement as DescribeInstances shows it: (group name, partition,
/// tenancy). An instance in no group has the group name `""`, as AWS shows it.
async fn placed(ec2: &aws_sdk_ec2::Client, id: &str) -> (Option<String>, Option<i32>, String) {
    let i = crate::described(ec2, id).await;
    let p = i.placement().unwrap();
    (
        p.group_name()
            .filter(|name| !name.is_empty())
            .map(str::to_string),
        p.partition_number(),
        p.tenancy().unwrap().as_str().to_string(),
    )
}

#[tokio::test]
async fn a_stopped_instance_moves_between_groups_and_changes_tenancy() {
    use aws_sdk_ec2::types::{HostTenancy, InstanceStateName};

    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let elsewhere = subnet(&ec2, &vpc_id, "10.0.2.0/24", "us-east-1b").await;
    let spread = group(&ec2, "spread", PlacementStrategy::Spread).await;
    group(&ec2, "hpc", PlacementStrategy::Cluster).await;
    ec2.create_placement_group()
        .group_name("etcd")
        .strategy(PlacementStrategy::Partition)
        .partition_count(3)
        .send()
        .await
        .unwrap();
    let id = crate::instance(&ec2, &s).await;
    // A cluster group holding an instance in another zone.
    let hpc_member = launch(
        &ec2,
        &elsewhere,
        Placement::builder().group_name("hpc").build(),
        1,
    )
    .await;
    assert_eq!(hpc_member[0].1, "hpc");
    let modify = || ec2.modify_instance_placement().instance_id(&id);

    // Running: refused, nothing changes.
    let running = modify().group_name("spread").send().await;
    assert_eq!(code(running), "IncorrectInstanceState");
    assert_eq!(placed(&ec2, &id).await, (None, None, "default".into()));

    ec2.stop_instances().instance_ids(&id).send().await.unwrap();
    crate::wait(&ec2, &id, InstanceStateName::Stopped).await;

    // Into a spread group by name (the CLI's example), then into a partition by group id.
    let out = modify().group_name("spread").send().await.unwrap();
    assert_eq!(out.r#return(), Some(true));
    assert_eq!(
        placed(&ec2, &id).await,
        (Some("spread".into()), None, "default".into())
    );
    let in_spread = ec2
        .describe_instances()
        .filters(filter("placement-group-name", &["spread"]))
        .send()
        .await
        .unwrap();
    assert_eq!(in_spread.reservations().len(), 1);
    let etcd_id = ec2
        .describe_placement_groups()
        .group_names("etcd")
        .send()
        .await
        .unwrap()
        .placement_groups()[0]
        .group_id()
        .unwrap()
        .to_string();
    modify()
        .group_id(&etcd_id)
        .partition_number(2)
        .send()
        .await
        .unwrap();
    assert_eq!(
        placed(&ec2, &id).await,
        (Some("etcd".into()), Some(2), "default".into())
    );

    // Refused, changing nothing: a partition the group does not have, a cluster group in use
    // in another zone, a group that does not exist, nothing to change, an affinity without
    // host tenancy, a host that does not exist.
    let before = placed(&ec2, &id).await;
    let refusals = [
        (
            code(modify().group_name("etcd").partition_number(4).send().await),
            "InvalidParameterValue",
        ),
        (
            code(modify().group_name("hpc").send().await),
            "InvalidPlacementGroup.InUse",
        ),
        (
            code(modify().group_name("nope").send().await),
            "InvalidPlacementGroup.Unknown",
        ),
        (code(modify().send().await), "MissingParameter"),
        (
            code(
                modify()
                    .affinity(aws_sdk_ec2::types::Affinity::Host)
                    .send()
                    .await,
            ),
            "InvalidParameterCombination",
        ),
        (
            code(modify().host_id("h-0123456789abcdef0").send().await),
            "InvalidHostID.NotFound",
        ),
        (
            code(modify().group_name("").partition_number(1).send().await),
            "InvalidParameterCombination",
        ),
    ];
    for (got, want) in refusals {
        assert_eq!(got, want);
    }
    assert_eq!(placed(&ec2, &id).await, before);

    // Out of any group, and dedicated: both in one call.
    modify()
        .group_name("")
        .tenancy(HostTenancy::Dedicated)
        .send()
        .await
        .unwrap();
    assert_eq!(placed(&ec2, &id).await, (None, None, "dedicated".into()));
    // The spread group no longer holds it, so it can be deleted.
    ec2.delete_placement_group()
        .group_name(spread.group_name().unwrap())
        .send()
        .await
        .unwrap();
    ec2.start_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    crate::wait(&ec2, &id, InstanceStateName::Running).await;
    assert_eq!(placed(&ec2, &id).await, (None, None, "dedicated".into()));
    let gone = ec2
        .modify_instance_placement()
        .instance_id("i-0123456789abcdef0")
        .tenancy(HostTenancy::Default)
        .send()
        .await;
    assert_eq!(code(gone), "InvalidInstanceID.NotFound");
}
