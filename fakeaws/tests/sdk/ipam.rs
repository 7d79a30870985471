//! IPAM through the SDK: an IPAM and its default scopes, a top-level pool and a regional pool
//! inside it, VPCs whose range comes from the pool (as the Cluster API provider's
//! `vpc.ipamPool` creates them), custom allocations, and taking it all down again.

use aws_sdk_ec2::types::{
    AddIpamOperatingRegion, AddressFamily, IpamPoolAllocationResourceType, IpamPoolCidrState,
    IpamPoolState, IpamScopeType, IpamState, RequestIpamResourceTag, ResourceType,
};

use crate::{code_and_message, empty_fake, filter, tag_spec};

/// An IPAM of the region, operating in `us-east-2` too; its id and default private scope.
async fn ipam(ec2: &aws_sdk_ec2::Client) -> (String, String) {
    let out = ec2
        .create_ipam()
        .operating_regions(
            AddIpamOperatingRegion::builder()
                .region_name("us-east-2")
                .build(),
        )
        .send()
        .await
        .unwrap();
    let ipam = out.ipam().unwrap();
    (
        ipam.ipam_id().unwrap().to_string(),
        ipam.private_default_scope_id().unwrap().to_string(),
    )
}

/// A top-level IPv4 pool of `scope` holding `cidr`; its id.
async fn top_pool(ec2: &aws_sdk_ec2::Client, scope: &str, cidr: &str) -> String {
    let pool = ec2
        .create_ipam_pool()
        .ipam_scope_id(scope)
        .address_family(AddressFamily::Ipv4)
        .send()
        .await
        .unwrap()
        .ipam_pool()
        .unwrap()
        .ipam_pool_id()
        .unwrap()
        .to_string();
    ec2.provision_ipam_pool_cidr()
        .ipam_pool_id(&pool)
        .cidr(cidr)
        .send()
        .await
        .unwrap();
    pool
}

/// A top-level pool of `scope` holding `cidr`, and a pool of `us-east-1` inside it holding a
/// /12 of it, whose allocations are /16 to /24 (/16 by default) and need the tag
/// `env=prod`; the regional pool's id.
async fn regional_pool(ec2: &aws_sdk_ec2::Client, scope: &str, cidr: &str) -> (String, String) {
    let top = top_pool(ec2, scope, cidr).await;
    let regional = ec2
        .create_ipam_pool()
        .ipam_scope_id(scope)
        .address_family(AddressFamily::Ipv4)
        .source_ipam_pool_id(&top)
        .locale("us-east-1")
        .allocation_min_netmask_length(16)
        .allocation_max_netmask_length(24)
        .allocation_default_netmask_length(16)
        .allocation_resource_tags(
            RequestIpamResourceTag::builder()
                .key("env")
                .value("prod")
                .build(),
        )
        .tag_specifications(tag_spec(
            ResourceType::IpamPool,
            &[("Name", "cluster-pool")],
        ))
        .send()
        .await
        .unwrap()
        .ipam_pool()
        .unwrap()
        .ipam_pool_id()
        .unwrap()
        .to_string();
    let provisioned = ec2
        .provision_ipam_pool_cidr()
        .ipam_pool_id(&regional)
        .netmask_length(12)
        .send()
        .await
        .unwrap();
    let c = provisioned.ipam_pool_cidr().unwrap();
    assert_eq!(c.state(), Some(&IpamPoolCidrState::PendingProvision));
    assert_eq!(c.netmask_length(), Some(12));
    (top, regional)
}

/// The VPC made from `pool` with `length` bits (none: the pool's default) and `tags`.
async fn vpc_from(
    ec2: &aws_sdk_ec2::Client,
    pool: &str,
    length: Option<i32>,
    tags: &[(&str, &str)],
) -> Result<(String, String), String> {
    let mut call = ec2.create_vpc().ipv4_ipam_pool_id(pool);
    if let Some(l) = length {
        call = call.ipv4_netmask_length(l);
    }
    if !tags.is_empty() {
        call = call.tag_specifications(tag_spec(ResourceType::Vpc, tags));
    }
    match call.send().await {
        Ok(out) => {
            let v = out.vpc().unwrap();
            Ok((
                v.vpc_id().unwrap().to_string(),
                v.cidr_block().unwrap().to_string(),
            ))
        }
        Err(e) => {
            let (code, message) = code_and_message::<(), _>(Err(e));
            Err(format!("{code}: {message}"))
        }
    }
}

/// The allocations of `pool`: (range, resource type, resource id).
async fn allocations(
    ec2: &aws_sdk_ec2::Client,
    pool: &str,
) -> Vec<(String, IpamPoolAllocationResourceType, Option<String>)> {
    let mut out: Vec<_> = ec2
        .get_ipam_pool_allocations()
        .ipam_pool_id(pool)
        .send()
        .await
        .unwrap()
        .ipam_pool_allocations()
        .iter()
        .map(|a| {
            (
                a.cidr().unwrap().to_string(),
                a.resource_type().unwrap().clone(),
                a.resource_id().map(str::to_string),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[tokio::test]
async fn an_ipam_has_its_default_scopes_and_operating_regions() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let out = ec2
        .create_ipam()
        .description("org")
        .operating_regions(
            AddIpamOperatingRegion::builder()
                .region_name("us-west-2")
                .build(),
        )
        .tag_specifications(tag_spec(ResourceType::Ipam, &[("Name", "main")]))
        .send()
        .await
        .unwrap();
    let made = out.ipam().unwrap();
    assert_eq!(made.state(), Some(&IpamState::CreateInProgress));
    let id = made.ipam_id().unwrap();
    let regions: Vec<&str> = made
        .operating_regions()
        .iter()
        .map(|r| r.region_name().unwrap())
        .collect();
    // The region named, then the IPAM's own, as AWS lists them.
    assert_eq!(regions, ["us-west-2", "us-east-1"]);
    assert_eq!(made.scope_count(), Some(2));
    assert_eq!(made.ipam_region(), Some("us-east-1"));
    assert_eq!(
        made.ipam_arn(),
        Some(format!("arn:aws:ec2::{}:ipam/{id}", made.owner_id().unwrap()).as_str())
    );

    let described = ec2
        .describe_ipams()
        .filters(filter("tag:Name", &["main"]))
        .send()
        .await
        .unwrap();
    let [ipam] = described.ipams() else {
        panic!("{described:?}")
    };
    assert_eq!(ipam.state(), Some(&IpamState::CreateComplete));
    assert_eq!(ipam.description(), Some("org"));

    let scopes = ec2
        .describe_ipam_scopes()
        .filters(filter("ipam-id", &[id]))
        .send()
        .await
        .unwrap();
    let mut kinds: Vec<(IpamScopeType, bool, String)> = scopes
        .ipam_scopes()
        .iter()
        .map(|s| {
            (
                s.ipam_scope_type().unwrap().clone(),
                s.is_default().unwrap(),
                s.ipam_scope_id().unwrap().to_string(),
            )
        })
        .collect();
    kinds.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
    assert_eq!(kinds.len(), 2);
    assert_eq!(kinds[0].0, IpamScopeType::Private);
    assert_eq!(kinds[0].2, ipam.private_default_scope_id().unwrap());
    assert_eq!(kinds[1].0, IpamScopeType::Public);
    assert!(kinds.iter().all(|k| k.1));

    // A made-up region is no operating region.
    let (code, _) = code_and_message(
        ec2.create_ipam()
            .operating_regions(
                AddIpamOperatingRegion::builder()
                    .region_name("xx-nowhere-9")
                    .build(),
            )
            .send()
            .await,
    );
    assert_eq!(code, "InvalidParameterValue");
    let (code, message) = code_and_message(
        ec2.describe_ipams()
            .ipam_ids("ipam-0123456789abcdef0")
            .send()
            .await,
    );
    assert_eq!(code, "InvalidIpamId.NotFound");
    assert_eq!(
        message,
        "The ipam ID 'ipam-0123456789abcdef0' does not exist"
    );
}

#[tokio::test]
async fn a_vpc_takes_its_range_from_a_pool_and_gives_it_back() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let (_, scope) = ipam(&ec2).await;
    let (top, pool) = regional_pool(&ec2, &scope, "10.0.0.0/8").await;

    // The regional pool's /12 is an allocation of the top-level pool.
    assert_eq!(
        allocations(&ec2, &top).await,
        [(
            "10.0.0.0/12".to_string(),
            IpamPoolAllocationResourceType::IpamPool,
            Some(pool.clone())
        )]
    );
    let cidrs = ec2
        .get_ipam_pool_cidrs()
        .ipam_pool_id(&pool)
        .send()
        .await
        .unwrap();
    let [c] = cidrs.ipam_pool_cidrs() else {
        panic!("{cidrs:?}")
    };
    assert_eq!(c.cidr(), Some("10.0.0.0/12"));
    assert_eq!(c.state(), Some(&IpamPoolCidrState::Provisioned));

    // Found as the Cluster API provider looks for it: by id, or by its Name tag.
    for f in [
        filter("ipam-pool-id", &[&pool]),
        filter("tag:Name", &["cluster-pool"]),
    ] {
        let found = ec2.describe_ipam_pools().filters(f).send().await.unwrap();
        let [p] = found.ipam_pools() else {
            panic!("{found:?}")
        };
        assert_eq!(p.ipam_pool_id(), Some(pool.as_str()));
        assert_eq!(p.state(), Some(&IpamPoolState::CreateComplete));
        assert_eq!(p.locale(), Some("us-east-1"));
        assert_eq!(p.pool_depth(), Some(2));
        assert_eq!(p.source_ipam_pool_id(), Some(top.as_str()));
        assert_eq!(p.allocation_default_netmask_length(), Some(16));
    }

    let prod = [("env", "prod")];
    let (a, a_cidr) = vpc_from(&ec2, &pool, Some(16), &prod).await.unwrap();
    let (b, b_cidr) = vpc_from(&ec2, &pool, None, &prod).await.unwrap();
    assert_eq!(a_cidr, "10.0.0.0/16");
    assert_eq!(b_cidr, "10.1.0.0/16");
    let described = ec2.describe_vpcs().vpc_ids(&a).send().await.unwrap();
    assert_eq!(described.vpcs()[0].cidr_block(), Some("10.0.0.0/16"));
    assert_eq!(
        allocations(&ec2, &pool).await,
        [
            (
                a_cidr.clone(),
                IpamPoolAllocationResourceType::Vpc,
                Some(a.clone())
            ),
            (
                b_cidr.clone(),
                IpamPoolAllocationResourceType::Vpc,
                Some(b.clone())
            ),
        ]
    );

    // The pool's rules: its tags, its netmask lengths; nothing is made.
    assert_eq!(
        vpc_from(&ec2, &pool, Some(16), &[]).await,
        Err(
            "InvalidParameterValue: The resource is missing one or more of the resource tags \
             required by the IPAM pool."
                .to_string()
        )
    );
    assert_eq!(
        vpc_from(&ec2, &pool, Some(8), &prod).await,
        Err("InvalidParameterValue: The allocation size is too big for the pool.".to_string())
    );
    assert_eq!(
        vpc_from(&ec2, &pool, Some(26), &prod).await,
        Err("InvalidParameterValue: The allocation size is too small for the pool.".to_string())
    );
    assert_eq!(allocations(&ec2, &pool).await.len(), 2);

    // A secondary range of a VPC from the pool, given back when disassociated.
    let associated = ec2
        .associate_vpc_cidr_block()
        .vpc_id(&b)
        .ipv4_ipam_pool_id(&pool)
        .ipv4_netmask_length(16)
        .send()
        .await
        .unwrap();
    let association = associated.cidr_block_association().unwrap();
    assert_eq!(association.cidr_block(), Some("10.2.0.0/16"));
    assert_eq!(allocations(&ec2, &pool).await.len(), 3);
    let described = ec2.describe_vpcs().vpc_ids(&b).send().await.unwrap();
    assert_eq!(
        described.vpcs()[0].cidr_block_association_set().len(),
        2,
        "{described:?}"
    );
    ec2.disassociate_vpc_cidr_block()
        .association_id(association.association_id().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(allocations(&ec2, &pool).await.len(), 2);

    // A deleted VPC's range goes back to the pool and is the next one taken.
    ec2.delete_vpc().vpc_id(&a).send().await.unwrap();
    assert_eq!(allocations(&ec2, &pool).await.len(), 1);
    let (_, again) = vpc_from(&ec2, &pool, Some(16), &prod).await.unwrap();
    assert_eq!(again, "10.0.0.0/16");
}

#[tokio::test]
async fn custom_allocations_are_reserved_previewed_and_released() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let (_, scope) = ipam(&ec2).await;
    let pool = top_pool(&ec2, &scope, "192.168.0.0/16").await;

    let preview = ec2
        .allocate_ipam_pool_cidr()
        .ipam_pool_id(&pool)
        .netmask_length(24)
        .preview_next_cidr(true)
        .send()
        .await
        .unwrap();
    assert_eq!(
        preview.ipam_pool_allocation().unwrap().cidr(),
        Some("192.168.0.0/24")
    );
    assert!(allocations(&ec2, &pool).await.is_empty());

    let fixed = ec2
        .allocate_ipam_pool_cidr()
        .ipam_pool_id(&pool)
        .cidr("192.168.0.0/23")
        .description("reserved")
        .send()
        .await
        .unwrap();
    let fixed = fixed.ipam_pool_allocation().unwrap();
    assert_eq!(
        fixed.resource_type(),
        Some(&IpamPoolAllocationResourceType::Custom)
    );
    let fixed_id = fixed.ipam_pool_allocation_id().unwrap().to_string();
    assert!(fixed_id.starts_with("ipam-pool-alloc-"), "{fixed_id}");
    let next = ec2
        .allocate_ipam_pool_cidr()
        .ipam_pool_id(&pool)
        .netmask_length(24)
        .disallowed_cidrs("192.168.2.0/24")
        .send()
        .await
        .unwrap();
    assert_eq!(
        next.ipam_pool_allocation().unwrap().cidr(),
        Some("192.168.3.0/24")
    );

    let (code, _) = code_and_message(
        ec2.allocate_ipam_pool_cidr()
            .ipam_pool_id(&pool)
            .cidr("192.168.1.0/24")
            .send()
            .await,
    );
    assert_eq!(code, "InvalidParameterValue");
    let (code, message) = code_and_message(
        ec2.allocate_ipam_pool_cidr()
            .ipam_pool_id(&pool)
            .send()
            .await,
    );
    assert_eq!(code, "InvalidParameterCombination");
    assert!(
        message.contains("no default allocation netmask length"),
        "{message}"
    );
    let found = ec2
        .get_ipam_pool_allocations()
        .ipam_pool_id(&pool)
        .filters(filter("description", &["reserved"]))
        .send()
        .await
        .unwrap();
    assert_eq!(found.ipam_pool_allocations().len(), 1);

    ec2.release_ipam_pool_allocation()
        .ipam_pool_id(&pool)
        .ipam_pool_allocation_id(&fixed_id)
        .cidr("192.168.0.0/23")
        .send()
        .await
        .unwrap();
    let (code, message) = code_and_message(
        ec2.get_ipam_pool_allocations()
            .ipam_pool_id(&pool)
            .ipam_pool_allocation_id(&fixed_id)
            .send()
            .await,
    );
    assert_eq!(code, "InvalidIpamPoolAllocationId.NotFound");
    assert_eq!(
        message,
        format!("The IPAM pool allocation ({fixed_id}) does not exist.")
    );
    assert_eq!(allocations(&ec2, &pool).await.len(), 1);
}

#[tokio::test]
async fn pools_and_ipams_are_deleted_only_when_empty_or_cascading() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let (ipam_id, scope) = ipam(&ec2).await;
    let (top, pool) = regional_pool(&ec2, &scope, "10.0.0.0/8").await;
    let (vpc, _) = vpc_from(&ec2, &pool, None, &[("env", "prod")])
        .await
        .unwrap();

    let (code, message) = code_and_message(ec2.delete_ipam_pool().ipam_pool_id(&pool).send().await);
    assert_eq!(code, "DependencyViolation");
    assert_eq!(
        message,
        format!(
            "The specified action is not valid for {pool}. There are one or more pool cidrs \
             provisioned in the pool."
        )
    );
    // A CIDR holding an allocation fails to deprovision, and stays the pool's.
    let out = ec2
        .deprovision_ipam_pool_cidr()
        .ipam_pool_id(&pool)
        .cidr("10.0.0.0/12")
        .send()
        .await
        .unwrap();
    assert_eq!(
        out.ipam_pool_cidr().unwrap().state(),
        Some(&IpamPoolCidrState::PendingDeprovision)
    );
    let cidrs = ec2
        .get_ipam_pool_cidrs()
        .ipam_pool_id(&pool)
        .send()
        .await
        .unwrap();
    let c = &cidrs.ipam_pool_cidrs()[0];
    assert_eq!(c.state(), Some(&IpamPoolCidrState::FailedDeprovision));
    assert_eq!(
        c.failure_reason().unwrap().message(),
        Some("The CIDR has one or more allocations.")
    );

    // Once the VPC is gone, the CIDR goes back to the top-level pool.
    ec2.delete_vpc().vpc_id(&vpc).send().await.unwrap();
    ec2.deprovision_ipam_pool_cidr()
        .ipam_pool_id(&pool)
        .cidr("10.0.0.0/12")
        .send()
        .await
        .unwrap();
    let cidrs = ec2
        .get_ipam_pool_cidrs()
        .ipam_pool_id(&pool)
        .filters(filter("state", &["deprovisioned"]))
        .send()
        .await
        .unwrap();
    assert_eq!(cidrs.ipam_pool_cidrs().len(), 1);
    assert!(allocations(&ec2, &top).await.is_empty());
    ec2.delete_ipam_pool()
        .ipam_pool_id(&pool)
        .send()
        .await
        .unwrap();

    // The IPAM still has its top-level pool (holding a CIDR): refused, unless cascading.
    let (code, _) = code_and_message(ec2.delete_ipam().ipam_id(&ipam_id).send().await);
    assert_eq!(code, "DependencyViolation");
    let deleted = ec2
        .delete_ipam()
        .ipam_id(&ipam_id)
        .cascade(true)
        .send()
        .await
        .unwrap();
    assert_eq!(
        deleted.ipam().unwrap().state(),
        Some(&IpamState::DeleteInProgress)
    );
    let (code, message) =
        code_and_message(ec2.describe_ipam_pools().ipam_pool_ids(&top).send().await);
    assert_eq!(code, "InvalidIpamPoolId.NotFound");
    assert_eq!(message, format!("The ipam-pool ID '{top}' does not exist"));
    assert!(
        ec2.describe_ipam_scopes()
            .send()
            .await
            .unwrap()
            .ipam_scopes()
            .is_empty()
    );
    assert!(
        ec2.describe_ipams()
            .send()
            .await
            .unwrap()
            .ipams()
            .is_empty()
    );
}

#[tokio::test]
async fn ipams_scopes_and_pools_are_modified() {
    use aws_sdk_ec2::types::{IpamScopeState, IpamTier, RemoveIpamOperatingRegion};
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let (ipam_id, scope) = ipam(&ec2).await;
    let (_, pool) = regional_pool(&ec2, &scope, "10.0.0.0/8").await;

    // Operating regions: one added, one removed.
    let out = ec2
        .modify_ipam()
        .ipam_id(&ipam_id)
        .description("changed")
        .tier(IpamTier::Free)
        .add_operating_regions(
            AddIpamOperatingRegion::builder()
                .region_name("eu-west-1")
                .build(),
        )
        .remove_operating_regions(
            RemoveIpamOperatingRegion::builder()
                .region_name("us-east-2")
                .build(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        out.ipam().unwrap().state(),
        Some(&IpamState::ModifyInProgress)
    );
    let described = ec2
        .describe_ipams()
        .ipam_ids(&ipam_id)
        .send()
        .await
        .unwrap();
    let i = &described.ipams()[0];
    assert_eq!(i.state(), Some(&IpamState::ModifyComplete));
    assert_eq!(i.tier(), Some(&IpamTier::Free));
    assert_eq!(i.description(), Some("changed"));
    let regions: Vec<&str> = i
        .operating_regions()
        .iter()
        .map(|r| r.region_name().unwrap())
        .collect();
    assert_eq!(regions, ["us-east-1", "eu-west-1"]);
    // The home region stays.
    let (code, _) = code_and_message(
        ec2.modify_ipam()
            .ipam_id(&ipam_id)
            .remove_operating_regions(
                RemoveIpamOperatingRegion::builder()
                    .region_name("us-east-1")
                    .build(),
            )
            .send()
            .await,
    );
    assert_eq!(code, "InvalidParameterValue");
    // So does a region a pool is for.
    ec2.create_ipam_pool()
        .ipam_scope_id(&scope)
        .address_family(AddressFamily::Ipv4)
        .locale("eu-west-1")
        .send()
        .await
        .unwrap();
    let (code, message) = code_and_message(
        ec2.modify_ipam()
            .ipam_id(&ipam_id)
            .remove_operating_regions(
                RemoveIpamOperatingRegion::builder()
                    .region_name("eu-west-1")
                    .build(),
            )
            .send()
            .await,
    );
    assert_eq!(code, "InvalidParameterValue");
    assert!(message.contains("as its locale"), "{message}");

    ec2.modify_ipam_scope()
        .ipam_scope_id(&scope)
        .description("private")
        .send()
        .await
        .unwrap();
    let scopes = ec2
        .describe_ipam_scopes()
        .ipam_scope_ids(&scope)
        .send()
        .await
        .unwrap();
    assert_eq!(scopes.ipam_scopes()[0].description(), Some("private"));
    assert_eq!(
        scopes.ipam_scopes()[0].state(),
        Some(&IpamScopeState::ModifyComplete)
    );

    // The pool's rules changed: a /20 by default, and a tag more required.
    ec2.modify_ipam_pool()
        .ipam_pool_id(&pool)
        .allocation_default_netmask_length(20)
        .add_allocation_resource_tags(
            RequestIpamResourceTag::builder()
                .key("team")
                .value("net")
                .build(),
        )
        .send()
        .await
        .unwrap();
    let pools = ec2
        .describe_ipam_pools()
        .filters(filter("state", &["modify-complete"]))
        .send()
        .await
        .unwrap();
    let [p] = pools.ipam_pools() else {
        panic!("{pools:?}")
    };
    assert_eq!(p.allocation_default_netmask_length(), Some(20));
    assert_eq!(p.allocation_resource_tags().len(), 2);
    assert_eq!(
        vpc_from(&ec2, &pool, None, &[("env", "prod")]).await,
        Err(
            "InvalidParameterValue: The resource is missing one or more of the resource tags \
             required by the IPAM pool."
                .to_string()
        )
    );
    let (_, cidr) = vpc_from(&ec2, &pool, None, &[("env", "prod"), ("team", "net")])
        .await
        .unwrap();
    assert_eq!(cidr, "10.0.0.0/20");
    // A default outside the rules, or given and cleared at once: refused, nothing changed.
    let (code, _) = code_and_message(
        ec2.modify_ipam_pool()
            .ipam_pool_id(&pool)
            .allocation_default_netmask_length(12)
            .send()
            .await,
    );
    assert_eq!(code, "InvalidParameterValue");
    let (code, _) = code_and_message(
        ec2.modify_ipam_pool()
            .ipam_pool_id(&pool)
            .allocation_default_netmask_length(18)
            .clear_allocation_default_netmask_length(true)
            .send()
            .await,
    );
    assert_eq!(code, "InvalidParameterCombination");
    ec2.modify_ipam_pool()
        .ipam_pool_id(&pool)
        .clear_allocation_default_netmask_length(true)
        .send()
        .await
        .unwrap();
    let pools = ec2
        .describe_ipam_pools()
        .ipam_pool_ids(&pool)
        .send()
        .await
        .unwrap();
    assert_eq!(
        pools.ipam_pools()[0].allocation_default_netmask_length(),
        None
    );
}
