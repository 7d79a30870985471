//! Listeners: checked and normalised as ELB does, merged, created and deleted; and the
//! certificate of a secure listener replaced (SetLoadBalancerListenerSSLCertificate).
//!
//! A secure (HTTPS or SSL) listener names its server certificate by ARN: an IAM server
//! certificate (`arn:aws:iam::ACCOUNT:server-certificate/NAME`) or an ACM certificate of the
//! load balancer's region (`arn:aws:acm:REGION:ACCOUNT:certificate/ID`), of the caller's
//! account. The fake holds no certificates, so it takes any such ARN as one that exists; any
//! other is `CertificateNotFound`, in AWS's words for it.

use crate::elb::error::Code;
use crate::generated::elb::{
    CreateLoadBalancerListenerInput, CreateLoadBalancerListenerOutput,
    DeleteLoadBalancerListenerInput, DeleteLoadBalancerListenerOutput, Listener,
    SetLoadBalancerListenerSSLCertificateInput, SetLoadBalancerListenerSSLCertificateOutput,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::*;

/// Whether `arn` names a server certificate a load balancer of `region` can use: an IAM server
/// certificate or an ACM certificate of the region, of the region's account.
fn is_certificate_arn(region: &Region, arn: &str) -> bool {
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    let ["arn", partition, service, in_region, account, resource] = parts.as_slice() else {
        return false;
    };
    let named = |prefix: &str| {
        resource
            .strip_prefix(prefix)
            .is_some_and(|rest| !rest.is_empty() && !rest.ends_with('/'))
    };
    partition.starts_with("aws")
        && *account == region.account_id
        && match *service {
            "iam" => in_region.is_empty() && named("server-certificate/"),
            "acm" => *in_region == region.name && named("certificate/"),
            _ => false,
        }
}

/// `CertificateNotFound` for `arn` unless it names a certificate (see the module's note).
fn check_certificate(region: &Region, arn: &str) -> Result<(), ApiError> {
    if is_certificate_arn(region, arn) {
        Ok(())
    } else {
        Err(ApiError::new(
            Code::CertificateNotFound,
            format!("Server Certificate not found for the key: {arn}"),
        ))
    }
}

/// Whether a listener of `protocol` (upper case) terminates TLS, and so needs a certificate.
fn is_secure(protocol: &str) -> bool {
    matches!(protocol, "HTTPS" | "SSL")
}

pub(super) fn normalise_listener(region: &Region, l: &Listener) -> Result<Listener, ApiError> {
    let protocol = l.protocol.to_ascii_uppercase();
    if !["HTTP", "HTTPS", "TCP", "SSL"].contains(&protocol.as_str()) {
        return Err(ApiError::new(
            Code::UnsupportedProtocol,
            format!(
                "Invalid protocol '{}': must be one of HTTP, HTTPS, TCP, SSL",
                l.protocol
            ),
        ));
    }
    let instance_protocol = match &l.instance_protocol {
        Some(p) => p.to_ascii_uppercase(),
        None => match protocol.as_str() {
            "HTTPS" => "HTTP".to_string(),
            "SSL" => "TCP".to_string(),
            other => other.to_string(),
        },
    };
    if !["HTTP", "HTTPS", "TCP", "SSL"].contains(&instance_protocol.as_str()) {
        return Err(ApiError::new(
            Code::UnsupportedProtocol,
            format!("Invalid instance protocol '{instance_protocol}'"),
        ));
    }
    for port in [l.load_balancer_port, l.instance_port] {
        if !(1..=65535).contains(&port) {
            return Err(validation(format!(
                "Invalid port {port}: must be between 1 and 65535"
            )));
        }
    }
    if is_secure(&protocol) {
        match &l.ssl_certificate_id {
            // AWS's words for a secure listener without a certificate.
            None => {
                return Err(validation(
                    "Secure Listeners need to specify a SSLCertificateId",
                ));
            }
            Some(arn) => check_certificate(region, arn)?,
        }
    }
    Ok(Listener {
        protocol,
        load_balancer_port: l.load_balancer_port,
        instance_protocol: Some(instance_protocol),
        instance_port: l.instance_port,
        ssl_certificate_id: l.ssl_certificate_id.clone(),
    })
}

/// Adds `new` listeners to `existing`: the same listener again is fine, another one on a
/// port in use is `DuplicateListener`.
pub(super) fn merge_listeners(
    region: &Region,
    name: &str,
    existing: &mut Vec<Listener>,
    new: &[Listener],
) -> Result<(), ApiError> {
    for l in new {
        let l = normalise_listener(region, l)?;
        match existing
            .iter()
            .find(|x| x.load_balancer_port == l.load_balancer_port)
        {
            Some(x) if *x == l => {}
            Some(_) => {
                return Err(ApiError::new(
                    Code::DuplicateListener,
                    format!(
                        "A listener already exists for {name} with LoadBalancerPort {}, but with a different InstancePort, Protocol, or SSLCertificateId",
                        l.load_balancer_port
                    ),
                ));
            }
            None => existing.push(l),
        }
    }
    Ok(())
}

/// `CreateLoadBalancerListeners`.
pub fn create_load_balancer_listeners(
    region: &mut Region,
    input: CreateLoadBalancerListenerInput,
) -> Result<CreateLoadBalancerListenerOutput, ApiError> {
    let lb = get(region, &input.load_balancer_name)?;
    let mut listeners = lb.listeners.clone();
    merge_listeners(region, &lb.name, &mut listeners, &input.listeners)?;
    let lb = get_mut(region, &input.load_balancer_name)?;
    lb.listeners = listeners;
    Ok(CreateLoadBalancerListenerOutput {})
}

/// `DeleteLoadBalancerListeners`: ports without a listener are ignored.
pub fn delete_load_balancer_listeners(
    region: &mut Region,
    input: DeleteLoadBalancerListenerInput,
) -> Result<DeleteLoadBalancerListenerOutput, ApiError> {
    let lb = get_mut(region, &input.load_balancer_name)?;
    lb.listeners
        .retain(|l| !input.load_balancer_ports.contains(&l.load_balancer_port));
    // A listener's policies go with it (the policies themselves stay).
    lb.listener_policies
        .retain(|port, _| !input.load_balancer_ports.contains(port));
    Ok(DeleteLoadBalancerListenerOutput {})
}

/// `SetLoadBalancerListenerSSLCertificate`: the certificate of the secure listener on the
/// port is replaced. A port without a listener is `ListenerNotFound`; a listener that is not
/// HTTPS or SSL takes no certificate (`InvalidConfigurationRequest`, the fake's words).
pub fn set_load_balancer_listener_ssl_certificate(
    region: &mut Region,
    input: SetLoadBalancerListenerSSLCertificateInput,
) -> Result<SetLoadBalancerListenerSSLCertificateOutput, ApiError> {
    let lb = get(region, &input.load_balancer_name)?;
    let port = input.load_balancer_port;
    let Some(listener) = lb.listeners.iter().find(|l| l.load_balancer_port == port) else {
        return Err(ApiError::new(
            Code::ListenerNotFound,
            format!(
                "There is no listener on port {port} of load balancer {}",
                lb.name
            ),
        ));
    };
    if !is_secure(&listener.protocol) {
        return Err(ApiError::new(
            Code::InvalidConfigurationRequest,
            format!(
                "The listener on port {port} is {}: only HTTPS and SSL listeners take a \
                 certificate",
                listener.protocol
            ),
        ));
    }
    check_certificate(region, &input.ssl_certificate_id)?;
    let lb = get_mut(region, &input.load_balancer_name)?;
    if let Some(l) = lb
        .listeners
        .iter_mut()
        .find(|l| l.load_balancer_port == port)
    {
        l.ssl_certificate_id = Some(input.ssl_certificate_id);
    }
    Ok(SetLoadBalancerListenerSSLCertificateOutput {})
}
