//! The machine image: the spec's id, or the newest image of an owner whose name matches the
//! lookup's format, by default `capa-ami-<baseOS>-?<kubernetesVersion>-*` (the naming of
//! `images/`, the node image recipe).

use crate::aws_error::aws;
use crate::clients::Clients;
use crate::error::Error;
use crate::sdk::filter;
use crate::spec::ClusterSpec;
use crate::spec::machine::{
    DEFAULT_LOOKUP_BASE_OS, DEFAULT_LOOKUP_FORMAT, MachineSpec, lookup_pattern,
};

/// The account publishing Cluster API's AWS images today, the default lookup owner (the
/// reference project's earlier account, 258751437250, is being retired).
pub const DEFAULT_OWNER: &str = "819546954734";

/// A resolved image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// `ami-...`.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its root device, where the root volume mapping goes.
    pub root_device: String,
    /// Its boot mode parameter (`legacy-bios`, `uefi`, `uefi-preferred`), if it has one.
    pub boot_mode: Option<String>,
}

/// The name pattern of a lookup: its format, with the spec's field it comes from
/// (`capa-ami-{{.BaseOS}}-?{{.K8sVersion}}-*` by default), for `base_os` and
/// `kubernetes_version`, so `capa-ami-ubuntu-24.04-?1.31.0-*` (the `?` takes the `v`).
pub fn pattern(
    format: Option<(&str, &str)>,
    base_os: &str,
    kubernetes_version: &str,
) -> Result<String, Error> {
    let (field, format) = format.unwrap_or(("", DEFAULT_LOOKUP_FORMAT));
    lookup_pattern(format, base_os, kubernetes_version).map_err(|e| Error::InvalidSpec {
        problems: vec![format!("{field}: {e}")],
    })
}

/// Resolves the spec's image: by id, or the newest match of its lookup, each of whose
/// members left out is the cluster's (`imageLookupFormat`, `imageLookupOrg`,
/// `imageLookupBaseOS`), else CAPA's default.
pub async fn resolve(
    clients: &Clients,
    cluster: &ClusterSpec,
    spec: &MachineSpec,
) -> Result<Image, Error> {
    let call = clients.ec2.describe_images();
    let (call, lookup) = match (&spec.ami.id, &spec.ami.lookup) {
        (Some(id), _) => (call.image_ids(id), None),
        (None, Some(l)) => {
            let version = l
                .kubernetes_version
                .clone()
                .unwrap_or_else(|| spec.kubeadm.kubernetes_version.clone());
            let owner = l
                .owner
                .clone()
                .or_else(|| cluster.image_lookup_org.clone())
                .unwrap_or_else(|| DEFAULT_OWNER.to_string());
            let base_os = l
                .base_os
                .as_deref()
                .or(cluster.image_lookup_base_os.as_deref())
                .unwrap_or(DEFAULT_LOOKUP_BASE_OS);
            // The format and the field it comes from.
            let format = l
                .format
                .as_deref()
                .map(|f| ("spec.ami.lookup.format", f))
                .or(cluster
                    .image_lookup_format
                    .as_deref()
                    .map(|f| ("the cluster's spec.imageLookupFormat", f)));
            let arch = l.architecture.clone().unwrap_or_else(|| {
                crate::instance::architecture_of(&spec.instance_type).to_string()
            });
            let pattern = pattern(format, base_os, &version)?;
            (
                call.owners(&owner)
                    .filters(filter("name", &[&pattern]))
                    .filters(filter("architecture", &[&arch]))
                    .filters(filter("state", &["available"]))
                    .filters(filter("virtualization-type", &["hvm"])),
                Some((owner, pattern, arch)),
            )
        }
        (None, None) => {
            return Err(Error::InvalidSpec {
                problems: vec!["spec.ami: give id or lookup".into()],
            });
        }
    };
    let out = match call.send().await.map_err(aws("DescribeImages")) {
        Ok(o) => o,
        Err(e) if e.is_not_found() => {
            return Err(Error::PreExisting {
                resource: format!("image {}", spec.ami.id.clone().unwrap_or_default()),
                problem: "does not exist".into(),
            });
        }
        Err(e) => return Err(e.into()),
    };
    // CreationDate is ISO 8601 in UTC, so text order is time order.
    let newest = out
        .images()
        .iter()
        .max_by(|a, b| a.creation_date().cmp(&b.creation_date()));
    match (newest, lookup) {
        (Some(i), _) => Ok(Image {
            id: i.image_id().unwrap_or_default().to_string(),
            name: i.name().unwrap_or_default().to_string(),
            root_device: i.root_device_name().unwrap_or("/dev/sda1").to_string(),
            boot_mode: i.boot_mode().map(|b| b.as_str().to_string()),
        }),
        (None, Some((owner, pattern, architecture))) => Err(Error::NoImage {
            owner,
            pattern,
            architecture,
        }),
        (None, None) => Err(Error::PreExisting {
            resource: format!("image {}", spec.ami.id.clone().unwrap_or_default()),
            problem: "does not exist".into(),
        }),
    }
}
