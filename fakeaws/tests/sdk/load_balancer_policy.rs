//! Classic load balancer policies through the SDK: the policy types, policies made, described,
//! set on listeners and back-end ports, shown by DescribeLoadBalancers, deleted; and what is
//! refused, leaving everything as it was.

use aws_sdk_elasticloadbalancing::types::{Listener, PolicyAttribute};

use crate::{code, empty_fake, gateway, subnet, vpc};

fn listener(protocol: &str, port: i32) -> Listener {
    Listener::builder()
        .protocol(protocol)
        .load_balancer_port(port)
        .instance_port(port)
        .build()
        .unwrap()
}

fn attribute(name: &str, value: &str) -> PolicyAttribute {
    PolicyAttribute::builder()
        .attribute_name(name)
        .attribute_value(value)
        .build()
}

/// A load balancer `lb` with an HTTP listener on 80 and a TCP one on 6443.
async fn load_balancer(fake: &fakeaws::FakeAws) -> aws_sdk_elasticloadbalancing::Client {
    let (ec2, elb) = (fake.ec2_client(), fake.elb_client());
    let vpc_id = vpc(&ec2, "10.0.0.0/16").await;
    gateway(&ec2, &vpc_id).await;
    let s = subnet(&ec2, &vpc_id, "10.0.1.0/24", "us-east-1a").await;
    elb.create_load_balancer()
        .load_balancer_name("lb")
        .listeners(listener("HTTP", 80))
        .listeners(listener("TCP", 6443))
        .subnets(s)
        .send()
        .await
        .unwrap();
    elb
}

/// The policies DescribeLoadBalancers shows for `lb`: of the listener on 80, of the one on
/// 6443, app cookie, LB cookie, others, back-end ports.
async fn shown(elb: &aws_sdk_elasticloadbalancing::Client) -> Shown {
    let out = elb
        .describe_load_balancers()
        .load_balancer_names("lb")
        .send()
        .await
        .unwrap();
    let lb = &out.load_balancer_descriptions()[0];
    let of_listener = |port: i32| {
        lb.listener_descriptions()
            .iter()
            .find(|l| l.listener().unwrap().load_balancer_port() == port)
            .map(|l| l.policy_names().to_vec())
            .unwrap_or_default()
    };
    let p = lb.policies().unwrap();
    Shown {
        http: of_listener(80),
        tcp: of_listener(6443),
        app: p
            .app_cookie_stickiness_policies()
            .iter()
            .map(|a| {
                (
                    a.policy_name().unwrap().to_string(),
                    a.cookie_name().unwrap().to_string(),
                )
            })
            .collect(),
        lb_cookie: p
            .lb_cookie_stickiness_policies()
            .iter()
            .map(|c| {
                (
                    c.policy_name().unwrap().to_string(),
                    c.cookie_expiration_period(),
                )
            })
            .collect(),
        other: p.other_policies().to_vec(),
        backends: lb
            .backend_server_descriptions()
            .iter()
            .map(|b| (b.instance_port().unwrap(), b.policy_names().to_vec()))
            .collect(),
    }
}

#[derive(Debug, PartialEq, Default)]
struct Shown {
    http: Vec<String>,
    tcp: Vec<String>,
    app: Vec<(String, String)>,
    lb_cookie: Vec<(String, Option<i64>)>,
    other: Vec<String>,
    backends: Vec<(i32, Vec<String>)>,
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn policy_types_are_awss() {
    let fake = empty_fake().await;
    let elb = fake.elb_client();
    let all = elb
        .describe_load_balancer_policy_types()
        .send()
        .await
        .unwrap();
    let mut types: Vec<&str> = all
        .policy_type_descriptions()
        .iter()
        .map(|t| t.policy_type_name().unwrap())
        .collect();
    types.sort();
    assert_eq!(
        types,
        [
            "AppCookieStickinessPolicyType",
            "BackendServerAuthenticationPolicyType",
            "LBCookieStickinessPolicyType",
            "ProxyProtocolPolicyType",
            "PublicKeyPolicyType"
        ]
    );
    let proxy = elb
        .describe_load_balancer_policy_types()
        .policy_type_names("ProxyProtocolPolicyType")
        .send()
        .await
        .unwrap();
    let t = &proxy.policy_type_descriptions()[0];
    assert!(
        t.description()
            .unwrap()
            .starts_with("Policy that controls whether to include")
    );
    let a = &t.policy_attribute_type_descriptions()[0];
    assert_eq!(
        (a.attribute_name(), a.attribute_type(), a.cardinality()),
        (Some("ProxyProtocol"), Some("Boolean"), Some("ONE"))
    );
    let r = elb
        .describe_load_balancer_policy_types()
        .policy_type_names("NoSuchPolicyType")
        .send()
        .await;
    assert_eq!(code(r), "PolicyTypeNotFound");
}

#[tokio::test]
async fn policies_on_listeners_and_back_ends() {
    let fake = empty_fake().await;
    let elb = load_balancer(&fake).await;
    elb.create_load_balancer_policy()
        .load_balancer_name("lb")
        .policy_name("proxy")
        .policy_type_name("ProxyProtocolPolicyType")
        .policy_attributes(attribute("ProxyProtocol", "true"))
        .send()
        .await
        .unwrap();
    elb.create_lb_cookie_stickiness_policy()
        .load_balancer_name("lb")
        .policy_name("duration")
        .cookie_expiration_period(60)
        .send()
        .await
        .unwrap();
    elb.create_app_cookie_stickiness_policy()
        .load_balancer_name("lb")
        .policy_name("app")
        .cookie_name("session")
        .send()
        .await
        .unwrap();

    // Refused: a name taken, a value of the wrong type, a missing or foreign attribute, an
    // unknown type or load balancer.
    let create = |name: &str, type_name: &str, attributes: Vec<PolicyAttribute>| {
        elb.create_load_balancer_policy()
            .load_balancer_name("lb")
            .policy_name(name)
            .policy_type_name(type_name)
            .set_policy_attributes(Some(attributes))
            .send()
    };
    let proxy_on = || vec![attribute("ProxyProtocol", "true")];
    assert_eq!(
        code(create("proxy", "ProxyProtocolPolicyType", proxy_on()).await),
        "DuplicatePolicyName"
    );
    for attributes in [
        vec![attribute("ProxyProtocol", "yes")],
        vec![],
        vec![
            attribute("ProxyProtocol", "true"),
            attribute("ProxyProtocol", "false"),
        ],
        vec![attribute("CookieName", "x")],
    ] {
        assert_eq!(
            code(create("other", "ProxyProtocolPolicyType", attributes).await),
            "InvalidConfigurationRequest"
        );
    }
    assert_eq!(
        code(create("other", "NoSuchPolicyType", proxy_on()).await),
        "PolicyTypeNotFound"
    );
    let r = elb
        .create_lb_cookie_stickiness_policy()
        .load_balancer_name("nope")
        .policy_name("x")
        .send()
        .await;
    assert_eq!(code(r), "LoadBalancerNotFound");

    // Stickiness on the HTTP listener, proxy protocol on the TCP back end.
    elb.set_load_balancer_policies_of_listener()
        .load_balancer_name("lb")
        .load_balancer_port(80)
        .policy_names("duration")
        .send()
        .await
        .unwrap();
    elb.set_load_balancer_policies_for_backend_server()
        .load_balancer_name("lb")
        .instance_port(6443)
        .policy_names("proxy")
        .send()
        .await
        .unwrap();
    let expected = Shown {
        http: names(&["duration"]),
        tcp: vec![],
        app: vec![("app".to_string(), "session".to_string())],
        lb_cookie: vec![("duration".to_string(), Some(60))],
        other: names(&["proxy"]),
        backends: vec![(6443, names(&["proxy"]))],
    };
    assert_eq!(shown(&elb).await, expected);

    // Refused: stickiness on a TCP listener, a listener or policy that is not there, a
    // stickiness policy on a back end. Nothing changes.
    let on_listener = |port: i32, policy: &str| {
        elb.set_load_balancer_policies_of_listener()
            .load_balancer_name("lb")
            .load_balancer_port(port)
            .policy_names(policy)
            .send()
    };
    assert_eq!(
        code(on_listener(6443, "app").await),
        "InvalidConfigurationRequest"
    );
    assert_eq!(code(on_listener(81, "app").await), "ListenerNotFound");
    assert_eq!(code(on_listener(80, "nope").await), "PolicyNotFound");
    let r = elb
        .set_load_balancer_policies_for_backend_server()
        .load_balancer_name("lb")
        .instance_port(80)
        .policy_names("app")
        .send()
        .await;
    assert_eq!(code(r), "InvalidConfigurationRequest");
    assert_eq!(shown(&elb).await, expected);

    // DescribeLoadBalancerPolicies: all, or by name.
    let all = elb
        .describe_load_balancer_policies()
        .load_balancer_name("lb")
        .send()
        .await
        .unwrap();
    let described: Vec<(&str, &str)> = all
        .policy_descriptions()
        .iter()
        .map(|p| (p.policy_name().unwrap(), p.policy_type_name().unwrap()))
        .collect();
    assert_eq!(
        described,
        [
            ("proxy", "ProxyProtocolPolicyType"),
            ("duration", "LBCookieStickinessPolicyType"),
            ("app", "AppCookieStickinessPolicyType")
        ]
    );
    let one = elb
        .describe_load_balancer_policies()
        .load_balancer_name("lb")
        .policy_names("app")
        .send()
        .await
        .unwrap();
    let a = &one.policy_descriptions()[0].policy_attribute_descriptions()[0];
    assert_eq!(
        (a.attribute_name(), a.attribute_value()),
        (Some("CookieName"), Some("session"))
    );
    let r = elb
        .describe_load_balancer_policies()
        .load_balancer_name("lb")
        .policy_names("nope")
        .send()
        .await;
    assert_eq!(code(r), "PolicyNotFound");

    // A policy in use is not deleted; once taken off it is.
    let delete = |name: &str| {
        elb.delete_load_balancer_policy()
            .load_balancer_name("lb")
            .policy_name(name)
            .send()
    };
    assert_eq!(code(delete("proxy").await), "InvalidConfigurationRequest");
    elb.set_load_balancer_policies_for_backend_server()
        .load_balancer_name("lb")
        .instance_port(6443)
        .set_policy_names(Some(vec![]))
        .send()
        .await
        .unwrap();
    delete("proxy").await.unwrap();
    // Deleting the HTTP listener takes its policies off with it.
    elb.delete_load_balancer_listeners()
        .load_balancer_name("lb")
        .load_balancer_ports(80)
        .send()
        .await
        .unwrap();
    delete("duration").await.unwrap();
    let after = shown(&elb).await;
    assert_eq!(
        after,
        Shown {
            app: vec![("app".to_string(), "session".to_string())],
            ..Default::default()
        }
    );
}

#[tokio::test]
async fn back_end_authentication_names_public_key_policies() {
    let fake = empty_fake().await;
    let elb = load_balancer(&fake).await;
    let create = |name: &str, type_name: &str, attribute_name: &str, value: &str| {
        elb.create_load_balancer_policy()
            .load_balancer_name("lb")
            .policy_name(name)
            .policy_type_name(type_name)
            .policy_attributes(attribute(attribute_name, value))
            .send()
    };
    // An authentication policy must name a public key policy of the load balancer.
    let r = create(
        "auth",
        "BackendServerAuthenticationPolicyType",
        "PublicKeyPolicyName",
        "key",
    )
    .await;
    assert_eq!(code(r), "InvalidConfigurationRequest");
    create("key", "PublicKeyPolicyType", "PublicKey", "MIIBIjANBgkq")
        .await
        .unwrap();
    create(
        "auth",
        "BackendServerAuthenticationPolicyType",
        "PublicKeyPolicyName",
        "key",
    )
    .await
    .unwrap();
    // The key is in use by the authentication policy.
    let r = elb
        .delete_load_balancer_policy()
        .load_balancer_name("lb")
        .policy_name("key")
        .send()
        .await;
    assert_eq!(code(r), "InvalidConfigurationRequest");
    let all = elb
        .describe_load_balancer_policies()
        .load_balancer_name("lb")
        .send()
        .await
        .unwrap();
    assert_eq!(all.policy_descriptions().len(), 2);
}
