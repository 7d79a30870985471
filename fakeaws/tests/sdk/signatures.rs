//! A fake given credentials verifies every signature, as AWS does: the SDK's requests signed
//! with the right secret pass, a wrong secret, an unknown key and a clock more than 15 minutes
//! off each get the service's own error, and nothing is done.

use std::time::{Duration, SystemTime};

use aws_sdk_ec2::config::Credentials;
use aws_sdk_ec2::config::retry::RetryConfig;
use aws_smithy_async::time::StaticTimeSource;

use crate::code;

const KEY: &str = "AKIDSTRICT00000000";
const SECRET: &str = "strict-secret";

async fn strict_fake() -> fakeaws::FakeAws {
    fakeaws::spawn_with(fakeaws::Config {
        default_vpc: false,
        credentials: [(KEY.to_string(), SECRET.to_string())].into(),
        ..Default::default()
    })
    .await
    .unwrap()
}

fn ec2(fake: &fakeaws::FakeAws, key: &str, secret: &str, skew: Duration) -> aws_sdk_ec2::Client {
    let conf = fake
        .ec2_client()
        .config()
        .to_builder()
        .credentials_provider(Credentials::new(key, secret, None, None, "test"))
        .time_source(StaticTimeSource::new(SystemTime::now() - skew))
        .retry_config(RetryConfig::disabled())
        .build();
    aws_sdk_ec2::Client::from_conf(conf)
}

#[tokio::test]
async fn the_right_secret_passes_and_every_wrong_one_is_refused() {
    let fake = strict_fake().await;
    let good = ec2(&fake, KEY, SECRET, Duration::ZERO);
    good.create_vpc()
        .cidr_block("10.0.0.0/16")
        .send()
        .await
        .unwrap();

    let wrong_secret = ec2(&fake, KEY, "not-the-secret", Duration::ZERO)
        .create_vpc()
        .cidr_block("10.1.0.0/16")
        .send()
        .await;
    let err = wrong_secret.unwrap_err();
    assert_eq!(err.raw_response().map(|r| r.status().as_u16()), Some(403));
    assert_eq!(code(Err::<(), _>(err)), "SignatureDoesNotMatch");

    let unknown = ec2(&fake, "AKIDUNKNOWN0000000", SECRET, Duration::ZERO)
        .describe_vpcs()
        .send()
        .await;
    assert_eq!(code(unknown), "AuthFailure");

    let skewed = ec2(&fake, KEY, SECRET, Duration::from_secs(20 * 60))
        .describe_vpcs()
        .send()
        .await;
    assert_eq!(code(skewed), "RequestExpired");
    // Within AWS's 15 minutes a skewed clock still passes.
    ec2(&fake, KEY, SECRET, Duration::from_secs(5 * 60))
        .describe_vpcs()
        .send()
        .await
        .unwrap();

    let vpcs = good.describe_vpcs().send().await.unwrap();
    assert_eq!(vpcs.vpcs().len(), 1, "only the signed create happened");
}

#[tokio::test]
async fn classic_elb_answers_its_own_codes() {
    let fake = strict_fake().await;
    let elb = |key: &str, secret: &str| {
        aws_sdk_elasticloadbalancing::Client::from_conf(
            fake.elb_client()
                .config()
                .to_builder()
                .credentials_provider(Credentials::new(key, secret, None, None, "test"))
                .retry_config(RetryConfig::disabled())
                .build(),
        )
    };
    elb(KEY, SECRET)
        .describe_load_balancers()
        .send()
        .await
        .unwrap();
    let unknown = elb("AKIDUNKNOWN0000000", SECRET)
        .describe_load_balancers()
        .send()
        .await;
    assert_eq!(code(unknown), "InvalidClientTokenId");
    let wrong = elb(KEY, "nope").describe_load_balancers().send().await;
    assert_eq!(code(wrong), "SignatureDoesNotMatch");
}

#[tokio::test]
async fn without_credentials_any_signature_passes() {
    let fake = fakeaws::spawn().await.unwrap();
    ec2(
        &fake,
        "AKIDANYTHING000000",
        "anything",
        Duration::from_secs(3600),
    )
    .describe_vpcs()
    .send()
    .await
    .unwrap();
}
