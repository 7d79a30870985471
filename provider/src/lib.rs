//! provider: builds Kubernetes cluster infrastructure on AWS the way a Cluster API provider
//! does, through the official SDK only: a cluster actuator ([`cluster::ClusterActuator`]:
//! reconcile and delete the VPC, subnets, gateways, NAT, routes, security groups, bastion and
//! API load balancer) driven by a Kubernetes-style spec ([`spec`]). It creates and tags what is
//! missing, converges what drifted, and modifies or deletes only what it owns ([`ownership`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), provider::Error> {
//! let cluster = provider::spec::parse(&std::fs::read_to_string("cluster.yaml").unwrap_or_default(), "cluster.yaml")?;
//! let clients = provider::Clients::from_environment(&cluster.spec.region).await;
//! let actuator = provider::ClusterActuator::new(clients);
//! loop {
//!     let outcome = actuator.reconcile(&cluster).await?;
//!     match outcome.requeue_after() {
//!         None => break,
//!         Some(after) => tokio::time::sleep(after).await,
//!     }
//! }
//! # Ok(()) }
//! ```

pub mod aws_error;
pub mod bootstrap;
pub mod clients;
pub mod cluster;
pub mod elastic_ip;
pub mod error;
pub mod instance;
pub mod machine;
pub mod ownership;
pub mod sdk;
pub mod spec;

pub use clients::Clients;
pub use cluster::{ClusterActuator, ClusterStatus, Outcome};
pub use error::Error;
pub use machine::MachineActuator;
