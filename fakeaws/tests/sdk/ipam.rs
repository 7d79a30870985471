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
    top_pool_of(ec2, scope, AddressFamily::Ipv4, cidr).await
}

/// A top-level pool of `family` of `scope` holding `cidr`; its id.
async fn top_pool_of(
    ec2: &aws_sdk_ec2::Client,
    scope: &str,
    family: AddressFamily,
    cidr: &str,
) -> String {
    let pool = ec2
        .create_ipam_pool()
        .ipam_scope_id(scope)
        .address_family(family)
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

/// A top-level IPv6 pool of the private scope `scope` holding `cidr`, and a pool of
/// `us-east-1` inside it holding a /44 of it, whose allocations default to /56; the
/// regional pool's id.
async fn ipv6_pool(ec2: &aws_sdk_ec2::Client, scope: &str, cidr: &str) -> String {
    let top = top_pool_of(ec2, scope, AddressFamily::Ipv6, cidr).await;
    let regional = ec2
        .create_ipam_pool()
        .ipam_scope_id(scope)
        .address_family(AddressFamily::Ipv6)
        .source_ipam_pool_id(&top)
        .locale("us-east-1")
        .allocation_default_netmask_length(56)
        .send()
        .await
        .unwrap()
        .ipam_pool()
        .unwrap()
        .ipam_pool_id()
        .unwrap()
        .to_string();
    ec2.provision_ipam_pool_cidr()
        .ipam_pool_id(&regional)
        .netmask_length(44)
        .send()
        .await
        .unwrap();
    regional
}

/// The IPv6 blocks VPC `vpc` is described with: (block, `Ipv6Pool`, `IpSource`,
/// `Ipv6AddressAttribute`).
async fn ipv6_blocks(
    ec2: &aws_sdk_ec2::Client,
    vpc: &str,
) -> Vec<(String, String, String, String)> {
    let out = ec2.describe_vpcs().vpc_ids(vpc).send().await.unwrap();
    out.vpcs()[0]
        .ipv6_cidr_block_association_set()
        .iter()
        .map(|a| {
            (
                a.ipv6_cidr_block().unwrap().to_string(),
                a.ipv6_pool().unwrap().to_string(),
                a.ip_source().unwrap().as_str().to_string(),
                a.ipv6_address_attribute().unwrap().as_str().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_vpc_takes_its_ipv6_block_from_a_private_pool_and_gives_it_back() {
    let fake = empty_fake().await;
    let ec2 = fake.ec2_client();
    let (_, scope) = ipam(&ec2).await;
    let pool = ipv6_pool(&ec2, &scope, "fd12:3456:7800::/40").await;

    // A /56 by netmask length, and one by the pool's default; private space, named as AWS
    // names a block of IPAM.
    let a = ec2
        .create_vpc()
        .cidr_block("10.0.0.0/16")
        .ipv6_ipam_pool_id(&pool)
        .ipv6_netmask_length(56)
        .send()
        .await
        .unwrap();
    let a = a.vpc().unwrap().vpc_id().unwrap().to_string();
    let b = ec2
        .create_vpc()
        .cidr_block("10.1.0.0/16")
        .ipv6_ipam_pool_id(&pool)
        .send()
        .await
        .unwrap();
    let b = b.vpc().unwrap().vpc_id().unwrap().to_string();
    let private = |block: &str| {
        vec![(
            block.to_string(),
            "IPAM Managed".to_string(),
            "none".to_string(),
            "private".to_string(),
        )]
    };
    assert_eq!(ipv6_blocks(&ec2, &a).await, private("fd12:3456:7800::/56"));
    assert_eq!(
        ipv6_blocks(&ec2, &b).await,
        private("fd12:3456:7800:100::/56")
    );
    assert_eq!(
        allocations(&ec2, &pool).await,
        [
            (
                "fd12:3456:7800:100::/56".to_string(),
                IpamPoolAllocationResourceType::Vpc,
                Some(b.clone())
            ),
            (
                "fd12:3456:7800::/56".to_string(),
                IpamPoolAllocationResourceType::Vpc,
                Some(a.clone())
            ),
        ]
    );

    // The VPC's first block came with its local route, and its subnets take /64s of it.
    let tables = ec2
        .describe_route_tables()
        .filters(filter("vpc-id", &[&a]))
        .send()
        .await
        .unwrap();
    assert!(
        tables.route_tables()[0]
            .routes()
            .iter()
            .any(|r| r.destination_ipv6_cidr_block() == Some("fd12:3456:7800::/56")),
        "{tables:?}"
    );
    let subnet = ec2
        .create_subnet()
        .vpc_id(&a)
        .cidr_block("10.0.0.0/24")
        .ipv6_cidr_block("fd12:3456:7800:1::/64")
        .send()
        .await
        .unwrap();
    let subnet = subnet.subnet().unwrap().subnet_id().unwrap().to_string();

    // Refused, with nothing made: a size a VPC cannot take, a block outside the pool, one
    // taken, an IPv4 pool, a length without a pool, the pool beside Amazon's block.
    let refused = |r: Result<aws_sdk_ec2::operation::create_vpc::CreateVpcOutput, _>| {
        let (code, message) = code_and_message::<(), _>(r.map(|_| ()));
        format!("{code}: {message}")
    };
    let vpcs_before = ec2.describe_vpcs().send().await.unwrap().vpcs().len();
    for (len, why) in [(64, "a /64"), (58, "a /58"), (40, "a /40")] {
        let e = refused(
            ec2.create_vpc()
                .cidr_block("10.2.0.0/16")
                .ipv6_ipam_pool_id(&pool)
                .ipv6_netmask_length(len)
                .send()
                .await,
        );
        assert!(e.starts_with("InvalidParameterValue: "), "{why}: {e}");
        assert!(e.contains(&format!("/{len}")), "{why}: {e}");
    }
    let e = refused(
        ec2.create_vpc()
            .cidr_block("10.2.0.0/16")
            .ipv6_ipam_pool_id(&pool)
            .ipv6_cidr_block("fd99::/56")
            .send()
            .await,
    );
    assert!(
        e.contains("is not inside a CIDR provisioned to the pool"),
        "{e}"
    );
    let e = refused(
        ec2.create_vpc()
            .cidr_block("10.2.0.0/16")
            .ipv6_ipam_pool_id(&pool)
            .ipv6_cidr_block("fd12:3456:7800::/56")
            .send()
            .await,
    );
    assert!(e.contains("overlaps the allocation"), "{e}");
    let v4 = top_pool(&ec2, &scope, "172.16.0.0/12").await;
    let e = refused(
        ec2.create_vpc()
            .cidr_block("10.2.0.0/16")
            .ipv6_ipam_pool_id(&v4)
            .ipv6_netmask_length(56)
            .send()
            .await,
    );
    assert!(e.starts_with("InvalidParameterValue: "), "{e}");
    let e = refused(
        ec2.create_vpc()
            .cidr_block("10.2.0.0/16")
            .ipv6_netmask_length(56)
            .send()
            .await,
    );
    assert!(e.starts_with("InvalidParameterCombination: "), "{e}");
    let e = refused(
        ec2.create_vpc()
            .cidr_block("10.2.0.0/16")
            .ipv6_ipam_pool_id(&pool)
            .amazon_provided_ipv6_cidr_block(true)
            .send()
            .await,
    );
    assert!(e.starts_with("InvalidParameterCombination: "), "{e}");
    assert_eq!(
        ec2.describe_vpcs().send().await.unwrap().vpcs().len(),
        vpcs_before
    );
    assert_eq!(allocations(&ec2, &pool).await.len(), 2);

    // A second block, named, by AssociateVpcCidrBlock; given back when disassociated.
    let associated = ec2
        .associate_vpc_cidr_block()
        .vpc_id(&a)
        .ipv6_ipam_pool_id(&pool)
        .ipv6_cidr_block("fd12:3456:7800:f00::/56")
        .send()
        .await
        .unwrap();
    let association = associated.ipv6_cidr_block_association().unwrap();
    assert_eq!(
        association.ipv6_cidr_block(),
        Some("fd12:3456:7800:f00::/56")
    );
    assert_eq!(association.ipv6_pool(), Some("IPAM Managed"));
    assert_eq!(allocations(&ec2, &pool).await.len(), 3);
    ec2.disassociate_vpc_cidr_block()
        .association_id(association.association_id().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(allocations(&ec2, &pool).await.len(), 2);

    // The first block holds a subnet's: it stays until the subnet goes. A deleted VPC's
    // block goes back to the pool and is the next one taken.
    ec2.delete_subnet().subnet_id(&subnet).send().await.unwrap();
    ec2.delete_vpc().vpc_id(&a).send().await.unwrap();
    assert_eq!(allocations(&ec2, &pool).await.len(), 1);
    let c = ec2
        .create_vpc()
        .cidr_block("10.0.0.0/16")
        .ipv6_ipam_pool_id(&pool)
        .ipv6_netmask_length(56)
        .send()
        .await
        .unwrap();
    let c = c.vpc().unwrap().vpc_id().unwrap().to_string();
    assert_eq!(ipv6_blocks(&ec2, &c).await, private("fd12:3456:7800::/56"));
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
