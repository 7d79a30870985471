//! A control plane's membership of the API load balancer: whether an instance is
//! registered, registering it, and deregistering it before it is terminated.

use aws_sdk_elasticloadbalancing::types::Instance as LbInstance;

use super::{ClusterContext, MachineActuator};
use crate::aws_error::aws;
use crate::error::Error;
use crate::sdk::found;
use crate::spec::machine::{Machine, MachineRole};

impl MachineActuator {
    pub(super) async fn registered(&self, ctx: &ClusterContext, id: &str) -> Result<bool, Error> {
        let Some(lb) = &ctx.status.load_balancer else {
            return Ok(false);
        };
        let d = self
            .elb()
            .describe_load_balancers()
            .load_balancer_names(&lb.name)
            .send()
            .await
            .map_err(aws("DescribeLoadBalancers"))?;
        Ok(d.load_balancer_descriptions()
            .iter()
            .flat_map(|l| l.instances())
            .any(|i| i.instance_id() == Some(id)))
    }

    pub(super) async fn ensure_registered(
        &self,
        ctx: &ClusterContext,
        machine: &Machine,
        id: &str,
    ) -> Result<bool, Error> {
        if machine.spec.role != MachineRole::ControlPlane {
            return Ok(false);
        }
        let Some(lb) = &ctx.status.load_balancer else {
            return Ok(false);
        };
        if self.registered(ctx, id).await? {
            return Ok(true);
        }
        tracing::info!(target: "capa::progress", "register {id} with {}", lb.name);
        self.elb()
            .register_instances_with_load_balancer()
            .load_balancer_name(&lb.name)
            .instances(LbInstance::builder().instance_id(id).build())
            .send()
            .await
            .map_err(aws("RegisterInstancesWithLoadBalancer"))?;
        Ok(true)
    }

    /// Deregisters instance `id` from the API load balancer if it is registered; a load
    /// balancer or instance already gone is success.
    pub(super) async fn deregister(&self, ctx: &ClusterContext, id: &str) -> Result<(), Error> {
        let Some(lb) = &ctx.status.load_balancer else {
            return Ok(());
        };
        if !self.registered(ctx, id).await? {
            return Ok(());
        }
        tracing::info!(target: "capa::progress", "deregister {id} from {}", lb.name);
        let answer = self
            .elb()
            .deregister_instances_from_load_balancer()
            .load_balancer_name(&lb.name)
            .instances(LbInstance::builder().instance_id(id).build())
            .send()
            .await
            .map_err(aws("DeregisterInstancesFromLoadBalancer"));
        found(answer)?;
        Ok(())
    }
}
