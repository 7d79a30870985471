//! Volume status checks and the I/O attribute through the SDK: DescribeVolumeStatus (its
//! checks, filters and paging), DescribeVolumeAttribute, ModifyVolumeAttribute and
//! EnableVolumeIO; and what they refuse, leaving the volume as it was.

use aws_sdk_ec2::types::{
    AttributeBooleanValue, VolumeAttributeName, VolumeStatusInfoStatus, VolumeStatusName,
    VolumeType,
};

use crate::{code, code_and_message, empty_fake, filter, subnet, vpc};

async fn new_volume(ec2: &aws_sdk_ec2::Client, zone: &str, volume_type: VolumeType) -> String {
    let mut request = ec2
        .create_volume()
        .availability_zone(zone)
        .size(100)
        .volume_type(volume_type.clone());
    if matches!(volume_type, VolumeType::Io1 | VolumeType::Io2) {
        request = request.iops(1000);
    }
    request.send().await.unwrap().volume_id.unwrap()
}

/// The `autoEnableIO` attribute of `id`, as DescribeVolumeAttribute answers it.
async fn auto_enable_io(ec2: &aws_sdk_ec2::Client, id: &str) -> Option<bool> {
    let out = ec2
        .describe_volume_attribute()
        .volume_id(id)
        .attribute(VolumeAttributeName::AutoEnableIo)
        .send()
        .await
        .unwrap();
    assert_eq!(out.volume_id(), Some(id));
    assert!(out.product_codes().is_empty());
    out.auto_enable_io().and_then(|a| a.value())
}

/// The volume ids DescribeVolumeStatus answers for `filters`, sorted.
async fn statuses(ec2: &aws_sdk_ec2::Client, name: &str, values: &[&str]) -> Vec<String> {
    let out = ec2
        .describe_volume_status()
        .filters(filter(name, values))
        .send()
        .await
        .unwrap();
    let mut ids: Vec<String> = out
        .volume_statuses()
        .iter()
        .map(|s| s.volume_id().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn every_volume_passes_its_checks_and_io_performance_applies_to_attached_provisioned_iops() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let subnet_id = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let instance = crate::instance(&ec2, &subnet_id).await;
    let gp3 = new_volume(&ec2, "us-east-1a", VolumeType::Gp3).await;
    let io2 = new_volume(&ec2, "us-east-1a", VolumeType::Io2).await;
    let loose_io1 = new_volume(&ec2, "us-east-1b", VolumeType::Io1).await;
    ec2.attach_volume()
        .volume_id(&io2)
        .instance_id(&instance)
        .device("/dev/sdf")
        .send()
        .await
        .unwrap();

    let out = ec2
        .describe_volume_status()
        .volume_ids(&gp3)
        .volume_ids(&io2)
        .volume_ids(&loose_io1)
        .send()
        .await
        .unwrap();
    assert_eq!(out.volume_statuses().len(), 3);
    for s in out.volume_statuses() {
        let id = s.volume_id().unwrap();
        let status = s.volume_status().unwrap();
        assert_eq!(status.status(), Some(&VolumeStatusInfoStatus::Ok), "{id}");
        let details: Vec<(VolumeStatusName, &str)> = status
            .details()
            .iter()
            .map(|d| (d.name().unwrap().clone(), d.status().unwrap()))
            .collect();
        let performance = if id == io2 {
            "normal"
        } else {
            "not-applicable"
        };
        assert_eq!(
            details,
            [
                (VolumeStatusName::IoEnabled, "passed"),
                (VolumeStatusName::IoPerformance, performance),
            ],
            "{id}"
        );
        assert!(s.events().is_empty() && s.actions().is_empty(), "{id}");
        let zone = if id == loose_io1 {
            "us-east-1b"
        } else {
            "us-east-1a"
        };
        assert_eq!(s.availability_zone(), Some(zone));
        assert!(s.availability_zone_id().is_some());
        let attached: Vec<&str> = s
            .attachment_statuses()
            .iter()
            .map(|a| a.instance_id().unwrap())
            .collect();
        let expected: &[&str] = if id == io2 { &[&instance] } else { &[] };
        assert_eq!(attached, expected, "{id}");
    }

    // The volume RunInstances made for the instance's root device is one of the account's.
    let all = ec2.describe_volume_status().send().await.unwrap();
    assert_eq!(all.volume_statuses().len(), 4);

    // Filters.
    let in_a = statuses(&ec2, "availability-zone", &["us-east-1a"]).await;
    assert_eq!(in_a.len(), 3, "the two volumes and the root volume");
    assert!(in_a.contains(&gp3) && in_a.contains(&io2));
    assert_eq!(
        statuses(&ec2, "attachment-status.instance-id", &[&instance])
            .await
            .len(),
        2,
        "the root volume and io2"
    );
    assert_eq!(
        statuses(&ec2, "volume-status.details-status", &["normal"]).await,
        [io2.as_str()]
    );
    assert_eq!(
        statuses(&ec2, "volume-status.status", &["ok"]).await.len(),
        4
    );
    assert!(
        statuses(&ec2, "volume-status.status", &["impaired"])
            .await
            .is_empty()
    );
    assert!(statuses(&ec2, "event.event-type", &["*"]).await.is_empty());
    let bad = ec2
        .describe_volume_status()
        .filters(filter("volume-type", &["gp3"]))
        .send()
        .await;
    assert_eq!(code(bad), "InvalidParameterValue");
}

#[tokio::test]
async fn volume_statuses_page_and_a_missing_volume_is_not_found() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let mut made = Vec::new();
    for _ in 0..7 {
        made.push(new_volume(&ec2, "us-east-1c", VolumeType::Gp3).await);
    }
    made.sort();
    let mut seen = Vec::new();
    let mut token = None;
    loop {
        let out = ec2
            .describe_volume_status()
            .max_results(5)
            .set_next_token(token)
            .send()
            .await
            .unwrap();
        assert!(out.volume_statuses().len() <= 5);
        seen.extend(
            out.volume_statuses()
                .iter()
                .map(|s| s.volume_id().unwrap().to_string()),
        );
        token = out.next_token().map(str::to_string);
        if token.is_none() {
            break;
        }
    }
    seen.sort();
    assert_eq!(seen, made);

    let missing = ec2
        .describe_volume_status()
        .volume_ids("vol-0123456789abcdef0")
        .send()
        .await;
    assert_eq!(
        code_and_message(missing),
        (
            "InvalidVolume.NotFound".to_string(),
            "The volume 'vol-0123456789abcdef0' does not exist".to_string()
        )
    );
    let both = ec2
        .describe_volume_status()
        .volume_ids(&made[0])
        .max_results(5)
        .send()
        .await;
    assert_eq!(code(both), "InvalidParameterCombination");
}

#[tokio::test]
async fn auto_enable_io_is_off_until_modified_and_enable_volume_io_takes_an_existing_volume() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let id = new_volume(&ec2, "us-east-1a", VolumeType::Gp3).await;
    assert_eq!(auto_enable_io(&ec2, &id).await, Some(false));

    let on = AttributeBooleanValue::builder().value(true).build();
    ec2.modify_volume_attribute()
        .volume_id(&id)
        .auto_enable_io(on.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(auto_enable_io(&ec2, &id).await, Some(true));

    // Nothing to change is refused, and changes nothing.
    let nothing = ec2.modify_volume_attribute().volume_id(&id).send().await;
    assert_eq!(code(nothing), "MissingParameter");
    assert_eq!(auto_enable_io(&ec2, &id).await, Some(true));

    let off = AttributeBooleanValue::builder().value(false).build();
    ec2.modify_volume_attribute()
        .volume_id(&id)
        .auto_enable_io(off)
        .send()
        .await
        .unwrap();
    assert_eq!(auto_enable_io(&ec2, &id).await, Some(false));

    // The product codes of a volume: none.
    let codes = ec2
        .describe_volume_attribute()
        .volume_id(&id)
        .attribute(VolumeAttributeName::ProductCodes)
        .send()
        .await
        .unwrap();
    assert!(codes.product_codes().is_empty());
    assert!(codes.auto_enable_io().is_none());

    ec2.enable_volume_io().volume_id(&id).send().await.unwrap();
    let status = ec2
        .describe_volume_status()
        .volume_ids(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(
        status.volume_statuses()[0]
            .volume_status()
            .unwrap()
            .status(),
        Some(&VolumeStatusInfoStatus::Ok)
    );

    let missing = "vol-0123456789abcdef0";
    assert_eq!(
        code(ec2.enable_volume_io().volume_id(missing).send().await),
        "InvalidVolume.NotFound"
    );
    assert_eq!(
        code(
            ec2.modify_volume_attribute()
                .volume_id(missing)
                .auto_enable_io(on)
                .send()
                .await
        ),
        "InvalidVolume.NotFound"
    );
    assert_eq!(
        code(
            ec2.describe_volume_attribute()
                .volume_id(missing)
                .attribute(VolumeAttributeName::AutoEnableIo)
                .send()
                .await
        ),
        "InvalidVolume.NotFound"
    );
}
