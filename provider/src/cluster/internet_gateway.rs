//! The internet gateway: the spec's (validated: attached to the VPC), one already attached
//! to an existing VPC (used as pre-existing), or the cluster's own, created and attached when
//! the cluster has public subnets; and a dual-stack cluster's egress-only internet gateway,
//! the private subnets' way out over IPv6; and the carrier gateway of a cluster with public
//! subnets in Wavelength Zones.

use aws_sdk_ec2::types::{
    CarrierGatewayState, EgressOnlyInternetGateway, InternetGateway, ResourceType,
};

use super::{Res, Scope};
use crate::aws_error::aws;
use crate::error::Error;
use crate::ownership;
use crate::sdk::{filter, found, sent_once};

fn attached_to(g: &InternetGateway, vpc_id: &str) -> bool {
    g.attachments().iter().any(|a| a.vpc_id() == Some(vpc_id))
}

fn egress_only_in(g: &EgressOnlyInternetGateway, vpc_id: &str) -> bool {
    g.attachments().iter().any(|a| a.vpc_id() == Some(vpc_id))
}

/// The user's egress-only gateway the spec names (`ipv6.egressOnlyInternetGatewayId`).
fn users_egress_only(s: &Scope<'_>) -> Option<String> {
    s.plan
        .spec
        .network
        .vpc
        .ipv6
        .as_ref()
        .and_then(|v| v.egress_only_internet_gateway_id.clone())
}

/// Reconciles the internet gateway, and a dual-stack cluster's egress-only one.
pub async fn reconcile(s: &mut Scope<'_>) -> Result<(), Error> {
    internet_gateway(s).await?;
    egress_only(s).await?;
    carrier(s).await
}

/// Reconciles the carrier gateway of a cluster with public subnets of its own in Wavelength
/// Zones: their way to the internet (and the carrier's network), found by tag, else created
/// in the VPC.
async fn carrier(s: &mut Scope<'_>) -> Result<(), Error> {
    let Some(vpc_id) = s.vpc_id().map(String::from) else {
        return Ok(());
    };
    let needed = s.planned_subnets().iter().any(|p| {
        p.public
            && p.id.is_none()
            && p.zone
                .as_deref()
                .is_some_and(|z| s.plan.zone_kind(z) == crate::spec::ZoneKind::WavelengthZone)
    });
    if !needed {
        return Ok(());
    }
    let name = format!("{}-cagw", s.name());
    let found = if s.vpc_is_empty() {
        None
    } else {
        s.ec2()
            .describe_carrier_gateways()
            .filters(filter("vpc-id", &[&vpc_id]))
            .filters(s.owned_filter())
            .send()
            .await
            .map_err(aws("DescribeCarrierGateways"))?
            .carrier_gateways
            .unwrap_or_default()
            .into_iter()
            .find(|g| {
                !matches!(
                    g.state(),
                    Some(CarrierGatewayState::Deleting | CarrierGatewayState::Deleted)
                )
            })
    };
    let id = match found {
        Some(g) => {
            let id = g.carrier_gateway_id().unwrap_or_default().to_string();
            s.ensure_tags(&id, g.tags(), ResourceType::CarrierGateway, "common", &name)
                .await?;
            id
        }
        None => {
            if !s.act(format!("create carrier gateway in {vpc_id} ({name})")) {
                "<new carrier gateway>".to_string()
            } else {
                s.ec2()
                    .create_carrier_gateway()
                    .vpc_id(&vpc_id)
                    .client_token(ownership::client_token(&[s.name(), "cagw", &vpc_id]))
                    .tag_specifications(s.tag_spec(ResourceType::CarrierGateway, "common", &name))
                    .send()
                    .await
                    .map_err(aws("CreateCarrierGateway"))?
                    .carrier_gateway
                    .and_then(|g| g.carrier_gateway_id)
                    .ok_or_else(|| crate::sdk::empty_answer("CreateCarrierGateway"))?
            }
        }
    };
    s.status.carrier_gateway = Some(Res { id, managed: true });
    Ok(())
}

/// Checks the gateways of the user's that the spec names for the existing VPC `vpc_id`
/// (an internet gateway, a dual-stack cluster's egress-only one): each exists and is
/// attached to the VPC. Run with the VPC, before the cluster makes anything.
pub async fn check_users(s: &mut Scope<'_>, vpc_id: &str) -> Result<(), Error> {
    if let Some(id) = s.plan.spec.network.internet_gateway_id.clone() {
        let answer = s
            .ec2()
            .describe_internet_gateways()
            .internet_gateway_ids(&id)
            .send()
            .await
            .map_err(aws("DescribeInternetGateways"));
        let found = found(answer)?
            .and_then(|o| o.internet_gateways)
            .unwrap_or_default();
        let Some(g) = found.first() else {
            return Err(Error::PreExisting {
                resource: format!("internet gateway {id} (spec.network.internetGatewayId)"),
                problem: "does not exist".into(),
            });
        };
        if !attached_to(g, vpc_id) {
            return Err(Error::PreExisting {
                resource: format!("internet gateway {id}"),
                problem: format!("is not attached to the cluster's VPC {vpc_id}"),
            });
        }
        s.status.internet_gateway = Some(Res { id, managed: false });
    }
    if let Some(id) = users_egress_only(s) {
        let answer = s
            .ec2()
            .describe_egress_only_internet_gateways()
            .egress_only_internet_gateway_ids(&id)
            .send()
            .await
            .map_err(aws("DescribeEgressOnlyInternetGateways"));
        let found = found(answer)?
            .and_then(|o| o.egress_only_internet_gateways)
            .unwrap_or_default();
        let Some(g) = found.first() else {
            return Err(Error::PreExisting {
                resource: format!(
                    "egress-only internet gateway {id} \
                     (spec.network.vpc.ipv6.egressOnlyInternetGatewayId)"
                ),
                problem: "does not exist".into(),
            });
        };
        if !egress_only_in(g, vpc_id) {
            return Err(Error::PreExisting {
                resource: format!("egress-only internet gateway {id}"),
                problem: format!("is not attached to the cluster's VPC {vpc_id}"),
            });
        }
        s.status.egress_only_internet_gateway = Some(Res { id, managed: false });
    }
    Ok(())
}

/// Reconciles the internet gateway.
async fn internet_gateway(s: &mut Scope<'_>) -> Result<(), Error> {
    let Some(vpc_id) = s.vpc_id().map(String::from) else {
        return Ok(());
    };
    if s.plan.spec.network.internet_gateway_id.is_some() {
        // The user's, checked with the VPC ([`check_users`]).
        return Ok(());
    }
    let needed = s.planned_subnets().iter().any(|p| p.public);
    let attached = if s.vpc_is_empty() {
        Vec::new()
    } else {
        s.ec2()
            .describe_internet_gateways()
            .filters(filter("attachment.vpc-id", &[&vpc_id]))
            .send()
            .await
            .map_err(aws("DescribeInternetGateways"))?
            .internet_gateways
            .unwrap_or_default()
    };
    let name = format!("{}-igw", s.name());
    if let Some(g) = attached.first() {
        let id = g.internet_gateway_id().unwrap_or_default().to_string();
        let managed = ownership::is_managed(s.name(), ownership::ec2_pairs(g.tags()));
        if managed {
            s.ensure_tags(
                &id,
                g.tags(),
                ResourceType::InternetGateway,
                "common",
                &name,
            )
            .await?;
        }
        s.status.internet_gateway = Some(Res { id, managed });
        return Ok(());
    }
    if !needed {
        return Ok(());
    }
    // A gateway of ours left detached (a crash between create and attach) is reused.
    let detached = s
        .ec2()
        .describe_internet_gateways()
        .filters(s.owned_filter())
        .send()
        .await
        .map_err(aws("DescribeInternetGateways"))?
        .internet_gateways
        .unwrap_or_default()
        .into_iter()
        .find(|g| g.attachments().is_empty());
    let id = match detached {
        Some(g) => g.internet_gateway_id().unwrap_or_default().to_string(),
        None => {
            if !s.act(format!("create internet gateway ({name})")) {
                s.status.internet_gateway = Some(Res {
                    id: "<new internet gateway>".into(),
                    managed: true,
                });
                return Ok(());
            }
            s.ec2()
                .create_internet_gateway()
                .tag_specifications(s.tag_spec(ResourceType::InternetGateway, "common", &name))
                .customize()
                .config_override(sent_once())
                .send()
                .await
                .map_err(aws("CreateInternetGateway"))?
                .internet_gateway
                .and_then(|g| g.internet_gateway_id)
                .unwrap_or_default()
        }
    };
    if s.act(format!("attach internet gateway {id} to {vpc_id}")) {
        s.ec2()
            .attach_internet_gateway()
            .internet_gateway_id(&id)
            .vpc_id(&vpc_id)
            .send()
            .await
            .map_err(aws("AttachInternetGateway"))?;
    }
    s.status.internet_gateway = Some(Res { id, managed: true });
    Ok(())
}

/// Reconciles the egress-only internet gateway of a dual-stack cluster: the way out over
/// IPv6 (`::/0`) of the private subnets it creates; the spec's (checked to be attached to the
/// existing VPC), else the cluster's own, found by tag, else created in the VPC (it is
/// attached from the start).
async fn egress_only(s: &mut Scope<'_>) -> Result<(), Error> {
    let Some(vpc_id) = s.vpc_id().map(String::from) else {
        return Ok(());
    };
    if s.plan.spec.network.vpc.ipv6.is_none()
        || !s
            .planned_subnets()
            .iter()
            .any(|p| !p.public && p.id.is_none())
    {
        return Ok(());
    }
    if users_egress_only(s).is_some() {
        // The user's, checked with the VPC ([`check_users`]).
        return Ok(());
    }
    let name = format!("{}-eigw", s.name());
    let found = if s.vpc_is_empty() {
        None
    } else {
        s.ec2()
            .describe_egress_only_internet_gateways()
            .filters(s.owned_filter())
            .send()
            .await
            .map_err(aws("DescribeEgressOnlyInternetGateways"))?
            .egress_only_internet_gateways
            .unwrap_or_default()
            .into_iter()
            .find(|g| egress_only_in(g, &vpc_id))
    };
    let id = match found {
        Some(g) => {
            let id = g
                .egress_only_internet_gateway_id()
                .unwrap_or_default()
                .to_string();
            s.ensure_tags(
                &id,
                g.tags(),
                ResourceType::EgressOnlyInternetGateway,
                "common",
                &name,
            )
            .await?;
            id
        }
        None => {
            if !s.act(format!(
                "create egress-only internet gateway in {vpc_id} ({name})"
            )) {
                "<new egress-only internet gateway>".to_string()
            } else {
                s.ec2()
                    .create_egress_only_internet_gateway()
                    .vpc_id(&vpc_id)
                    .client_token(ownership::client_token(&[s.name(), "eigw", &vpc_id]))
                    .tag_specifications(s.tag_spec(
                        ResourceType::EgressOnlyInternetGateway,
                        "common",
                        &name,
                    ))
                    .send()
                    .await
                    .map_err(aws("CreateEgressOnlyInternetGateway"))?
                    .egress_only_internet_gateway
                    .and_then(|g| g.egress_only_internet_gateway_id)
                    .ok_or_else(|| crate::sdk::empty_answer("CreateEgressOnlyInternetGateway"))?
            }
        }
    };
    s.status.egress_only_internet_gateway = Some(Res { id, managed: true });
    Ok(())
}

/// Deletes the egress-only gateways of the cluster's own in its VPC once its spec names the
/// user's instead: run after the route tables go to the user's.
pub async fn retire_egress_only(s: &mut Scope<'_>) -> Result<(), Error> {
    let Some(vpc_id) = s.vpc_id().map(String::from) else {
        return Ok(());
    };
    if users_egress_only(s).is_none() {
        return Ok(());
    }
    let own: Vec<String> = s
        .ec2()
        .describe_egress_only_internet_gateways()
        .filters(s.owned_filter())
        .send()
        .await
        .map_err(aws("DescribeEgressOnlyInternetGateways"))?
        .egress_only_internet_gateways()
        .iter()
        .filter(|g| egress_only_in(g, &vpc_id))
        .filter_map(|g| g.egress_only_internet_gateway_id().map(String::from))
        .collect();
    delete_each(s, "egress-only internet gateway", own, delete_egress_only).await
}

async fn delete_egress_only(
    ec2: aws_sdk_ec2::Client,
    id: String,
) -> Result<(), crate::aws_error::AwsError> {
    ec2.delete_egress_only_internet_gateway()
        .egress_only_internet_gateway_id(id)
        .send()
        .await
        .map(|_| ())
        .map_err(aws("DeleteEgressOnlyInternetGateway"))
}

/// Deletes each of `ids`, gateways of the `what` kind, with `delete`: announced, and its
/// answer settled by the error policy.
async fn delete_each<F, Fut>(
    s: &mut Scope<'_>,
    what: &str,
    ids: Vec<String>,
    delete: F,
) -> Result<(), Error>
where
    F: Fn(aws_sdk_ec2::Client, String) -> Fut,
    Fut: std::future::Future<Output = Result<(), crate::aws_error::AwsError>>,
{
    for id in ids {
        if !s.act(format!("delete {what} {id}")) {
            continue;
        }
        let r = delete(s.ec2().clone(), id.clone()).await;
        s.settle(&format!("{what} {id}"), r)?;
    }
    Ok(())
}

/// Detaches and deletes the cluster's own internet gateways, and deletes its egress-only and
/// carrier ones.
pub async fn delete(s: &mut Scope<'_>) -> Result<(), Error> {
    let carriers: Vec<String> = s
        .ec2()
        .describe_carrier_gateways()
        .filters(s.owned_filter())
        .filters(filter("state", &["pending", "available"]))
        .send()
        .await
        .map_err(aws("DescribeCarrierGateways"))?
        .carrier_gateways()
        .iter()
        .filter_map(|g| g.carrier_gateway_id().map(String::from))
        .collect();
    delete_each(s, "carrier gateway", carriers, |ec2, id| async move {
        ec2.delete_carrier_gateway()
            .carrier_gateway_id(id)
            .send()
            .await
            .map(|_| ())
            .map_err(aws("DeleteCarrierGateway"))
    })
    .await?;
    let egress_only: Vec<String> = s
        .ec2()
        .describe_egress_only_internet_gateways()
        .filters(s.owned_filter())
        .send()
        .await
        .map_err(aws("DescribeEgressOnlyInternetGateways"))?
        .egress_only_internet_gateways()
        .iter()
        .filter_map(|g| g.egress_only_internet_gateway_id().map(String::from))
        .collect();
    delete_each(
        s,
        "egress-only internet gateway",
        egress_only,
        delete_egress_only,
    )
    .await?;
    let owned = s
        .ec2()
        .describe_internet_gateways()
        .filters(s.owned_filter())
        .send()
        .await
        .map_err(aws("DescribeInternetGateways"))?
        .internet_gateways
        .unwrap_or_default();
    for g in owned {
        let id = g.internet_gateway_id().unwrap_or_default().to_string();
        let mut blocked = false;
        for a in g.attachments() {
            let vpc = a.vpc_id().unwrap_or_default().to_string();
            if !s.act(format!("detach internet gateway {id} from {vpc}")) {
                continue;
            }
            let r = s
                .ec2()
                .detach_internet_gateway()
                .internet_gateway_id(&id)
                .vpc_id(&vpc)
                .send()
                .await
                .map(|_| ())
                .map_err(aws("DetachInternetGateway"));
            // Already detached is what was wanted: `settle` takes it as done.
            blocked |= !s.settle(&format!("internet gateway {id}"), r)?;
        }
        if blocked || !s.act(format!("delete internet gateway {id}")) {
            continue;
        }
        let r = s
            .ec2()
            .delete_internet_gateway()
            .internet_gateway_id(&id)
            .send()
            .await
            .map_err(aws("DeleteInternetGateway"));
        s.settle(&format!("internet gateway {id}"), r)?;
    }
    Ok(())
}
