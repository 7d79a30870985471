//! Small helpers over the SDK that every resource module uses: EC2 filters, tag
//! specifications, the answer of a describe by id (one or none), the error of a create that
//! answered without its resource, and the convergence of an owned resource's tags. A leaf
//! module: it knows the SDK and the crate's errors, nothing of clusters or machines.

use std::collections::BTreeMap;

use aws_sdk_ec2::types::{Filter, ResourceType, Tag, TagSpecification};

use crate::aws_error::{AwsError, aws};
use crate::clients::Clients;
use crate::error::Error;
use crate::ownership;

/// An EC2 filter.
pub fn filter(name: &str, values: &[&str]) -> Filter {
    let mut f = Filter::builder().name(name);
    for v in values {
        f = f.values(*v);
    }
    f.build()
}

/// A TagSpecification of `tags` for a created resource of type `rt`.
pub fn tag_spec(rt: ResourceType, tags: &BTreeMap<String, String>) -> TagSpecification {
    let mut s = TagSpecification::builder().resource_type(rt);
    for (k, v) in tags {
        s = s.tags(Tag::builder().key(k).value(v).build());
    }
    s.build()
}

/// The answer of a describe by id: `Some` when it came, `None` when AWS says the resource
/// does not exist, the error otherwise.
pub fn found<T>(answer: Result<T, AwsError>) -> Result<Option<T>, Error> {
    match answer {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The configuration override of a create that carries no idempotency token (CreateVpc,
/// CreateSubnet, CreateInternetGateway, CreateSecurityGroup, AllocateAddress): sent once,
/// without the SDK's retries. After an unknown outcome (a 500, a cut connection) the create
/// may have been done, and a blind retry would make a twin; instead the error reaches the
/// error policy, which requeues, and the next reconcile looks the resource up by its tags
/// (written atomically by the create's TagSpecifications) before creating it again.
pub fn sent_once() -> aws_sdk_ec2::config::Builder {
    aws_sdk_ec2::config::Builder::default()
        .retry_config(aws_sdk_ec2::config::retry::RetryConfig::disabled())
}

/// Calls `f`, naming something this run has just created, until AWS shows it: a not-found
/// answer (AWS's eventual consistency: "does not mean the resource does not exist") is tried
/// again after 1, 2 and 4 s, waited with [`Clients::pause`], and then reaches the caller, whose
/// error policy requeues. So a new group, gateway, balancer or instance costs a few seconds
/// inside the step, not a whole reconcile.
pub async fn until_visible<T, F, Fut>(clients: &Clients, mut f: F) -> Result<T, AwsError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, AwsError>>,
{
    let mut delay = std::time::Duration::from_secs(1);
    for _ in 0..3 {
        match f().await {
            Err(e) if e.is_not_found() => {
                tracing::debug!(error = %e, "not visible yet; trying again in {delay:?}");
                clients.pause(delay).await;
                delay *= 2;
            }
            answer => return answer,
        }
    }
    f().await
}

/// The error for a create call whose answer lacks the created resource.
pub fn empty_answer(op: &str) -> Error {
    Error::Conflict(format!("{op} answered without the created resource"))
}

/// Brings `want` onto the EC2 resource `id`, which carries `current`: adds the missing or
/// changed tags, removes the additional ones `want` no longer has (tags others put on it
/// stay; [`ownership::tag_changes`] decides). `act` announces each change and says whether
/// to make it (plan mode answers false).
pub async fn converge_tags(
    ec2: &aws_sdk_ec2::Client,
    id: &str,
    current: &[Tag],
    want: &BTreeMap<String, String>,
    act: impl FnMut(String) -> bool,
) -> Result<(), Error> {
    converge_tags_of(ec2, &[(id, current)], want, act).await
}

/// [`converge_tags`] for several resources (an instance, its volumes and interfaces) that
/// want the same tags: resources needing the same change get it in one call.
pub async fn converge_tags_of(
    ec2: &aws_sdk_ec2::Client,
    resources: &[(&str, &[Tag])],
    want: &BTreeMap<String, String>,
    mut act: impl FnMut(String) -> bool,
) -> Result<(), Error> {
    type Pairs = Vec<(String, Option<String>)>;
    let pairs = |tags: &[Tag]| -> Pairs {
        tags.iter()
            .map(|t| {
                (
                    t.key().unwrap_or_default().to_string(),
                    t.value().map(String::from),
                )
            })
            .collect()
    };
    let as_tags = |p: &Pairs| -> Vec<Tag> {
        p.iter()
            .map(|(k, v)| Tag::builder().key(k).set_value(v.clone()).build())
            .collect()
    };
    let mut drops: BTreeMap<Pairs, Vec<String>> = BTreeMap::new();
    let mut adds: BTreeMap<Pairs, Vec<String>> = BTreeMap::new();
    for (id, current) in resources {
        let (missing, dropped) = ownership::tag_changes(current, want);
        if !dropped.is_empty() {
            drops
                .entry(pairs(&dropped))
                .or_default()
                .push(id.to_string());
        }
        if !missing.is_empty() {
            adds.entry(pairs(&missing))
                .or_default()
                .push(id.to_string());
        }
    }
    for (tags, ids) in drops {
        if act(format!("untag {} ({} tags)", ids.join(", "), tags.len())) {
            ec2.delete_tags()
                .set_resources(Some(ids))
                .set_tags(Some(as_tags(&tags)))
                .send()
                .await
                .map_err(aws("DeleteTags"))?;
        }
    }
    for (tags, ids) in adds {
        if act(format!("tag {} ({} tags)", ids.join(", "), tags.len())) {
            ec2.create_tags()
                .set_resources(Some(ids))
                .set_tags(Some(as_tags(&tags)))
                .send()
                .await
                .map_err(aws("CreateTags"))?;
        }
    }
    Ok(())
}
