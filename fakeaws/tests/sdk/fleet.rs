//! EC2 Fleet through the SDK: instant fleets answered with their instances and errors,
//! pools taken by price or priority, Spot maximum prices, maintain fleets kept at their target
//! (and ModifyFleet), DeleteFleets and its per-fleet failures, the refusals; and the Spot
//! price history the fleets' prices come from.

use aws_sdk_ec2::types::{
    DefaultTargetCapacityType, DeleteFleetErrorCode, FleetActivityStatus,
    FleetLaunchTemplateConfigRequest, FleetLaunchTemplateOverridesRequest,
    FleetLaunchTemplateSpecificationRequest, FleetOnDemandAllocationStrategy, FleetStateCode,
    FleetType, InstanceLifecycle, InstanceLifecycleType, InstanceStateName, InstanceType,
    OnDemandOptionsRequest, RequestLaunchTemplateData, ResourceType,
    TargetCapacitySpecificationRequest,
};
use aws_smithy_types::DateTime;
use fakeaws::sim::transitions::Subject;

use crate::{code, code_and_message, empty_fake, filter, image, subnet, tag_spec, vpc};

/// A launch template of the test image and `m5.large`; answers its id.
async fn template(ec2: &aws_sdk_ec2::Client, name: &str) -> String {
    let ami = image(ec2, "capa-ami-ubuntu-24.04-v1.31.0-1727000000").await;
    ec2.create_launch_template()
        .launch_template_name(name)
        .launch_template_data(
            RequestLaunchTemplateData::builder()
                .image_id(ami)
                .instance_type(InstanceType::M5Large)
                .build(),
        )
        .send()
        .await
        .unwrap()
        .launch_template
        .unwrap()
        .launch_template_id
        .unwrap()
}

fn config(
    template_id: &str,
    overrides: Vec<FleetLaunchTemplateOverridesRequest>,
) -> FleetLaunchTemplateConfigRequest {
    FleetLaunchTemplateConfigRequest::builder()
        .launch_template_specification(
            FleetLaunchTemplateSpecificationRequest::builder()
                .launch_template_id(template_id)
                .version("$Latest")
                .build(),
        )
        .set_overrides(Some(overrides))
        .build()
}

fn pool(t: InstanceType, subnet_id: &str) -> FleetLaunchTemplateOverridesRequest {
    FleetLaunchTemplateOverridesRequest::builder()
        .instance_type(t)
        .subnet_id(subnet_id)
        .build()
}

fn target(total: i32, default: DefaultTargetCapacityType) -> TargetCapacitySpecificationRequest {
    TargetCapacitySpecificationRequest::builder()
        .total_target_capacity(total)
        .default_target_capacity_type(default)
        .build()
}

async fn fleet(ec2: &aws_sdk_ec2::Client, id: &str) -> aws_sdk_ec2::types::FleetData {
    ec2.describe_fleets()
        .fleet_ids(id)
        .send()
        .await
        .unwrap()
        .fleets()[0]
        .clone()
}

async fn active(ec2: &aws_sdk_ec2::Client, id: &str) -> Vec<String> {
    let mut ids: Vec<String> = ec2
        .describe_fleet_instances()
        .fleet_id(id)
        .send()
        .await
        .unwrap()
        .active_instances()
        .iter()
        .map(|a| a.instance_id().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

async fn state(ec2: &aws_sdk_ec2::Client, id: &str) -> InstanceStateName {
    ec2.describe_instances()
        .instance_ids(id)
        .send()
        .await
        .unwrap()
        .reservations()[0]
        .instances()[0]
        .state()
        .unwrap()
        .name()
        .unwrap()
        .clone()
}

#[tokio::test]
async fn an_instant_fleet_launches_the_cheapest_pool_that_works_and_reports_the_others() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let a = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let b = subnet(&ec2, &vpc_id, "10.0.2.0/24", "us-east-1b").await;
    let lt = template(&ec2, "nodes").await;
    // m6g.large is the cheapest On-Demand pool, but Graviton: the x86 image cannot launch
    // there. c5.large comes next (m5.large costs more).
    let out = ec2
        .create_fleet()
        .r#type(FleetType::Instant)
        .launch_template_configs(config(
            &lt,
            vec![
                pool(InstanceType::M5Large, &a),
                pool(InstanceType::C5Large, &b),
                pool(InstanceType::M6gLarge, &a),
            ],
        ))
        .target_capacity_specification(target(3, DefaultTargetCapacityType::OnDemand))
        .tag_specifications(tag_spec(ResourceType::Fleet, &[("team", "nodes")]))
        .tag_specifications(tag_spec(ResourceType::Instance, &[("role", "worker")]))
        .send()
        .await
        .unwrap();
    let fleet_id = out.fleet_id().unwrap().to_string();
    assert!(
        fleet_id.starts_with("fleet-") && fleet_id.len() == 42,
        "{fleet_id}"
    );
    let launched = out.instances();
    assert_eq!(launched.len(), 1, "{launched:?}");
    let batch = &launched[0];
    assert_eq!(batch.instance_type(), Some(&InstanceType::C5Large));
    assert_eq!(batch.lifecycle(), Some(&InstanceLifecycle::OnDemand));
    assert_eq!(batch.instance_ids().len(), 3);
    assert_eq!(batch.subnet_id(), Some(b.as_str()));
    assert_eq!(batch.availability_zone(), Some("us-east-1b"));
    let used = batch.launch_template_and_overrides().unwrap();
    assert_eq!(
        used.launch_template_specification()
            .unwrap()
            .launch_template_id(),
        Some(lt.as_str())
    );
    assert_eq!(
        used.overrides().unwrap().instance_type(),
        Some(&InstanceType::C5Large)
    );
    let errors = out.errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].error_code(), Some("InvalidParameterValue"));
    assert!(
        errors[0].error_message().unwrap().contains("architecture"),
        "{errors:?}"
    );
    assert_eq!(
        errors[0]
            .launch_template_and_overrides()
            .unwrap()
            .overrides()
            .unwrap()
            .instance_type(),
        Some(&InstanceType::M6gLarge)
    );

    // The instances, as DescribeInstances holds them: tagged with the fleet and the tags asked.
    let described = ec2
        .describe_instances()
        .filters(filter("tag:aws:ec2:fleet-id", &[&fleet_id]))
        .send()
        .await
        .unwrap();
    let instances: Vec<_> = described
        .reservations()
        .iter()
        .flat_map(|r| r.instances())
        .collect();
    assert_eq!(instances.len(), 3);
    for i in &instances {
        assert_eq!(i.instance_type(), Some(&InstanceType::C5Large));
        assert_eq!(i.subnet_id(), Some(b.as_str()));
        assert!(i.instance_lifecycle().is_none());
        assert!(
            i.tags()
                .iter()
                .any(|t| t.key() == Some("role") && t.value() == Some("worker"))
        );
    }

    // Instant fleets are described only when named.
    let listed = ec2.describe_fleets().send().await.unwrap();
    assert!(listed.fleets().is_empty(), "{listed:?}");
    let f = fleet(&ec2, &fleet_id).await;
    assert_eq!(f.r#type(), Some(&FleetType::Instant));
    assert_eq!(f.fleet_state(), Some(&FleetStateCode::Active));
    assert_eq!(f.activity_status(), Some(&FleetActivityStatus::Fulfilled));
    assert_eq!(f.fulfilled_capacity(), Some(3.0));
    assert_eq!(f.fulfilled_on_demand_capacity(), Some(3.0));
    let t = f.target_capacity_specification().unwrap();
    assert_eq!(
        (
            t.total_target_capacity(),
            t.on_demand_target_capacity(),
            t.spot_target_capacity()
        ),
        (Some(3), Some(3), Some(0))
    );
    assert_eq!(f.instances().len(), 1);
    assert_eq!(f.errors().len(), 1);
    assert_eq!(f.tags()[0].value(), Some("nodes"));
    assert_eq!(
        code(
            ec2.describe_fleet_instances()
                .fleet_id(&fleet_id)
                .send()
                .await
        ),
        "InvalidParameterValue"
    );

    // An instant fleet cannot keep its instances; deleted, it terminates them.
    assert_eq!(
        code(
            ec2.delete_fleets()
                .fleet_ids(&fleet_id)
                .terminate_instances(false)
                .send()
                .await
        ),
        "InvalidParameterCombination"
    );
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.hold(Subject::Instance));
    let deleted = ec2
        .delete_fleets()
        .fleet_ids(&fleet_id)
        .terminate_instances(true)
        .send()
        .await
        .unwrap();
    let done = &deleted.successful_fleet_deletions()[0];
    assert_eq!(done.previous_fleet_state(), Some(&FleetStateCode::Active));
    assert_eq!(
        done.current_fleet_state(),
        Some(&FleetStateCode::DeletedTerminatingInstances)
    );
    let first = batch.instance_ids()[0].clone();
    assert_eq!(state(&ec2, &first).await, InstanceStateName::ShuttingDown);
    assert_eq!(
        fleet(&ec2, &fleet_id).await.fleet_state(),
        Some(&FleetStateCode::DeletedTerminatingInstances)
    );
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.release(Subject::Instance));
    assert_eq!(state(&ec2, &first).await, InstanceStateName::Terminated);
    assert_eq!(
        fleet(&ec2, &fleet_id).await.fleet_state(),
        Some(&FleetStateCode::Deleted)
    );
}

#[tokio::test]
async fn spot_pools_follow_the_price_history_and_their_maximum_prices() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let a = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let lt = template(&ec2, "spot").await;
    let types = [
        InstanceType::M5Large,
        InstanceType::M5aLarge,
        InstanceType::C5Large,
        InstanceType::C6iLarge,
    ];
    // Today's prices in the subnet's zone, as the history answers them.
    let history = ec2
        .describe_spot_price_history()
        .set_instance_types(Some(types.to_vec()))
        .product_descriptions("Linux/UNIX (Amazon VPC)")
        .availability_zone("us-east-1a")
        .send()
        .await
        .unwrap();
    let prices: Vec<(InstanceType, f64)> = history
        .spot_price_history()
        .iter()
        .map(|p| {
            (
                p.instance_type().unwrap().clone(),
                p.spot_price().unwrap().parse::<f64>().unwrap(),
            )
        })
        .collect();
    assert_eq!(prices.len(), types.len(), "{prices:?}");
    let mut by_price = prices.clone();
    by_price.sort_by(|x, y| x.1.total_cmp(&y.1));
    let (cheapest, lowest) = by_price[0].clone();
    let (second, _) = by_price[1].clone();

    let launch = |max_price: Option<String>| {
        let overrides = types
            .iter()
            .map(|t| {
                let mut o = FleetLaunchTemplateOverridesRequest::builder()
                    .instance_type(t.clone())
                    .subnet_id(&a);
                if *t == cheapest
                    && let Some(p) = &max_price
                {
                    o = o.max_price(p);
                }
                o.build()
            })
            .collect();
        ec2.create_fleet()
            .r#type(FleetType::Instant)
            .launch_template_configs(config(&lt, overrides))
            .target_capacity_specification(target(2, DefaultTargetCapacityType::Spot))
            .send()
    };
    let out = launch(None).await.unwrap();
    assert!(out.errors().is_empty(), "{:?}", out.errors());
    let batch = &out.instances()[0];
    assert_eq!(batch.instance_type(), Some(&cheapest), "{prices:?}");
    assert_eq!(batch.lifecycle(), Some(&InstanceLifecycle::Spot));
    let described = ec2
        .describe_instances()
        .set_instance_ids(Some(batch.instance_ids().to_vec()))
        .send()
        .await
        .unwrap();
    for i in described.reservations().iter().flat_map(|r| r.instances()) {
        assert_eq!(i.instance_lifecycle(), Some(&InstanceLifecycleType::Spot));
        assert!(i.spot_instance_request_id().unwrap().starts_with("sir-"));
    }

    // Below the price, the cheapest pool is refused in AWS's words; the next one launches.
    let below = format!("{:.6}", lowest / 2.0);
    let out = launch(Some(below.clone())).await.unwrap();
    let errors = out.errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].error_code(), Some("SpotMaxPriceTooLow"));
    assert_eq!(
        errors[0].error_message(),
        Some(
            format!(
                "Your Spot request price of {below} is lower than the minimum required Spot request fulfillment price of {}.",
                format!("{lowest:.6}").trim_end_matches('0')
            )
            .as_str()
        )
    );
    assert_eq!(out.instances()[0].instance_type(), Some(&second));
}

#[tokio::test]
async fn on_demand_pools_go_by_priority_when_prioritized() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let a = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let lt = template(&ec2, "prioritized").await;
    let ranked = |t: InstanceType, priority: f64| {
        FleetLaunchTemplateOverridesRequest::builder()
            .instance_type(t)
            .subnet_id(&a)
            .priority(priority)
            .build()
    };
    // r5.large is the dearest, but first by priority; weights count in units.
    let out = ec2
        .create_fleet()
        .r#type(FleetType::Instant)
        .launch_template_configs(config(
            &lt,
            vec![
                ranked(InstanceType::C5Large, 2.0),
                FleetLaunchTemplateOverridesRequest::builder()
                    .instance_type(InstanceType::R5Large)
                    .subnet_id(&a)
                    .priority(0.0)
                    .weighted_capacity(2.0)
                    .build(),
            ],
        ))
        .target_capacity_specification(target(5, DefaultTargetCapacityType::OnDemand))
        .on_demand_options(
            OnDemandOptionsRequest::builder()
                .allocation_strategy(FleetOnDemandAllocationStrategy::Prioritized)
                .build(),
        )
        .send()
        .await
        .unwrap();
    let batch = &out.instances()[0];
    assert_eq!(batch.instance_type(), Some(&InstanceType::R5Large));
    // Five units of weight 2: three instances (the count rounds up).
    assert_eq!(batch.instance_ids().len(), 3);
    let f = fleet(&ec2, out.fleet_id().unwrap()).await;
    assert_eq!(f.fulfilled_capacity(), Some(6.0));
}

#[tokio::test]
async fn a_maintain_fleet_keeps_its_target_and_follows_modify_fleet() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let a = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let lt = template(&ec2, "maintained").await;
    let out = ec2
        .create_fleet()
        .launch_template_configs(config(&lt, vec![pool(InstanceType::M5Large, &a)]))
        .target_capacity_specification(target(2, DefaultTargetCapacityType::OnDemand))
        .tag_specifications(tag_spec(ResourceType::Fleet, &[("pool", "kept")]))
        .send()
        .await
        .unwrap();
    // A maintain fleet is answered with its id only.
    assert!(out.instances().is_empty() && out.errors().is_empty());
    let id = out.fleet_id().unwrap().to_string();
    let listed = ec2
        .describe_fleets()
        .filters(filter("type", &["maintain"]))
        .filters(filter("tag:pool", &["kept"]))
        .send()
        .await
        .unwrap();
    assert_eq!(listed.fleets().len(), 1);
    let f = &listed.fleets()[0];
    assert_eq!(f.fleet_id(), Some(id.as_str()));
    assert_eq!(f.activity_status(), Some(&FleetActivityStatus::Fulfilled));
    assert_eq!(
        f.excess_capacity_termination_policy().map(|p| p.as_str()),
        Some("termination")
    );
    let first = active(&ec2, &id).await;
    assert_eq!(first.len(), 2);

    // One instance terminated: the fleet makes up its capacity at the clock's next step.
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.hold(Subject::Fleet));
    ec2.terminate_instances()
        .instance_ids(&first[0])
        .send()
        .await
        .unwrap();
    assert_eq!(active(&ec2, &id).await, vec![first[1].clone()]);
    assert_eq!(
        fleet(&ec2, &id).await.activity_status(),
        Some(&FleetActivityStatus::PendingFulfillment)
    );
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.release(Subject::Fleet));
    let now = active(&ec2, &id).await;
    assert_eq!(now.len(), 2, "{now:?}");
    assert!(now.contains(&first[1]) && !now.contains(&first[0]));

    // ModifyFleet: modifying, then four instances.
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.hold(Subject::Fleet));
    let modified = ec2
        .modify_fleet()
        .fleet_id(&id)
        .target_capacity_specification(
            TargetCapacitySpecificationRequest::builder()
                .total_target_capacity(4)
                .build(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(modified.r#return(), Some(true));
    assert_eq!(
        fleet(&ec2, &id).await.fleet_state(),
        Some(&FleetStateCode::Modifying)
    );
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.release(Subject::Fleet));
    assert_eq!(active(&ec2, &id).await.len(), 4);
    let f = fleet(&ec2, &id).await;
    assert_eq!(f.fleet_state(), Some(&FleetStateCode::Active));
    assert_eq!(f.fulfilled_capacity(), Some(4.0));

    // Down to one: the termination policy terminates three.
    ec2.modify_fleet()
        .fleet_id(&id)
        .target_capacity_specification(
            TargetCapacitySpecificationRequest::builder()
                .total_target_capacity(1)
                .build(),
        )
        .send()
        .await
        .unwrap();
    let kept = active(&ec2, &id).await;
    assert_eq!(kept.len(), 1, "{kept:?}");

    // Deleted without terminating: its instance runs on.
    let deleted = ec2
        .delete_fleets()
        .fleet_ids(&id)
        .fleet_ids("fleet-00000000-0000-0000-0000-000000000000")
        .fleet_ids("fleet-zz")
        .terminate_instances(false)
        .send()
        .await
        .unwrap();
    assert_eq!(
        deleted.successful_fleet_deletions()[0].current_fleet_state(),
        Some(&FleetStateCode::DeletedRunning)
    );
    let codes: Vec<_> = deleted
        .unsuccessful_fleet_deletions()
        .iter()
        .map(|u| u.error().unwrap().code().unwrap().clone())
        .collect();
    assert_eq!(
        codes,
        vec![
            DeleteFleetErrorCode::FleetIdDoesNotExist,
            DeleteFleetErrorCode::FleetIdMalformed
        ]
    );
    assert_eq!(state(&ec2, &kept[0]).await, InstanceStateName::Running);
    let again = ec2
        .delete_fleets()
        .fleet_ids(&id)
        .terminate_instances(true)
        .send()
        .await
        .unwrap();
    assert_eq!(
        again.unsuccessful_fleet_deletions()[0]
            .error()
            .unwrap()
            .code(),
        Some(&DeleteFleetErrorCode::FleetNotInDeletableState)
    );
    let listed = ec2
        .describe_fleets()
        .filters(filter("fleet-state", &["deleted-running"]))
        .send()
        .await
        .unwrap();
    assert_eq!(listed.fleets().len(), 1);
    assert_eq!(
        code(
            ec2.modify_fleet()
                .fleet_id(&id)
                .target_capacity_specification(
                    TargetCapacitySpecificationRequest::builder()
                        .total_target_capacity(2)
                        .build()
                )
                .send()
                .await
        ),
        "IncorrectState"
    );
}

#[tokio::test]
async fn create_fleet_refuses_what_aws_refuses_and_replays_its_token() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let a = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let lt = template(&ec2, "refusals").await;
    let base = || {
        ec2.create_fleet()
            .launch_template_configs(config(&lt, vec![pool(InstanceType::M5Large, &a)]))
    };
    let no_default = TargetCapacitySpecificationRequest::builder()
        .total_target_capacity(1)
        .build();
    assert_eq!(
        code(
            base()
                .target_capacity_specification(no_default)
                .send()
                .await
        ),
        "MissingParameter"
    );
    let too_much = TargetCapacitySpecificationRequest::builder()
        .total_target_capacity(2)
        .on_demand_target_capacity(2)
        .spot_target_capacity(1)
        .default_target_capacity_type(DefaultTargetCapacityType::Spot)
        .build();
    assert_eq!(
        code(base().target_capacity_specification(too_much).send().await),
        "InvalidParameterCombination"
    );
    assert_eq!(
        code(
            base()
                .target_capacity_specification(target(10_001, DefaultTargetCapacityType::OnDemand))
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
    let (c, m) = code_and_message(
        base()
            .target_capacity_specification(target(1, DefaultTargetCapacityType::OnDemand))
            .tag_specifications(tag_spec(ResourceType::Instance, &[("k", "v")]))
            .send()
            .await,
    );
    assert_eq!(c, "InvalidParameterValue", "{m}");
    let keyed = FleetLaunchTemplateOverridesRequest::builder()
        .instance_type(InstanceType::M5Large)
        .key_name("k")
        .build();
    assert_eq!(
        code(
            ec2.create_fleet()
                .r#type(FleetType::Request)
                .launch_template_configs(config(&lt, vec![keyed]))
                .target_capacity_specification(target(1, DefaultTargetCapacityType::OnDemand))
                .send()
                .await
        ),
        "InvalidParameterCombination"
    );
    let missing = FleetLaunchTemplateConfigRequest::builder()
        .launch_template_specification(
            FleetLaunchTemplateSpecificationRequest::builder()
                .launch_template_name("no-such-template")
                .version("1")
                .build(),
        )
        .build();
    let (c, _) = code_and_message(
        ec2.create_fleet()
            .launch_template_configs(missing)
            .target_capacity_specification(target(1, DefaultTargetCapacityType::OnDemand))
            .send()
            .await,
    );
    assert!(c.starts_with("InvalidLaunchTemplateName"), "{c}");
    // Nothing of the refused requests launched.
    let none = ec2.describe_instances().send().await.unwrap();
    assert!(none.reservations().is_empty());

    // The same token and request: the same fleet, nothing more launched.
    let once = base()
        .target_capacity_specification(target(1, DefaultTargetCapacityType::OnDemand))
        .client_token("fleet-token-1")
        .send()
        .await
        .unwrap();
    let twice = base()
        .target_capacity_specification(target(1, DefaultTargetCapacityType::OnDemand))
        .client_token("fleet-token-1")
        .send()
        .await
        .unwrap();
    assert_eq!(once.fleet_id(), twice.fleet_id());
    assert_eq!(active(&ec2, once.fleet_id().unwrap()).await.len(), 1);
    assert_eq!(
        code(
            base()
                .target_capacity_specification(target(2, DefaultTargetCapacityType::OnDemand))
                .client_token("fleet-token-1")
                .send()
                .await
        ),
        "IdempotentParameterMismatch"
    );
    assert_eq!(
        code(
            ec2.describe_fleets()
                .fleet_ids("fleet-00000000-0000-0000-0000-000000000000")
                .send()
                .await
        ),
        "InvalidFleetId.NotFound"
    );
    assert_eq!(
        code(ec2.describe_fleets().fleet_ids("fleet-1").send().await),
        "InvalidFleetId.Malformed"
    );
}

#[tokio::test]
async fn spot_price_history_covers_the_range_asked_and_pages() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let now = 1_795_961_900_i64;
    let day = 86_400;
    let start = now - 3 * day;
    let history = ec2
        .describe_spot_price_history()
        .instance_types(InstanceType::M5Large)
        .product_descriptions("Linux/UNIX (Amazon VPC)")
        .availability_zone("us-east-1a")
        .start_time(DateTime::from_secs(start))
        .end_time(DateTime::from_secs(now))
        .send()
        .await
        .unwrap();
    let entries = history.spot_price_history();
    // The changes within the range (one a day, at midnight) and the last one before it.
    let stamps: Vec<i64> = entries
        .iter()
        .map(|e| e.timestamp().unwrap().secs())
        .collect();
    let today = now - now.rem_euclid(day);
    assert_eq!(
        stamps,
        vec![today, today - day, today - 2 * day, today - 3 * day]
    );
    assert!(stamps[3] <= start);
    for e in entries {
        let p = e.spot_price().unwrap();
        assert_eq!(p.split('.').nth(1).map(str::len), Some(6), "{p}");
        let v: f64 = p.parse().unwrap();
        assert!(v > 0.0 && v < 0.096, "{p}");
        assert_eq!(e.availability_zone(), Some("us-east-1a"));
        assert_eq!(e.availability_zone_id(), Some("use1-az1"));
    }

    // Pages of 5 over every zone's and product's current price of two types.
    let mut seen = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let page = ec2
            .describe_spot_price_history()
            .instance_types(InstanceType::M5Large)
            .instance_types(InstanceType::C5Large)
            .max_results(5)
            .set_next_token(token.clone())
            .send()
            .await
            .unwrap();
        seen.extend(page.spot_price_history().iter().map(|e| {
            format!(
                "{:?}/{}/{:?}",
                e.instance_type().unwrap(),
                e.availability_zone().unwrap(),
                e.product_description().unwrap()
            )
        }));
        match page.next_token().filter(|t| !t.is_empty()) {
            Some(t) => token = Some(t.to_string()),
            None => break,
        }
    }
    let zones = ec2.describe_availability_zones().send().await.unwrap();
    let expected = 2 * zones.availability_zones().len() * 4;
    assert_eq!(seen.len(), expected, "{seen:?}");
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), expected);

    let windows = ec2
        .describe_spot_price_history()
        .filters(filter("product-description", &["Windows*"]))
        .filters(filter("instance-type", &["m5.large"]))
        .filters(filter("availability-zone", &["us-east-1b"]))
        .send()
        .await
        .unwrap();
    assert_eq!(windows.spot_price_history().len(), 2);
    assert_eq!(
        code(
            ec2.describe_spot_price_history()
                .availability_zone("us-east-1a")
                .availability_zone_id("use1-az1")
                .send()
                .await
        ),
        "InvalidParameterCombination"
    );
    assert_eq!(
        code(
            ec2.describe_spot_price_history()
                .start_time(DateTime::from_secs(now - day))
                .end_time(DateTime::from_secs(now - 2 * day))
                .send()
                .await
        ),
        "InvalidParameterValue"
    );
}
