//! A load balancer's policies: CreateLoadBalancerPolicy, CreateAppCookieStickinessPolicy,
//! CreateLBCookieStickinessPolicy, DescribeLoadBalancerPolicies, DeleteLoadBalancerPolicy,
//! DescribeLoadBalancerPolicyTypes, SetLoadBalancerPoliciesOfListener and
//! SetLoadBalancerPoliciesForBackendServer; DescribeLoadBalancers shows them.
//!
//! The policy types are AWS's, with AWS's descriptions (the CLI's documented output of
//! `describe-load-balancer-policy-types`): proxy protocol, public keys and back-end server
//! authentication for the instances' side (the proxy protocol guide sets a proxy protocol
//! policy with SetLoadBalancerPoliciesForBackendServer), and the two stickiness policies for
//! HTTP/HTTPS listeners. `SSLNegotiationPolicyType` and the predefined security policies are
//! not served: their cipher lists are not in the fake (`NotImplemented`).
//!
//! A policy's attributes are checked against its type: each must be one of the type's, as
//! often as its cardinality allows, Booleans `true` or `false`, Longs numbers, a policy name
//! one of the load balancer's public key policies. A policy in use by a listener or a back-end
//! port cannot be deleted, as the API reference says.

use crate::elb::error::Code;
use crate::generated::elb::{
    AppCookieStickinessPolicy, BackendServerDescription, CreateAppCookieStickinessPolicyInput,
    CreateAppCookieStickinessPolicyOutput, CreateLBCookieStickinessPolicyInput,
    CreateLBCookieStickinessPolicyOutput, CreateLoadBalancerPolicyInput,
    CreateLoadBalancerPolicyOutput, DeleteLoadBalancerPolicyInput, DeleteLoadBalancerPolicyOutput,
    DescribeLoadBalancerPoliciesInput, DescribeLoadBalancerPoliciesOutput,
    DescribeLoadBalancerPolicyTypesInput, DescribeLoadBalancerPolicyTypesOutput,
    LBCookieStickinessPolicy, Policies, PolicyAttributeDescription, PolicyAttributeTypeDescription,
    PolicyDescription, PolicyTypeDescription, SetLoadBalancerPoliciesForBackendServerInput,
    SetLoadBalancerPoliciesForBackendServerOutput, SetLoadBalancerPoliciesOfListenerInput,
    SetLoadBalancerPoliciesOfListenerOutput,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::{LoadBalancer, get, get_mut};

/// One policy of a load balancer.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Policy {
    /// Its name, unique in the load balancer.
    pub name: String,
    /// Its type's name.
    pub type_name: String,
    /// Its attributes, in the order given.
    pub attributes: Vec<(String, String)>,
}

const PROXY_PROTOCOL: &str = "ProxyProtocolPolicyType";
const PUBLIC_KEY: &str = "PublicKeyPolicyType";
const APP_COOKIE: &str = "AppCookieStickinessPolicyType";
const LB_COOKIE: &str = "LBCookieStickinessPolicyType";
const BACKEND_AUTH: &str = "BackendServerAuthenticationPolicyType";
const SSL_NEGOTIATION: &str = "SSLNegotiationPolicyType";

/// One attribute of a policy type: name, type, cardinality.
type AttributeType = (&'static str, &'static str, &'static str);

/// The policy types served: name, AWS's description, attributes.
const TYPES: &[(&str, &str, &[AttributeType])] = &[
    (
        PROXY_PROTOCOL,
        "Policy that controls whether to include the IP address and port of the originating \
         request for TCP messages. This policy operates on TCP/SSL listeners only",
        &[("ProxyProtocol", "Boolean", "ONE")],
    ),
    (
        PUBLIC_KEY,
        "Policy containing a list of public keys to accept when authenticating the back-end \
         server(s). This policy cannot be applied directly to back-end servers or listeners but \
         must be part of a BackendServerAuthenticationPolicyType.",
        &[("PublicKey", "String", "ONE")],
    ),
    (
        APP_COOKIE,
        "Stickiness policy with session lifetimes controlled by the lifetime of the \
         application-generated cookie. This policy can be associated only with HTTP/HTTPS \
         listeners.",
        &[("CookieName", "String", "ONE")],
    ),
    (
        LB_COOKIE,
        "Stickiness policy with session lifetimes controlled by the browser (user-agent) or a \
         specified expiration period. This policy can be associated only with HTTP/HTTPS \
         listeners.",
        &[("CookieExpirationPeriod", "Long", "ZERO_OR_ONE")],
    ),
    (
        BACKEND_AUTH,
        "Policy that controls authentication to back-end server(s) and contains one or more \
         policies, such as an instance of a PublicKeyPolicyType. This policy can be associated \
         only with back-end servers that are using HTTPS/SSL.",
        &[("PublicKeyPolicyName", "PolicyName", "ONE_OR_MORE")],
    ),
];

fn policy_type(name: &str) -> Result<&'static [AttributeType], ApiError> {
    if name == SSL_NEGOTIATION {
        return Err(ApiError::not_implemented(
            "SSLNegotiationPolicyType (fakeaws has no cipher lists of the security policies)",
        ));
    }
    TYPES
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, attributes)| *attributes)
        .ok_or_else(|| {
            ApiError::new(
                Code::PolicyTypeNotFound,
                format!("There is no policy type named '{name}'"),
            )
        })
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::new(Code::InvalidConfigurationRequest, message)
}

fn policy_not_found(lb: &str, name: &str) -> ApiError {
    ApiError::new(
        Code::PolicyNotFound,
        format!("There is no policy with name {name} for load balancer {lb}"),
    )
}

/// Checks `attributes` against the attributes of `type_name`.
fn check_attributes(
    lb: &LoadBalancer,
    type_name: &str,
    attributes: &[(String, String)],
) -> Result<(), ApiError> {
    let types = policy_type(type_name)?;
    for (name, value) in attributes {
        let Some((_, kind, _)) = types.iter().find(|(n, _, _)| n == name) else {
            return Err(invalid(format!(
                "Attribute '{name}' is not an attribute of policy type {type_name}"
            )));
        };
        let ok = match *kind {
            "Boolean" => value == "true" || value == "false",
            "Long" => value.parse::<i64>().is_ok(),
            "PolicyName" => lb
                .policies
                .iter()
                .any(|p| p.name == *value && p.type_name == PUBLIC_KEY),
            _ => !value.is_empty(),
        };
        if !ok {
            return Err(invalid(format!(
                "Invalid value '{value}' for attribute '{name}' of type {kind}"
            )));
        }
    }
    for (name, _, cardinality) in types {
        let count = attributes.iter().filter(|(n, _)| n == name).count();
        let ok = match *cardinality {
            "ONE" => count == 1,
            "ZERO_OR_ONE" => count <= 1,
            "ONE_OR_MORE" => count >= 1,
            _ => true,
        };
        if !ok {
            return Err(invalid(format!(
                "Attribute '{name}' of policy type {type_name} is required {} (given {count} times)",
                match *cardinality {
                    "ONE" => "exactly once",
                    "ZERO_OR_ONE" => "at most once",
                    _ => "at least once",
                }
            )));
        }
    }
    Ok(())
}

/// Adds a policy to load balancer `lb_name` once checked.
fn add(
    region: &mut Region,
    lb_name: &str,
    name: &str,
    type_name: &str,
    attributes: Vec<(String, String)>,
) -> Result<(), ApiError> {
    let lb = get(region, lb_name)?;
    if name.is_empty() {
        return Err(ApiError::missing_parameter("PolicyName"));
    }
    check_attributes(lb, type_name, &attributes)?;
    if lb.policies.iter().any(|p| p.name == name) {
        return Err(ApiError::new(
            Code::DuplicatePolicyName,
            format!("Policy {name} already exists for load balancer {lb_name}"),
        ));
    }
    get_mut(region, lb_name)?.policies.push(Policy {
        name: name.to_string(),
        type_name: type_name.to_string(),
        attributes,
    });
    Ok(())
}

/// `CreateLoadBalancerPolicy`.
pub fn create_load_balancer_policy(
    region: &mut Region,
    input: CreateLoadBalancerPolicyInput,
) -> Result<CreateLoadBalancerPolicyOutput, ApiError> {
    let attributes = input
        .policy_attributes
        .unwrap_or_default()
        .into_iter()
        .map(|a| {
            (
                a.attribute_name.unwrap_or_default(),
                a.attribute_value.unwrap_or_default(),
            )
        })
        .collect();
    add(
        region,
        &input.load_balancer_name,
        &input.policy_name,
        &input.policy_type_name,
        attributes,
    )?;
    Ok(CreateLoadBalancerPolicyOutput {})
}

/// `CreateAppCookieStickinessPolicy`: an `AppCookieStickinessPolicyType` policy.
pub fn create_app_cookie_stickiness_policy(
    region: &mut Region,
    input: CreateAppCookieStickinessPolicyInput,
) -> Result<CreateAppCookieStickinessPolicyOutput, ApiError> {
    add(
        region,
        &input.load_balancer_name,
        &input.policy_name,
        APP_COOKIE,
        vec![("CookieName".to_string(), input.cookie_name)],
    )?;
    Ok(CreateAppCookieStickinessPolicyOutput {})
}

/// `CreateLBCookieStickinessPolicy`: an `LBCookieStickinessPolicyType` policy.
pub fn create_lb_cookie_stickiness_policy(
    region: &mut Region,
    input: CreateLBCookieStickinessPolicyInput,
) -> Result<CreateLBCookieStickinessPolicyOutput, ApiError> {
    let attributes = input
        .cookie_expiration_period
        .map(|p| ("CookieExpirationPeriod".to_string(), p.to_string()))
        .into_iter()
        .collect();
    add(
        region,
        &input.load_balancer_name,
        &input.policy_name,
        LB_COOKIE,
        attributes,
    )?;
    Ok(CreateLBCookieStickinessPolicyOutput {})
}

/// Whether policy `name` is set on a listener or a back-end port of `lb`.
fn in_use(lb: &LoadBalancer, name: &str) -> bool {
    lb.listener_policies
        .values()
        .chain(lb.backend_policies.values())
        .any(|names| names.iter().any(|n| n == name))
        || lb
            .policies
            .iter()
            .any(|p| p.type_name == BACKEND_AUTH && p.attributes.iter().any(|(_, v)| v == name))
}

/// `DeleteLoadBalancerPolicy`: not while a listener, a back-end port or an authentication
/// policy uses it; a name the load balancer has no policy of is no error (the model lists none).
pub fn delete_load_balancer_policy(
    region: &mut Region,
    input: DeleteLoadBalancerPolicyInput,
) -> Result<DeleteLoadBalancerPolicyOutput, ApiError> {
    let lb = get(region, &input.load_balancer_name)?;
    if in_use(lb, &input.policy_name) {
        return Err(invalid(format!(
            "Cannot delete policy {} of load balancer {}: it is in use",
            input.policy_name, input.load_balancer_name
        )));
    }
    get_mut(region, &input.load_balancer_name)?
        .policies
        .retain(|p| p.name != input.policy_name);
    Ok(DeleteLoadBalancerPolicyOutput {})
}

fn describe(p: &Policy) -> PolicyDescription {
    PolicyDescription {
        policy_name: Some(p.name.clone()),
        policy_type_name: Some(p.type_name.clone()),
        policy_attribute_descriptions: Some(
            p.attributes
                .iter()
                .map(|(n, v)| PolicyAttributeDescription {
                    attribute_name: Some(n.clone()),
                    attribute_value: Some(v.clone()),
                })
                .collect(),
        ),
    }
}

/// `DescribeLoadBalancerPolicies`: a load balancer's policies, all or those named (each must
/// exist). Without a load balancer AWS answers its sample SSL policies, which the fake does
/// not have.
pub fn describe_load_balancer_policies(
    region: &mut Region,
    input: DescribeLoadBalancerPoliciesInput,
) -> Result<DescribeLoadBalancerPoliciesOutput, ApiError> {
    let Some(lb_name) = input.load_balancer_name.filter(|n| !n.is_empty()) else {
        return Err(ApiError::not_implemented(
            "DescribeLoadBalancerPolicies without LoadBalancerName (the sample SSL policies)",
        ));
    };
    let lb = get(region, &lb_name)?;
    let named = input.policy_names.unwrap_or_default();
    let mut out = Vec::new();
    if named.is_empty() {
        out.extend(lb.policies.iter().map(describe));
    } else {
        for name in &named {
            let p = lb
                .policies
                .iter()
                .find(|p| p.name == *name)
                .ok_or_else(|| policy_not_found(&lb_name, name))?;
            out.push(describe(p));
        }
    }
    Ok(DescribeLoadBalancerPoliciesOutput {
        policy_descriptions: Some(out),
    })
}

/// `DescribeLoadBalancerPolicyTypes`: all, or those named (each must exist).
pub fn describe_load_balancer_policy_types(
    _region: &mut Region,
    input: DescribeLoadBalancerPolicyTypesInput,
) -> Result<DescribeLoadBalancerPolicyTypesOutput, ApiError> {
    let named = input.policy_type_names.unwrap_or_default();
    for name in &named {
        policy_type(name)?;
    }
    let types = TYPES
        .iter()
        .filter(|(n, _, _)| named.is_empty() || named.iter().any(|x| x == n))
        .map(|(name, description, attributes)| PolicyTypeDescription {
            policy_type_name: Some(name.to_string()),
            description: Some(description.to_string()),
            policy_attribute_type_descriptions: Some(
                attributes
                    .iter()
                    .map(|(a, kind, cardinality)| PolicyAttributeTypeDescription {
                        attribute_name: Some(a.to_string()),
                        attribute_type: Some(kind.to_string()),
                        cardinality: Some(cardinality.to_string()),
                        ..Default::default()
                    })
                    .collect(),
            ),
        })
        .collect();
    Ok(DescribeLoadBalancerPolicyTypesOutput {
        policy_type_descriptions: Some(types),
    })
}

/// The policies `names` of `lb`, each of one of `allowed` types, else the refusal.
fn check_set(
    lb: &LoadBalancer,
    names: &[String],
    allowed: &[&str],
    on: &str,
) -> Result<(), ApiError> {
    for name in names {
        let p = lb
            .policies
            .iter()
            .find(|p| p.name == *name)
            .ok_or_else(|| policy_not_found(&lb.name, name))?;
        if !allowed.contains(&p.type_name.as_str()) {
            return Err(invalid(format!(
                "{} policies cannot be set on {on}",
                p.type_name
            )));
        }
    }
    Ok(())
}

/// `SetLoadBalancerPoliciesOfListener`: the stickiness policies of an HTTP/HTTPS listener
/// (an empty list takes them all off).
pub fn set_load_balancer_policies_of_listener(
    region: &mut Region,
    input: SetLoadBalancerPoliciesOfListenerInput,
) -> Result<SetLoadBalancerPoliciesOfListenerOutput, ApiError> {
    let lb = get(region, &input.load_balancer_name)?;
    let port = input.load_balancer_port;
    let listener = lb
        .listeners
        .iter()
        .find(|l| l.load_balancer_port == port)
        .ok_or_else(|| {
            ApiError::new(
                Code::ListenerNotFound,
                format!(
                    "There is no listener on port {port} of load balancer {}",
                    lb.name
                ),
            )
        })?;
    let http = matches!(listener.protocol.as_str(), "HTTP" | "HTTPS");
    let allowed: &[&str] = if http { &[APP_COOKIE, LB_COOKIE] } else { &[] };
    check_set(
        lb,
        &input.policy_names,
        allowed,
        &format!("a {} listener", listener.protocol),
    )?;
    let lb = get_mut(region, &input.load_balancer_name)?;
    if input.policy_names.is_empty() {
        lb.listener_policies.remove(&port);
    } else {
        lb.listener_policies.insert(port, input.policy_names);
    }
    Ok(SetLoadBalancerPoliciesOfListenerOutput {})
}

/// `SetLoadBalancerPoliciesForBackendServer`: proxy protocol and back-end authentication
/// policies of an instance port (an empty list takes them all off).
pub fn set_load_balancer_policies_for_backend_server(
    region: &mut Region,
    input: SetLoadBalancerPoliciesForBackendServerInput,
) -> Result<SetLoadBalancerPoliciesForBackendServerOutput, ApiError> {
    let lb = get(region, &input.load_balancer_name)?;
    check_set(
        lb,
        &input.policy_names,
        &[PROXY_PROTOCOL, BACKEND_AUTH],
        "a back-end server",
    )?;
    let lb = get_mut(region, &input.load_balancer_name)?;
    if input.policy_names.is_empty() {
        lb.backend_policies.remove(&input.instance_port);
    } else {
        lb.backend_policies
            .insert(input.instance_port, input.policy_names);
    }
    Ok(SetLoadBalancerPoliciesForBackendServerOutput {})
}

/// What DescribeLoadBalancers shows of `lb`'s policies: the policies by kind, and each
/// back-end port's.
pub(super) fn render(lb: &LoadBalancer) -> (Policies, Vec<BackendServerDescription>) {
    let attribute = |p: &Policy, name: &str| {
        p.attributes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let policies = Policies {
        app_cookie_stickiness_policies: Some(
            lb.policies
                .iter()
                .filter(|p| p.type_name == APP_COOKIE)
                .map(|p| AppCookieStickinessPolicy {
                    policy_name: Some(p.name.clone()),
                    cookie_name: attribute(p, "CookieName"),
                })
                .collect(),
        ),
        lb_cookie_stickiness_policies: Some(
            lb.policies
                .iter()
                .filter(|p| p.type_name == LB_COOKIE)
                .map(|p| LBCookieStickinessPolicy {
                    policy_name: Some(p.name.clone()),
                    cookie_expiration_period: attribute(p, "CookieExpirationPeriod")
                        .and_then(|v| v.parse().ok()),
                })
                .collect(),
        ),
        other_policies: Some(
            lb.policies
                .iter()
                .filter(|p| p.type_name != APP_COOKIE && p.type_name != LB_COOKIE)
                .map(|p| p.name.clone())
                .collect(),
        ),
    };
    let backends = lb
        .backend_policies
        .iter()
        .map(|(port, names)| BackendServerDescription {
            instance_port: Some(*port),
            policy_names: Some(names.clone()),
        })
        .collect();
    (policies, backends)
}
