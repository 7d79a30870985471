//! Dedicated Hosts through the SDK, as Terraform's `aws_ec2_host` and a Cluster API provider's
//! dedicated host placement drive them: AllocateHosts, DescribeHosts (the host's hardware and
//! capacity, its instances), launches naming a host or landing on one by auto placement,
//! affinity across a stop and start, ModifyHosts, ReleaseHosts (refused while occupied), the
//! family quota, idempotent allocation and the error codes AWS answers.

use aws_sdk_ec2::types::{
    Affinity, AllocationState, AllowsMultipleInstanceTypes, AutoPlacement, Host, HostMaintenance,
    HostRecovery, HostTenancy, InstanceStateName as State, InstanceType, Placement, ResourceType,
    Tenancy,
};

use crate::{
    advance, code, code_and_message, described, empty_fake, filter, image, instance_ids, stop,
    subnet, tag_spec, vpc, wait,
};

const ZONE: &str = "us-east-1a";

async fn host(ec2: &aws_sdk_ec2::Client, id: &str) -> Host {
    let out = ec2.describe_hosts().host_ids(id).send().await.unwrap();
    let [h] = out.hosts() else {
        panic!("one host: {out:?}");
    };
    h.clone()
}

/// (available, total) of `t` on host `h`, and the host's available vCPUs.
fn capacity(h: &Host, t: &str) -> (i32, i32, i32) {
    let c = h.available_capacity().unwrap();
    let one = c
        .available_instance_capacity()
        .iter()
        .find(|c| c.instance_type() == Some(t))
        .unwrap_or_else(|| panic!("{t} on {h:?}"));
    (
        one.available_capacity().unwrap(),
        one.total_capacity().unwrap(),
        c.available_v_cpus().unwrap(),
    )
}

/// Launches `count` instances of type `t` into `subnet_id` with `placement`.
async fn launch(
    ec2: &aws_sdk_ec2::Client,
    subnet_id: &str,
    t: InstanceType,
    count: i32,
    placement: Placement,
) -> Result<Vec<String>, (String, String)> {
    let ami = image(ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let r = ec2
        .run_instances()
        .image_id(ami)
        .instance_type(t)
        .subnet_id(subnet_id)
        .placement(placement)
        .min_count(count)
        .max_count(count)
        .send()
        .await;
    match r {
        Ok(r) => Ok(r
            .instances()
            .iter()
            .filter_map(|i| i.instance_id().map(String::from))
            .collect()),
        Err(e) => Err(code_and_message(Err::<(), _>(e))),
    }
}

fn on(host_id: &str) -> Placement {
    Placement::builder().host_id(host_id).build()
}

fn untargeted(affinity: Option<&str>) -> Placement {
    Placement::builder()
        .tenancy(Tenancy::Host)
        .set_affinity(affinity.map(String::from))
        .build()
}

/// The host instance `id` runs on (or last ran on).
async fn host_of(ec2: &aws_sdk_ec2::Client, id: &str) -> String {
    described(ec2, id)
        .await
        .placement()
        .and_then(|p| p.host_id())
        .unwrap_or_default()
        .to_string()
}

/// Launches one `m5.24xlarge` (a whole m5 host) of `host` tenancy with `affinity`.
async fn whole_host(ec2: &aws_sdk_ec2::Client, subnet_id: &str, affinity: Option<&str>) -> String {
    launch(
        ec2,
        subnet_id,
        InstanceType::M524xlarge,
        1,
        untargeted(affinity),
    )
    .await
    .unwrap()
    .remove(0)
}

#[tokio::test]
async fn a_host_runs_its_type_up_to_its_capacity_and_is_released_once_empty() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let subnet_id = subnet(&ec2, &vpc_id, "10.0.1.0/24", ZONE).await;
    let other_zone = subnet(&ec2, &vpc_id, "10.0.2.0/24", "us-east-1b").await;

    let allocated = ec2
        .allocate_hosts()
        .instance_type("m5.large")
        .availability_zone(ZONE)
        .quantity(1)
        .tag_specifications(tag_spec(ResourceType::DedicatedHost, &[("purpose", "ci")]))
        .send()
        .await
        .unwrap();
    let [h] = allocated.host_ids() else {
        panic!("one host: {allocated:?}");
    };
    assert!(h.starts_with("h-") && h.len() == 19, "{h}");

    // The CLI's documented output for an m5.large host: 2 sockets, 48 cores, 96 vCPUs, 48
    // m5.large; auto placement and recovery off, maintenance on.
    let shown = host(&ec2, h).await;
    assert_eq!(shown.state(), Some(&AllocationState::Available));
    assert_eq!(shown.availability_zone(), Some(ZONE));
    assert_eq!(shown.availability_zone_id(), Some("use1-az1"));
    let p = shown.host_properties().unwrap();
    assert_eq!(
        (p.sockets(), p.cores(), p.total_v_cpus(), p.instance_type()),
        (Some(2), Some(48), Some(96), Some("m5.large"))
    );
    assert_eq!(capacity(&shown, "m5.large"), (48, 48, 96));
    assert_eq!(shown.auto_placement(), Some(&AutoPlacement::Off));
    assert_eq!(shown.host_recovery(), Some(&HostRecovery::Off));
    assert_eq!(shown.host_maintenance(), Some(&HostMaintenance::On));
    assert_eq!(
        shown.allows_multiple_instance_types(),
        Some(&AllowsMultipleInstanceTypes::Off)
    );
    assert_eq!(shown.tags()[0].value(), Some("ci"));
    assert!(shown.instances().is_empty() && shown.allocation_time().is_some());

    // Two instances on it, named by id: host tenancy, default affinity, its capacity less.
    let placed = launch(&ec2, &subnet_id, InstanceType::M5Large, 2, on(h))
        .await
        .unwrap();
    let shown = host(&ec2, h).await;
    assert_eq!(capacity(&shown, "m5.large"), (46, 48, 92));
    let mut on_host: Vec<&str> = shown
        .instances()
        .iter()
        .filter_map(|i| i.instance_id())
        .collect();
    on_host.sort_unstable();
    let mut expected: Vec<&str> = placed.iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(on_host, expected);
    let i = described(&ec2, &placed[0]).await;
    let placement = i.placement().unwrap();
    assert_eq!(placement.host_id(), Some(h.as_str()));
    assert_eq!(placement.tenancy(), Some(&Tenancy::Host));
    assert_eq!(placement.affinity(), Some("default"));
    let mut by_filter = instance_ids(&ec2, &[("host-id", h)]).await;
    by_filter.sort();
    let mut placed_sorted = placed.clone();
    placed_sorted.sort();
    assert_eq!(by_filter, placed_sorted);

    // Another type, another zone, another tenancy: refused, and nothing launched.
    let (c, m) = launch(&ec2, &subnet_id, InstanceType::M5Xlarge, 1, on(h))
        .await
        .unwrap_err();
    assert_eq!(c, "InvalidParameterValue", "{m}");
    let (c, m) = launch(&ec2, &other_zone, InstanceType::M5Large, 1, on(h))
        .await
        .unwrap_err();
    assert_eq!(c, "InvalidParameterValue", "{m}");
    let dedicated = Placement::builder()
        .host_id(h)
        .tenancy(Tenancy::Dedicated)
        .build();
    assert_eq!(
        launch(&ec2, &subnet_id, InstanceType::M5Large, 1, dedicated)
            .await
            .unwrap_err()
            .0,
        "InvalidParameterCombination"
    );
    // Untargeted: not while auto placement is off; on it once it is on.
    let (c, _) = launch(&ec2, &subnet_id, InstanceType::M5Large, 1, untargeted(None))
        .await
        .unwrap_err();
    assert_eq!(c, "InsufficientCapacityOnHost");
    let modified = ec2
        .modify_hosts()
        .host_ids(h)
        .auto_placement(AutoPlacement::On)
        .send()
        .await
        .unwrap();
    assert_eq!(modified.successful(), std::slice::from_ref(h));
    let third = launch(&ec2, &subnet_id, InstanceType::M5Large, 1, untargeted(None))
        .await
        .unwrap();
    assert_eq!(
        described(&ec2, &third[0])
            .await
            .placement()
            .unwrap()
            .host_id(),
        Some(h.as_str())
    );
    assert_eq!(host(&ec2, h).await.instances().len(), 3);

    // Occupied: not released.
    let refused = ec2.release_hosts().host_ids(h).send().await.unwrap();
    assert!(refused.successful().is_empty());
    let e = refused.unsuccessful()[0].error().unwrap();
    assert_eq!(e.code(), Some("Client.InvalidHost.Occupied"));
    assert_eq!(
        e.message(),
        Some(format!("Dedicated host '{h}' cannot be released as it is occupied.").as_str())
    );
    assert_eq!(
        host(&ec2, h).await.state(),
        Some(&AllocationState::Available)
    );

    // Terminated, the instances leave it; then it is released and stays listed so.
    let mut all = placed.clone();
    all.extend(third);
    ec2.terminate_instances()
        .set_instance_ids(Some(all.clone()))
        .send()
        .await
        .unwrap();
    advance(&fake, 600);
    for id in &all {
        wait(&ec2, id, State::Terminated).await;
    }
    assert_eq!(capacity(&host(&ec2, h).await, "m5.large"), (48, 48, 96));
    let released = ec2.release_hosts().host_ids(h).send().await.unwrap();
    assert_eq!(released.successful(), std::slice::from_ref(h));
    let shown = host(&ec2, h).await;
    assert_eq!(shown.state(), Some(&AllocationState::Released));
    assert!(shown.release_time().is_some());
    let listed = ec2
        .describe_hosts()
        .filter(filter("state", &["released"]))
        .send()
        .await
        .unwrap();
    assert_eq!(listed.hosts().len(), 1);
    let again = ec2.release_hosts().host_ids(h).send().await.unwrap();
    assert_eq!(
        again.unsuccessful()[0].error().unwrap().code(),
        Some("Client.InvalidHostID.NotFound")
    );
    assert_eq!(
        launch(&ec2, &subnet_id, InstanceType::M5Large, 1, on(h))
            .await
            .unwrap_err()
            .0,
        "InvalidHostState"
    );
    assert_eq!(
        code(
            ec2.describe_hosts()
                .host_ids("h-0123456789abcdef0")
                .send()
                .await
        ),
        "InvalidHostID.NotFound"
    );
}

#[tokio::test]
async fn a_family_host_runs_every_size_and_affinity_holds_across_a_start() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let subnet_id = subnet(&ec2, &vpc_id, "10.0.1.0/24", ZONE).await;

    // Refusals first: a type and a family, neither, a type hosts do not run, no quantity.
    let refused = |t: Option<&str>, f: Option<&str>, q: Option<i32>| {
        ec2.allocate_hosts()
            .set_instance_type(t.map(String::from))
            .set_instance_family(f.map(String::from))
            .availability_zone(ZONE)
            .set_quantity(q)
            .send()
    };
    assert_eq!(
        code(refused(Some("m5.large"), Some("m5"), Some(1)).await),
        "InvalidParameterCombination"
    );
    assert_eq!(code(refused(None, None, Some(1)).await), "MissingParameter");
    assert_eq!(
        code(refused(Some("t2.micro"), None, Some(1)).await),
        "InvalidHostConfiguration"
    );
    assert_eq!(
        code(refused(None, Some("m5"), Some(0)).await),
        "InvalidQuantity"
    );
    assert_eq!(
        code(refused(None, Some("t4g"), Some(1)).await),
        "InvalidHostConfiguration"
    );
    assert!(
        ec2.describe_hosts()
            .send()
            .await
            .unwrap()
            .hosts()
            .is_empty()
    );

    // Two m5 family hosts with auto placement, idempotently: the retry answers the same two.
    let allocate = || {
        ec2.allocate_hosts()
            .instance_family("m5")
            .availability_zone(ZONE)
            .auto_placement(AutoPlacement::On)
            .quantity(2)
            .client_token("hosts-1")
            .send()
    };
    let first = allocate().await.unwrap().host_ids().to_vec();
    assert_eq!(first.len(), 2);
    assert_eq!(allocate().await.unwrap().host_ids(), first.as_slice());
    let (a, b) = (first[0].clone(), first[1].clone());
    let shown = host(&ec2, &a).await;
    let p = shown.host_properties().unwrap();
    assert_eq!((p.instance_family(), p.instance_type()), (Some("m5"), None));
    assert_eq!(
        shown.allows_multiple_instance_types(),
        Some(&AllowsMultipleInstanceTypes::On)
    );
    assert_eq!(capacity(&shown, "m5.large"), (48, 48, 96));
    assert_eq!(capacity(&shown, "m5.4xlarge"), (6, 6, 96));
    assert_eq!(capacity(&shown, "m5.24xlarge"), (1, 1, 96));
    // A T3 host runs four times as many instances as a comparable host: 192 of the small
    // sizes, 96 t3.large, 24 t3.2xlarge; its 96 vCPUs shown as such.
    let t3 = ec2
        .allocate_hosts()
        .instance_family("t3")
        .availability_zone(ZONE)
        .quantity(1)
        .send()
        .await
        .unwrap();
    let t3 = host(&ec2, &t3.host_ids()[0]).await;
    assert_eq!(capacity(&t3, "t3.nano"), (192, 192, 96));
    assert_eq!(capacity(&t3, "t3.large"), (96, 96, 96));
    assert_eq!(capacity(&t3, "t3.2xlarge"), (24, 24, 96));
    // The family quota (2 by default) is used up.
    assert_eq!(
        code(
            ec2.allocate_hosts()
                .instance_family("m5")
                .availability_zone(ZONE)
                .quantity(1)
                .send()
                .await
        ),
        "HostLimitExceeded"
    );
    let by_token = ec2
        .describe_hosts()
        .filter(filter("client-token", &["hosts-1"]))
        .filter(filter("auto-placement", &["on"]))
        .send()
        .await
        .unwrap();
    assert_eq!(by_token.hosts().len(), 2);

    // A whole-host instance with host affinity takes the first; the other sizes see it full.
    let x = whole_host(&ec2, &subnet_id, Some("host")).await;
    assert_eq!(host_of(&ec2, &x).await, a);
    assert_eq!(capacity(&host(&ec2, &a).await, "m5.large"), (0, 48, 0));
    let (c, _) = launch(&ec2, &subnet_id, InstanceType::M5Large, 1, on(&a))
        .await
        .unwrap_err();
    assert_eq!(c, "InsufficientCapacityOnHost");
    // Changing a host's type: not while occupied, and not to another family.
    let modified = ec2
        .modify_hosts()
        .host_ids(&a)
        .host_ids(&b)
        .instance_type("m5.large")
        .send()
        .await
        .unwrap();
    assert_eq!(modified.successful(), std::slice::from_ref(&b));
    assert_eq!(
        modified.unsuccessful()[0].error().unwrap().code(),
        Some("Client.InvalidHost.Occupied")
    );
    assert_eq!(
        host(&ec2, &b)
            .await
            .host_properties()
            .unwrap()
            .instance_type(),
        Some("m5.large")
    );
    ec2.modify_hosts()
        .host_ids(&b)
        .instance_family("m5")
        .send()
        .await
        .unwrap();
    let other_family = ec2
        .modify_hosts()
        .host_ids(&b)
        .instance_type("c5.large")
        .send()
        .await
        .unwrap();
    assert!(other_family.successful().is_empty());

    // Stopped, x frees its host; y, default affinity, lands there; x cannot start (host
    // affinity) while y runs there.
    stop(&fake, &ec2, &x).await;
    assert_eq!(capacity(&host(&ec2, &a).await, "m5.large"), (48, 48, 96));
    let y = whole_host(&ec2, &subnet_id, None).await;
    assert_eq!(host_of(&ec2, &y).await, a);
    assert_eq!(
        code(ec2.start_instances().instance_ids(&x).send().await),
        "InsufficientCapacityOnHost"
    );
    assert_eq!(
        described(&ec2, &x).await.state().unwrap().name(),
        Some(&State::Stopped)
    );
    // z fills b; y stops, so x (host affinity) starts on a again; then y (default affinity)
    // finds both hosts full: refused.
    let z = whole_host(&ec2, &subnet_id, None).await;
    assert_eq!(host_of(&ec2, &z).await, b);
    stop(&fake, &ec2, &y).await;
    ec2.start_instances().instance_ids(&x).send().await.unwrap();
    assert_eq!(
        code(ec2.start_instances().instance_ids(&y).send().await),
        "InsufficientCapacityOnHost"
    );
    // z stopped, b is free: y, default affinity, starts there instead of on its own host a.
    stop(&fake, &ec2, &z).await;
    ec2.start_instances().instance_ids(&y).send().await.unwrap();
    assert_eq!(host_of(&ec2, &y).await, b);

    // ModifyInstancePlacement: z (stopped) onto host a by id; y's affinity changed while it
    // runs; a host instance's tenancy never leaves host.
    ec2.modify_instance_placement()
        .instance_id(&z)
        .host_id(&a)
        .affinity(Affinity::Host)
        .send()
        .await
        .unwrap();
    let placement = described(&ec2, &z).await.placement().unwrap().clone();
    assert_eq!(
        (placement.host_id(), placement.affinity()),
        (Some(a.as_str()), Some("host"))
    );
    ec2.modify_instance_placement()
        .instance_id(&y)
        .affinity(Affinity::Host)
        .send()
        .await
        .unwrap();
    assert_eq!(
        code(
            ec2.modify_instance_placement()
                .instance_id(&z)
                .tenancy(HostTenancy::Dedicated)
                .send()
                .await
        ),
        "InvalidRequest"
    );
    // x runs on a, so z (host affinity to a) cannot start.
    assert_eq!(
        code(ec2.start_instances().instance_ids(&z).send().await),
        "InsufficientCapacityOnHost"
    );
    let mut by_affinity = instance_ids(&ec2, &[("affinity", "host")]).await;
    by_affinity.sort();
    let mut expected = vec![x.clone(), y.clone(), z.clone()];
    expected.sort();
    assert_eq!(by_affinity, expected);
}
