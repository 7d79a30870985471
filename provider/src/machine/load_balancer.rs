//! A control plane's membership of the API load balancer: whether an instance is
//! registered, registering it, and deregistering it before it is terminated.

use aws_sdk_elasticloadbalancing::types::Instance as LbInstance;

use super::{ClusterContext, MachineActuator};
use crate::aws_error::aws;
use crate::error::Error;
use crate::sdk::found;
use crate::spec::machine::{Machine, MachineRole};

impl MachineActuator {
    /// Why the API server does not answer through the load balancer yet (no instance
    /// `InService` on it), or `None` when it does.
    pub(super) async fn api_not_ready(
        &self,
        ctx: &ClusterContext,
    ) -> Result<Option<String>, Error> {
        let Some(lb) = &ctx.status.load_balancer else {
            return Ok(Some("no API load balancer".into()));
        };
        let health = self
            .elb()
            .describe_instance_health()
            .load_balancer_name(&lb.name)
            .send()
            .await
            .map_err(aws("DescribeInstanceHealth"))?;
        if health
            .instance_states()
            .iter()
            .any(|s| s.state() == Some("InService"))
        {
            return Ok(None);
        }
        Ok(Some(format!(
            "waits for the API server: no control plane is InService on load balancer {} yet \
             (the init machine comes first)",
            lb.name
        )))
    }

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
