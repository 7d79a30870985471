//! An instance's console through the SDK: GetConsoleOutput (nothing before the first boot,
//! then a line per transition the fake makes, base64 as AWS sends it) and GetPasswordData
//! (no password for a Linux instance).

use aws_sdk_ec2::types::InstanceStateName as State;
use fakeaws::sim::transitions::Subject;

use crate::{code, empty_fake, instance, subnet, vpc, wait};

/// The console output of `id` decoded, and when it was last posted to.
async fn console(ec2: &aws_sdk_ec2::Client, id: &str) -> (Option<String>, Option<String>) {
    let out = ec2
        .get_console_output()
        .instance_id(id)
        .send()
        .await
        .unwrap();
    assert_eq!(out.instance_id(), Some(id));
    let text = out
        .output()
        .map(|b64| String::from_utf8(aws_smithy_types::base64::decode(b64).unwrap()).unwrap());
    (text, out.timestamp().map(|t| t.to_string()))
}

#[tokio::test]
async fn the_console_holds_a_line_for_each_transition_of_the_instance() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    fake.fake()
        .with_region("us-east-1", |r| r.transitions.hold(Subject::Instance));
    let id = instance(&ec2, &s).await;
    // Pending: nothing posted yet.
    assert_eq!(console(&ec2, &id).await, (None, None));

    fake.fake()
        .with_region("us-east-1", |r| r.transitions.release(Subject::Instance));
    wait(&ec2, &id, State::Running).await;
    let (text, booted_at) = console(&ec2, &id).await;
    let text = text.unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert!(
        lines[0].starts_with(&format!("fakeaws: {id} (t3.medium, ami-")),
        "{text}"
    );
    assert!(lines[0].contains(" booted at "), "{text}");
    assert!(booted_at.is_some());

    // A reboot, a stop and a termination each post a line; `Latest` reads the same.
    ec2.reboot_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    ec2.stop_instances().instance_ids(&id).send().await.unwrap();
    wait(&ec2, &id, State::Stopped).await;
    ec2.terminate_instances()
        .instance_ids(&id)
        .send()
        .await
        .unwrap();
    wait(&ec2, &id, State::Terminated).await;
    let (text, _) = console(&ec2, &id).await;
    let did: Vec<&str> = text
        .as_deref()
        .unwrap()
        .lines()
        .map(|l| l.split(") ").nth(1).unwrap().split(" at ").next().unwrap())
        .collect();
    assert_eq!(did, ["booted", "rebooted", "stopped", "terminated"]);
    let latest = ec2
        .get_console_output()
        .instance_id(&id)
        .latest(true)
        .send()
        .await
        .unwrap();
    assert_eq!(
        latest
            .output()
            .map(|b| aws_smithy_types::base64::decode(b).unwrap()),
        text.map(String::into_bytes)
    );
}

#[tokio::test]
async fn a_linux_instance_has_no_password_and_unknown_instances_are_refused() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    let id = instance(&ec2, &s).await;
    let out = ec2
        .get_password_data()
        .instance_id(&id)
        .send()
        .await
        .unwrap();
    assert_eq!(out.instance_id(), Some(id.as_str()));
    assert_eq!(out.password_data(), Some(""));
    let launched = crate::described(&ec2, &id).await;
    assert_eq!(out.timestamp(), launched.launch_time());

    for c in [
        code(
            ec2.get_console_output()
                .instance_id("i-0123456789abcdef0")
                .send()
                .await,
        ),
        code(
            ec2.get_password_data()
                .instance_id("i-0123456789abcdef0")
                .send()
                .await,
        ),
    ] {
        assert_eq!(c, "InvalidInstanceID.NotFound");
    }
    assert_eq!(
        code(ec2.get_console_output().instance_id("vol-1").send().await),
        "InvalidInstanceID.Malformed"
    );
}
