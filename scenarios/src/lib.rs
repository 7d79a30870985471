//! scenarios: named conformance scenarios, one YAML file each in `scenarios/`, and their
//! loader. A scenario is data, not code: the resources to create beforehand, the cluster spec,
//! its machines, the bad day the fake plays (`faults`), the steps, and the expected
//! outcome of each. `conformance` runs them. A new scenario is a new file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The folder of the scenario files: `SCENARIOS_DIR` when set, else `scenarios/scenarios`
/// under the working directory (the workspace root, as `cargo xtask` runs it) or its parent
/// (a workspace member, as `cargo test` runs it), else this crate's folder where it was built.
pub fn dir() -> PathBuf {
    if let Some(d) = std::env::var_os("SCENARIOS_DIR") {
        return PathBuf::from(d);
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let cwd = std::env::current_dir().unwrap_or_default();
    [
        cwd.join("scenarios").join("scenarios"),
        cwd.join("..").join("scenarios").join("scenarios"),
    ]
    .into_iter()
    .find(|d| d.is_dir())
    .unwrap_or(built)
}

/// Why a scenario file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a valid scenario.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// One scenario.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scenario {
    /// Its name (the file's stem).
    pub name: String,
    /// What it shows.
    pub description: String,
    /// Resources created beforehand through the SDK, as a user would have them.
    #[serde(default)]
    pub setup: Setup,
    /// The cluster's `spec` (YAML). `${vpc}`, `${igw}`, `${strayIgw}`, `${public.N}`, `${private.N}`,
    /// `${sg.node}`, `${bastion}`, `${lb}`, `${ipamPool}` and `${ipamPoolName}` name what
    /// `setup` created.
    pub cluster: serde_yaml_ng::Value,
    /// The machines.
    #[serde(default)]
    pub machines: Vec<MachineDecl>,
    /// The bad day the in-process fake plays for this scenario: a profile's name (`calm`,
    /// `storm`) or a profile (`throttling`, `consistency`, `rules`, `delays`; see
    /// `fakeaws::sim::profile`). It replaces the run's `--faults` for this scenario; against
    /// another target the scenario is skipped, since only the in-process fake is steered.
    #[serde(default)]
    pub faults: Option<serde_yaml_ng::Value>,
    /// What to do, in order, with the expectations between.
    pub steps: Vec<Step>,
}

/// Resources to create beforehand.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Setup {
    /// A VPC with this CIDR.
    #[serde(default)]
    pub vpc: Option<String>,
    /// The VPC holds an Amazon-provided IPv6 block (for a dual-stack cluster in it).
    #[serde(default)]
    pub vpc_ipv6: bool,
    /// An internet gateway attached to it.
    #[serde(default)]
    pub gateway: bool,
    /// An egress-only internet gateway in it (`${eigw}`).
    #[serde(default)]
    pub egress_only_gateway: bool,
    /// A public and a private subnet in each of this many zones (public ones route to the
    /// gateway).
    #[serde(default)]
    pub subnet_zones: usize,
    /// A NAT gateway (with its Elastic IP) in the first public subnet, and a route table of
    /// the private subnets that sends 0.0.0.0/0 to it: private subnets with a default route
    /// that is not to an internet gateway. Needs `gateway` and `subnetZones`.
    #[serde(default)]
    pub nat_gateway: bool,
    /// The first public subnet maps a public IPv4 address to each instance launched in it
    /// (`MapPublicIpOnLaunch`); the other subnets don't (AWS's default for a new subnet).
    /// Needs `subnetZones`.
    #[serde(default)]
    pub map_public_ip_in_first_subnet: bool,
    /// Security groups for these roles (`node`, `controlplane`, ...).
    #[serde(default)]
    pub security_groups: Vec<String>,
    /// A bastion instance in the first public subnet.
    #[serde(default)]
    pub bastion: bool,
    /// A classic load balancer (`byo-apiserver`) in the public subnets.
    #[serde(default)]
    pub load_balancer: bool,
    /// A second internet gateway, attached to no VPC (`${strayIgw}`): one a spec may name
    /// by mistake.
    #[serde(default)]
    pub stray_gateway: bool,
    /// A security group in a second VPC of its own (`${strayGroup}`): one a spec may name by
    /// mistake for a group of the cluster's VPC.
    #[serde(default)]
    pub stray_group: bool,
    /// An IPAM operating in the scenario's region, and an IPv4 pool of its private scope, of
    /// the region, with this CIDR provisioned (`${ipamPool}`, its `Name` tag
    /// `${ipamPoolName}`): the platform team's pool a cluster's VPC takes its range from. The
    /// pool, its CIDRs and its allocations are part of what `expectPreExistingUnchanged`
    /// compares, so the step belongs before the cluster takes a range or after it gave it
    /// back. (On AWS, a pool of a private scope needs IPAM's Advanced Tier, which bills the
    /// addresses it manages.) Independent of `vpc`.
    #[serde(default)]
    pub ipam_pool: Option<String>,
}

/// A machine of the scenario's cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MachineDecl {
    /// Its name.
    pub name: String,
    /// `controlplane` or `node`.
    pub role: String,
    /// Its zone (default: the cluster's first).
    #[serde(default)]
    pub zone: Option<String>,
    /// Asks for a public address, and so a public subnet.
    #[serde(default, rename = "publicIP")]
    pub public_ip: bool,
    /// Existing groups it also carries (`${sg.ROLE}` of the setup).
    #[serde(default)]
    pub additional_security_groups: Vec<String>,
    /// The image it boots, by id (default: the node image's lookup).
    #[serde(default)]
    pub ami_id: Option<String>,
    /// A Spot Instance (`spotMarketOptions: {}`) rather than an On-Demand one.
    #[serde(default)]
    pub spot: bool,
    /// Runs on a Dedicated Host allocated for it (`dynamicHostAllocation: {}`).
    #[serde(default)]
    pub dynamic_host: bool,
    /// How many EBS data volumes it launches with besides its root volume (`nonRootVolumes`:
    /// 8 GiB of gp3 each, as `/dev/sdb`, `/dev/sdc`, ...; at most 24).
    #[serde(default)]
    pub data_volumes: usize,
}

/// Tags someone else changes on an instance: keys removed (and, with `removeProviderTags`,
/// the provider's own: the cluster's owned tag, the role, the Name), then keys set.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Tamper {
    /// Removes the provider's own tags too.
    #[serde(default)]
    pub remove_provider_tags: bool,
    /// Tag keys removed.
    #[serde(default)]
    pub remove: Vec<String>,
    /// Tags set (added or overwritten).
    #[serde(default)]
    pub set: BTreeMap<String, String>,
}

/// What someone else terminates behind the provider's back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Terminated {
    /// Every machine's instance (by its recorded status).
    Machines,
    /// The cluster's bastion: the one the spec names, or the cluster's own.
    Bastion,
}

/// What someone else changes on the cluster's API load balancer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoadBalancerTamper {
    /// Detaches it from the last of its subnets (it keeps the others).
    #[serde(default)]
    pub detach_one_subnet: bool,
    /// Applies, in place of its own, the cluster's group of this role (`node`, `bastion`...).
    #[serde(default)]
    pub group_role: Option<String>,
}

/// A machine the provider must refuse before any call: a machine of the scenario's cluster
/// with what is wrong about it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Refused {
    /// The machine.
    pub machine: MachineDecl,
    /// Its `spec.clusterName`, when it names another cluster than the scenario's.
    #[serde(default)]
    pub cluster_name: Option<String>,
    /// Its `spec.instanceType`, when not the default.
    #[serde(default)]
    pub instance_type: Option<String>,
    /// This many more (well-formed) CA pins in its `spec.kubeadm.caCertHashes`: some
    /// hundreds make its user data larger than EC2 takes.
    #[serde(default)]
    pub extra_ca_cert_hashes: Option<usize>,
}

/// A load balancer made as the cloud controller manager makes one for a Service.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServiceLoadBalancer {
    /// Its name (its group is `k8s-elb-<name>`).
    pub name: String,
    /// Whether it carries the CCM's `kubernetes.io/cluster/<name>=owned` (default true);
    /// without it, it is someone else's.
    #[serde(default = "yes")]
    pub tagged: bool,
}

fn yes() -> bool {
    true
}

/// Whether something is there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Presence {
    /// It is there.
    Present,
    /// It is gone.
    Absent,
}

/// One step: a name (`- reconcile`) or a name with its argument (`- reconcileCutAfter: 3`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "serde_yaml_ng::Value")]
pub enum Step {
    /// Reconcile until done.
    Reconcile,
    /// One reconcile that must make no mutating call.
    ReconcileUnchanged,
    /// A reconcile cut after its N-th mutating call (whose answer is lost), as a crash.
    ReconcileCutAfter(usize),
    /// Reconcile (requeued as the provider asks) fails with this kind of error (`Aws`,
    /// `PreExisting`, ...): a refusal the provider must report, not retry for ever.
    ReconcileFails(String),
    /// Create every machine until running.
    CreateMachines,
    /// A machine creation cut after its N-th mutating call.
    CreateMachinesCutAfter(usize),
    /// Creating the machines (requeued as the provider asks) fails with this kind of error:
    /// a refusal the provider must report, not retry for ever.
    CreateMachinesFails(String),
    /// Update every machine by its recorded status (mutable fields and tags converge).
    UpdateMachines,
    /// One machine's spec changed, then that machine updated by its recorded status: done, or
    /// the error named.
    ChangeMachine(MachineChange),
    /// Someone else changes every machine instance's tags behind the provider's back.
    TamperMachineTags(Tamper),
    /// Someone else terminates instances behind the provider's back; the step waits (on the
    /// target's clock) until AWS shows them terminated.
    TerminateBehindItsBack(Terminated),
    /// Someone else changes the cluster's API load balancer behind the provider's back.
    TamperLoadBalancer(LoadBalancerTamper),
    /// A machine the provider refuses: create, update, delete and exists each answer
    /// `InvalidSpec` and make no call at all.
    RefuseMachine(Refused),
    /// A load balancer and its group made in the cluster's VPC the way the cloud controller
    /// manager makes them for a Service (in the public subnets; a rule on the `lb` group).
    MakeServiceLoadBalancer(ServiceLoadBalancer),
    /// Service load balancers (and their groups) present or absent, by name.
    ExpectServiceLoadBalancers(BTreeMap<String, Presence>),
    /// Their owner deletes a Service load balancer and its group.
    RemoveServiceLoadBalancer(String),
    /// Every machine instance carries the provider's tags: the cluster's owned tag, its
    /// role, its Name.
    ExpectMachinesTagged,
    /// Delete every machine.
    DeleteMachines,
    /// Delete the cluster until done.
    Delete,
    /// Delete the cluster until done, no pass answering an error: what is already gone is
    /// done, not a failure to report.
    DeleteWithoutErrors,
    /// A delete cut after its N-th mutating call.
    DeleteCutAfter(usize),
    /// Replace the cluster spec and reconcile: either done, or the error named.
    Change(Change),
    /// The live resources the cluster owns, by kind (kinds not named must be absent).
    ExpectOwned(BTreeMap<String, usize>),
    /// Every pre-existing resource describes exactly as before the first step.
    ExpectPreExistingUnchanged,
    /// What the cluster owns has the shape its spec says: routes to the right gateways, NAT
    /// gateways per zone, security-group rules by role, the load balancer's listeners,
    /// health check, subnets and registered control planes.
    ExpectTopology,
    /// Nothing carrying the cluster's owned tag is left (but what AWS keeps visible a while
    /// in a final state: terminated instances, deleted NAT gateways).
    ExpectNothingOwned,
    /// The fake answered at least this many calls with each error code since the first
    /// step (proof that the scenario's faults fired; in-process only).
    ExpectErrors(BTreeMap<String, usize>),
    /// The fake answered exactly this many calls of each action with success since the first
    /// step (a delete done once, not again while its resource goes away; in-process only).
    ExpectCalls(BTreeMap<String, usize>),
    /// The fake answered no call with any of these error codes since the first step (a
    /// dependency the provider must wait for, not try against; in-process only).
    ExpectNoErrors(Vec<String>),
    /// No resource the cluster owns (EC2 ones and its load balancer) carries a tag with any
    /// of these keys: additional tags dropped from the spec are gone.
    ExpectTagsAbsent(Vec<String>),
}

impl Scenario {
    /// The profile of [`faults`](Self::faults), if any, checked.
    pub fn profile(&self) -> Result<Option<fakeaws::sim::profile::Profile>, String> {
        use fakeaws::sim::profile::Profile;
        match &self.faults {
            None => Ok(None),
            Some(serde_yaml_ng::Value::String(name)) => Profile::named(name)
                .map(Some)
                .ok_or_else(|| format!("faults: no profile named {name:?}")),
            Some(v) => {
                // Read as the fake reads a profile file: JSON's shapes (a one-key map for an
                // effect with fields), whatever YAML spelled them with.
                let json = serde_json::to_vec(v).map_err(|e| format!("faults: {e}"))?;
                Profile::parse(&json)
                    .map(Some)
                    .map_err(|e| format!("faults: {e}"))
            }
        }
    }
}

impl TryFrom<serde_yaml_ng::Value> for Step {
    type Error = String;

    fn try_from(v: serde_yaml_ng::Value) -> Result<Self, String> {
        use serde_yaml_ng::{Value, from_value};
        let arg = |v: Value| -> Result<usize, String> {
            from_value(v).map_err(|e| format!("expected a number: {e}"))
        };
        match v {
            Value::String(s) => match s.as_str() {
                "reconcile" => Ok(Step::Reconcile),
                "reconcileUnchanged" => Ok(Step::ReconcileUnchanged),
                "createMachines" => Ok(Step::CreateMachines),
                "deleteMachines" => Ok(Step::DeleteMachines),
                "updateMachines" => Ok(Step::UpdateMachines),
                "expectMachinesTagged" => Ok(Step::ExpectMachinesTagged),
                "delete" => Ok(Step::Delete),
                "deleteWithoutErrors" => Ok(Step::DeleteWithoutErrors),
                "expectPreExistingUnchanged" => Ok(Step::ExpectPreExistingUnchanged),
                "expectNothingOwned" => Ok(Step::ExpectNothingOwned),
                "expectTopology" => Ok(Step::ExpectTopology),
                other => Err(format!("unknown step {other:?}")),
            },
            Value::Mapping(m) if m.len() == 1 => {
                let Some((k, v)) = m.into_iter().next() else {
                    return Err("an empty step".into());
                };
                let k = k.as_str().unwrap_or_default().to_string();
                match k.as_str() {
                    "reconcileCutAfter" => Ok(Step::ReconcileCutAfter(arg(v)?)),
                    "reconcileFails" => from_value(v)
                        .map(Step::ReconcileFails)
                        .map_err(|e| format!("reconcileFails: {e}")),
                    "createMachinesCutAfter" => Ok(Step::CreateMachinesCutAfter(arg(v)?)),
                    "createMachinesFails" => from_value(v)
                        .map(Step::CreateMachinesFails)
                        .map_err(|e| format!("createMachinesFails: {e}")),
                    "deleteCutAfter" => Ok(Step::DeleteCutAfter(arg(v)?)),
                    "expectOwned" => from_value(v)
                        .map(Step::ExpectOwned)
                        .map_err(|e| format!("expectOwned: {e}")),
                    "change" => from_value(v)
                        .map(Step::Change)
                        .map_err(|e| format!("change: {e}")),
                    "changeMachine" => from_value(v)
                        .map(Step::ChangeMachine)
                        .map_err(|e| format!("changeMachine: {e}")),
                    "tamperMachineTags" => from_value(v)
                        .map(Step::TamperMachineTags)
                        .map_err(|e| format!("tamperMachineTags: {e}")),
                    "tamperLoadBalancer" => from_value(v)
                        .map(Step::TamperLoadBalancer)
                        .map_err(|e| format!("tamperLoadBalancer: {e}")),
                    "terminateBehindItsBack" => from_value(v)
                        .map(Step::TerminateBehindItsBack)
                        .map_err(|e| format!("terminateBehindItsBack: {e}")),
                    "makeServiceLoadBalancer" => from_value(v)
                        .map(Step::MakeServiceLoadBalancer)
                        .map_err(|e| format!("makeServiceLoadBalancer: {e}")),
                    "expectServiceLoadBalancers" => from_value(v)
                        .map(Step::ExpectServiceLoadBalancers)
                        .map_err(|e| format!("expectServiceLoadBalancers: {e}")),
                    "removeServiceLoadBalancer" => from_value(v)
                        .map(Step::RemoveServiceLoadBalancer)
                        .map_err(|e| format!("removeServiceLoadBalancer: {e}")),
                    "refuseMachine" => from_value(v)
                        .map(Step::RefuseMachine)
                        .map_err(|e| format!("refuseMachine: {e}")),
                    "expectErrors" => from_value(v)
                        .map(Step::ExpectErrors)
                        .map_err(|e| format!("expectErrors: {e}")),
                    "expectCalls" => from_value(v)
                        .map(Step::ExpectCalls)
                        .map_err(|e| format!("expectCalls: {e}")),
                    "expectNoErrors" => from_value(v)
                        .map(Step::ExpectNoErrors)
                        .map_err(|e| format!("expectNoErrors: {e}")),
                    "expectTagsAbsent" => from_value(v)
                        .map(Step::ExpectTagsAbsent)
                        .map_err(|e| format!("expectTagsAbsent: {e}")),
                    other => Err(format!("unknown step {other:?}")),
                }
            }
            other => Err(format!("a step is a name or a one-key map, not {other:?}")),
        }
    }
}

/// A spec change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Change {
    /// The new `spec`.
    pub cluster: serde_yaml_ng::Value,
    /// The error expected (`Immutable`, `InvalidSpec`, `PreExisting`, `Conflict`), if any.
    #[serde(default)]
    pub expect_error: Option<String>,
}

/// A change to one machine's spec (what is not named stays as it is).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MachineChange {
    /// The machine, by its name in `machines`.
    pub name: String,
    /// Its new additional security groups (`${sg.ROLE}` of the setup), replacing the old.
    #[serde(default)]
    pub additional_security_groups: Option<Vec<String>>,
    /// A root volume of this many GiB (gp3, unencrypted): the volume is immutable.
    #[serde(default)]
    pub root_volume_size: Option<i32>,
    /// The error expected (`Immutable`, `InvalidSpec`, ...), if any.
    #[serde(default)]
    pub expect_error: Option<String>,
}

/// Loads one scenario file.
pub fn load(path: &Path) -> Result<Scenario, Error> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
        path: shown.clone(),
        source,
    })?;
    let s: Scenario = serde_yaml_ng::from_str(&text).map_err(|e| Error::Invalid {
        path: shown.clone(),
        message: e.to_string(),
    })?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut problems = Vec::new();
    if s.name != stem {
        problems.push(format!("name {:?} is not the file's stem {stem:?}", s.name));
    }
    if let Err(e) = s.profile() {
        problems.push(e);
    }
    if s.steps.is_empty() {
        problems.push("no steps".into());
    }
    let needs_vpc = s.setup.gateway
        || s.setup.vpc_ipv6
        || s.setup.egress_only_gateway
        || s.setup.stray_gateway
        || s.setup.stray_group
        || s.setup.subnet_zones > 0
        || !s.setup.security_groups.is_empty()
        || s.setup.bastion
        || s.setup.load_balancer;
    if needs_vpc && s.setup.vpc.is_none() {
        problems.push(
            "setup: gateways, IPv6, subnets, groups, bastion and load balancer need setup.vpc"
                .into(),
        );
    }
    if (s.setup.bastion || s.setup.load_balancer || s.setup.nat_gateway)
        && (s.setup.subnet_zones == 0 || !s.setup.gateway)
    {
        problems.push(
            "setup: a bastion, load balancer or NAT gateway needs subnetZones and gateway".into(),
        );
    }
    if s.setup.map_public_ip_in_first_subnet && s.setup.subnet_zones == 0 {
        problems.push("setup: mapPublicIpInFirstSubnet needs subnetZones".into());
    }
    if problems.is_empty() {
        Ok(s)
    } else {
        Err(Error::Invalid {
            path: shown,
            message: problems.join("; "),
        })
    }
}

/// Loads every `*.yaml` of `dir`, sorted by name.
pub fn load_all(dir: &Path) -> Result<Vec<Scenario>, Error> {
    let entries = std::fs::read_dir(dir).map_err(|source| Error::Read {
        path: dir.display().to_string(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    paths.sort();
    paths.iter().map(|p| load(p)).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn every_shipped_scenario_loads() {
        let all = load_all(&dir()).unwrap();
        assert!(all.len() >= 10, "{} scenarios", all.len());
    }

    #[test]
    fn a_bad_scenario_is_refused_with_its_file() {
        let path = std::env::temp_dir().join(format!("scn-{}.yaml", std::process::id()));
        std::fs::write(
            &path,
            "name: other\ndescription: x\ncluster: {region: us-east-1}\nfaults: {throttle: 1}\nsteps: []\n",
        )
        .unwrap();
        let err = load(&path).unwrap_err().to_string();
        let _ = std::fs::remove_file(&path);
        assert!(
            err.contains("file's stem")
                && err.contains("unknown field `throttle`")
                && err.contains("no steps"),
            "{err}"
        );
    }
}
