//! On-Demand Capacity Reservations through the SDK, as Terraform's
//! `aws_ec2_capacity_reservation` and a Cluster API provider's `capacityReservationId` drive
//! them: CreateCapacityReservation (the CLI's documented output), the capacity the instances
//! running in a reservation hold (open matching, targeted launches, stops and starts),
//! DescribeCapacityReservations' filters and pages, GetCapacityReservationUsage,
//! ModifyCapacityReservation, CancelCapacityReservation, a limited reservation's expiry on the
//! clock, ModifyInstanceCapacityReservationAttributes, and the error codes.

use aws_sdk_ec2::primitives::DateTime;
use aws_sdk_ec2::types::{
    CapacityReservation, CapacityReservationInstancePlatform as Platform,
    CapacityReservationPreference as Preference, CapacityReservationSpecification,
    CapacityReservationState as State, CapacityReservationTarget, CapacityReservationTenancy,
    EndDateType, InstanceMarketOptionsRequest, InstanceMatchCriteria,
    InstanceStateName as InstanceState, InstanceType,
    LaunchTemplateCapacityReservationSpecificationRequest, LaunchTemplateSpecification, MarketType,
    RequestLaunchTemplateData, ResourceType,
};

use crate::{
    advance, code, code_and_message, described, empty_fake, filter, image, stop, subnet, tag_spec,
    vpc, wait,
};

const ZONE: &str = "us-east-1a";
/// The virtual clock's start (`empty_fake`).
const START: i64 = 1_795_961_900;

/// Creates a reservation for `count` `t3.large` Linux/UNIX instances in `zone` with `criteria`.
async fn reserve(
    ec2: &aws_sdk_ec2::Client,
    zone: &str,
    count: i32,
    criteria: InstanceMatchCriteria,
) -> String {
    ec2.create_capacity_reservation()
        .instance_type("t3.large")
        .instance_platform(Platform::LinuxUnix)
        .availability_zone(zone)
        .instance_count(count)
        .instance_match_criteria(criteria)
        .send()
        .await
        .unwrap()
        .capacity_reservation
        .unwrap()
        .capacity_reservation_id
        .unwrap()
}

async fn reservation(ec2: &aws_sdk_ec2::Client, id: &str) -> CapacityReservation {
    let out = ec2
        .describe_capacity_reservations()
        .capacity_reservation_ids(id)
        .send()
        .await
        .unwrap();
    let [r] = out.capacity_reservations() else {
        panic!("one reservation: {out:?}");
    };
    r.clone()
}

/// (available, total) of reservation `id`.
async fn counts(ec2: &aws_sdk_ec2::Client, id: &str) -> (i32, i32) {
    let r = reservation(ec2, id).await;
    (
        r.available_instance_count().unwrap(),
        r.total_instance_count().unwrap(),
    )
}

/// Launches between `min` and `max` instances of type `t` (into `subnet_id`, if given) with
/// `spec`: their ids, or the error's code and message.
async fn launch(
    ec2: &aws_sdk_ec2::Client,
    subnet_id: Option<&str>,
    t: InstanceType,
    (min, max): (i32, i32),
    spec: Option<CapacityReservationSpecification>,
) -> Result<Vec<String>, (String, String)> {
    let ami = image(ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let r = ec2
        .run_instances()
        .image_id(ami)
        .instance_type(t)
        .set_subnet_id(subnet_id.map(String::from))
        .set_capacity_reservation_specification(spec)
        .min_count(min)
        .max_count(max)
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

fn preference(p: Preference) -> Option<CapacityReservationSpecification> {
    Some(
        CapacityReservationSpecification::builder()
            .capacity_reservation_preference(p)
            .build(),
    )
}

fn targeting(id: &str) -> Option<CapacityReservationSpecification> {
    Some(
        CapacityReservationSpecification::builder()
            .capacity_reservation_target(
                CapacityReservationTarget::builder()
                    .capacity_reservation_id(id)
                    .build(),
            )
            .build(),
    )
}

/// The reservation instance `id` runs in, as DescribeInstances shows it.
async fn runs_in(ec2: &aws_sdk_ec2::Client, id: &str) -> Option<String> {
    described(ec2, id)
        .await
        .capacity_reservation_id()
        .map(String::from)
}

#[tokio::test]
async fn an_open_reservation_holds_capacity_for_the_matching_instances_that_run_in_it() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let subnet_a = subnet(&ec2, &vpc_id, "10.0.1.0/24", ZONE).await;
    let subnet_b = subnet(&ec2, &vpc_id, "10.0.2.0/24", "us-east-1b").await;

    // The CLI's documented output of create-capacity-reservation.
    let made = ec2
        .create_capacity_reservation()
        .instance_type("t3.large")
        .instance_platform(Platform::LinuxUnix)
        .availability_zone(ZONE)
        .instance_count(2)
        .tag_specifications(tag_spec(
            ResourceType::CapacityReservation,
            &[("team", "gpu")],
        ))
        .send()
        .await
        .unwrap()
        .capacity_reservation
        .unwrap();
    let id = made.capacity_reservation_id().unwrap().to_string();
    assert!(id.starts_with("cr-") && id.len() == 20, "{id}");
    assert_eq!(made.state(), Some(&State::Active));
    assert_eq!(made.end_date_type(), Some(&EndDateType::Unlimited));
    assert_eq!(
        made.instance_match_criteria(),
        Some(&InstanceMatchCriteria::Open)
    );
    assert_eq!(made.tenancy(), Some(&CapacityReservationTenancy::Default));
    assert_eq!(
        (made.total_instance_count(), made.available_instance_count()),
        (Some(2), Some(2))
    );
    assert_eq!(
        (made.ebs_optimized(), made.ephemeral_storage()),
        (Some(false), Some(false))
    );
    assert_eq!(made.availability_zone_id(), Some("use1-az1"));
    assert_eq!(
        made.capacity_reservation_arn(),
        Some(format!("arn:aws:ec2:us-east-1:123456789012:capacity-reservation/{id}").as_str())
    );
    assert_eq!(made.create_date().map(DateTime::secs), Some(START));
    assert_eq!(made.tags()[0].value(), Some("gpu"));
    assert!(made.end_date().is_none());

    // A matching launch (type, platform, zone, default tenancy) runs in it by default.
    let first = launch(&ec2, Some(&subnet_a), InstanceType::T3Large, (1, 1), None)
        .await
        .unwrap()
        .remove(0);
    assert_eq!(runs_in(&ec2, &first).await.as_deref(), Some(id.as_str()));
    let shown = described(&ec2, &first).await;
    let spec = shown.capacity_reservation_specification().unwrap();
    assert_eq!(
        spec.capacity_reservation_preference(),
        Some(&Preference::Open)
    );
    assert!(spec.capacity_reservation_target().is_none());
    assert_eq!(counts(&ec2, &id).await, (1, 2));
    let usage = ec2
        .get_capacity_reservation_usage()
        .capacity_reservation_id(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(
        (
            usage.total_instance_count(),
            usage.available_instance_count(),
            usage.state()
        ),
        (Some(2), Some(1), Some(&State::Active))
    );
    assert_eq!(usage.instance_usages()[0].used_instance_count(), Some(1));
    assert_eq!(
        usage.instance_usages()[0].account_id(),
        Some("123456789012")
    );

    // Two more: one fills the reservation, the other runs On-Demand.
    let more = launch(&ec2, Some(&subnet_a), InstanceType::T3Large, (2, 2), None)
        .await
        .unwrap();
    let placed: Vec<Option<String>> = reservations_of(&ec2, &more).await;
    assert_eq!(placed, vec![Some(id.clone()), None]);
    assert_eq!(counts(&ec2, &id).await, (0, 2));

    // Another type, another zone, or the preference `none`: never in it.
    stop(&fake, &ec2, &first).await;
    assert_eq!(
        counts(&ec2, &id).await,
        (1, 2),
        "a stopped instance holds none"
    );
    for (s, t, spec) in [
        (&subnet_a, InstanceType::M5Large, None),
        (&subnet_b, InstanceType::T3Large, None),
        (
            &subnet_a,
            InstanceType::T3Large,
            preference(Preference::None),
        ),
    ] {
        let other = launch(&ec2, Some(s), t, (1, 1), spec).await.unwrap();
        assert_eq!(runs_in(&ec2, &other[0]).await, None);
    }
    assert_eq!(counts(&ec2, &id).await, (1, 2));

    // Started again, the stopped instance takes its place back.
    ec2.start_instances()
        .instance_ids(&first)
        .send()
        .await
        .unwrap();
    assert_eq!(runs_in(&ec2, &first).await.as_deref(), Some(id.as_str()));
    assert_eq!(counts(&ec2, &id).await, (0, 2));

    // Terminated, an instance gives its place back.
    ec2.terminate_instances()
        .instance_ids(&first)
        .send()
        .await
        .unwrap();
    advance(&fake, 60);
    wait(&ec2, &first, InstanceState::Terminated).await;
    assert_eq!(counts(&ec2, &id).await, (1, 2));

    // `capacity-reservations-only` with no open reservation that matches fails.
    let (c, m) = launch(
        &ec2,
        Some(&subnet_b),
        InstanceType::T3Large,
        (1, 1),
        preference(Preference::CapacityReservationsOnly),
    )
    .await
    .unwrap_err();
    assert_eq!(c, "InsufficientInstanceCapacity", "{m}");
    let only = launch(
        &ec2,
        Some(&subnet_a),
        InstanceType::T3Large,
        (1, 3),
        preference(Preference::CapacityReservationsOnly),
    )
    .await
    .unwrap();
    assert_eq!(only.len(), 1, "as many as the reservation has room for");
    assert_eq!(counts(&ec2, &id).await, (0, 2));
}

/// The reservation each of `ids` runs in, in order.
async fn reservations_of(ec2: &aws_sdk_ec2::Client, ids: &[String]) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for id in ids {
        out.push(runs_in(ec2, id).await);
    }
    out
}

#[tokio::test]
async fn a_targeted_reservation_takes_only_the_launches_that_name_it() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    ec2.create_default_vpc().send().await.unwrap();
    let id = reserve(&ec2, "us-east-1b", 1, InstanceMatchCriteria::Targeted).await;

    // An open launch does not use a targeted reservation.
    let subnet_b = crate::default_subnet_in(&ec2, "us-east-1b").await;
    let open = launch(&ec2, Some(&subnet_b), InstanceType::T3Large, (1, 1), None)
        .await
        .unwrap();
    assert_eq!(runs_in(&ec2, &open[0]).await, None);

    // A launch that targets it and names no subnet lands in its zone, and shows its target.
    let targeted = launch(&ec2, None, InstanceType::T3Large, (1, 1), targeting(&id))
        .await
        .unwrap()
        .remove(0);
    let shown = described(&ec2, &targeted).await;
    assert_eq!(
        shown.placement().and_then(|p| p.availability_zone()),
        Some("us-east-1b")
    );
    assert_eq!(shown.capacity_reservation_id(), Some(id.as_str()));
    let spec = shown.capacity_reservation_specification().unwrap();
    assert_eq!(
        spec.capacity_reservation_target()
            .and_then(|t| t.capacity_reservation_id()),
        Some(id.as_str())
    );
    assert!(spec.capacity_reservation_preference().is_none());
    assert_eq!(counts(&ec2, &id).await, (0, 1));

    // Full, it refuses the next; so it does a launch of another type, with a preference
    // beside the target, of Spot Instances, or naming a reservation that does not exist.
    let refused = |r: Result<Vec<String>, (String, String)>| r.unwrap_err().0;
    assert_eq!(
        refused(launch(&ec2, None, InstanceType::T3Large, (1, 1), targeting(&id)).await),
        "ReservationCapacityExceeded"
    );
    assert_eq!(
        refused(launch(&ec2, None, InstanceType::M5Large, (1, 1), targeting(&id)).await),
        "InvalidParameterValue"
    );
    let both = CapacityReservationSpecification::builder()
        .capacity_reservation_preference(Preference::Open)
        .capacity_reservation_target(
            CapacityReservationTarget::builder()
                .capacity_reservation_id(&id)
                .build(),
        )
        .build();
    assert_eq!(
        refused(launch(&ec2, None, InstanceType::T3Large, (1, 1), Some(both)).await),
        "InvalidParameterCombination"
    );
    let ami = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    let spot = ec2
        .run_instances()
        .image_id(&ami)
        .instance_type(InstanceType::T3Large)
        .instance_market_options(
            InstanceMarketOptionsRequest::builder()
                .market_type(MarketType::Spot)
                .build(),
        )
        .set_capacity_reservation_specification(targeting(&id))
        .min_count(1)
        .max_count(1)
        .send()
        .await;
    assert_eq!(code(spot), "InvalidParameterCombination");
    assert_eq!(
        refused(
            launch(
                &ec2,
                None,
                InstanceType::T3Large,
                (1, 1),
                targeting("cr-0123456789abcdef0")
            )
            .await
        ),
        "InvalidCapacityReservationId.NotFound"
    );
    assert_eq!(
        refused(
            launch(
                &ec2,
                None,
                InstanceType::T3Large,
                (1, 1),
                targeting("cr-nope")
            )
            .await
        ),
        "InvalidCapacityReservationId.Malformed"
    );

    // Its settings change only while the instance is stopped.
    let running = ec2
        .modify_instance_capacity_reservation_attributes()
        .instance_id(&targeted)
        .capacity_reservation_specification(preference(Preference::Open).unwrap())
        .send()
        .await;
    assert_eq!(code(running), "IncorrectInstanceState");

    // Cancelled, the reservation holds nothing; its running instance runs on, but stopped it
    // cannot start into it again until it no longer targets it.
    stop(&fake, &ec2, &targeted).await;
    let cancelled = ec2
        .cancel_capacity_reservation()
        .capacity_reservation_id(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(cancelled.r#return(), Some(true));
    let r = reservation(&ec2, &id).await;
    assert_eq!(r.state(), Some(&State::Cancelled));
    assert_eq!(r.available_instance_count(), Some(0));
    let start = ec2.start_instances().instance_ids(&targeted).send().await;
    assert_eq!(code(start), "InvalidParameterValue");
    assert_eq!(
        described(&ec2, &targeted)
            .await
            .state()
            .and_then(|s| s.name()),
        Some(&InstanceState::Stopped),
        "a refused start leaves it stopped"
    );
    ec2.modify_instance_capacity_reservation_attributes()
        .instance_id(&targeted)
        .capacity_reservation_specification(preference(Preference::Open).unwrap())
        .send()
        .await
        .unwrap();
    ec2.start_instances()
        .instance_ids(&targeted)
        .send()
        .await
        .unwrap();
    let shown = described(&ec2, &targeted).await;
    assert_eq!(shown.capacity_reservation_id(), None);
    assert_eq!(
        shown
            .capacity_reservation_specification()
            .and_then(|s| s.capacity_reservation_preference()),
        Some(&Preference::Open)
    );

    // A cancelled reservation cannot be cancelled or modified again.
    let again = ec2
        .cancel_capacity_reservation()
        .capacity_reservation_id(&id)
        .send()
        .await;
    assert_eq!(code(again), "IncorrectState");
    let modified = ec2
        .modify_capacity_reservation()
        .capacity_reservation_id(&id)
        .instance_count(3)
        .send()
        .await;
    assert_eq!(code(modified), "IncorrectState");
}

#[tokio::test]
async fn a_limited_reservation_expires_at_its_end_date_and_modifications_are_checked() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let subnet_a = subnet(&ec2, &vpc_id, "10.0.1.0/24", ZONE).await;
    let end = DateTime::from_secs(START + 3600);
    let create = || {
        ec2.create_capacity_reservation()
            .instance_type("t3.large")
            .instance_platform(Platform::LinuxUnix)
            .availability_zone(ZONE)
            .instance_count(2)
    };
    let limited = create()
        .end_date_type(EndDateType::Limited)
        .end_date(end)
        .client_token("limited-1")
        .send()
        .await
        .unwrap()
        .capacity_reservation
        .unwrap();
    let id = limited.capacity_reservation_id().unwrap().to_string();
    assert_eq!(limited.end_date_type(), Some(&EndDateType::Limited));
    assert_eq!(limited.end_date().map(DateTime::secs), Some(START + 3600));

    // The same ClientToken answers the same reservation.
    let replayed = create()
        .end_date_type(EndDateType::Limited)
        .end_date(end)
        .client_token("limited-1")
        .send()
        .await
        .unwrap();
    assert_eq!(
        replayed
            .capacity_reservation()
            .and_then(|r| r.capacity_reservation_id()),
        Some(id.as_str())
    );

    // Checked: the end and the count.
    for (call, expected) in [
        (
            create().end_date_type(EndDateType::Limited),
            "MissingParameter",
        ),
        (create().end_date(end), "InvalidParameterCombination"),
        (
            create()
                .end_date_type(EndDateType::Limited)
                .end_date(DateTime::from_secs(START - 60)),
            "InvalidParameterValue",
        ),
        (create().instance_count(0), "InvalidParameterValue"),
        (create().instance_count(1001), "InvalidParameterValue"),
        (
            create().instance_type("t3.enormous"),
            "InvalidParameterValue",
        ),
        (
            create().availability_zone("us-east-1q"),
            "InvalidParameterValue",
        ),
    ] {
        assert_eq!(code(call.send().await), expected);
    }

    // Two instances in it; its count cannot go below them; it can go up, and its match
    // criteria cannot change while they run.
    launch(&ec2, Some(&subnet_a), InstanceType::T3Large, (2, 2), None)
        .await
        .unwrap();
    let modify = || {
        ec2.modify_capacity_reservation()
            .capacity_reservation_id(&id)
    };
    assert_eq!(
        code(modify().instance_count(1).send().await),
        "InvalidParameterValue"
    );
    assert_eq!(
        code(
            modify()
                .instance_match_criteria(InstanceMatchCriteria::Targeted)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    assert_eq!(code(modify().send().await), "MissingParameter");
    modify().instance_count(5).send().await.unwrap();
    assert_eq!(counts(&ec2, &id).await, (3, 5));

    // A launch template keeps a target, and a launch from it runs in the reservation.
    let ami = image(&ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    ec2.create_launch_template()
        .launch_template_name("reserved")
        .launch_template_data(
            RequestLaunchTemplateData::builder()
                .image_id(&ami)
                .instance_type(InstanceType::T3Large)
                .capacity_reservation_specification(
                    LaunchTemplateCapacityReservationSpecificationRequest::builder()
                        .capacity_reservation_target(
                            CapacityReservationTarget::builder()
                                .capacity_reservation_id(&id)
                                .build(),
                        )
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    let versions = ec2
        .describe_launch_template_versions()
        .launch_template_name("reserved")
        .send()
        .await
        .unwrap();
    assert_eq!(
        versions.launch_template_versions()[0]
            .launch_template_data()
            .and_then(|d| d.capacity_reservation_specification())
            .and_then(|c| c.capacity_reservation_target())
            .and_then(|t| t.capacity_reservation_id()),
        Some(id.as_str())
    );
    let from_template = ec2
        .run_instances()
        .launch_template(
            LaunchTemplateSpecification::builder()
                .launch_template_name("reserved")
                .build(),
        )
        .subnet_id(&subnet_a)
        .min_count(1)
        .max_count(1)
        .send()
        .await
        .unwrap();
    let launched = from_template.instances()[0].instance_id().unwrap();
    assert_eq!(runs_in(&ec2, launched).await.as_deref(), Some(id.as_str()));
    assert_eq!(counts(&ec2, &id).await, (2, 5));

    // Filters and pages.
    let other = reserve(&ec2, "us-east-1b", 1, InstanceMatchCriteria::Targeted).await;
    let ids_with = |name: &'static str, value: &'static str| {
        let ec2 = ec2.clone();
        async move {
            let out = ec2
                .describe_capacity_reservations()
                .filters(filter(name, &[value]))
                .send()
                .await
                .unwrap();
            out.capacity_reservations()
                .iter()
                .filter_map(|r| r.capacity_reservation_id().map(String::from))
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(ids_with("end-date-type", "limited").await, vec![id.clone()]);
    assert_eq!(
        ids_with("instance-match-criteria", "targeted").await,
        vec![other.clone()]
    );
    assert_eq!(
        ids_with("availability-zone", "us-east-1b").await,
        vec![other.clone()]
    );
    assert_eq!(ids_with("owner-id", "123456789012").await.len(), 2);
    assert_eq!(ids_with("instance-platform", "Windows").await.len(), 0);
    assert_eq!(ids_with("outpost-arn", "*").await.len(), 0);
    let bad = ec2
        .describe_capacity_reservations()
        .filters(filter("colour", &["blue"]))
        .send()
        .await;
    assert_eq!(code(bad), "InvalidParameterValue");
    let first = ec2
        .describe_capacity_reservations()
        .max_results(1)
        .send()
        .await
        .unwrap();
    assert_eq!(first.capacity_reservations().len(), 1);
    let rest = ec2
        .describe_capacity_reservations()
        .max_results(1)
        .next_token(first.next_token().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(rest.capacity_reservations().len(), 1);
    assert!(rest.next_token().is_none());
    let missing = ec2
        .describe_capacity_reservations()
        .capacity_reservation_ids("cr-0123456789abcdef0")
        .send()
        .await;
    assert_eq!(code(missing), "InvalidCapacityReservationId.NotFound");

    // At its end date it expires: no more capacity; its instances run on.
    advance(&fake, 3599);
    assert_eq!(reservation(&ec2, &id).await.state(), Some(&State::Active));
    advance(&fake, 2);
    let r = reservation(&ec2, &id).await;
    assert_eq!(r.state(), Some(&State::Expired));
    assert_eq!(r.available_instance_count(), Some(0));
    assert_eq!(ids_with("state", "expired").await, vec![id.clone()]);
    let after = launch(&ec2, Some(&subnet_a), InstanceType::T3Large, (1, 1), None)
        .await
        .unwrap();
    assert_eq!(runs_in(&ec2, &after[0]).await, None);
}
