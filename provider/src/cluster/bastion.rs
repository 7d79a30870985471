//! The bastion: an existing instance named in the spec (validated, never touched), or the
//! cluster's own in the first public subnet (of a zone AWS does not constrain, if the cluster
//! has one) with the bastion group, launched with a
//! deterministic ClientToken, terminated when the spec turns it off.

use aws_sdk_ec2::types::{Instance, InstanceStateName, InstanceType, ResourceType};

use super::{InstanceStatus, Scope, SubnetStatus};
use crate::aws_error::aws;
use crate::error::Error;
use crate::instance::{instances_of, is_live, place, state_of};
use crate::sdk::{filter, found};
use crate::spec::{DEFAULT_BASTION_TYPE, Role};

/// Canonical's account, which publishes Ubuntu images.
pub const CANONICAL: &str = "099720109477";
/// The name pattern of the default bastion image.
pub const UBUNTU_PATTERN: &str = "ubuntu/images/hvm-ssd*/ubuntu-noble-24.04-amd64-server-*";

fn status_of(i: &Instance, managed: bool) -> InstanceStatus {
    InstanceStatus {
        id: i.instance_id().unwrap_or_default().to_string(),
        managed,
        state: state_of(i),
        public_ip: i.public_ip_address().map(String::from),
    }
}

async fn owned(s: &Scope<'_>, vpc_id: &str) -> Result<Vec<Instance>, Error> {
    let out = s
        .ec2()
        .describe_instances()
        .filters(filter("vpc-id", &[vpc_id]))
        .filters(s.owned_filter())
        .filters(filter(
            &format!("tag:{}", crate::ownership::ROLE_KEY),
            &["bastion"],
        ))
        .send()
        .await
        .map_err(aws("DescribeInstances"))?;
    Ok(instances_of(&out).cloned().collect())
}

/// The newest image of `owner` whose name matches `pattern`.
pub async fn newest_image(s: &Scope<'_>, owner: &str, pattern: &str) -> Result<String, Error> {
    let out = s
        .ec2()
        .describe_images()
        .owners(owner)
        .filters(filter("name", &[pattern]))
        .filters(filter("state", &["available"]))
        .filters(filter("architecture", &["x86_64"]))
        .send()
        .await
        .map_err(aws("DescribeImages"))?;
    out.images()
        .iter()
        .max_by(|a, b| a.creation_date().cmp(&b.creation_date()))
        .and_then(|i| i.image_id())
        .map(String::from)
        .ok_or_else(|| {
            Error::Conflict(format!(
                "no image of owner {owner} matches {pattern:?}; set spec.bastion.ami"
            ))
        })
}

/// Reconciles the bastion.
pub async fn reconcile(s: &mut Scope<'_>) -> Result<(), Error> {
    let Some(vpc_id) = s.vpc_id().map(String::from) else {
        return Ok(());
    };
    let b = s.plan.spec.bastion.clone();
    if let Some(id) = &b.id {
        let answer = s
            .ec2()
            .describe_instances()
            .instance_ids(id)
            .send()
            .await
            .map_err(aws("DescribeInstances"));
        let found = found(answer)?.and_then(|o| instances_of(&o).next().cloned());
        match found {
            Some(i) if is_live(&i) => s.status.bastion = Some(status_of(&i, false)),
            _ => {
                return Err(Error::PreExisting {
                    resource: format!("bastion {id} (spec.bastion.id)"),
                    problem: "does not exist or is terminated".into(),
                });
            }
        }
        return Ok(());
    }
    let mine: Vec<Instance> = if s.vpc_is_empty() {
        Vec::new()
    } else {
        owned(s, &vpc_id).await?
    };
    let live: Vec<&Instance> = mine.iter().filter(|i| is_live(i)).collect();
    if !b.enabled {
        for i in live {
            let id = i.instance_id().unwrap_or_default().to_string();
            if s.act(format!(
                "terminate bastion {id} (spec.bastion.enabled is false)"
            )) {
                s.ec2()
                    .terminate_instances()
                    .instance_ids(&id)
                    .send()
                    .await
                    .map_err(aws("TerminateInstances"))?;
            }
        }
        return Ok(());
    }
    if let Some(i) = live.first() {
        let st = status_of(i, true);
        if st.state == "pending" {
            s.wait(format!("bastion {} is pending", st.id));
        }
        s.status.bastion = Some(st);
        return Ok(());
    }
    let Some(subnet) =
        SubnetStatus::first_for_launch(s.status.subnets.iter().filter(|x| x.public)).cloned()
    else {
        return Ok(());
    };
    let group = s
        .status
        .security_groups
        .get(&Role::Bastion)
        .map(|g| g.id.clone())
        .unwrap_or_default();
    let name = format!("{}-bastion", s.name());
    if !s.act(format!("run bastion in {} ({name})", subnet.id)) {
        s.status.bastion = Some(InstanceStatus {
            id: "<new bastion>".into(),
            managed: true,
            state: "planned".into(),
            public_ip: None,
        });
        return Ok(());
    }
    let ami = match &b.ami {
        Some(a) => a.clone(),
        None => newest_image(s, CANONICAL, UBUNTU_PATTERN).await?,
    };
    let instance_type = b
        .instance_type
        .clone()
        .unwrap_or_else(|| DEFAULT_BASTION_TYPE.to_string());
    // Terminated bastions stay visible for a while; counting them makes a new token for a
    // bastion turned off and on again, while a retry of the same launch reuses the token.
    let generation = mine.len();
    let token =
        crate::ownership::client_token(&[s.name(), "bastion", &vpc_id, &generation.to_string()]);
    let mut call = s
        .ec2()
        .run_instances()
        .image_id(ami)
        .instance_type(InstanceType::from(instance_type.as_str()))
        .min_count(1)
        .max_count(1)
        .client_token(token)
        .tag_specifications(s.tag_spec(ResourceType::Instance, "bastion", &name))
        .tag_specifications(s.tag_spec(ResourceType::Volume, "bastion", &name));
    // The bastion needs a public address, also in a pre-existing subnet that maps none.
    call = place(call, &subnet.id, vec![group], !subnet.maps_public_ip);
    if let Some(k) = &s.plan.spec.ssh_key_name {
        call = call.key_name(k);
    }
    let out = call.send().await.map_err(aws("RunInstances"))?;
    if let Some(i) = out.instances().first() {
        let mut st = status_of(i, true);
        if st.state == "pending" {
            // Looked at once more before the pass waits for it: running already, it holds
            // nothing up. (A bastion this read does not show yet is still pending.)
            if let Some(now) = by_id(s, &st.id).await? {
                st = status_of(&now, true);
            }
        }
        if st.state == "pending" {
            s.wait(format!("bastion {} is pending", st.id));
        }
        s.status.bastion = Some(st);
    }
    Ok(())
}

/// The instance `id` as a filtered describe shows it (a filter, unlike InstanceIds, does not
/// refuse an id AWS does not show yet).
async fn by_id(s: &Scope<'_>, id: &str) -> Result<Option<Instance>, Error> {
    let out = s
        .ec2()
        .describe_instances()
        .filters(filter("instance-id", &[id]))
        .send()
        .await
        .map_err(aws("DescribeInstances"))?;
    Ok(instances_of(&out).next().cloned())
}

/// Terminates the cluster's own bastion and waits until it is terminated (its group cannot
/// be deleted before).
pub async fn delete(s: &mut Scope<'_>) -> Result<(), Error> {
    let Some(vpc_id) = s.vpc_id().map(String::from) else {
        return Ok(());
    };
    for i in owned(s, &vpc_id).await? {
        let id = i.instance_id().unwrap_or_default().to_string();
        match i.state().and_then(|x| x.name()) {
            Some(InstanceStateName::Terminated) => {}
            Some(InstanceStateName::ShuttingDown) => {
                s.wait(format!("bastion {id} is shutting down"));
            }
            _ => {
                if s.act(format!("terminate bastion {id}")) {
                    s.ec2()
                        .terminate_instances()
                        .instance_ids(&id)
                        .send()
                        .await
                        .map_err(aws("TerminateInstances"))?;
                    // Looked at once more: terminated already, it holds its group no more.
                    let now = by_id(s, &id).await?;
                    let gone = now.and_then(|i| i.state().and_then(|x| x.name()).cloned())
                        == Some(InstanceStateName::Terminated);
                    if !gone {
                        s.wait(format!("bastion {id} is shutting down"));
                    }
                }
            }
        }
    }
    // Machines deleted just before the cluster may still be shutting down; their groups and
    // subnets cannot go until they are terminated.
    let machines = s
        .ec2()
        .describe_instances()
        .filters(filter("vpc-id", &[&vpc_id]))
        .filters(s.owned_filter())
        .filters(filter(
            &format!("tag:{}", crate::ownership::ROLE_KEY),
            &["controlplane", "node"],
        ))
        .filters(filter("instance-state-name", &["shutting-down"]))
        .send()
        .await
        .map_err(aws("DescribeInstances"))?;
    for i in instances_of(&machines) {
        s.wait(format!(
            "machine {} is shutting down",
            i.instance_id().unwrap_or_default()
        ));
    }
    Ok(())
}
