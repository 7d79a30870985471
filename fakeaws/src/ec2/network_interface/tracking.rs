//! An interface's idle connection tracking timeouts (`ConnectionTrackingSpecification` of
//! CreateNetworkInterface, of a launch's new interfaces and of
//! ModifyNetworkInterfaceAttribute), checked against the ranges the model documents. Only
//! the timeouts set are kept and shown (`ConnectionTrackingConfiguration`), as the CLI's
//! documented output of CreateNetworkInterface shows them; an interface with none set shows
//! none, and EC2's defaults apply.

use super::NetworkInterface;
use crate::generated::ec2::{
    ConnectionTrackingConfiguration, ConnectionTrackingSpecificationRequest,
    ConnectionTrackingSpecificationResponse,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// Each timeout's member name and its range in seconds, as the model documents them.
const RANGES: [(&str, i32, i32); 3] = [
    ("TcpEstablishedTimeout", 60, 432_000),
    ("UdpStreamTimeout", 60, 180),
    ("UdpTimeout", 30, 60),
];

/// The timeouts `spec` sets, checked; `None` when it sets none.
pub fn asked(
    spec: Option<&ConnectionTrackingSpecificationRequest>,
) -> Result<Option<ConnectionTrackingConfiguration>, ApiError> {
    let Some(spec) = spec else { return Ok(None) };
    let given = [
        spec.tcp_established_timeout,
        spec.udp_stream_timeout,
        spec.udp_timeout,
    ];
    for ((name, min, max), value) in RANGES.iter().zip(given) {
        if let Some(v) = value
            && !(*min..=*max).contains(&v)
        {
            return Err(ApiError::invalid_parameter(
                &format!("ConnectionTrackingSpecification.{name}"),
                &v.to_string(),
                &format!("It must be from {min} to {max} seconds."),
            ));
        }
    }
    if given.iter().all(Option::is_none) {
        return Ok(None);
    }
    Ok(Some(ConnectionTrackingConfiguration {
        tcp_established_timeout: spec.tcp_established_timeout,
        udp_stream_timeout: spec.udp_stream_timeout,
        udp_timeout: spec.udp_timeout,
    }))
}

/// Sets the timeouts `set` gives on interface `id`, keeping the others it has.
pub fn apply(region: &mut Region, id: &str, set: &ConnectionTrackingConfiguration) {
    if let Some(eni) = region.network_interfaces.0.get_mut(id) {
        merge(eni, set);
    }
}

/// Sets the timeouts `set` gives on `eni`, keeping the others it has.
pub fn merge(eni: &mut NetworkInterface, set: &ConnectionTrackingConfiguration) {
    let now = eni.tracking.get_or_insert_with(Default::default);
    now.tcp_established_timeout = set.tcp_established_timeout.or(now.tcp_established_timeout);
    now.udp_stream_timeout = set.udp_stream_timeout.or(now.udp_stream_timeout);
    now.udp_timeout = set.udp_timeout.or(now.udp_timeout);
}

/// The timeouts as DescribeInstances shows them on an instance's interface.
pub fn for_instance(
    t: &ConnectionTrackingConfiguration,
) -> ConnectionTrackingSpecificationResponse {
    ConnectionTrackingSpecificationResponse {
        tcp_established_timeout: t.tcp_established_timeout,
        udp_stream_timeout: t.udp_stream_timeout,
        udp_timeout: t.udp_timeout,
    }
}
