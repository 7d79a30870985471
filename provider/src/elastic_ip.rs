//! Elastic IPs from a public IPv4 pool of the user's own addresses (BYOIP; CAPA's
//! `elasticIpPool`), for the NAT gateways and for machines: the pool checked for enough free
//! addresses before any is allocated, AWS's own taken instead only when the spec says so.

use crate::aws_error::aws;
use crate::error::Error;
use crate::spec::ElasticIpPool;

/// The pool `needed` new addresses for `what` come from: the pool of `spec` (the spec's
/// field `field`) when it has that many free (DescribePublicIpv4Pools), else AWS's (`None`)
/// when its fallback is `AmazonPool`; else an error naming the pool.
pub async fn pool_for(
    ec2: &aws_sdk_ec2::Client,
    spec: &ElasticIpPool,
    field: &str,
    needed: usize,
    what: &str,
) -> Result<Option<String>, Error> {
    let Some(id) = &spec.public_ipv4_pool else {
        return Ok(None);
    };
    let refuse = |problem: String| Error::PreExisting {
        resource: format!("public IPv4 pool {id} ({field}.publicIpv4Pool)"),
        problem,
    };
    let answer = ec2
        .describe_public_ipv4_pools()
        .pool_ids(id)
        .send()
        .await
        .map_err(aws("DescribePublicIpv4Pools"));
    let Some(out) = crate::sdk::found(answer)? else {
        return Err(refuse("does not exist".into()));
    };
    let free = out
        .public_ipv4_pools()
        .iter()
        .find(|p| p.pool_id() == Some(id.as_str()))
        .ok_or_else(|| refuse("does not exist".into()))?
        .total_available_address_count()
        .unwrap_or_default();
    if usize::try_from(free).unwrap_or_default() >= needed {
        return Ok(Some(id.clone()));
    }
    if spec.public_ipv4_pool_fallback_order.as_deref() == Some("AmazonPool") {
        tracing::info!(target: "capa::progress", "public IPv4 pool {id} has {free} free addresses, {needed} needed for {what}: taking AWS's ({field}.publicIpv4PoolFallbackOrder AmazonPool)");
        return Ok(None);
    }
    Err(refuse(format!(
        "has {free} free addresses, {needed} needed for {what}; \
         publicIpv4PoolFallbackOrder: AmazonPool takes AWS's addresses instead"
    )))
}
