//! Elastic Fabric Adapters: interfaces of type `efa` (an ENA interface with OS bypass, IP
//! addresses and all), made by CreateNetworkInterface or a launch interface's
//! `InterfaceType`, and carried only by an instance type that takes one
//! ([`crate::ec2::instance_type::max_efa_interfaces`]): at launch, on attachment and when a
//! stopped instance changes type. An EFA on a type without one is `Unsupported`, in AWS's
//! words as a stored RunInstances answer shows them (`The requested configuration is
//! currently not supported. Please check the documentation for supported configurations.`);
//! more EFAs than the type takes is `AttachmentLimitExceeded` (the fake's words, as for the
//! interface count). `efa-only` interfaces (no IP addresses) and `trunk` interfaces are not
//! served (`NotImplemented`).

use crate::ec2::error::Code;
use crate::ec2::instance::Instance;
use crate::ec2::instance_type::max_efa_interfaces;
use crate::generated::ec2::{InstanceType, NetworkInterfaceType};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// The type of a launch interface or a new interface, from the request's `InterfaceType`:
/// `interface` (the default) or `efa`.
pub fn asked(raw: Option<&str>) -> Result<NetworkInterfaceType, ApiError> {
    match raw {
        None | Some("interface") => Ok(NetworkInterfaceType::Interface),
        Some("efa") => Ok(NetworkInterfaceType::Efa),
        Some(other @ ("efa-only" | "trunk" | "branch")) => Err(ApiError::not_implemented(format!(
            "fakeaws does not serve network interfaces of type {other}"
        ))),
        Some(other) => Err(ApiError::invalid_value(format!(
            "Value ({other}) for parameter InterfaceType is invalid. \
             Valid values: interface | efa | efa-only"
        ))),
    }
}

/// Whether an interface of `t` is an Elastic Fabric Adapter.
pub fn is_efa(t: NetworkInterfaceType) -> bool {
    t == NetworkInterfaceType::Efa
}

/// How many Elastic Fabric Adapters instance `i` carries.
pub fn on_instance(region: &Region, i: &Instance) -> usize {
    crate::ec2::instance::interfaces(region, i)
        .filter(|e| is_efa(e.interface_type))
        .count()
}

/// Whether an instance of type `instance_type` may carry `efas` Elastic Fabric Adapters.
pub fn check(instance_type: InstanceType, efas: usize) -> Result<(), ApiError> {
    if efas == 0 {
        return Ok(());
    }
    let Some(max) = max_efa_interfaces(instance_type) else {
        return Err(ApiError::new(
            Code::Unsupported,
            "The requested configuration is currently not supported. \
             Please check the documentation for supported configurations.",
        ));
    };
    if efas > usize::try_from(max).unwrap_or(0) {
        return Err(ApiError::new(
            Code::AttachmentLimitExceeded,
            format!(
                "EFA interface count {efas} exceeds the limit for {} ({max})",
                instance_type.as_str()
            ),
        ));
    }
    Ok(())
}
