//! The certificates of secure classic ELB listeners through the SDK: what CreateLoadBalancer
//! and CreateLoadBalancerListeners take, and SetLoadBalancerListenerSSLCertificate replacing
//! one, as DescribeLoadBalancers then shows; and what is refused, leaving everything as it was.

use aws_sdk_elasticloadbalancing::types::Listener;

use crate::{code, code_and_message, empty_fake, gateway, subnet, vpc};

const IAM_CERT: &str = "arn:aws:iam::123456789012:server-certificate/my-server-cert";
const NEW_IAM_CERT: &str = "arn:aws:iam::123456789012:server-certificate/new-server-cert";
const ACM_CERT: &str =
    "arn:aws:acm:us-east-1:123456789012:certificate/12345678-1234-1234-1234-123456789012";

fn listener(protocol: &str, port: i32, certificate: Option<&str>) -> Listener {
    Listener::builder()
        .protocol(protocol)
        .load_balancer_port(port)
        .instance_protocol(if protocol == "HTTPS" { "HTTP" } else { "TCP" })
        .instance_port(8080)
        .set_ssl_certificate_id(certificate.map(str::to_string))
        .build()
        .unwrap()
}

/// The listeners DescribeLoadBalancers shows for `lb`: (port, protocol, certificate).
async fn listeners(
    elb: &aws_sdk_elasticloadbalancing::Client,
) -> Vec<(i32, String, Option<String>)> {
    let out = elb
        .describe_load_balancers()
        .load_balancer_names("lb")
        .send()
        .await
        .unwrap();
    let mut all: Vec<_> = out.load_balancer_descriptions()[0]
        .listener_descriptions()
        .iter()
        .map(|d| {
            let l = d.listener().unwrap();
            (
                l.load_balancer_port(),
                l.protocol().to_string(),
                l.ssl_certificate_id().map(str::to_string),
            )
        })
        .collect();
    all.sort();
    all
}

/// A subnet of a VPC with an internet gateway: where an internet-facing load balancer goes.
async fn public_subnet(fake: &fakeaws::FakeAws) -> String {
    let ec2 = fake.ec2_client();
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    gateway(&ec2, &vpc_id).await;
    subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await
}

#[tokio::test]
async fn a_secure_listener_takes_an_iam_or_acm_certificate_and_set_replaces_it() {
    let fake = empty_fake().await;
    let elb = fake.elb_client();
    let s = public_subnet(&fake).await;
    elb.create_load_balancer()
        .load_balancer_name("lb")
        .listeners(listener("HTTPS", 443, Some(IAM_CERT)))
        .listeners(listener("TCP", 6443, None))
        .subnets(s)
        .send()
        .await
        .unwrap();
    elb.create_load_balancer_listeners()
        .load_balancer_name("lb")
        .listeners(listener("SSL", 8443, Some(ACM_CERT)))
        .send()
        .await
        .unwrap();
    assert_eq!(
        listeners(&elb).await,
        [
            (443, "HTTPS".into(), Some(IAM_CERT.into())),
            (6443, "TCP".into(), None),
            (8443, "SSL".into(), Some(ACM_CERT.into())),
        ]
    );

    // The CLI's documented example: a new IAM certificate on the HTTPS listener.
    elb.set_load_balancer_listener_ssl_certificate()
        .load_balancer_name("lb")
        .load_balancer_port(443)
        .ssl_certificate_id(NEW_IAM_CERT)
        .send()
        .await
        .unwrap();
    elb.set_load_balancer_listener_ssl_certificate()
        .load_balancer_name("lb")
        .load_balancer_port(8443)
        .ssl_certificate_id(IAM_CERT)
        .send()
        .await
        .unwrap();
    let after = [
        (443, "HTTPS".to_string(), Some(NEW_IAM_CERT.to_string())),
        (6443, "TCP".into(), None),
        (8443, "SSL".into(), Some(IAM_CERT.into())),
    ];
    assert_eq!(listeners(&elb).await, after);

    // Refused, changing nothing: a port without a listener, a listener that is not secure,
    // something that names no certificate, a load balancer that does not exist.
    let set = |port: i32, certificate: &str| {
        elb.set_load_balancer_listener_ssl_certificate()
            .load_balancer_name("lb")
            .load_balancer_port(port)
            .ssl_certificate_id(certificate)
            .send()
    };
    assert_eq!(code(set(444, IAM_CERT).await), "ListenerNotFound");
    assert_eq!(
        code(set(6443, IAM_CERT).await),
        "InvalidConfigurationRequest"
    );
    let not_certificates = [
        "my-server-cert",
        "arn:aws:iam::123456789012:server-certificate/",
        "arn:aws:iam::123456789012:role/my-role",
        // Another account's, and another region's.
        "arn:aws:iam::210987654321:server-certificate/my-server-cert",
        "arn:aws:acm:eu-west-1:123456789012:certificate/12345678-1234-1234-1234-123456789012",
    ];
    for bad in not_certificates {
        assert_eq!(
            code_and_message(set(443, bad).await),
            (
                "CertificateNotFound".to_string(),
                format!("Server Certificate not found for the key: {bad}")
            ),
        );
    }
    let gone = elb
        .set_load_balancer_listener_ssl_certificate()
        .load_balancer_name("nope")
        .load_balancer_port(443)
        .ssl_certificate_id(IAM_CERT)
        .send()
        .await;
    assert_eq!(code(gone), "LoadBalancerNotFound");
    assert_eq!(listeners(&elb).await, after);
}

#[tokio::test]
async fn a_secure_listener_without_a_real_certificate_is_refused_and_nothing_is_made() {
    let fake = empty_fake().await;
    let elb = fake.elb_client();
    let s = public_subnet(&fake).await;
    // AWS's words for a secure listener without a certificate.
    let bare = elb
        .create_load_balancer()
        .load_balancer_name("lb")
        .listeners(listener("HTTPS", 443, None))
        .subnets(&s)
        .send()
        .await;
    assert_eq!(
        code_and_message(bare),
        (
            "ValidationError".to_string(),
            "Secure Listeners need to specify a SSLCertificateId".to_string()
        )
    );
    let made_up = elb
        .create_load_balancer()
        .load_balancer_name("lb")
        .listeners(listener("SSL", 443, Some("self-signed")))
        .subnets(&s)
        .send()
        .await;
    assert_eq!(code(made_up), "CertificateNotFound");
    let described = elb
        .describe_load_balancers()
        .load_balancer_names("lb")
        .send()
        .await;
    assert_eq!(code(described), "LoadBalancerNotFound");

    elb.create_load_balancer()
        .load_balancer_name("lb")
        .listeners(listener("TCP", 6443, None))
        .subnets(&s)
        .send()
        .await
        .unwrap();
    let added = elb
        .create_load_balancer_listeners()
        .load_balancer_name("lb")
        .listeners(listener(
            "HTTPS",
            443,
            Some("arn:aws:acm:us-east-1:123456789012:certificate/"),
        ))
        .send()
        .await;
    assert_eq!(code(added), "CertificateNotFound");
    assert_eq!(listeners(&elb).await, [(6443, "TCP".into(), None)]);
}
