//! Classic load balancers through the SDK (awsQuery end to end).

use aws_sdk_elasticloadbalancing::error::ProvideErrorMetadata;
use aws_sdk_elasticloadbalancing::operation::delete_load_balancer::DeleteLoadBalancerError;
use aws_sdk_elasticloadbalancing::operation::describe_load_balancers::DescribeLoadBalancersError;
use aws_sdk_elasticloadbalancing::types::{Listener, Tag};

use crate::{code, empty_fake, vpc};

fn listener() -> Listener {
    Listener::builder()
        .protocol("TCP")
        .load_balancer_port(6443)
        .instance_port(6443)
        .build()
        .unwrap()
}

async fn network(ec2: &aws_sdk_ec2::Client, with_gateway: bool) -> (String, Vec<String>) {
    let vpc_id = vpc(ec2, "10.0.0.0/16").await;
    let mut subnets = Vec::new();
    for (i, zone) in ["us-east-1a", "us-east-1b"].iter().enumerate() {
        let s = ec2
            .create_subnet()
            .vpc_id(&vpc_id)
            .cidr_block(format!("10.0.{i}.0/24"))
            .availability_zone(*zone)
            .send()
            .await
            .unwrap();
        subnets.push(s.subnet.unwrap().subnet_id.unwrap());
    }
    if with_gateway {
        let igw = ec2.create_internet_gateway().send().await.unwrap();
        let igw = igw.internet_gateway.unwrap().internet_gateway_id.unwrap();
        ec2.attach_internet_gateway()
            .internet_gateway_id(igw)
            .vpc_id(&vpc_id)
            .send()
            .await
            .unwrap();
    }
    (vpc_id, subnets)
}

#[tokio::test]
async fn create_describe_delete() {
    let fake = empty_fake().await;
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    let (vpc_id, subnets) = network(&ec2, true).await;
    let sg = ec2
        .create_security_group()
        .group_name("lb")
        .description("api load balancer")
        .vpc_id(&vpc_id)
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap();
    let out = elb
        .create_load_balancer()
        .load_balancer_name("test-apiserver")
        .listeners(listener())
        .set_subnets(Some(subnets.clone()))
        .security_groups(&sg)
        .tags(Tag::builder().key("owner").value("me").build().unwrap())
        .send()
        .await
        .unwrap();
    let dns = out.dns_name().unwrap().to_string();
    assert!(
        dns.starts_with("test-apiserver-") && dns.ends_with(".us-east-1.elb.amazonaws.com"),
        "{dns}"
    );

    let described = elb
        .describe_load_balancers()
        .load_balancer_names("test-apiserver")
        .send()
        .await
        .unwrap();
    let lb = &described.load_balancer_descriptions()[0];
    assert_eq!(lb.dns_name(), Some(dns.as_str()));
    assert_eq!(lb.vpc_id(), Some(vpc_id.as_str()));
    assert_eq!(lb.scheme(), Some("internet-facing"));
    assert_eq!(lb.subnets(), subnets.as_slice());
    assert_eq!(lb.availability_zones(), ["us-east-1a", "us-east-1b"]);
    let l = lb.listener_descriptions()[0].listener().unwrap();
    assert_eq!(
        (l.protocol(), l.load_balancer_port(), l.instance_port()),
        ("TCP", 6443, 6443)
    );
    assert_eq!(lb.health_check().unwrap().target(), "TCP:6443");
    assert!(lb.created_time().is_some());

    // The name is taken, whatever the configuration.
    let dup = elb
        .create_load_balancer()
        .load_balancer_name("test-apiserver")
        .listeners(listener())
        .set_subnets(Some(subnets.clone()))
        .security_groups(&sg)
        .send()
        .await;
    let err = dup.unwrap_err().into_service_error();
    assert!(err.is_duplicate_access_point_name_exception(), "{err:?}");

    // A subnet in use by a load balancer cannot be deleted.
    assert_eq!(
        code(ec2.delete_subnet().subnet_id(&subnets[0]).send().await),
        "DependencyViolation"
    );

    elb.delete_load_balancer()
        .load_balancer_name("test-apiserver")
        .send()
        .await
        .unwrap();
    // Deleting again is fine, as AWS documents.
    let r: Result<_, aws_sdk_elasticloadbalancing::error::SdkError<DeleteLoadBalancerError>> = elb
        .delete_load_balancer()
        .load_balancer_name("test-apiserver")
        .send()
        .await;
    r.unwrap();
    let gone = elb
        .describe_load_balancers()
        .load_balancer_names("test-apiserver")
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(matches!(
        gone,
        DescribeLoadBalancersError::AccessPointNotFoundException(_)
    ));
    assert_eq!(gone.code(), Some("LoadBalancerNotFound"));
    ec2.delete_subnet()
        .subnet_id(&subnets[0])
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn internal_scheme_and_validation() {
    let fake = empty_fake().await;
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    let (_, subnets) = network(&ec2, false).await;
    // Internet-facing needs an internet gateway in the VPC.
    let r = elb
        .create_load_balancer()
        .load_balancer_name("public")
        .listeners(listener())
        .set_subnets(Some(subnets.clone()))
        .send()
        .await;
    assert_eq!(
        r.unwrap_err().into_service_error().code(),
        Some("InvalidSubnet")
    );
    let out = elb
        .create_load_balancer()
        .load_balancer_name("private")
        .listeners(listener())
        .set_subnets(Some(subnets.clone()))
        .scheme("internal")
        .send()
        .await
        .unwrap();
    assert!(out.dns_name().unwrap().starts_with("internal-private-"));

    let bad_name = elb
        .create_load_balancer()
        .load_balancer_name("-bad")
        .listeners(listener())
        .set_subnets(Some(subnets.clone()))
        .send()
        .await;
    assert_eq!(
        bad_name.unwrap_err().into_service_error().code(),
        Some("ValidationError")
    );
    let missing_subnet = elb
        .create_load_balancer()
        .load_balancer_name("x")
        .listeners(listener())
        .subnets("subnet-0123456789abcdef0")
        .scheme("internal")
        .send()
        .await;
    assert!(
        missing_subnet
            .unwrap_err()
            .into_service_error()
            .is_subnet_not_found_exception()
    );
    let missing_listeners = elb
        .create_load_balancer()
        .load_balancer_name("x")
        .set_subnets(Some(subnets.clone()))
        .send()
        .await;
    assert_eq!(
        missing_listeners.unwrap_err().into_service_error().code(),
        Some("MissingParameter")
    );
    let names: Vec<String> = elb
        .describe_load_balancers()
        .send()
        .await
        .unwrap()
        .load_balancer_descriptions()
        .iter()
        .map(|l| l.load_balancer_name().unwrap().to_string())
        .collect();
    assert_eq!(names, ["private"]);
}

#[tokio::test]
async fn paginates_with_marker() {
    let fake = empty_fake().await;
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    let (_, subnets) = network(&ec2, true).await;
    for i in 0..5 {
        elb.create_load_balancer()
            .load_balancer_name(format!("lb-{i}"))
            .listeners(listener())
            .subnets(&subnets[0])
            .send()
            .await
            .unwrap();
    }
    let pages: Vec<_> = elb
        .describe_load_balancers()
        .page_size(2)
        .into_paginator()
        .send()
        .collect::<Result<Vec<_>, _>>()
        .await
        .unwrap();
    assert_eq!(pages.len(), 3);
    let total: usize = pages
        .iter()
        .map(|p| p.load_balancer_descriptions().len())
        .sum();
    assert_eq!(total, 5);
}
