//! The health check and the load balancer's attributes.

use crate::elb::error::Code;
use crate::generated::elb::{
    AccessLog, AdditionalAttribute, ConfigureHealthCheckInput, ConfigureHealthCheckOutput,
    ConnectionDraining, DescribeLoadBalancerAttributesInput, DescribeLoadBalancerAttributesOutput,
    LoadBalancerAttributes, ModifyLoadBalancerAttributesInput, ModifyLoadBalancerAttributesOutput,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::*;

pub(super) fn parse_target(target: &str) -> Result<(), ApiError> {
    let bad = || {
        validation(format!(
            "Invalid health check target '{target}': expected PROTOCOL:PORT[/PATH]"
        ))
    };
    let (proto, rest) = target.split_once(':').ok_or_else(bad)?;
    let (port, path) = match rest.split_once('/') {
        Some((p, path)) => (p, Some(path)),
        None => (rest, None),
    };
    let port: u32 = port.parse().map_err(|_| bad())?;
    if !(1..=65535).contains(&port) {
        return Err(bad());
    }
    match proto.to_ascii_uppercase().as_str() {
        "TCP" | "SSL" if path.is_none() => Ok(()),
        "HTTP" | "HTTPS" if path.is_some() => Ok(()),
        _ => Err(bad()),
    }
}

/// `ConfigureHealthCheck`.
pub fn configure_health_check(
    region: &mut Region,
    input: ConfigureHealthCheckInput,
) -> Result<ConfigureHealthCheckOutput, ApiError> {
    let h = &input.health_check;
    parse_target(&h.target)?;
    let check = |v: i32, lo: i32, hi: i32, what: &str| {
        if (lo..=hi).contains(&v) {
            Ok(())
        } else {
            Err(validation(format!(
                "{what} must be between {lo} and {hi}; {v} given"
            )))
        }
    };
    check(h.interval, 5, 300, "Interval")?;
    check(h.timeout, 2, 60, "Timeout")?;
    check(h.unhealthy_threshold, 2, 10, "UnhealthyThreshold")?;
    check(h.healthy_threshold, 2, 10, "HealthyThreshold")?;
    if h.timeout >= h.interval {
        return Err(validation("Timeout must be smaller than Interval"));
    }
    let lb = get_mut(region, &input.load_balancer_name)?;
    lb.health_check = input.health_check.clone();
    Ok(ConfigureHealthCheckOutput {
        health_check: Some(input.health_check),
    })
}

/// `DescribeLoadBalancerAttributes`.
pub fn describe_load_balancer_attributes(
    region: &mut Region,
    input: DescribeLoadBalancerAttributesInput,
) -> Result<DescribeLoadBalancerAttributesOutput, ApiError> {
    let lb = get(region, &input.load_balancer_name)?;
    Ok(DescribeLoadBalancerAttributesOutput {
        load_balancer_attributes: Some(shown(&lb.attributes)),
    })
}

/// The one additional attribute AWS documents: the desync mitigation mode.
pub(super) const DESYNC_MODE: &str = "elb.http.desyncmitigationmode";

/// The desync mitigation modes, as the API reference lists them.
const DESYNC_MODES: [&str; 3] = ["monitor", "defensive", "strictest"];

/// The additional attributes a new load balancer has: the default desync mitigation mode,
/// `defensive`.
pub(super) fn default_additional() -> Vec<AdditionalAttribute> {
    vec![AdditionalAttribute {
        key: Some(DESYNC_MODE.to_string()),
        value: Some("defensive".to_string()),
    }]
}

/// A load balancer's attributes as AWS shows them: with its desync mitigation mode (the
/// default for one kept from before the fake recorded it).
fn shown(a: &LoadBalancerAttributes) -> LoadBalancerAttributes {
    let mut a = a.clone();
    if a.additional_attributes.is_none() {
        a.additional_attributes = Some(default_additional());
    }
    a
}

/// The desync mitigation mode `additional` sets, checked: any other key is
/// `LoadBalancerAttributeNotFound`, a mode AWS does not list `ValidationError`.
fn desync_mode(additional: &[AdditionalAttribute]) -> Result<Option<String>, ApiError> {
    let mut mode = None;
    for a in additional {
        let key = a.key.as_deref().unwrap_or_default();
        if key != DESYNC_MODE {
            return Err(ApiError::new(
                Code::LoadBalancerAttributeNotFound,
                format!(
                    "The load balancer attribute '{key}' does not exist: the one additional attribute is {DESYNC_MODE}"
                ),
            ));
        }
        let value = a.value.as_deref().unwrap_or_default();
        if !DESYNC_MODES.contains(&value) {
            return Err(validation(format!(
                "{DESYNC_MODE} must be one of monitor, defensive or strictest; '{value}' given"
            )));
        }
        mode = Some(value.to_string());
    }
    Ok(mode)
}

/// `ModifyLoadBalancerAttributes`: cross-zone, access log, connection draining, idle timeout.
pub fn modify_load_balancer_attributes(
    region: &mut Region,
    input: ModifyLoadBalancerAttributesInput,
) -> Result<ModifyLoadBalancerAttributesOutput, ApiError> {
    let a = &input.load_balancer_attributes;
    if let Some(c) = &a.connection_settings
        && !(1..=4000).contains(&c.idle_timeout)
    {
        return Err(validation(
            "ConnectionSettings.IdleTimeout must be between 1 and 4000 seconds",
        ));
    }
    if let Some(d) = &a.connection_draining
        && d.timeout.is_some_and(|t| !(1..=3600).contains(&t))
    {
        return Err(validation(
            "ConnectionDraining.Timeout must be between 1 and 3600 seconds",
        ));
    }
    if let Some(l) = &a.access_log {
        if l.emit_interval.is_some_and(|i| i != 5 && i != 60) {
            return Err(validation("AccessLog.EmitInterval must be 5 or 60"));
        }
        if l.enabled && l.s3_bucket_name.as_deref().is_none_or(str::is_empty) {
            return Err(ApiError::new(
                Code::InvalidConfigurationRequest,
                "An access log needs an S3 bucket name",
            ));
        }
    }
    let mode = desync_mode(a.additional_attributes.as_deref().unwrap_or_default())?;
    let lb = get_mut(region, &input.load_balancer_name)?;
    if let Some(mode) = mode {
        lb.attributes.additional_attributes = Some(vec![AdditionalAttribute {
            key: Some(DESYNC_MODE.to_string()),
            value: Some(mode),
        }]);
    }
    if let Some(c) = &a.cross_zone_load_balancing {
        lb.attributes.cross_zone_load_balancing = Some(c.clone());
    }
    if let Some(c) = &a.connection_settings {
        lb.attributes.connection_settings = Some(c.clone());
    }
    if let Some(d) = &a.connection_draining {
        let timeout = d.timeout.or_else(|| {
            lb.attributes
                .connection_draining
                .as_ref()
                .and_then(|x| x.timeout)
        });
        lb.attributes.connection_draining = Some(ConnectionDraining {
            enabled: d.enabled,
            timeout,
        });
    }
    if let Some(l) = &a.access_log {
        lb.attributes.access_log = Some(AccessLog {
            enabled: l.enabled,
            s3_bucket_name: l.s3_bucket_name.clone(),
            emit_interval: l.emit_interval.or(Some(60)).filter(|_| l.enabled),
            s3_bucket_prefix: l.s3_bucket_prefix.clone(),
        });
    }
    Ok(ModifyLoadBalancerAttributesOutput {
        load_balancer_name: Some(lb.name.clone()),
        load_balancer_attributes: Some(shown(&lb.attributes)),
    })
}
