//! Deletes everything a conformance run tagged (`capa-conformance-run=<id>`), or every run
//! older than a cutoff, in the provider's order of deletion (`Step::deletion_order`): load
//! balancers, instances (bastions and machines, waiting until terminated) and the Dedicated
//! Hosts allocated for machines, security groups
//! (rules first), NAT gateways (waiting until deleted) and their addresses, gateways,
//! subnets, route tables, VPCs; then the IPAMs a scenario's setup made (with their pools,
//! CIDRs and allocations). Used after each case on a shared target and by `cargo xtask
//! sweep` after a crashed run.

use std::time::{Duration, Instant};

use aws_sdk_ec2::types::{Filter, Tag};
use provider::Clients;
use provider::cluster::Step;

use crate::{Failure, RUN_STARTED_TAG, RUN_TAG, aws_failure};

/// Which runs to sweep.
#[derive(Debug, Clone)]
pub enum Selector {
    /// One run.
    Run(String),
    /// Every run started before this Unix time.
    StartedBefore(u64),
}

impl Selector {
    fn matches_ec2(&self, tags: &[Tag]) -> bool {
        let get = |k: &str| {
            tags.iter()
                .find(|t| t.key() == Some(k))
                .and_then(|t| t.value())
        };
        self.matches(get(RUN_TAG), get(RUN_STARTED_TAG))
    }

    fn matches(&self, run: Option<&str>, started: Option<&str>) -> bool {
        match self {
            Selector::Run(id) => run == Some(id.as_str()),
            Selector::StartedBefore(t) => started
                .and_then(|s| s.parse::<u64>().ok())
                .is_some_and(|s| s < *t),
        }
    }

    fn filter(&self) -> Filter {
        match self {
            Selector::Run(id) => Filter::builder()
                .name(format!("tag:{RUN_TAG}"))
                .values(id)
                .build(),
            Selector::StartedBefore(_) => Filter::builder()
                .name("tag-key")
                .values(RUN_STARTED_TAG)
                .build(),
        }
    }
}

/// What a sweep deleted, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Swept(pub Vec<(String, String)>);

/// Deletes everything `sel` selects; waits where AWS makes it wait, up to `patience`.
pub async fn sweep(
    clients: &Clients,
    sel: &Selector,
    poll: Duration,
    patience: Duration,
) -> Result<Swept, Failure> {
    let mut sweeper = Sweeper {
        clients,
        ec2: &clients.ec2,
        sel,
        poll,
        patience,
        start: Instant::now(),
        swept: Swept::default(),
    };
    for step in Step::deletion_order() {
        match step {
            Step::LoadBalancer => sweeper.load_balancers().await?,
            Step::Bastion => {
                sweeper.instances().await?;
                sweeper.hosts().await?;
            }
            Step::SecurityGroup => sweeper.security_groups().await?,
            Step::RouteTable => sweeper.route_tables().await?,
            Step::NatGateway => sweeper.nat_gateways().await?,
            Step::InternetGateway => sweeper.internet_gateways().await?,
            Step::Subnet => sweeper.subnets().await?,
            Step::Vpc => sweeper.vpcs().await?,
        }
    }
    // A pool gives its ranges back once the VPCs that held them are gone.
    sweeper.ipams().await?;
    Ok(sweeper.swept)
}

/// One sweep under way: what it selects, how long it waits, what it deleted.
struct Sweeper<'a> {
    clients: &'a Clients,
    ec2: &'a aws_sdk_ec2::Client,
    sel: &'a Selector,
    poll: Duration,
    patience: Duration,
    start: Instant,
    swept: Swept,
}

impl Sweeper<'_> {
    /// Load balancers.
    async fn load_balancers(&mut self) -> Result<(), Failure> {
        for (name, tags) in crate::census::load_balancer_tags(self.clients).await? {
            let get = |k: &str| tags.iter().find(|t| t.key() == k).and_then(|t| t.value());
            if self.sel.matches(get(RUN_TAG), get(RUN_STARTED_TAG)) {
                self.clients
                    .elb
                    .delete_load_balancer()
                    .load_balancer_name(&name)
                    .send()
                    .await
                    .map_err(aws_failure("DeleteLoadBalancer"))?;
                self.swept.0.push(("loadBalancer".into(), name));
            }
        }
        Ok(())
    }

    /// Instances (bastions and machines), then wait until they are terminated.
    async fn instances(&mut self) -> Result<(), Failure> {
        let ec2 = self.ec2;
        loop {
            let out = ec2
                .describe_instances()
                .filters(self.sel.filter())
                .filters(
                    Filter::builder()
                        .name("instance-state-name")
                        .values("pending")
                        .values("running")
                        .values("stopping")
                        .values("stopped")
                        .values("shutting-down")
                        .build(),
                )
                .send()
                .await
                .map_err(aws_failure("DescribeInstances"))?;
            let live: Vec<(String, bool)> = out
                .reservations()
                .iter()
                .flat_map(|r| r.instances())
                .filter(|i| self.sel.matches_ec2(i.tags()))
                .map(|i| {
                    (
                        i.instance_id().unwrap_or_default().to_string(),
                        i.state().and_then(|s| s.name()).map(|n| n.as_str())
                            == Some("shutting-down"),
                    )
                })
                .collect();
            if live.is_empty() {
                break;
            }
            let to_stop: Vec<String> = live
                .iter()
                .filter(|(_, s)| !s)
                .map(|(i, _)| i.clone())
                .collect();
            if !to_stop.is_empty() {
                ec2.terminate_instances()
                    .set_instance_ids(Some(to_stop.clone()))
                    .send()
                    .await
                    .map_err(aws_failure("TerminateInstances"))?;
                self.swept
                    .0
                    .extend(to_stop.into_iter().map(|i| ("instance".to_string(), i)));
            }
            if self.start.elapsed() > self.patience {
                return Err(Failure::Check("instances still terminating".into()));
            }
            tokio::time::sleep(self.poll).await;
        }

        Ok(())
    }

    /// Dedicated Hosts allocated for machines (their instances terminated before).
    async fn hosts(&mut self) -> Result<(), Failure> {
        let out = self
            .ec2
            .describe_hosts()
            .filter(self.sel.filter())
            .filter(Filter::builder().name("state").values("available").build())
            .send()
            .await
            .map_err(aws_failure("DescribeHosts"))?;
        let ids: Vec<String> = out
            .hosts()
            .iter()
            .filter(|h| self.sel.matches_ec2(h.tags()))
            .filter_map(|h| h.host_id().map(String::from))
            .collect();
        if ids.is_empty() {
            return Ok(());
        }
        let released = self
            .ec2
            .release_hosts()
            .set_host_ids(Some(ids))
            .send()
            .await
            .map_err(aws_failure("ReleaseHosts"))?;
        if let Some(u) = released.unsuccessful().first() {
            return Err(Failure::Check(format!(
                "Dedicated Host {} not released: {}",
                u.resource_id().unwrap_or_default(),
                u.error().and_then(|e| e.message()).unwrap_or_default()
            )));
        }
        self.swept.0.extend(
            released
                .successful()
                .iter()
                .map(|h| ("dedicatedHost".to_string(), h.clone())),
        );
        Ok(())
    }

    /// NAT gateways, waiting until deleted, then their Elastic IPs.
    async fn nat_gateways(&mut self) -> Result<(), Failure> {
        let ec2 = self.ec2;
        loop {
            let out = ec2
                .describe_nat_gateways()
                .filter(self.sel.filter())
                .filter(
                    Filter::builder()
                        .name("state")
                        .values("pending")
                        .values("available")
                        .values("failed")
                        .values("deleting")
                        .build(),
                )
                .send()
                .await
                .map_err(aws_failure("DescribeNatGateways"))?;
            let live: Vec<_> = out
                .nat_gateways()
                .iter()
                .filter(|n| self.sel.matches_ec2(n.tags()))
                .collect();
            if live.is_empty() {
                break;
            }
            for n in live {
                if n.state().map(|s| s.as_str()) != Some("deleting") {
                    let id = n.nat_gateway_id().unwrap_or_default().to_string();
                    ec2.delete_nat_gateway()
                        .nat_gateway_id(&id)
                        .send()
                        .await
                        .map_err(aws_failure("DeleteNatGateway"))?;
                    self.swept.0.push(("natGateway".into(), id));
                }
            }
            if self.start.elapsed() > self.patience {
                return Err(Failure::Check("NAT gateways still deleting".into()));
            }
            tokio::time::sleep(self.poll).await;
        }

        let addresses = ec2
            .describe_addresses()
            .filters(self.sel.filter())
            .send()
            .await
            .map_err(aws_failure("DescribeAddresses"))?;
        for a in addresses
            .addresses()
            .iter()
            .filter(|a| self.sel.matches_ec2(a.tags()))
        {
            let id = a.allocation_id().unwrap_or_default().to_string();
            if let Some(assoc) = a.association_id() {
                ec2.disassociate_address()
                    .association_id(assoc)
                    .send()
                    .await
                    .map_err(aws_failure("DisassociateAddress"))?;
            }
            ec2.release_address()
                .allocation_id(&id)
                .send()
                .await
                .map_err(aws_failure("ReleaseAddress"))?;
            self.swept.0.push(("elasticIp".into(), id));
        }

        Ok(())
    }

    /// Security groups: every group's ingress rules first, since groups may reference each
    /// other, then the groups.
    async fn security_groups(&mut self) -> Result<(), Failure> {
        let ec2 = self.ec2;
        let groups = ec2
            .describe_security_groups()
            .filters(self.sel.filter())
            .send()
            .await
            .map_err(aws_failure("DescribeSecurityGroups"))?;
        let groups: Vec<_> = groups
            .security_groups()
            .iter()
            .filter(|g| self.sel.matches_ec2(g.tags()))
            .cloned()
            .collect();
        for g in &groups {
            if !g.ip_permissions().is_empty() {
                ec2.revoke_security_group_ingress()
                    .group_id(g.group_id().unwrap_or_default())
                    .set_ip_permissions(Some(g.ip_permissions().to_vec()))
                    .send()
                    .await
                    .map_err(aws_failure("RevokeSecurityGroupIngress"))?;
            }
        }
        // Groups of other VPCs or runs may reference these; interfaces go with their instances.
        for g in &groups {
            let id = g.group_id().unwrap_or_default().to_string();
            loop {
                match ec2.delete_security_group().group_id(&id).send().await {
                    Ok(_) => break,
                    Err(e) if self.start.elapsed() < self.patience => {
                        tracing::debug!("DeleteSecurityGroup {id}: {e}");
                        tokio::time::sleep(self.poll.max(Duration::from_millis(1))).await;
                    }
                    Err(e) => return Err(aws_failure("DeleteSecurityGroup")(e)),
                }
            }
            self.swept.0.push(("securityGroup".into(), id));
        }

        Ok(())
    }

    /// Route tables other than main ones, disassociated first.
    async fn route_tables(&mut self) -> Result<(), Failure> {
        let ec2 = self.ec2;
        let tables = ec2
            .describe_route_tables()
            .filters(self.sel.filter())
            .send()
            .await
            .map_err(aws_failure("DescribeRouteTables"))?;
        for t in tables
            .route_tables()
            .iter()
            .filter(|t| self.sel.matches_ec2(t.tags()))
        {
            if t.associations().iter().any(|a| a.main() == Some(true)) {
                continue;
            }
            for a in t.associations() {
                if let Some(id) = a.route_table_association_id() {
                    ec2.disassociate_route_table()
                        .association_id(id)
                        .send()
                        .await
                        .map_err(aws_failure("DisassociateRouteTable"))?;
                }
            }
            let id = t.route_table_id().unwrap_or_default().to_string();
            ec2.delete_route_table()
                .route_table_id(&id)
                .send()
                .await
                .map_err(aws_failure("DeleteRouteTable"))?;
            self.swept.0.push(("routeTable".into(), id));
        }

        Ok(())
    }

    /// Internet gateways, detached first, and egress-only and carrier gateways.
    async fn internet_gateways(&mut self) -> Result<(), Failure> {
        let ec2 = self.ec2;
        let igws = ec2
            .describe_internet_gateways()
            .filters(self.sel.filter())
            .send()
            .await
            .map_err(aws_failure("DescribeInternetGateways"))?;
        for g in igws
            .internet_gateways()
            .iter()
            .filter(|g| self.sel.matches_ec2(g.tags()))
        {
            let id = g.internet_gateway_id().unwrap_or_default().to_string();
            for a in g.attachments() {
                ec2.detach_internet_gateway()
                    .internet_gateway_id(&id)
                    .vpc_id(a.vpc_id().unwrap_or_default())
                    .send()
                    .await
                    .map_err(aws_failure("DetachInternetGateway"))?;
            }
            ec2.delete_internet_gateway()
                .internet_gateway_id(&id)
                .send()
                .await
                .map_err(aws_failure("DeleteInternetGateway"))?;
            self.swept.0.push(("internetGateway".into(), id));
        }
        let eigws = ec2
            .describe_egress_only_internet_gateways()
            .filters(self.sel.filter())
            .send()
            .await
            .map_err(aws_failure("DescribeEgressOnlyInternetGateways"))?;
        for g in eigws
            .egress_only_internet_gateways()
            .iter()
            .filter(|g| self.sel.matches_ec2(g.tags()))
        {
            let id = g
                .egress_only_internet_gateway_id()
                .unwrap_or_default()
                .to_string();
            ec2.delete_egress_only_internet_gateway()
                .egress_only_internet_gateway_id(&id)
                .send()
                .await
                .map_err(aws_failure("DeleteEgressOnlyInternetGateway"))?;
            self.swept.0.push(("egressOnlyInternetGateway".into(), id));
        }
        let carriers = ec2
            .describe_carrier_gateways()
            .filters(self.sel.filter())
            .send()
            .await
            .map_err(aws_failure("DescribeCarrierGateways"))?;
        for g in carriers
            .carrier_gateways()
            .iter()
            .filter(|g| self.sel.matches_ec2(g.tags()))
            .filter(|g| {
                !matches!(
                    g.state(),
                    Some(
                        aws_sdk_ec2::types::CarrierGatewayState::Deleting
                            | aws_sdk_ec2::types::CarrierGatewayState::Deleted
                    )
                )
            })
        {
            let id = g.carrier_gateway_id().unwrap_or_default().to_string();
            ec2.delete_carrier_gateway()
                .carrier_gateway_id(&id)
                .send()
                .await
                .map_err(aws_failure("DeleteCarrierGateway"))?;
            self.swept.0.push(("carrierGateway".into(), id));
        }

        Ok(())
    }

    /// Subnets.
    async fn subnets(&mut self) -> Result<(), Failure> {
        let ec2 = self.ec2;
        let subnets = ec2
            .describe_subnets()
            .filters(self.sel.filter())
            .send()
            .await
            .map_err(aws_failure("DescribeSubnets"))?;
        for s in subnets
            .subnets()
            .iter()
            .filter(|s| self.sel.matches_ec2(s.tags()))
        {
            let id = s.subnet_id().unwrap_or_default().to_string();
            ec2.delete_subnet()
                .subnet_id(&id)
                .send()
                .await
                .map_err(aws_failure("DeleteSubnet"))?;
            self.swept.0.push(("subnet".into(), id));
        }

        Ok(())
    }

    /// VPCs.
    async fn vpcs(&mut self) -> Result<(), Failure> {
        let ec2 = self.ec2;
        let vpcs = ec2
            .describe_vpcs()
            .filters(self.sel.filter())
            .send()
            .await
            .map_err(aws_failure("DescribeVpcs"))?;
        for v in vpcs
            .vpcs()
            .iter()
            .filter(|v| self.sel.matches_ec2(v.tags()))
        {
            let id = v.vpc_id().unwrap_or_default().to_string();
            ec2.delete_vpc()
                .vpc_id(&id)
                .send()
                .await
                .map_err(aws_failure("DeleteVpc"))?;
            self.swept.0.push(("vpc".into(), id));
        }
        Ok(())
    }

    /// IPAMs, each with its private scopes, their pools, CIDRs and allocations (`Cascade`).
    async fn ipams(&mut self) -> Result<(), Failure> {
        let ec2 = self.ec2;
        let ipams = ec2
            .describe_ipams()
            .filters(self.sel.filter())
            .send()
            .await
            .map_err(aws_failure("DescribeIpams"))?;
        for i in ipams
            .ipams()
            .iter()
            .filter(|i| self.sel.matches_ec2(i.tags()))
        {
            let id = i.ipam_id().unwrap_or_default().to_string();
            ec2.delete_ipam()
                .ipam_id(&id)
                .cascade(true)
                .send()
                .await
                .map_err(aws_failure("DeleteIpam"))?;
            self.swept.0.push(("ipam".into(), id));
        }
        Ok(())
    }
}
