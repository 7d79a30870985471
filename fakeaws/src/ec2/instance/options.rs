//! The launch options an instance keeps and DescribeInstances answers for every instance, as
//! AWS does (the CLI's documented `describe-instances` output shows each): its CPU options,
//! capacity reservation preference, hibernation, Nitro Enclaves, automatic recovery and
//! private DNS name options. Each is what RunInstances or its launch template asked for, else
//! AWS's default:
//! - CPU options: the instance type's cores and threads per core (for the types the catalogue
//!   of `instance_type.rs` knows; another type answers none). A launch may ask for fewer cores
//!   or one thread per core, each at least one and at most the type's, and AMD SEV-SNP
//!   ([`super::boot`]), answered as asked;
//! - boot mode: the image's parameter and the mode the instance booted in ([`super::boot`]);
//! - capacity reservations: `open`, or the reservation it targets
//!   ([`crate::ec2::capacity_reservation`]);
//! - hibernation and enclaves: not configured, not enabled;
//! - automatic recovery: `default`;
//! - private DNS names: the subnet's options for launches (`PrivateDnsNameOptionsOnLaunch`).
//!
//! ModifyInstanceCapacityReservationAttributes changes a stopped instance's Capacity
//! Reservation preference or target.
//! ModifyInstanceMaintenanceOptions and ModifyPrivateDnsNameOptions change the last two on an
//! instance that is not shutting down or terminated; the CLI's documented examples show the
//! first on a running or a stopped instance.

use crate::ec2::{Kind, capacity_reservation};
use crate::generated::ec2::{
    AmdSevSnpSpecification, ArchitectureValues, BootModeValues, CapacityReservationPreference,
    CapacityReservationSpecificationResponse, CapacityReservationTargetResponse, CpuOptions,
    EnclaveOptions, HibernationOptions, InstanceAutoRecoveryState, InstanceBootModeValues,
    InstanceMaintenanceOptions, InstanceRebootMigrationState, InstanceStateName, InstanceType,
    ModifyInstanceCapacityReservationAttributesRequest,
    ModifyInstanceCapacityReservationAttributesResult, ModifyInstanceMaintenanceOptionsRequest,
    ModifyInstanceMaintenanceOptionsResult, ModifyPrivateDnsNameOptionsRequest,
    ModifyPrivateDnsNameOptionsResult, PrivateDnsNameOptionsResponse, RunInstancesRequest,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// The options of one instance.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct LaunchOptions {
    /// Cores and threads per core, when its type is known.
    pub cpu: Option<(i32, i32)>,
    /// AMD SEV-SNP as the launch asked it (`enabled` or `disabled`), shown in its CPU options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amd_sev_snp: Option<AmdSevSnpSpecification>,
    /// The boot mode parameter of the image it was launched from, if that has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_mode: Option<BootModeValues>,
    /// The mode it booted in, at its launch or its last start ([`super::boot`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_boot_mode: Option<InstanceBootModeValues>,
    /// `open`, `none` or `capacity-reservations-only`, as asked (nothing asked: `open`).
    pub capacity_preference: Option<CapacityReservationPreference>,
    /// The Capacity Reservation it targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_target: Option<String>,
    /// Whether it was launched with hibernation configured.
    pub hibernation: bool,
    /// Whether Nitro Enclaves are enabled.
    pub enclave: bool,
    /// `default` or `disabled`.
    pub auto_recovery: Option<InstanceAutoRecoveryState>,
    /// Reboot migration, once ModifyInstanceMaintenanceOptions set it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reboot_migration: Option<InstanceRebootMigrationState>,
    /// Its private DNS name options.
    pub private_dns: Option<PrivateDnsNameOptionsResponse>,
}

/// The options of a launch in `subnet_id` of `instance_type`, checked.
pub fn at_launch(
    region: &Region,
    input: &RunInstancesRequest,
    instance_type: InstanceType,
    image: (Option<BootModeValues>, ArchitectureValues),
    subnet_id: &str,
) -> Result<LaunchOptions, ApiError> {
    let (boot_mode, architecture) = image;
    let current_boot_mode = super::boot::current_mode(boot_mode, architecture, instance_type)?;
    let amd_sev_snp = input.cpu_options.as_ref().and_then(|c| c.amd_sev_snp);
    super::boot::check_sev_snp(amd_sev_snp, instance_type, current_boot_mode)?;
    let default_cpu = crate::ec2::instance_type::cores_and_threads(instance_type);
    let cpu = match &input.cpu_options {
        Some(asked) if asked.nested_virtualization.is_some() => {
            return Err(ApiError::not_implemented("CpuOptions.NestedVirtualization"));
        }
        Some(asked) if asked.core_count.is_some() || asked.threads_per_core.is_some() => {
            let Some((cores, threads)) = default_cpu else {
                return Err(ApiError::not_implemented(format!(
                    "CpuOptions for instance type {} (its cores are not in fakeaws's catalogue)",
                    instance_type.as_str()
                )));
            };
            let (want_cores, want_threads) = (
                asked.core_count.unwrap_or(cores),
                asked.threads_per_core.unwrap_or(threads),
            );
            if !(1..=cores).contains(&want_cores) || !(1..=threads).contains(&want_threads) {
                return Err(ApiError::invalid_value(format!(
                    "The specified CPU options (CoreCount {want_cores}, ThreadsPerCore \
                     {want_threads}) are not valid for instance type {}: it has {cores} cores \
                     and {threads} threads per core.",
                    instance_type.as_str()
                )));
            }
            Some((want_cores, want_threads))
        }
        _ => default_cpu,
    };
    let capacity = crate::ec2::capacity_reservation::Settings::asked(
        input.capacity_reservation_specification.as_ref(),
    )?;
    let subnet = region.subnets.get(subnet_id);
    let asked_dns = input.private_dns_name_options.as_ref();
    let private_dns = PrivateDnsNameOptionsResponse {
        hostname_type: asked_dns
            .and_then(|d| d.hostname_type)
            .or(subnet.map(|s| s.hostname_type)),
        enable_resource_name_dns_a_record: asked_dns
            .and_then(|d| d.enable_resource_name_dns_a_record)
            .or(subnet.map(|s| s.dns_a_record)),
        enable_resource_name_dns_aaaa_record: Some(
            asked_dns
                .and_then(|d| d.enable_resource_name_dns_aaaa_record)
                .or(subnet.map(|s| s.dns_aaaa_record))
                .unwrap_or(false),
        ),
    };
    Ok(LaunchOptions {
        cpu,
        amd_sev_snp,
        boot_mode,
        current_boot_mode: Some(current_boot_mode),
        // As asked: DescribeInstances answers `open` for an instance that asked for nothing.
        capacity_preference: capacity.preference,
        capacity_target: capacity.target,
        hibernation: input
            .hibernation_options
            .as_ref()
            .and_then(|h| h.configured)
            .unwrap_or(false),
        enclave: input
            .enclave_options
            .as_ref()
            .and_then(|e| e.enabled)
            .unwrap_or(false),
        auto_recovery: Some(
            input
                .maintenance_options
                .as_ref()
                .and_then(|m| m.auto_recovery)
                .unwrap_or(InstanceAutoRecoveryState::Default),
        ),
        private_dns: Some(private_dns),
        reboot_migration: None,
    })
}

/// The members of DescribeInstances' answer the options make.
pub struct Rendered {
    pub cpu: Option<CpuOptions>,
    pub boot_mode: Option<BootModeValues>,
    pub current_boot_mode: Option<InstanceBootModeValues>,
    pub capacity: Option<CapacityReservationSpecificationResponse>,
    pub hibernation: Option<HibernationOptions>,
    pub enclave: Option<EnclaveOptions>,
    pub maintenance: Option<InstanceMaintenanceOptions>,
    pub private_dns: Option<PrivateDnsNameOptionsResponse>,
}

/// `o` as DescribeInstances answers it.
pub fn render(o: &LaunchOptions) -> Rendered {
    Rendered {
        cpu: (o.cpu.is_some() || o.amd_sev_snp.is_some()).then(|| CpuOptions {
            core_count: o.cpu.map(|(cores, _)| cores),
            threads_per_core: o.cpu.map(|(_, threads)| threads),
            amd_sev_snp: o.amd_sev_snp,
            ..Default::default()
        }),
        boot_mode: o.boot_mode,
        current_boot_mode: o.current_boot_mode,
        // The target of an instance that targets a reservation; else its preference.
        capacity: Some(CapacityReservationSpecificationResponse {
            capacity_reservation_preference: match &o.capacity_target {
                Some(_) => o.capacity_preference,
                None => Some(
                    o.capacity_preference
                        .unwrap_or(CapacityReservationPreference::Open),
                ),
            },
            capacity_reservation_target: o.capacity_target.as_ref().map(|id| {
                CapacityReservationTargetResponse {
                    capacity_reservation_id: Some(id.clone()),
                    capacity_reservation_resource_group_arn: None,
                }
            }),
        }),
        hibernation: Some(HibernationOptions {
            configured: Some(o.hibernation),
        }),
        enclave: Some(EnclaveOptions {
            enabled: Some(o.enclave),
        }),
        maintenance: Some(InstanceMaintenanceOptions {
            auto_recovery: Some(
                o.auto_recovery
                    .unwrap_or(InstanceAutoRecoveryState::Default),
            ),
            reboot_migration: None,
        }),
        private_dns: o.private_dns.clone(),
    }
}

/// The options of instance `id`, to change: it must exist and be neither shutting down nor
/// terminated (`IncorrectInstanceState`, in the fake's words).
fn changeable<'a>(region: &'a mut Region, id: &str) -> Result<&'a mut LaunchOptions, ApiError> {
    let i = Kind::Instance.get_mut(&mut region.instances.0, id)?;
    super::refuse_if_gone(i, "its options")?;
    Ok(&mut i.options)
}

/// `ModifyInstanceMaintenanceOptions`: automatic recovery and reboot migration.
pub fn modify_instance_maintenance_options(
    region: &mut Region,
    input: ModifyInstanceMaintenanceOptionsRequest,
) -> Result<ModifyInstanceMaintenanceOptionsResult, ApiError> {
    let o = changeable(region, &input.instance_id)?;
    if let Some(a) = input.auto_recovery {
        o.auto_recovery = Some(a);
    }
    if let Some(r) = input.reboot_migration {
        o.reboot_migration = Some(r);
    }
    Ok(ModifyInstanceMaintenanceOptionsResult {
        instance_id: Some(input.instance_id),
        auto_recovery: Some(
            o.auto_recovery
                .unwrap_or(InstanceAutoRecoveryState::Default),
        ),
        reboot_migration: o.reboot_migration,
    })
}

/// `ModifyPrivateDnsNameOptions`: the hostname type and the A and AAAA records, each given.
pub fn modify_private_dns_name_options(
    region: &mut Region,
    input: ModifyPrivateDnsNameOptionsRequest,
) -> Result<ModifyPrivateDnsNameOptionsResult, ApiError> {
    let o = changeable(region, &input.instance_id)?;
    let dns = o.private_dns.get_or_insert_with(Default::default);
    if let Some(t) = input.private_dns_hostname_type {
        dns.hostname_type = Some(t);
    }
    if let Some(a) = input.enable_resource_name_dns_a_record {
        dns.enable_resource_name_dns_a_record = Some(a);
    }
    if let Some(aaaa) = input.enable_resource_name_dns_aaaa_record {
        dns.enable_resource_name_dns_aaaa_record = Some(aaaa);
    }
    Ok(ModifyPrivateDnsNameOptionsResult {
        r#return: Some(true),
    })
}

/// `ModifyInstanceCapacityReservationAttributes`: a stopped instance's preference or target.
pub fn modify_instance_capacity_reservation_attributes(
    region: &mut Region,
    input: ModifyInstanceCapacityReservationAttributesRequest,
) -> Result<ModifyInstanceCapacityReservationAttributesResult, ApiError> {
    let settings =
        capacity_reservation::Settings::asked(Some(&input.capacity_reservation_specification))?;
    if settings.preference.is_none() && settings.target.is_none() {
        return Err(ApiError::missing_parameter(
            "CapacityReservationSpecification.CapacityReservationPreference or \
             CapacityReservationTarget",
        ));
    }
    let i = Kind::Instance.get(&region.instances, &input.instance_id)?;
    if i.state != InstanceStateName::Stopped {
        return Err(ApiError::new(
            crate::ec2::error::Code::IncorrectInstanceState,
            format!(
                "The instance '{}' is {}: its Capacity Reservation settings change only while \
                 it is stopped.",
                i.id,
                i.state.as_str()
            ),
        ));
    }
    if let Some(id) = &settings.target {
        capacity_reservation::target(region, id, i.instance_type, &i.zone, i.tenancy)?;
    }
    if let Some(i) = region.instances.0.get_mut(&input.instance_id) {
        settings.keep(&mut i.options);
        i.capacity_reservation = None;
    }
    Ok(ModifyInstanceCapacityReservationAttributesResult {
        r#return: Some(true),
    })
}
