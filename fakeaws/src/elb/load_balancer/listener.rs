//! Listeners: checked and normalised as ELB does, merged, created and deleted.

use crate::elb::error::Code;
use crate::generated::elb::{
    CreateLoadBalancerListenerInput, CreateLoadBalancerListenerOutput,
    DeleteLoadBalancerListenerInput, DeleteLoadBalancerListenerOutput, Listener,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::*;

pub(super) fn normalise_listener(l: &Listener) -> Result<Listener, ApiError> {
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
    if matches!(protocol.as_str(), "HTTPS" | "SSL") && l.ssl_certificate_id.is_none() {
        return Err(ApiError::new(
            Code::CertificateNotFound,
            "SSLCertificateId is required for HTTPS and SSL listeners",
        ));
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
    name: &str,
    existing: &mut Vec<Listener>,
    new: &[Listener],
) -> Result<(), ApiError> {
    for l in new {
        let l = normalise_listener(l)?;
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
    merge_listeners(&lb.name, &mut listeners, &input.listeners)?;
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
