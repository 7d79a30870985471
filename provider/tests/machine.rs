//! The machine actuator against fakeaws: create (idempotent, crash-safe), delete, exists,
//! update, the AMI lookup, and user data checked by the real `cloud-init schema` validator.
//! Outcomes are read back through Describe calls.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use aws_sdk_ec2::types::{Filter, Instance};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::interceptors::context::BeforeDeserializationInterceptorContextMut;
use aws_smithy_runtime_api::client::orchestrator::Metadata;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::ConfigBag;
use provider::bootstrap::Bootstrap;
use provider::machine::{MachineActuator, MachineStatus, user_data};
use provider::spec::{Cluster, Machine};
use provider::{Clients, ClusterActuator, Error};

const TOKEN: &str = "abcdef.0123456789abcdef";

/// The bootstrap material of the tests' clusters, made once.
fn bootstrap() -> Arc<Bootstrap> {
    static MADE: std::sync::OnceLock<Arc<Bootstrap>> = std::sync::OnceLock::new();
    MADE.get_or_init(|| Arc::new(Bootstrap::generate().unwrap()))
        .clone()
}

fn filter(name: &str, values: &[&str]) -> Filter {
    let mut f = Filter::builder().name(name);
    for v in values {
        f = f.values(*v);
    }
    f.build()
}

fn cluster() -> Cluster {
    provider::spec::parse(
        "apiVersion: infrastructure.capa.rs/v1alpha1\nkind: Cluster\nmetadata: {name: c1}\nspec:\n  region: us-east-1\n  network: {availabilityZoneCount: 2}\n",
        "test",
    )
    .unwrap()
}

fn machine(name: &str, role: &str, operation: &str) -> Machine {
    machine_with(name, role, operation, "")
}

/// A machine whose `kubeadm` section also holds `extra` (YAML lines, indented 4).
fn machine_with(name: &str, role: &str, operation: &str, extra: &str) -> Machine {
    machine_yaml(name, role, operation, "", extra)
}

/// A machine whose spec also holds `spec_extra` (YAML lines, indented 2) and whose `kubeadm`
/// section holds `extra` (indented 4).
fn machine_yaml(name: &str, role: &str, operation: &str, spec_extra: &str, extra: &str) -> Machine {
    let yaml = format!(
        "apiVersion: infrastructure.capa.rs/v1alpha1\nkind: Machine\nmetadata: {{name: {name}}}\nspec:\n  clusterName: c1\n  role: {role}\n  ami: {{lookup: {{baseOS: ubuntu-24.04}}}}\n  instanceType: t3.large\n  subnet: {{availabilityZone: us-east-1b}}\n  iamInstanceProfile: nodes.cluster-api-provider-aws.sigs.k8s.io\n  rootVolume: {{size: 40, type: gp3, encrypted: true}}\n  additionalTags: {{team: platform}}\n{spec_extra}  kubeadm:\n    operation: {operation}\n    kubernetesVersion: v1.31.0\n{extra}"
    );
    let docs = provider::spec::parse_documents(&yaml, "test").unwrap();
    docs.machines.into_iter().next().unwrap()
}

/// The problems listed when a node machine whose spec also holds `spec_extra` (YAML lines,
/// indented 2) is read: it must be refused.
fn refused(spec_extra: &str) -> Vec<String> {
    let yaml = format!(
        "apiVersion: infrastructure.capa.rs/v1alpha1\nkind: Machine\nmetadata: {{name: c1-node-bad}}\nspec:\n  clusterName: c1\n  role: node\n  ami: {{id: ami-0123456789abcdef0}}\n  instanceType: t3.large\n{spec_extra}  kubeadm:\n    operation: join\n    kubernetesVersion: v1.31.0\n"
    );
    match provider::spec::parse_documents(&yaml, "test") {
        Err(Error::InvalidSpec { problems }) => problems,
        other => panic!("{other:?}"),
    }
}

/// [`refused`], its problems naming each of `needles`.
fn refused_listing(spec_extra: &str, needles: &[&str]) {
    let problems = refused(spec_extra);
    for needle in needles {
        assert!(
            problems.iter().any(|p| p.contains(needle)),
            "{needle} in {problems:?}"
        );
    }
}

struct World {
    fake: fakeaws::FakeAws,
    clients: Clients,
    cluster: Cluster,
}

async fn world() -> World {
    world_of(cluster()).await
}

async fn world_of(cluster: Cluster) -> World {
    world_opted_in(cluster, &[]).await
}

/// [`world_of`], the account opted in to the zone groups `groups` first.
async fn world_opted_in(cluster: Cluster, groups: &[&str]) -> World {
    let fake = fakeaws::spawn_with(fakeaws::Config {
        clock: fakeaws::Clock::virtual_at(
            std::time::UNIX_EPOCH + Duration::from_secs(1_795_961_900),
        ),
        ..Default::default()
    })
    .await
    .unwrap();
    for group in groups {
        fake.ec2_client()
            .modify_availability_zone_group()
            .group_name(*group)
            .opt_in_status(aws_sdk_ec2::types::ModifyAvailabilityZoneOptInStatus::OptedIn)
            .send()
            .await
            .unwrap();
    }
    let clients = Clients::for_endpoint(fake.endpoint(), "us-east-1");
    let a = ClusterActuator::new(clients.clone());
    while !a.reconcile(&cluster).await.unwrap().is_done() {}
    World {
        fake,
        clients,
        cluster,
    }
}

/// The cluster of [`world`] with its init machine up (see [`api_up`]), and the machine
/// actuator that made it.
async fn api_world() -> (World, MachineActuator) {
    let w = world().await;
    let m = MachineActuator::new(w.clients.clone(), bootstrap());
    api_up(&w, &m).await;
    (w, m)
}

/// The init machine `c1-cp-0`, created until it runs and serves the API (joins wait for it).
async fn api_up(w: &World, m: &MachineActuator) {
    let init = machine("c1-cp-0", "controlplane", "init");
    let mut status = None;
    for _ in 0..5 {
        let o = m.create(&w.cluster, &init, status.as_ref()).await.unwrap();
        if o.is_done() {
            return;
        }
        status = o.status;
    }
    panic!("the init machine did not come up");
}

/// Asserts that no call since the last look at the fake's call log changed anything.
fn nothing_changed(w: &World) {
    let calls = w.fake.fake().take_calls();
    assert!(calls.iter().all(|c| !c.is_mutating()), "{calls:?}");
}

/// Creates `machine` (no status before) until its first outcome: its status and the one
/// instance named after it.
/// Asserts that creating `machine` is refused before any call, with one problem naming
/// `needle` (a problem of the machine against its cluster).
async fn refused_before_any_call(w: &World, m: &MachineActuator, machine: &Machine, needle: &str) {
    w.fake.fake().take_calls();
    let err = m.create(&w.cluster, machine, None).await.unwrap_err();
    assert!(
        matches!(&err, Error::InvalidSpec { problems } if problems.len() == 1
            && problems[0].contains(needle)),
        "{err}"
    );
    assert!(w.fake.fake().take_calls().is_empty());
}

async fn create_one(
    w: &World,
    m: &MachineActuator,
    machine: &Machine,
) -> (MachineStatus, Instance) {
    let st = m
        .create(&w.cluster, machine, None)
        .await
        .unwrap()
        .status
        .unwrap();
    let [i] = instances_named(&w.fake.ec2_client(), &machine.metadata.name)
        .await
        .try_into()
        .unwrap();
    (st, i)
}

async fn instances_named(ec2: &aws_sdk_ec2::Client, name: &str) -> Vec<Instance> {
    let out = ec2
        .describe_instances()
        .filters(filter("tag:Name", &[name]))
        .filters(filter(
            "instance-state-name",
            &["pending", "running", "stopping", "stopped"],
        ))
        .send()
        .await
        .unwrap();
    out.reservations()
        .iter()
        .flat_map(|r| r.instances())
        .cloned()
        .collect()
}

async fn lb_members(elb: &aws_sdk_elasticloadbalancing::Client) -> Vec<String> {
    let d = elb
        .describe_load_balancers()
        .load_balancer_names("c1-apiserver")
        .send()
        .await
        .unwrap();
    d.load_balancer_descriptions()[0]
        .instances()
        .iter()
        .filter_map(|i| i.instance_id().map(String::from))
        .collect()
}

#[tokio::test]
async fn control_plane_and_two_nodes_created_once_each() {
    let w = world().await;
    let m = MachineActuator::new(w.clients.clone(), bootstrap());
    let ec2 = w.fake.ec2_client();
    let cp = machine("c1-cp-0", "controlplane", "init");
    let nodes = [
        machine("c1-node-0", "node", "join"),
        machine("c1-node-1", "node", "join"),
    ];

    let first = m.create(&w.cluster, &cp, None).await.unwrap();
    let status = first.status.clone().unwrap();
    // Twice: the same instance, whether the status is kept or lost.
    let again = m.create(&w.cluster, &cp, Some(&status)).await.unwrap();
    assert_eq!(
        again.status.as_ref().unwrap().instance_id,
        status.instance_id
    );
    let lost = m.create(&w.cluster, &cp, None).await.unwrap();
    assert_eq!(
        lost.status.as_ref().unwrap().instance_id,
        status.instance_id
    );
    for n in &nodes {
        m.create(&w.cluster, n, None).await.unwrap();
        m.create(&w.cluster, n, None).await.unwrap();
    }
    for name in ["c1-cp-0", "c1-node-0", "c1-node-1"] {
        assert_eq!(instances_named(&ec2, name).await.len(), 1, "{name}");
    }

    // The control plane: its groups, subnet, image, volume, profile, tags, LB membership.
    let i = &instances_named(&ec2, "c1-cp-0").await[0];
    let groups = ec2
        .describe_security_groups()
        .set_group_ids(Some(
            i.security_groups()
                .iter()
                .map(|g| g.group_id().unwrap().to_string())
                .collect(),
        ))
        .send()
        .await
        .unwrap();
    let mut names: Vec<&str> = groups
        .security_groups()
        .iter()
        .map(|g| g.group_name().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["c1-controlplane", "c1-lb", "c1-node"]);
    let subnet = ec2
        .describe_subnets()
        .subnet_ids(i.subnet_id().unwrap())
        .send()
        .await
        .unwrap();
    let subnet = &subnet.subnets()[0];
    assert_eq!(subnet.availability_zone(), Some("us-east-1b"));
    assert_eq!(subnet.map_public_ip_on_launch(), Some(false));
    let image = ec2
        .describe_images()
        .image_ids(i.image_id().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(
        image.images()[0].name(),
        Some("capa-ami-ubuntu-24.04-v1.31.0-1727000000"),
        "the newest x86_64 match"
    );
    let root = i.block_device_mappings()[0]
        .ebs()
        .unwrap()
        .volume_id()
        .unwrap();
    let vol = ec2
        .describe_volumes()
        .volume_ids(root)
        .send()
        .await
        .unwrap();
    assert_eq!(vol.volumes()[0].size(), Some(40));
    assert_eq!(vol.volumes()[0].encrypted(), Some(true));
    assert!(
        i.iam_instance_profile()
            .unwrap()
            .arn()
            .unwrap()
            .ends_with("/nodes.cluster-api-provider-aws.sigs.k8s.io")
    );
    let tag = |k: &str| {
        i.tags()
            .iter()
            .find(|t| t.key() == Some(k))
            .and_then(|t| t.value())
    };
    assert_eq!(
        tag("sigs.k8s.io/cluster-api-provider-aws/cluster/c1"),
        Some("owned")
    );
    assert_eq!(tag("kubernetes.io/cluster/c1"), Some("owned"));
    assert_eq!(
        tag("sigs.k8s.io/cluster-api-provider-aws/role"),
        Some("controlplane")
    );
    assert_eq!(tag("team"), Some("platform"));
    let members = lb_members(&w.fake.elb_client()).await;
    assert_eq!(
        members,
        [i.instance_id().unwrap().to_string()],
        "only control planes join the LB"
    );

    // Exists, then delete, then exists is false; delete again is fine.
    let e = m.exists(&w.cluster, &cp, Some(&status)).await.unwrap();
    assert!(e.exists);
    m.delete(&w.cluster, &cp, Some(&status)).await.unwrap();
    let e = m.exists(&w.cluster, &cp, Some(&status)).await.unwrap();
    assert!(!e.exists);
    assert!(
        matches!(e.state.as_deref(), Some("shutting-down" | "terminated")),
        "{e:?}"
    );
    m.delete(&w.cluster, &cp, Some(&status)).await.unwrap();
    m.delete(&w.cluster, &cp, None).await.unwrap();
    assert!(
        lb_members(&w.fake.elb_client()).await.is_empty(),
        "deregistered"
    );

    // Delete the nodes, then the cluster: nothing owned is left.
    for n in &nodes {
        m.delete(&w.cluster, n, None).await.unwrap();
    }
    let a = ClusterActuator::new(w.clients.clone());
    while !a.delete(&w.cluster).await.unwrap().is_done() {}
    let vpcs = ec2.describe_vpcs().send().await.unwrap();
    assert_eq!(vpcs.vpcs().len(), 1, "only the default VPC");
}

/// Drops the answer of the first RunInstances, as if the process crashed after sending it.
#[derive(Debug, Clone, Default)]
struct LoseFirstRunInstances(Arc<AtomicBool>);

impl Intercept for LoseFirstRunInstances {
    fn name(&self) -> &'static str {
        "lose-first-run-instances"
    }

    fn modify_before_deserialization(
        &self,
        _context: &mut BeforeDeserializationInterceptorContextMut<'_>,
        _rc: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let is_run = cfg
            .load::<Metadata>()
            .is_some_and(|m| m.name() == "RunInstances");
        if is_run && !self.0.swap(true, Ordering::SeqCst) {
            return Err("the answer was lost".into());
        }
        Ok(())
    }
}

#[tokio::test]
async fn a_lost_run_instances_answer_makes_no_twin() {
    let w = world().await;
    let mut crashing = w.clients.clone();
    crashing.ec2 = aws_sdk_ec2::Client::from_conf(
        w.clients
            .ec2
            .config()
            .to_builder()
            .interceptor(LoseFirstRunInstances::default())
            .retry_config(aws_sdk_ec2::config::retry::RetryConfig::disabled())
            .build(),
    );
    let cp = machine("c1-cp-0", "controlplane", "init");
    let m = MachineActuator::new(crashing, bootstrap());
    assert!(
        m.create(&w.cluster, &cp, None).await.is_err(),
        "the first answer is lost"
    );
    let ec2 = w.fake.ec2_client();
    assert_eq!(
        instances_named(&ec2, "c1-cp-0").await.len(),
        1,
        "yet AWS launched it"
    );
    let o = m.create(&w.cluster, &cp, None).await.unwrap();
    let all = instances_named(&ec2, "c1-cp-0").await;
    assert_eq!(all.len(), 1, "no twin");
    assert_eq!(o.status.unwrap().instance_id, all[0].instance_id().unwrap());
    assert_eq!(lb_members(&w.fake.elb_client()).await.len(), 1);
}

/// A launch AWS could not complete (the instance ends `terminated` with a `Server.*` reason)
/// is launched again, with a new ClientToken, on the next create: one running instance.
#[tokio::test]
async fn a_launch_that_aws_fails_is_launched_again() {
    let (w, m) = api_world().await;
    w.fake.fake().with_region("us-east-1", |r| {
        r.transitions.fail_next(
            fakeaws::sim::transitions::Subject::Instance,
            "Server.InsufficientInstanceCapacity",
            "Server.InsufficientInstanceCapacity: Insufficient capacity.",
        )
    });
    let node = machine("c1-node-0", "node", "join");
    let first = m.create(&w.cluster, &node, None).await.unwrap();
    let first_id = first.status.clone().unwrap().instance_id;
    let ec2 = w.fake.ec2_client();
    // AWS ends it; the next create finds none alive and launches another.
    let mut status = first.status;
    for _ in 0..3 {
        let o = m.create(&w.cluster, &node, status.as_ref()).await.unwrap();
        status = o.status;
        if instances_named(&ec2, "c1-node-0").await.len() == 1
            && status.as_ref().is_some_and(|s| s.state == "running")
        {
            break;
        }
    }
    let live = instances_named(&ec2, "c1-node-0").await;
    assert_eq!(live.len(), 1, "one instance alive");
    let live_id = live[0].instance_id().unwrap().to_string();
    assert_ne!(live_id, first_id, "a new instance, not the failed one");
    let failed = ec2
        .describe_instances()
        .instance_ids(&first_id)
        .send()
        .await
        .unwrap();
    let failed = &failed.reservations()[0].instances()[0];
    assert_eq!(
        failed.state_reason().unwrap().code(),
        Some("Server.InsufficientInstanceCapacity")
    );
}

#[tokio::test]
async fn update_converges_mutable_fields_and_refuses_immutable_ones() {
    let (w, m) = api_world().await;
    let ec2 = w.fake.ec2_client();
    let mut node = machine("c1-node-0", "node", "join");
    let st = m
        .create(&w.cluster, &node, None)
        .await
        .unwrap()
        .status
        .unwrap();
    let vpc = ec2
        .describe_instances()
        .instance_ids(&st.instance_id)
        .send()
        .await
        .unwrap()
        .reservations()[0]
        .instances()[0]
        .vpc_id()
        .unwrap()
        .to_string();
    let extra = ec2
        .create_security_group()
        .vpc_id(&vpc)
        .group_name("monitoring")
        .description("scrapers")
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap();
    // Someone else tags the instance; that tag must survive.
    ec2.create_tags()
        .resources(&st.instance_id)
        .tags(
            aws_sdk_ec2::types::Tag::builder()
                .key("backup")
                .value("daily")
                .build(),
        )
        .send()
        .await
        .unwrap();
    node.spec.additional_security_groups.push(extra.clone());
    node.spec.additional_tags.remove("team");
    node.spec
        .additional_tags
        .insert("tier".into(), "web".into());
    w.fake.fake().take_calls();
    m.update(&w.cluster, &node, Some(&st)).await.unwrap();
    let mut calls: Vec<String> = w
        .fake
        .fake()
        .take_calls()
        .into_iter()
        .filter(|c| c.is_mutating())
        .map(|c| c.action.into_owned())
        .collect();
    calls.sort();
    assert_eq!(
        calls,
        [
            "CreateTags",
            "DeleteTags",
            "ModifyNetworkInterfaceAttribute"
        ]
    );
    let i = &instances_named(&ec2, "c1-node-0").await[0];
    assert!(
        i.security_groups()
            .iter()
            .any(|g| g.group_id() == Some(extra.as_str()))
    );
    let keys: Vec<&str> = i.tags().iter().filter_map(|t| t.key()).collect();
    assert!(
        keys.contains(&"tier") && keys.contains(&"backup") && !keys.contains(&"team"),
        "{keys:?}"
    );
    // Converged: a second update changes nothing.
    m.update(&w.cluster, &node, Some(&st)).await.unwrap();
    assert!(w.fake.fake().take_calls().iter().all(|c| !c.is_mutating()));

    let mut bigger = node.clone();
    bigger.spec.instance_type = "m5.xlarge".into();
    bigger.spec.root_volume.as_mut().unwrap().size = 80;
    let err = m.update(&w.cluster, &bigger, Some(&st)).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("spec.instanceType") && text.contains("spec.rootVolume"),
        "{text}"
    );
    assert!(w.fake.fake().take_calls().iter().all(|c| !c.is_mutating()));

    // A stopped instance does not exist for the cluster, and says why.
    ec2.stop_instances()
        .instance_ids(&st.instance_id)
        .send()
        .await
        .unwrap();
    ec2.describe_instances()
        .instance_ids(&st.instance_id)
        .send()
        .await
        .unwrap();
    let e = m.exists(&w.cluster, &node, Some(&st)).await.unwrap();
    assert_eq!((e.exists, e.state.as_deref()), (false, Some("stopped")));
}

#[tokio::test]
async fn ami_lookup_errors_name_the_pattern() {
    let w = world().await;
    let m = MachineActuator::new(w.clients.clone(), bootstrap());
    let mut cp = machine("c1-cp-0", "controlplane", "init");
    cp.spec.kubeadm.kubernetes_version = "v1.99.0".into();
    let err = m.create(&w.cluster, &cp, None).await.unwrap_err();
    assert!(matches!(err, Error::NoImage { .. }), "{err}");
    // The error says what was searched: owner (today's publishing account), pattern,
    // architecture.
    let shown = err.to_string();
    for searched in ["819546954734", "capa-ami-ubuntu-24.04-?1.99.0-*", "x86_64"] {
        assert!(shown.contains(searched), "{shown}");
    }
    // An arm64 type finds the arm64 build, of today's publishing account.
    let mut arm = machine("c1-cp-0", "controlplane", "init");
    arm.spec.instance_type = "t4g.large".into();
    let st = m
        .create(&w.cluster, &arm, None)
        .await
        .unwrap()
        .status
        .unwrap();
    let img = w
        .fake
        .ec2_client()
        .describe_images()
        .image_ids(&st.image_id)
        .send()
        .await
        .unwrap();
    assert_eq!(
        img.images()[0].name(),
        Some("capa-ami-ubuntu-24.04-v1.31.0-1727000001")
    );
    assert_eq!(img.images()[0].owner_id(), Some("819546954734"));
}

#[tokio::test]
async fn machines_wait_for_the_cluster() {
    let fake = fakeaws::spawn().await.unwrap();
    let clients = Clients::for_endpoint(fake.endpoint(), "us-east-1");
    let m = MachineActuator::new(clients, bootstrap());
    let o = m
        .create(
            &cluster(),
            &machine("c1-cp-0", "controlplane", "init"),
            None,
        )
        .await
        .unwrap();
    assert!(!o.is_done());
    assert!(o.waiting[0].contains("cluster c1"), "{:?}", o.waiting);
    assert!(fake.fake().calls().iter().all(|c| !c.is_mutating()));
}

/// `text` rendered by cloud-init's jinja renderer (with EC2-shaped instance data) and then
/// checked by its schema validator.
fn cloud_init_schema(text: &str) {
    // Tests run at once: each rendering has files of its own.
    static RENDERINGS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let base = std::env::temp_dir().join(format!(
        "capa-user-data-{}-{}",
        std::process::id(),
        RENDERINGS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let raw = base.with_extension("txt");
    let data = base.with_extension("json");
    let rendered = base.with_extension("yaml");
    std::fs::write(&raw, text).unwrap();
    std::fs::write(
        &data,
        r#"{"ds": {"meta_data": {"local-hostname": "ip-10-0-1-5.ec2.internal", "local-ipv4": "10.0.1.5"}}, "v1": {"cloud_name": "aws", "platform": "ec2"}}"#,
    )
    .unwrap();
    let run = |args: &[&std::ffi::OsStr]| {
        let out = std::process::Command::new("cloud-init")
            .args(args)
            .output()
            .expect("cloud-init (Debian's package; .ci/run installs it) renders the user data");
        assert!(
            out.status.success(),
            "cloud-init {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let out = run(&[
        "devel".as_ref(),
        "render".as_ref(),
        raw.as_os_str(),
        "--instance-data".as_ref(),
        data.as_os_str(),
    ]);
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("ip-10-0-1-5.ec2.internal") && !out.contains("{{"));
    std::fs::write(&rendered, out).unwrap();
    run(&[
        "schema".as_ref(),
        "--config-file".as_ref(),
        rendered.as_os_str(),
    ]);
    // Kept when a check fails, to look at; gone when all passed.
    for file in [raw, data, rendered] {
        let _ = std::fs::remove_file(file);
    }
}

#[tokio::test]
async fn user_data_is_valid_cloud_config_with_the_kubeadm_configuration() {
    let w = world().await;
    let m = MachineActuator::new(w.clients.clone(), bootstrap());
    let ec2 = w.fake.ec2_client();
    let dns = w
        .fake
        .elb_client()
        .describe_load_balancers()
        .load_balancer_names("c1-apiserver")
        .send()
        .await
        .unwrap()
        .load_balancer_descriptions()[0]
        .dns_name()
        .unwrap()
        .to_string();
    for (name, role, op) in [
        ("c1-cp-0", "controlplane", "init"),
        ("c1-cp-1", "controlplane", "join"),
        ("c1-node-0", "node", "join"),
    ] {
        let mac = machine(name, role, op);
        let st = m
            .create(&w.cluster, &mac, None)
            .await
            .unwrap()
            .status
            .unwrap();
        let attr = ec2
            .describe_instance_attribute()
            .instance_id(&st.instance_id)
            .attribute(aws_sdk_ec2::types::InstanceAttributeName::UserData)
            .send()
            .await
            .unwrap();
        let sent = attr
            .user_data()
            .and_then(|u| u.value())
            .unwrap()
            .to_string();
        let text = user_data::decode(&sent).unwrap();
        assert!(text.starts_with("## template: jinja\n#cloud-config\n"));
        cloud_init_schema(&text);
        let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
        let files = doc["write_files"].as_sequence().unwrap();
        let content = files
            .iter()
            .find(|f| f["path"] == "/run/kubeadm/kubeadm.yaml")
            .and_then(|f| f["content"].as_str())
            .unwrap();
        let kubeadm: Vec<serde_yaml_ng::Value> = serde_yaml_ng::Deserializer::from_str(content)
            .map(|d| serde::Deserialize::deserialize(d).unwrap())
            .collect();
        let kinds: Vec<&str> = kubeadm
            .iter()
            .map(|d| d["kind"].as_str().unwrap())
            .collect();
        assert!(
            kubeadm
                .iter()
                .all(|d| d["apiVersion"] == "kubeadm.k8s.io/v1beta4")
        );
        let runcmd = doc["runcmd"][0][1].as_str().unwrap();
        if op == "init" {
            assert_eq!(kinds, ["InitConfiguration", "ClusterConfiguration"]);
            assert_eq!(
                kubeadm[1]["controlPlaneEndpoint"].as_str().unwrap(),
                format!("{dns}:6443")
            );
            assert_eq!(kubeadm[1]["kubernetesVersion"], "v1.31.0");
            assert_eq!(
                kubeadm[0]["bootstrapTokens"][0]["token"].as_str(),
                Some(bootstrap().token.0.as_str())
            );
            assert_eq!(runcmd, "init");
        } else {
            assert_eq!(kinds, ["JoinConfiguration"]);
            let bt = &kubeadm[0]["discovery"]["bootstrapToken"];
            assert_eq!(
                bt["apiServerEndpoint"].as_str().unwrap(),
                format!("{dns}:6443")
            );
            assert_eq!(runcmd, "join");
            assert_eq!(
                !kubeadm[0]["controlPlane"].is_null(),
                role == "controlplane"
            );
        }
    }
}

#[test]
fn secrets_stay_out_of_debug_output_and_errors() {
    let mut m = machine_with(
        "c1-cp-0",
        "controlplane",
        "init",
        &format!("    bootstrapToken: {TOKEN}\n"),
    );
    let shown = format!("{m:?}");
    assert!(!shown.contains(TOKEN), "{shown}");
    m.spec.kubeadm.bootstrap_token = Some(provider::spec::machine::Secret(
        "NOT-A-TOKEN-BUT-SECRET".into(),
    ));
    let problems = provider::spec::machine::validate(&m).join("\n");
    assert!(problems.contains("bootstrapToken"), "{problems}");
    assert!(!problems.contains("NOT-A-TOKEN-BUT-SECRET"), "{problems}");
}

#[test]
fn oversized_user_data_is_refused() {
    // 17 KiB of incompressible text: too big even gzipped.
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let noise: String = (0..40_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            char::from(b'!' + (state % 90) as u8)
        })
        .collect();
    let err = user_data::encode(&noise).unwrap_err();
    assert!(matches!(err, Error::UserDataTooLarge { .. }), "{err}");
    assert!(user_data::encode("#cloud-config\n{}\n").is_ok());
}

#[tokio::test]
async fn joins_wait_until_a_control_plane_is_in_service() {
    let w = world().await;
    // Instances take 40 s to run, registrations 30 s to pass their health check.
    w.fake.fake().with_region("us-east-1", |r| {
        use fakeaws::sim::transitions::Subject;
        r.transitions
            .set_delay(Subject::Instance, Duration::from_secs(40));
        r.transitions
            .set_delay(Subject::LoadBalancerRegistration, Duration::from_secs(30));
    });
    let m = MachineActuator::new(w.clients.clone(), bootstrap());
    let ec2 = w.fake.ec2_client();
    let node = machine("c1-node-0", "node", "join");
    let cp1 = machine("c1-cp-1", "controlplane", "join");
    // Before init: every join waits, saying why, and launches nothing.
    for j in [&node, &cp1] {
        let o = m.create(&w.cluster, j, None).await.unwrap();
        assert!(!o.is_done());
        assert!(
            o.waiting[0].contains("waits for the API server"),
            "{:?}",
            o.waiting
        );
        assert_eq!(o.requeue_after(), Some(Duration::from_secs(15)));
    }
    assert!(instances_named(&ec2, "c1-node-0").await.is_empty());
    // Init is launched; while it boots and registers, joins still wait.
    let init = machine("c1-cp-0", "controlplane", "init");
    let first = m.create(&w.cluster, &init, None).await.unwrap();
    let st = first.status.clone().unwrap();
    let o = m.create(&w.cluster, &node, None).await.unwrap();
    assert!(o.waiting[0].contains("waits for the API server"));
    w.fake
        .fake()
        .with_region("us-east-1", |r| r.clock.advance(Duration::from_secs(35)));
    m.create(&w.cluster, &init, Some(&st)).await.unwrap();
    let o = m.create(&w.cluster, &node, None).await.unwrap();
    assert!(
        o.waiting[0].contains("waits for the API server"),
        "registered, still booting"
    );
    assert!(instances_named(&ec2, "c1-node-0").await.is_empty());
    w.fake
        .fake()
        .with_region("us-east-1", |r| r.clock.advance(Duration::from_secs(10)));
    // In service: the joins launch.
    for j in [&node, &cp1] {
        let o = m.create(&w.cluster, j, None).await.unwrap();
        assert!(o.status.is_some(), "{:?}", o.waiting);
        assert_eq!(instances_named(&ec2, &j.metadata.name).await.len(), 1);
    }
}

#[test]
fn given_secrets_are_checked_and_used() {
    use provider::spec::machine::Secret;
    let mut bad = machine("c1-cp-1", "controlplane", "join");
    bad.spec.kubeadm.bootstrap_token = Some(Secret("abcdef.0123456789ABCDEF".into()));
    bad.spec.kubeadm.ca_cert_hashes = vec!["md5:abc".into()];
    bad.spec.kubeadm.certificate_key = Some(Secret("12".into()));
    let problems = provider::spec::machine::validate(&bad).join("\n");
    for field in ["bootstrapToken", "caCertHashes", "certificateKey"] {
        assert!(problems.contains(field), "{problems}");
    }
    let extra_pin = format!("sha256:{}", "ab".repeat(32));
    let good = machine_with(
        "c1-cp-1",
        "controlplane",
        "join",
        &format!(
            "    bootstrapToken: {TOKEN}\n    caCertHashes: [\"{extra_pin}\"]\n    certificateKey: {}\n",
            "cd".repeat(32)
        ),
    );
    assert!(provider::spec::machine::validate(&good).is_empty());
    let b = bootstrap();
    let config = user_data::kubeadm_config(&good, "api.example", &b).unwrap();
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&config).unwrap();
    let bt = &doc["discovery"]["bootstrapToken"];
    assert_eq!(bt["token"].as_str(), Some(TOKEN));
    let pins: Vec<&str> = bt["caCertHashes"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    // The cluster CA's pin is always there, the user's beside it.
    assert_eq!(
        pins,
        [b.pki.ca_cert_hash().unwrap().as_str(), extra_pin.as_str()]
    );
    assert_eq!(
        doc["controlPlane"]["certificateKey"].as_str(),
        Some("cd".repeat(32).as_str())
    );
}

#[tokio::test]
async fn user_data_over_ec2s_limit_is_refused_before_any_call() {
    let fake = fakeaws::spawn().await.unwrap();
    let clients = Clients::for_endpoint(fake.endpoint(), "us-east-1");
    let m = MachineActuator::new(clients, bootstrap());
    let mut init = machine("c1-cp-0", "controlplane", "init");
    // A version no compression can shrink below 16 KiB.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let noise: String = (0..40_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            char::from(b'a' + (state % 26) as u8)
        })
        .collect();
    init.spec.kubeadm.kubernetes_version = format!("v{noise}");
    let err = m.create(&cluster(), &init, None).await.unwrap_err();
    assert!(
        matches!(&err, Error::InvalidSpec { problems } if problems[0].contains("user data")),
        "{err}"
    );
    assert!(fake.fake().calls().is_empty(), "no call was made");
}

#[tokio::test]
async fn uncompressed_user_data_is_sent_as_text_that_cloud_init_renders() {
    let w = world().await;
    let m = MachineActuator::new(w.clients.clone(), bootstrap());
    let mut init = machine("c1-cp-0", "controlplane", "init");
    init.spec.uncompressed_user_data = true;
    let (st, _) = create_one(&w, &m, &init).await;
    let attr = w
        .fake
        .ec2_client()
        .describe_instance_attribute()
        .instance_id(&st.instance_id)
        .attribute(aws_sdk_ec2::types::InstanceAttributeName::UserData)
        .send()
        .await
        .unwrap();
    let sent = attr.user_data().and_then(|u| u.value()).unwrap();
    let raw = aws_smithy_types::base64::decode(sent).unwrap();
    // The text itself, not a gzip stream: an agent that cannot gunzip reads it as it is.
    let text = String::from_utf8(raw).unwrap();
    assert!(text.starts_with("## template: jinja\n#cloud-config\n"));
    assert!(text.contains("/run/kubeadm/kubeadm.yaml"));
    assert_eq!(user_data::decode(sent).unwrap(), text);
    cloud_init_schema(&text);
}

#[tokio::test]
async fn uncompressed_user_data_over_ec2s_limit_is_refused_before_any_call() {
    let fake = fakeaws::spawn().await.unwrap();
    let clients = Clients::for_endpoint(fake.endpoint(), "us-east-1");
    let m = MachineActuator::new(clients, bootstrap());
    // 17 KiB that gzip shrinks to almost nothing: sent gzipped it fits, as text it does not.
    let mut init = machine("c1-cp-0", "controlplane", "init");
    init.spec.kubeadm.kubernetes_version = format!("v1.31.0-{}", "a".repeat(17 * 1024));
    assert!(user_data::user_data(&init, "api.example.com", &bootstrap()).is_ok());
    init.spec.uncompressed_user_data = true;
    let err = m.create(&cluster(), &init, None).await.unwrap_err();
    assert!(
        matches!(&err, Error::InvalidSpec { problems }
            if problems[0].contains("user data") && problems[0].contains("uncompressedUserData")),
        "{err}"
    );
    assert!(fake.fake().calls().is_empty(), "no call was made");
}

/// The tags of an EC2 resource, by key.
async fn tags_of(
    ec2: &aws_sdk_ec2::Client,
    id: &str,
) -> std::collections::BTreeMap<String, String> {
    ec2.describe_tags()
        .filters(filter("resource-id", &[id]))
        .send()
        .await
        .unwrap()
        .tags()
        .iter()
        .map(|t| {
            (
                t.key().unwrap_or_default().to_string(),
                t.value().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_clusters_additional_tags_reach_its_machines_and_converge() {
    let with_tags = |tags: &str| {
        provider::spec::parse(
            &format!(
                "apiVersion: infrastructure.capa.rs/v1alpha1\nkind: Cluster\nmetadata: {{name: c1}}\nspec:\n  region: us-east-1\n  network: {{availabilityZoneCount: 2}}\n  additionalTags: {tags}\n"
            ),
            "test",
        )
        .unwrap()
    };
    let w = world_of(with_tags("{cost-centre: '42', team: infra}")).await;
    let m = MachineActuator::new(w.clients.clone(), bootstrap());
    let ec2 = w.fake.ec2_client();
    // The machine's own `team: platform` wins over the cluster's `team: infra`.
    let cp = machine("c1-cp-0", "controlplane", "init");
    let st = m
        .create(&w.cluster, &cp, None)
        .await
        .unwrap()
        .status
        .unwrap();
    let i = instances_named(&ec2, "c1-cp-0").await.remove(0);
    let volumes: Vec<String> = i
        .block_device_mappings()
        .iter()
        .filter_map(|b| b.ebs().and_then(|e| e.volume_id()).map(String::from))
        .collect();
    let enis: Vec<String> = i
        .network_interfaces()
        .iter()
        .filter_map(|n| n.network_interface_id().map(String::from))
        .collect();
    assert!(!volumes.is_empty() && !enis.is_empty());
    let all: Vec<String> = [vec![st.instance_id.clone()], volumes, enis].concat();
    for id in &all {
        let t = tags_of(&ec2, id).await;
        assert_eq!(
            t.get("cost-centre").map(String::as_str),
            Some("42"),
            "{id}: {t:?}"
        );
        assert_eq!(
            t.get("team").map(String::as_str),
            Some("platform"),
            "{id}: {t:?}"
        );
    }
    // The cluster's tags change (its reconcile first): an update converges every one of them.
    let changed = with_tags("{env: prod}");
    let a = ClusterActuator::new(w.clients.clone());
    while !a.reconcile(&changed).await.unwrap().is_done() {}
    m.update(&changed, &cp, Some(&st)).await.unwrap();
    for id in &all {
        let t = tags_of(&ec2, id).await;
        assert_eq!(
            t.get("env").map(String::as_str),
            Some("prod"),
            "{id}: {t:?}"
        );
        assert!(!t.contains_key("cost-centre"), "{id}: {t:?}");
        assert_eq!(
            t.get("team").map(String::as_str),
            Some("platform"),
            "{id}: {t:?}"
        );
    }
    // Converged: a second update changes nothing.
    w.fake.fake().take_calls();
    m.update(&changed, &cp, Some(&st)).await.unwrap();
    assert!(w.fake.fake().take_calls().iter().all(|c| !c.is_mutating()));
}

#[tokio::test]
async fn a_machine_runs_on_the_users_dedicated_host_which_is_never_released() {
    let (w, m) = api_world().await;
    let ec2 = w.fake.ec2_client();
    let allocated = ec2
        .allocate_hosts()
        .instance_type("t3.large")
        .availability_zone("us-east-1b")
        .quantity(1)
        .send()
        .await
        .unwrap();
    let host = allocated.host_ids()[0].clone();

    // A bad placement is refused when the spec is read, every problem listed.
    let problems = refused("  tenancy: shared\n  hostID: h-xyz\n  hostAffinity: sometimes\n");
    assert_eq!(problems.len(), 4, "{problems:?}");

    let node = machine_yaml(
        "c1-node-h",
        "node",
        "join",
        &format!("  hostID: {host}\n  hostAffinity: host\n"),
        "",
    );
    let (st, i) = create_one(&w, &m, &node).await;
    let p = i.placement().unwrap();
    assert_eq!(
        (p.host_id(), p.affinity(), p.tenancy().map(|t| t.as_str())),
        (Some(host.as_str()), Some("host"), Some("host"))
    );
    let on_host = ec2.describe_hosts().host_ids(&host).send().await.unwrap();
    assert_eq!(
        on_host.hosts()[0].instances()[0].instance_id(),
        Some(st.instance_id.as_str())
    );

    // The host and the affinity are immutable.
    let moved = machine_yaml(
        "c1-node-h",
        "node",
        "join",
        &format!("  hostID: {host}\n  hostAffinity: default\n"),
        "",
    );
    let err = m.update(&w.cluster, &moved, Some(&st)).await.unwrap_err();
    assert!(
        matches!(&err, Error::Immutable { field, .. } if field == "spec.hostAffinity"),
        "{err}"
    );

    // Deleted, the machine leaves the user's host allocated.
    m.delete(&w.cluster, &node, Some(&st)).await.unwrap();
    let after = ec2.describe_hosts().host_ids(&host).send().await.unwrap();
    assert_eq!(
        after.hosts()[0].state(),
        Some(&aws_sdk_ec2::types::AllocationState::Available)
    );
}

#[tokio::test]
async fn a_spot_machine_interrupted_by_ec2_is_launched_again() {
    use aws_sdk_ec2::types::{InstanceLifecycleType, SpotInstanceState};
    use fakeaws::ec2::spot_request::{Interruption, interrupt};
    let (w, m) = api_world().await;
    let ec2 = w.fake.ec2_client();

    // A bad price, and Spot on a Dedicated Host, are refused when the spec is read.
    let problems = refused("  tenancy: host\n  spotMarketOptions: {maxPrice: \"-1\"}\n");
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems.iter().any(|p| p.contains("maxPrice")),
        "{problems:?}"
    );

    let spot = |price: &str| {
        machine_yaml(
            "c1-node-s",
            "node",
            "join",
            &format!("  spotMarketOptions: {{maxPrice: \"{price}\"}}\n"),
            "",
        )
    };
    let node = spot("0.05");
    let (st, first) = create_one(&w, &m, &node).await;
    assert_eq!(
        first.instance_lifecycle(),
        Some(&InstanceLifecycleType::Spot)
    );
    let request = first.spot_instance_request_id().unwrap().to_string();
    let described = ec2
        .describe_spot_instance_requests()
        .spot_instance_request_ids(&request)
        .send()
        .await
        .unwrap();
    let r = &described.spot_instance_requests()[0];
    assert_eq!(
        (r.state(), r.spot_price()),
        (Some(&SpotInstanceState::Active), Some("0.05"))
    );

    // Spot or not, and the price, are the launch's.
    for (changed, field) in [
        (spot("0.07"), "spec.spotMarketOptions.maxPrice"),
        (
            machine("c1-node-s", "node", "join"),
            "spec.spotMarketOptions",
        ),
    ] {
        let err = m.update(&w.cluster, &changed, Some(&st)).await.unwrap_err();
        assert!(
            matches!(&err, Error::Immutable { field: f, .. } if f == field),
            "{err}"
        );
    }
    m.update(&w.cluster, &spot("0.050"), Some(&st))
        .await
        .unwrap();

    // EC2 takes the capacity back: after the two-minute notice the machine has no instance,
    // and the next create launches another Spot Instance.
    w.fake
        .fake()
        .with_region("us-east-1", |r| {
            interrupt(
                r,
                std::slice::from_ref(&st.instance_id),
                Interruption::Capacity,
            )
        })
        .unwrap();
    assert!(m.exists(&w.cluster, &node, Some(&st)).await.unwrap().exists);
    w.fake.fake().with_region("us-east-1", |r| {
        r.clock.advance(Duration::from_secs(120));
    });
    let gone = m.exists(&w.cluster, &node, Some(&st)).await.unwrap();
    assert!(!gone.exists, "{gone:?}");
    // Why, as AWS says, with the machine's status or without (found by its tags).
    for status in [Some(&st), None] {
        let gone = m.exists(&w.cluster, &node, status).await.unwrap();
        assert_eq!(gone.state.as_deref(), Some("terminated"));
        assert_eq!(gone.instance_id.as_deref(), Some(st.instance_id.as_str()));
        assert!(
            gone.reason
                .as_deref()
                .is_some_and(|r| r.starts_with("Server.SpotInstanceTermination")),
            "{gone:?}"
        );
    }
    let again = m
        .create(&w.cluster, &node, Some(&st))
        .await
        .unwrap()
        .status
        .unwrap();
    assert_ne!(again.instance_id, st.instance_id);
    let live: Vec<Instance> = instances_named(&ec2, "c1-node-s")
        .await
        .into_iter()
        .filter(|i| i.state().and_then(|s| s.name()).map(|n| n.as_str()) != Some("terminated"))
        .collect();
    let [second] = live.try_into().unwrap();
    assert_eq!(second.instance_id(), Some(again.instance_id.as_str()));
    assert_eq!(
        second.instance_lifecycle(),
        Some(&InstanceLifecycleType::Spot)
    );

    // Deleted: the instance terminated, its one-time request closed with it.
    m.delete(&w.cluster, &node, Some(&again)).await.unwrap();
    let closed = ec2
        .describe_spot_instance_requests()
        .filters(filter("instance-id", &[&again.instance_id]))
        .send()
        .await
        .unwrap();
    let r = &closed.spot_instance_requests()[0];
    assert_eq!(r.state(), Some(&SpotInstanceState::Closed));
    assert_eq!(
        r.status().and_then(|s| s.code()),
        Some("instance-terminated-by-user")
    );
}

#[tokio::test]
async fn instance_metadata_options_are_set_at_launch_and_converge() {
    use aws_sdk_ec2::types::{HttpTokensState, InstanceMetadataTagsState};
    let (w, m) = api_world().await;
    let ec2 = w.fake.ec2_client();

    // Bad values are refused when the spec is read, each named.
    let problems = refused(
        "  instanceMetadataOptions: {httpTokens: maybe, httpPutResponseHopLimit: 65, httpEndpoint: on}\n",
    );
    assert_eq!(problems.len(), 3, "{problems:?}");

    let with = |options: &str| {
        machine_yaml(
            "c1-node-imds",
            "node",
            "join",
            &format!("  instanceMetadataOptions: {options}\n"),
            "",
        )
    };
    // The machine's instance's options, as DescribeInstances shows them now.
    let options_now = || async {
        let [i]: [Instance; 1] = instances_named(&ec2, "c1-node-imds")
            .await
            .try_into()
            .unwrap();
        let o = i.metadata_options().unwrap();
        (
            o.http_tokens().cloned(),
            o.http_put_response_hop_limit(),
            o.http_endpoint().map(|e| e.as_str().to_string()),
            o.instance_metadata_tags().cloned(),
        )
    };
    let modifications = || {
        w.fake
            .fake()
            .calls()
            .iter()
            .filter(|c| c.action == "ModifyInstanceMetadataOptions")
            .count()
    };
    let node = with("{httpTokens: optional, httpPutResponseHopLimit: 3}");
    let st = m
        .create(&w.cluster, &node, None)
        .await
        .unwrap()
        .status
        .unwrap();
    assert_eq!(
        options_now().await,
        (
            Some(HttpTokensState::Optional),
            Some(3),
            Some("enabled".to_string()),
            Some(InstanceMetadataTagsState::Disabled)
        )
    );
    // As asked: nothing to change.
    assert!(
        m.update(&w.cluster, &node, Some(&st))
            .await
            .unwrap()
            .is_done()
    );
    assert_eq!(modifications(), 0);

    // Changed: set (every option the spec leaves out back to its default), pending until
    // they apply; then nothing more to do.
    let changed = with("{instanceMetadataTags: enabled}");
    let first = m.update(&w.cluster, &changed, Some(&st)).await.unwrap();
    assert!(!first.is_done(), "{:?}", first.waiting);
    assert_eq!(
        options_now().await,
        (
            Some(HttpTokensState::Required),
            Some(1),
            Some("enabled".to_string()),
            Some(InstanceMetadataTagsState::Enabled)
        )
    );
    assert!(
        m.update(&w.cluster, &changed, Some(&st))
            .await
            .unwrap()
            .is_done()
    );
    assert_eq!(modifications(), 1);
}

#[tokio::test]
async fn non_root_volumes_are_made_with_the_machine_and_go_with_it() {
    let (w, m) = api_world().await;
    let ec2 = w.fake.ec2_client();

    // Bad volumes are refused when the spec is read, every problem named.
    let problems = refused(
        "  nonRootVolumes:\n  - {deviceName: /dev/sdf, size: 10}\n  - {deviceName: /dev/xvdf, size: 10}\n  - {deviceName: /dev/hda, size: 10, type: gp2, iops: 3000}\n  - {deviceName: /dev/sdg, size: 10, type: io2}\n  - {deviceName: /dev/sdh, size: 10, type: st1, throughput: 500}\n",
    );
    assert_eq!(problems.len(), 6, "{problems:?}");

    let with = |volumes: &str| {
        machine_yaml(
            "c1-node-v",
            "node",
            "join",
            &format!("  nonRootVolumes:\n{volumes}"),
            "",
        )
    };
    let volumes = "  - {deviceName: /dev/sdf, size: 100, type: gp3, iops: 4000, throughput: 250, encrypted: true}\n  - {deviceName: /dev/sdg, size: 20}\n";
    let node = with(volumes);
    let st = m
        .create(&w.cluster, &node, None)
        .await
        .unwrap()
        .status
        .unwrap();
    let attached = || async {
        let mut v = ec2
            .describe_volumes()
            .filters(filter("attachment.instance-id", &[&st.instance_id]))
            .send()
            .await
            .unwrap()
            .volumes()
            .to_vec();
        v.sort_by_key(|v| v.attachments()[0].device().unwrap_or_default().to_string());
        v
    };
    let v = attached().await;
    let shape: Vec<_> = v
        .iter()
        .map(|v| {
            (
                v.attachments()[0].device().unwrap().to_string(),
                v.size(),
                v.volume_type().unwrap().as_str().to_string(),
            )
        })
        .collect();
    assert_eq!(shape.len(), 3, "{shape:?}");
    assert_eq!(shape[1], ("/dev/sdf".into(), Some(100), "gp3".into()));
    assert_eq!(shape[2], ("/dev/sdg".into(), Some(20), "gp3".into()));
    assert_eq!(
        (v[1].iops(), v[1].throughput(), v[1].encrypted()),
        (Some(4000), Some(250), Some(true))
    );
    assert!(
        v[2].tags()
            .iter()
            .any(|t| t.key() == Some("sigs.k8s.io/cluster-api-provider-aws/cluster/c1")),
        "{:?}",
        v[2].tags()
    );

    // Unchanged, nothing to do; a volume resized is an immutable change.
    assert!(
        m.update(&w.cluster, &node, Some(&st))
            .await
            .unwrap()
            .is_done()
    );
    let resized = with(
        "  - {deviceName: /dev/sdf, size: 200, type: gp3, iops: 4000, throughput: 250, encrypted: true}\n  - {deviceName: /dev/sdg, size: 20}\n",
    );
    let err = m.update(&w.cluster, &resized, Some(&st)).await.unwrap_err();
    assert!(
        matches!(&err, Error::Immutable { field, .. } if field == "spec.nonRootVolumes"),
        "{err}"
    );

    // Deleted: the volumes go with the instance.
    let ids: Vec<String> = v
        .iter()
        .map(|v| v.volume_id().unwrap().to_string())
        .collect();
    m.delete(&w.cluster, &node, Some(&st)).await.unwrap();
    let left = ec2
        .describe_volumes()
        .filters(filter(
            "volume-id",
            &ids.iter().map(String::as_str).collect::<Vec<_>>(),
        ))
        .send()
        .await
        .unwrap();
    assert!(left.volumes().is_empty(), "{:?}", left.volumes());
}

#[tokio::test]
async fn a_machine_joins_the_users_placement_group_and_partition() {
    use aws_sdk_ec2::types::PlacementStrategy;
    let (w, m) = api_world().await;
    let ec2 = w.fake.ec2_client();
    ec2.create_placement_group()
        .group_name("etcd-spread")
        .strategy(PlacementStrategy::Partition)
        .partition_count(3)
        .send()
        .await
        .unwrap();

    let problems = refused("  placementGroupPartition: 9\n");
    assert_eq!(problems.len(), 2, "{problems:?}");

    let in_partition = |n: i32| {
        machine_yaml(
            "c1-node-pg",
            "node",
            "join",
            &format!("  placementGroupName: etcd-spread\n  placementGroupPartition: {n}\n"),
            "",
        )
    };
    let node = in_partition(2);
    let (st, i) = create_one(&w, &m, &node).await;
    let p = i.placement().unwrap();
    assert_eq!(
        (p.group_name(), p.partition_number()),
        (Some("etcd-spread"), Some(2))
    );
    assert!(
        m.update(&w.cluster, &node, Some(&st))
            .await
            .unwrap()
            .is_done()
    );
    let err = m
        .update(&w.cluster, &in_partition(3), Some(&st))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Immutable { field, .. } if field == "spec.placementGroupPartition"),
        "{err}"
    );

    // Deleted, the machine leaves the user's group in place.
    m.delete(&w.cluster, &node, Some(&st)).await.unwrap();
    let groups = ec2
        .describe_placement_groups()
        .group_names("etcd-spread")
        .send()
        .await
        .unwrap();
    assert_eq!(groups.placement_groups().len(), 1);
}

#[tokio::test]
async fn a_machine_runs_in_the_users_capacity_reservation_and_leaves_it_in_place() {
    use aws_sdk_ec2::types::{
        CapacityReservationInstancePlatform, CapacityReservationPreference,
        CapacityReservationState, InstanceMatchCriteria,
    };
    let (w, m) = api_world().await;
    let ec2 = w.fake.ec2_client();
    let reservation = ec2
        .create_capacity_reservation()
        .instance_type("t3.large")
        .instance_platform(CapacityReservationInstancePlatform::LinuxUnix)
        .availability_zone("us-east-1b")
        .instance_count(1)
        .instance_match_criteria(InstanceMatchCriteria::Targeted)
        .send()
        .await
        .unwrap()
        .capacity_reservation
        .unwrap()
        .capacity_reservation_id
        .unwrap();
    let held = || async {
        let out = ec2
            .describe_capacity_reservations()
            .capacity_reservation_ids(&reservation)
            .send()
            .await
            .unwrap();
        let r = &out.capacity_reservations()[0];
        (r.state().cloned(), r.available_instance_count())
    };

    // Checked when read: the id's shape, the preference, and what cannot go with a reservation.
    refused_listing(
        "  capacityReservationId: cr-123\n  capacityReservationPreference: Open\n  spotMarketOptions: {}\n  hostID: h-0123456789abcdef0\n",
        &[
            "\"cr-123\" is not a Capacity Reservation id",
            "an instance on a Dedicated Host runs in no Capacity Reservation",
            "with capacityReservationId it may only be CapacityReservationsOnly",
            "Spot Instances run in no Capacity Reservation",
        ],
    );
    let problems = refused("  capacityReservationPreference: Sometimes\n");
    assert_eq!(problems.len(), 1, "{problems:?}");

    let in_reservation = |name: &str, id: &str| {
        machine_yaml(
            name,
            "node",
            "join",
            &format!("  capacityReservationId: {id}\n"),
            "",
        )
    };
    let node = in_reservation("c1-node-cr", &reservation);
    let (st, i) = create_one(&w, &m, &node).await;
    assert_eq!(i.capacity_reservation_id(), Some(reservation.as_str()));
    assert_eq!(
        held().await,
        (Some(CapacityReservationState::Active), Some(0))
    );
    assert!(
        m.update(&w.cluster, &node, Some(&st))
            .await
            .unwrap()
            .is_done()
    );
    let err = m
        .update(
            &w.cluster,
            &in_reservation("c1-node-cr", "cr-0123456789abcdef0"),
            Some(&st),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Immutable { field, .. } if field == "spec.capacityReservationId"),
        "{err}"
    );

    // The reservation is full: a second machine that targets it is refused, and launches
    // nothing.
    let second = in_reservation("c1-node-cr2", &reservation);
    let err = m.create(&w.cluster, &second, None).await.unwrap_err();
    assert!(
        err.to_string().contains("ReservationCapacityExceeded"),
        "{err}"
    );
    assert!(instances_named(&ec2, "c1-node-cr2").await.is_empty());

    // A machine that keeps out of reservations says so at launch.
    let on_demand = machine_yaml(
        "c1-node-od",
        "node",
        "join",
        "  capacityReservationPreference: None\n",
        "",
    );
    let (_, od) = create_one(&w, &m, &on_demand).await;
    assert_eq!(
        od.capacity_reservation_specification()
            .and_then(|c| c.capacity_reservation_preference()),
        Some(&CapacityReservationPreference::None)
    );

    // Deleted, the machine gives its place back; the reservation stays the user's.
    m.delete(&w.cluster, &node, Some(&st)).await.unwrap();
    assert_eq!(
        held().await,
        (Some(CapacityReservationState::Active), Some(1))
    );
}

#[tokio::test]
async fn a_machine_with_a_host_of_its_own_allocates_it_once_and_releases_it_with_the_machine() {
    use aws_sdk_ec2::types::{AllocationState, Host};
    let (w, m) = api_world().await;
    let ec2 = w.fake.ec2_client();
    let hosts = || async {
        let out = ec2.describe_hosts().send().await.unwrap();
        out.hosts().to_vec()
    };
    let tag = |h: &Host, k: &str| {
        h.tags()
            .iter()
            .find(|t| t.key() == Some(k))
            .and_then(|t| t.value())
            .map(String::from)
    };

    // Checked when read: not with the user's host, another tenancy, Spot, or a bad tag.
    refused_listing(
        "  tenancy: dedicated\n  hostID: h-0123456789abcdef0\n  spotMarketOptions: {}\n  dynamicHostAllocation: {tags: {\"aws:owner\": me}}\n",
        &[
            "need tenancy host",
            "not both",
            "Spot Instances do not run on Dedicated Hosts",
            "spec.dynamicHostAllocation.tags: \"aws:owner\" is not a valid tag",
        ],
    );

    let node = machine_yaml(
        "c1-node-dh",
        "node",
        "join",
        "  dynamicHostAllocation: {tags: {purpose: licensed}}\n",
        "",
    );
    let (st, i) = create_one(&w, &m, &node).await;
    let [host] = hosts().await.try_into().unwrap();
    let host_id = host.host_id().unwrap().to_string();
    assert_eq!(host.availability_zone(), Some("us-east-1b"));
    assert_eq!(
        host.host_properties().and_then(|p| p.instance_type()),
        Some("t3.large")
    );
    assert_eq!(tag(&host, "purpose").as_deref(), Some("licensed"));
    assert_eq!(tag(&host, "team").as_deref(), Some("platform"));
    assert_eq!(tag(&host, "Name").as_deref(), Some("c1-node-dh"));
    assert_eq!(
        tag(&host, "sigs.k8s.io/cluster-api-provider-aws/cluster/c1").as_deref(),
        Some("owned")
    );
    let p = i.placement().unwrap();
    assert_eq!(
        (p.host_id(), p.tenancy().map(|t| t.as_str())),
        (Some(host_id.as_str()), Some("host"))
    );

    // Created again, and after its instance is terminated behind its back, the machine keeps
    // its one host.
    m.create(&w.cluster, &node, Some(&st)).await.unwrap();
    ec2.terminate_instances()
        .instance_ids(&st.instance_id)
        .send()
        .await
        .unwrap();
    let again = m
        .create(&w.cluster, &node, Some(&st))
        .await
        .unwrap()
        .status
        .unwrap();
    assert_ne!(again.instance_id, st.instance_id);
    let all = hosts().await;
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(
        described_host_of(&ec2, &again.instance_id).await.as_deref(),
        Some(host_id.as_str())
    );
    assert!(
        m.update(&w.cluster, &node, Some(&again))
            .await
            .unwrap()
            .is_done()
    );

    // Deleted, the machine's instance goes, then its host; a second delete is a no-op.
    m.delete(&w.cluster, &node, Some(&again)).await.unwrap();
    let [released] = hosts().await.try_into().unwrap();
    assert_eq!(released.state(), Some(&AllocationState::Released));
    assert!(instances_named(&ec2, "c1-node-dh").await.is_empty());
    m.delete(&w.cluster, &node, Some(&again)).await.unwrap();
}

/// The Dedicated Host instance `id` runs on.
async fn described_host_of(ec2: &aws_sdk_ec2::Client, id: &str) -> Option<String> {
    let out = ec2
        .describe_instances()
        .instance_ids(id)
        .send()
        .await
        .unwrap();
    out.reservations()
        .iter()
        .flat_map(|r| r.instances())
        .find_map(|i| i.placement().and_then(|p| p.host_id()).map(String::from))
}

/// A machine's volumes encrypted with a KMS key of the user's (`encryptionKey`, by id, ARN or
/// alias), the root volume's IOPS and throughput too: each volume names its key as EC2
/// describes it; the same spec again is nothing to do, another key an immutable change; a key
/// on an unencrypted volume, or a value naming no key, is refused when the spec is read.
#[tokio::test]
async fn volumes_are_encrypted_with_the_users_kms_keys() {
    let (w, m) = api_world().await;
    let ec2 = w.fake.ec2_client();
    let key = "1234abcd-12ab-34cd-56ef-1234567890ab";
    let key_arn = format!("arn:aws:kms:us-east-1:123456789012:key/{key}");

    let problems = refused(
        "  rootVolume: {size: 40, encryptionKey: alias/cluster}\n  nonRootVolumes:\n  - {deviceName: /dev/sdf, size: 10, encrypted: true, encryptionKey: my-key}\n  - {deviceName: /dev/sdg, size: 10, type: gp2, throughput: 200}\n",
    );
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems[0].contains("spec.rootVolume.encryptionKey: needs encrypted"));

    // The helper's machine has a root volume of its own; this one's replaces it.
    let machine = |root_key: &str| {
        let mut mac = machine_yaml(
            "c1-node-k",
            "node",
            "join",
            "  nonRootVolumes:\n  - {deviceName: /dev/sdf, size: 50, encrypted: true, encryptionKey: alias/data}\n  - {deviceName: /dev/sdg, size: 20, encrypted: true}\n",
            "",
        );
        mac.spec.root_volume = Some(provider::spec::machine::RootVolume {
            size: 40,
            r#type: Some("gp3".into()),
            iops: Some(6000),
            throughput: Some(300),
            encrypted: true,
            encryption_key: Some(root_key.to_string()),
        });
        mac
    };
    let node = machine(key);
    let (st, i) = create_one(&w, &m, &node).await;
    let volumes = ec2
        .describe_volumes()
        .filters(filter("attachment.instance-id", &[&st.instance_id]))
        .send()
        .await
        .unwrap();
    let by_device = |d: &str| {
        volumes
            .volumes()
            .iter()
            .find(|v| v.attachments()[0].device() == Some(d))
            .unwrap()
            .clone()
    };
    let root = by_device(i.root_device_name().unwrap());
    assert_eq!(root.kms_key_id(), Some(key_arn.as_str()));
    assert_eq!(
        (root.iops(), root.throughput(), root.encrypted()),
        (Some(6000), Some(300), Some(true))
    );
    let data = by_device("/dev/sdf");
    assert!(
        data.kms_key_id()
            .is_some_and(|k| k.contains(":key/") && k != key_arn),
        "the alias's key: {:?}",
        data.kms_key_id()
    );
    let default = by_device("/dev/sdg");
    assert!(
        default.kms_key_id().is_some_and(|k| k != key_arn),
        "the account's default key: {:?}",
        default.kms_key_id()
    );

    // The same key again, by its ARN this time: nothing to do. Another key: immutable.
    assert!(
        m.update(&w.cluster, &machine(&key_arn), Some(&st))
            .await
            .unwrap()
            .is_done()
    );
    let err = m
        .update(
            &w.cluster,
            &machine("abcd1234-12ab-34cd-56ef-1234567890ab"),
            Some(&st),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Immutable { field, current, wanted, .. }
            if field == "spec.rootVolume" && current.contains(key) && wanted.contains("abcd1234")),
        "{err}"
    );
    m.delete(&w.cluster, &node, Some(&st)).await.unwrap();
}

/// `privateDnsName`: the instance is launched with the hostname type and record asked (the
/// node name kubeadm registers is the hostname it boots with, so both are immutable); values
/// EC2 does not take are refused when the spec is read, and an AAAA record the cluster's
/// IPv4 subnets cannot back before any call.
#[tokio::test]
async fn a_machine_is_launched_with_the_hostname_type_asked_which_is_immutable() {
    let (w, m) = api_world().await;
    let ec2 = w.fake.ec2_client();
    let problems = refused(
        "  privateDnsName: {hostnameType: instance-id, enableResourceNameDnsAAAARecord: true}\n",
    );
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("spec.privateDnsName.hostnameType"),
        "{problems:?}"
    );
    let aaaa = machine_yaml(
        "c1-node-aaaa",
        "node",
        "join",
        "  privateDnsName: {enableResourceNameDnsAAAARecord: true}\n",
        "",
    );
    refused_before_any_call(
        &w,
        &m,
        &aaaa,
        "enableResourceNameDnsAAAARecord: cluster c1 is not dual stack",
    )
    .await;

    let with = |options: &str| {
        machine_yaml(
            "c1-node-dns",
            "node",
            "join",
            &format!("  privateDnsName: {options}\n"),
            "",
        )
    };
    let node = with("{hostnameType: resource-name, enableResourceNameDnsARecord: true}");
    let (st, i) = create_one(&w, &m, &node).await;
    let o = i.private_dns_name_options().unwrap();
    assert_eq!(o.hostname_type().unwrap().as_str(), "resource-name");
    assert_eq!(o.enable_resource_name_dns_a_record(), Some(true));
    assert_eq!(o.enable_resource_name_dns_aaaa_record(), Some(false));
    // The cluster's subnet launches with IP names: the machine's own options won.
    let subnet = ec2
        .describe_subnets()
        .subnet_ids(i.subnet_id().unwrap())
        .send()
        .await
        .unwrap();
    let on_launch = subnet.subnets()[0]
        .private_dns_name_options_on_launch()
        .unwrap();
    assert_eq!(on_launch.hostname_type().unwrap().as_str(), "ip-name");

    assert!(
        m.update(&w.cluster, &node, Some(&st))
            .await
            .unwrap()
            .is_done()
    );
    w.fake.fake().take_calls();
    let changed = with("{hostnameType: ip-name, enableResourceNameDnsARecord: false}");
    let err = m.update(&w.cluster, &changed, Some(&st)).await.unwrap_err();
    let Error::Many(all) = &err else {
        panic!("{err}")
    };
    let fields: Vec<&str> = all
        .iter()
        .filter_map(|e| match e {
            Error::Immutable { field, .. } => Some(field.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        fields,
        [
            "spec.privateDnsName.hostnameType",
            "spec.privateDnsName.enableResourceNameDnsARecord"
        ]
    );
    nothing_changed(&w);
    let [now]: [Instance; 1] = instances_named(&ec2, "c1-node-dns")
        .await
        .try_into()
        .unwrap();
    assert_eq!(
        now.private_dns_name_options()
            .unwrap()
            .hostname_type()
            .unwrap()
            .as_str(),
        "resource-name"
    );
}

/// An x86 image of the account's that boots UEFI, as an image pipeline registers one.
async fn uefi_image(ec2: &aws_sdk_ec2::Client, name: &str) -> String {
    let volume = ec2
        .create_volume()
        .availability_zone("us-east-1a")
        .size(8)
        .send()
        .await
        .unwrap()
        .volume_id
        .unwrap();
    let snapshot = ec2
        .create_snapshot()
        .volume_id(volume)
        .send()
        .await
        .unwrap()
        .snapshot_id
        .unwrap();
    aws_sdk_ec2::client::Waiters::wait_until_snapshot_completed(ec2)
        .snapshot_ids(&snapshot)
        .wait(Duration::from_secs(5))
        .await
        .unwrap();
    ec2.register_image()
        .name(name)
        .architecture(aws_sdk_ec2::types::ArchitectureValues::X8664)
        .boot_mode(aws_sdk_ec2::types::BootModeValues::Uefi)
        .root_device_name("/dev/sda1")
        .block_device_mappings(
            aws_sdk_ec2::types::BlockDeviceMapping::builder()
                .device_name("/dev/sda1")
                .ebs(
                    aws_sdk_ec2::types::EbsBlockDevice::builder()
                        .snapshot_id(snapshot)
                        .build(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap()
        .image_id
        .unwrap()
}

/// A node machine `name` of `instance_type` from `ami` (YAML), its spec also holding `extra`
/// (YAML lines, indented 2).
fn node_of(name: &str, ami: &str, instance_type: &str, extra: &str) -> Machine {
    let yaml = format!(
        "apiVersion: infrastructure.capa.rs/v1alpha1\nkind: Machine\nmetadata: {{name: {name}}}\nspec:\n  clusterName: c1\n  role: node\n  ami: {ami}\n  instanceType: {instance_type}\n  subnet: {{availabilityZone: us-east-1b}}\n{extra}  kubeadm:\n    operation: join\n    kubernetesVersion: v1.31.0\n"
    );
    provider::spec::parse_documents(&yaml, "test")
        .unwrap()
        .machines
        .remove(0)
}

/// A node machine of `instance_type` from `ami` (YAML) with `cpu_options` (YAML).
fn confidential(name: &str, ami: &str, instance_type: &str, cpu_options: &str) -> Machine {
    node_of(
        name,
        ami,
        instance_type,
        &format!("  cpuOptions: {cpu_options}\n"),
    )
}

/// `cpuOptions.confidentialCompute` (CAPA's): AMD SEV-SNP at launch, on a type with the
/// feature from an image booting UEFI, immutable after; a type or an image without it
/// refused before anything is made, naming the field; a bad value refused when read.
#[tokio::test]
async fn a_confidential_machine_runs_with_amd_sev_snp_which_is_immutable() {
    let problems = refused("  cpuOptions: {confidentialCompute: SEV}\n");
    assert!(
        problems
            .iter()
            .any(|p| p.contains("spec.cpuOptions.confidentialCompute")),
        "{problems:?}"
    );
    let (w, m) = api_world().await;
    let ec2 = w.fake.ec2_client();
    let ami = uefi_image(&ec2, "uefi-node").await;
    let sev = "{confidentialCompute: AMDEncryptedVirtualizationNestedPaging}";
    let node = confidential("c1-node-sev", &format!("{{id: {ami}}}"), "c6a.large", sev);
    let (st, i) = create_one(&w, &m, &node).await;
    assert_eq!(
        i.cpu_options().and_then(|c| c.amd_sev_snp()),
        Some(&aws_sdk_ec2::types::AmdSevSnpSpecification::Enabled)
    );
    assert_eq!(
        i.current_instance_boot_mode(),
        Some(&aws_sdk_ec2::types::InstanceBootModeValues::Uefi)
    );
    assert!(
        m.update(&w.cluster, &node, Some(&st))
            .await
            .unwrap()
            .is_done()
    );

    // Switched off in the spec: refused, nothing changes.
    w.fake.fake().take_calls();
    let off = confidential(
        "c1-node-sev",
        &format!("{{id: {ami}}}"),
        "c6a.large",
        "{confidentialCompute: Disabled}",
    );
    let err = m.update(&w.cluster, &off, Some(&st)).await.unwrap_err();
    assert!(
        matches!(&err, Error::Immutable { field, .. }
            if field == "spec.cpuOptions.confidentialCompute"),
        "{err:?}"
    );
    nothing_changed(&w);

    // A type without the feature, and an image that does not boot UEFI: refused before any
    // launch, each naming what to change.
    let cases = [
        (
            confidential("c1-node-m5", &format!("{{id: {ami}}}"), "m5.large", sev),
            "spec.instanceType: m5.large does not support AMD SEV-SNP",
        ),
        (
            confidential(
                "c1-node-bios",
                "{lookup: {baseOS: ubuntu-24.04}}",
                "c6a.large",
                sev,
            ),
            "needs an image of boot mode uefi or uefi-preferred",
        ),
    ];
    for (machine, needle) in cases {
        w.fake.fake().take_calls();
        let err = m.create(&w.cluster, &machine, None).await.unwrap_err();
        assert!(err.to_string().contains(needle), "{err}");
        nothing_changed(&w);
        assert!(
            instances_named(&ec2, &machine.metadata.name)
                .await
                .is_empty()
        );
    }
}

/// `networkInterfaceType` (CAPA's): an Elastic Fabric Adapter as the instance's primary
/// interface, on a type that takes one, immutable after; a type without one refused before
/// anything is made, naming the field; a bad value, or one beside the user's own interfaces,
/// refused when read.
#[tokio::test]
async fn an_efa_machine_runs_with_its_adapter_which_is_immutable() {
    for (extra, needle) in [
        (
            "  networkInterfaceType: fast\n",
            "spec.networkInterfaceType: \"fast\" is not interface or efa",
        ),
        (
            "  networkInterfaceType: efa\n  networkInterfaces: [eni-0123456789abcdef0]\n",
            "spec.networkInterfaceType: given, but networkInterfaces",
        ),
    ] {
        let problems = refused(extra);
        assert!(problems.iter().any(|p| p.contains(needle)), "{problems:?}");
    }
    let (w, m) = api_world().await;
    let ec2 = w.fake.ec2_client();
    let lookup = "{lookup: {baseOS: ubuntu-24.04}}";
    let efa = node_of(
        "c1-node-efa",
        lookup,
        "c6i.32xlarge",
        "  networkInterfaceType: efa\n",
    );
    let (st, i) = create_one(&w, &m, &efa).await;
    let primary = &i.network_interfaces()[0];
    assert_eq!(primary.interface_type(), Some("efa"));
    // EC2 holds it as an EFA, in the machine's subnet.
    let held = ec2
        .describe_network_interfaces()
        .network_interface_ids(primary.network_interface_id().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(
        held.network_interfaces()[0]
            .interface_type()
            .map(|t| t.as_str()),
        Some("efa")
    );
    assert_eq!(held.network_interfaces()[0].subnet_id(), i.subnet_id());
    assert!(
        m.update(&w.cluster, &efa, Some(&st))
            .await
            .unwrap()
            .is_done()
    );

    // Another type of interface in the spec: refused, nothing changes.
    w.fake.fake().take_calls();
    let plain = node_of(
        "c1-node-efa",
        lookup,
        "c6i.32xlarge",
        "  networkInterfaceType: interface\n",
    );
    let err = m.update(&w.cluster, &plain, Some(&st)).await.unwrap_err();
    assert!(
        matches!(&err, Error::Immutable { field, .. } if field == "spec.networkInterfaceType"),
        "{err:?}"
    );
    nothing_changed(&w);

    // A type without an EFA: refused before any launch, naming the field.
    w.fake.fake().take_calls();
    let small = node_of(
        "c1-node-small",
        lookup,
        "t3.large",
        "  networkInterfaceType: efa\n",
    );
    let err = m.create(&w.cluster, &small, None).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("spec.instanceType: t3.large takes no Elastic Fabric Adapter"),
        "{err}"
    );
    nothing_changed(&w);
    assert!(instances_named(&ec2, "c1-node-small").await.is_empty());
}

/// The lookup's `format` (CAPA's `imageLookupFormat`): the image of the user's naming found
/// by it; a format with another action, or braces left open, refused when read.
#[tokio::test]
async fn an_image_lookup_takes_the_name_format_given() {
    for (format, needle) in [
        (
            "team-{{.Distro}}-*",
            "{{.Distro}} is not {{.BaseOS}} or {{.K8sVersion}}",
        ),
        ("team-{{.BaseOS}-*", "opens {{ without closing it"),
    ] {
        let yaml = format!(
            "apiVersion: infrastructure.capa.rs/v1alpha1\nkind: Machine\nmetadata: {{name: c1-node-bad}}\nspec:\n  clusterName: c1\n  role: node\n  ami: {{lookup: {{baseOS: ubuntu-24.04, format: \"{format}\"}}}}\n  instanceType: t3.large\n  kubeadm:\n    operation: join\n    kubernetesVersion: v1.31.0\n"
        );
        match provider::spec::parse_documents(&yaml, "test") {
            Err(Error::InvalidSpec { problems }) => assert!(
                problems
                    .iter()
                    .any(|p| p.contains("spec.ami.lookup.format") && p.contains(needle)),
                "{problems:?}"
            ),
            other => panic!("{other:?}"),
        }
    }

    let (w, m) = api_world().await;
    let ec2 = w.fake.ec2_client();
    let ours = uefi_image(&ec2, "team-ubuntu-24.04-k8s-1.31.0-20241001").await;
    // Another base OS and another version: the pattern leaves them out.
    uefi_image(&ec2, "team-ubuntu-22.04-k8s-1.31.0-20241001").await;
    uefi_image(&ec2, "team-ubuntu-24.04-k8s-1.30.2-20241001").await;
    let owner = ec2
        .describe_images()
        .image_ids(&ours)
        .send()
        .await
        .unwrap()
        .images()[0]
        .owner_id()
        .unwrap()
        .to_string();
    let node = node_of(
        "c1-node-team",
        &format!(
            "{{lookup: {{baseOS: ubuntu-24.04, owner: \"{owner}\", format: \"team-{{{{ .BaseOS }}}}-k8s-{{{{.K8sVersion}}}}-*\"}}}}"
        ),
        "t3.large",
        "",
    );
    let (st, i) = create_one(&w, &m, &node).await;
    assert_eq!(i.image_id(), Some(ours.as_str()));
    assert_eq!(st.image_id, ours);
}

/// `securityGroupOverrides` (CAPA's): a group of the user's in place of the cluster's of a
/// role, used, never modified, converged both ways by `update`; a role the machine does not
/// carry, or a group that is not in the cluster's VPC, refused before the launch.
#[tokio::test]
async fn a_machine_carries_the_users_group_in_place_of_the_clusters() {
    refused_listing(
        "  securityGroupOverrides: {bastion: sg-0123456789abcdef0, node: sg-1}\n",
        &[
            "spec.securityGroupOverrides.bastion: a node machine carries no bastion group",
            "spec.securityGroupOverrides.node: \"sg-1\" is not a sg- id",
        ],
    );
    let (w, m) = api_world().await;
    let ec2 = w.fake.ec2_client();
    let vpcs = ec2
        .describe_vpcs()
        .filters(filter(
            "tag:sigs.k8s.io/cluster-api-provider-aws/cluster/c1",
            &["owned"],
        ))
        .send()
        .await
        .unwrap();
    let vpc_id = vpcs.vpcs()[0].vpc_id().unwrap().to_string();
    let mine = ec2
        .create_security_group()
        .group_name("platform-nodes")
        .description("the platform team's node group")
        .vpc_id(&vpc_id)
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap();
    let describe_mine = || {
        let ec2 = ec2.clone();
        let mine = mine.clone();
        async move {
            let g = ec2
                .describe_security_groups()
                .group_ids(mine)
                .send()
                .await
                .unwrap();
            format!("{:?}", g.security_groups()[0])
        }
    };
    let before = describe_mine().await;
    // The role a group of the cluster's plays, by its tag.
    let role_of = |id: String| {
        let ec2 = ec2.clone();
        async move {
            let g = ec2
                .describe_security_groups()
                .group_ids(id)
                .send()
                .await
                .unwrap();
            g.security_groups()[0]
                .tags()
                .iter()
                .find(|t| t.key() == Some("sigs.k8s.io/cluster-api-provider-aws/role"))
                .and_then(|t| t.value())
                .map(String::from)
        }
    };
    let groups_of = |name: &'static str| {
        let ec2 = ec2.clone();
        async move {
            let [i]: [Instance; 1] = instances_named(&ec2, name).await.try_into().unwrap();
            let mut ids: Vec<String> = i
                .security_groups()
                .iter()
                .map(|g| g.group_id().unwrap().to_string())
                .collect();
            ids.sort();
            ids
        }
    };
    let with = |overrides: &str| {
        node_of(
            "c1-node-own",
            "{lookup: {baseOS: ubuntu-24.04}}",
            "t3.large",
            overrides,
        )
    };
    let node = with(&format!("  securityGroupOverrides: {{node: {mine}}}\n"));
    let (st, _) = create_one(&w, &m, &node).await;
    let groups = groups_of("c1-node-own").await;
    assert!(groups.contains(&mine), "{groups:?}");
    let mut roles = Vec::new();
    for g in groups.iter().filter(|g| **g != mine) {
        roles.push(role_of(g.clone()).await);
    }
    assert_eq!(
        roles,
        [Some("lb".to_string())],
        "the cluster's node group left out"
    );

    // Without the override, the cluster's node group again; the user's group untouched.
    let plain = with("");
    assert!(
        m.update(&w.cluster, &plain, Some(&st))
            .await
            .unwrap()
            .is_done()
    );
    let groups = groups_of("c1-node-own").await;
    assert!(!groups.contains(&mine), "{groups:?}");
    let mut roles = Vec::new();
    for g in &groups {
        roles.push(role_of(g.clone()).await.unwrap());
    }
    roles.sort();
    assert_eq!(roles, ["lb", "node"]);
    assert!(
        m.update(&w.cluster, &node, Some(&st))
            .await
            .unwrap()
            .is_done()
    );
    assert!(groups_of("c1-node-own").await.contains(&mine));
    assert_eq!(
        describe_mine().await,
        before,
        "the user's group is never modified"
    );

    // A group that does not exist, or lives in another VPC: refused, nothing launched.
    let elsewhere_vpc = ec2
        .create_vpc()
        .cidr_block("172.16.0.0/16")
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap()
        .vpc_id
        .unwrap();
    let elsewhere = ec2
        .create_security_group()
        .group_name("elsewhere")
        .description("another VPC's group")
        .vpc_id(&elsewhere_vpc)
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap();
    for (group, needle) in [
        (
            "sg-0123456789abcdef0".to_string(),
            "does not exist".to_string(),
        ),
        (
            elsewhere,
            format!("is in {elsewhere_vpc}, not in the cluster's VPC"),
        ),
    ] {
        let bad = node_of(
            "c1-node-bad",
            "{lookup: {baseOS: ubuntu-24.04}}",
            "t3.large",
            &format!("  securityGroupOverrides: {{lb: {group}}}\n"),
        );
        w.fake.fake().take_calls();
        let err = m.create(&w.cluster, &bad, None).await.unwrap_err();
        let shown = err.to_string();
        assert!(
            shown.contains(&needle) && shown.contains("spec.securityGroupOverrides.lb"),
            "{shown}"
        );
        nothing_changed(&w);
        assert!(instances_named(&ec2, "c1-node-bad").await.is_empty());
    }
}

/// The cluster's `imageLookupFormat`, `imageLookupOrg` and `imageLookupBaseOS` (CAPA's): the
/// defaults of its machines' lookups, each member a machine names winning; a format with
/// another action refused with the cluster.
#[tokio::test]
async fn machines_take_the_clusters_image_lookup_defaults() {
    let mut w = world().await;
    let ec2 = w.fake.ec2_client();
    let ubuntu = uefi_image(&ec2, "team-ubuntu-24.04-k8s-1.31.0-1").await;
    let debian = uefi_image(&ec2, "team-debian-12-k8s-1.31.0-1").await;
    let owner = ec2
        .describe_images()
        .image_ids(&ubuntu)
        .send()
        .await
        .unwrap()
        .images()[0]
        .owner_id()
        .unwrap()
        .to_string();
    w.cluster.spec.image_lookup_format = Some("team-{{.BaseOS}}-k8s-{{.K8sVersion}}-*".into());
    w.cluster.spec.image_lookup_org = Some(owner);
    w.cluster.spec.image_lookup_base_os = Some("debian-12".into());
    let m = MachineActuator::new(w.clients.clone(), bootstrap());
    // The init machine names its base OS: the cluster's format and owner, its own OS.
    api_up(&w, &m).await;
    let [init]: [Instance; 1] = instances_named(&ec2, "c1-cp-0").await.try_into().unwrap();
    assert_eq!(init.image_id(), Some(ubuntu.as_str()));
    // A node naming nothing: the cluster's all three.
    let node = node_of("c1-node-deb", "{lookup: {}}", "t3.large", "");
    let (_, i) = create_one(&w, &m, &node).await;
    assert_eq!(i.image_id(), Some(debian.as_str()));
    // A node naming all three: its own.
    let own = node_of(
        "c1-node-capa",
        "{lookup: {baseOS: ubuntu-24.04, owner: \"819546954734\", format: \"capa-ami-{{.BaseOS}}-?{{.K8sVersion}}-*\"}}",
        "t3.large",
        "",
    );
    let (_, i) = create_one(&w, &m, &own).await;
    let d = ec2
        .describe_images()
        .image_ids(i.image_id().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(
        d.images()[0].name(),
        Some("capa-ami-ubuntu-24.04-v1.31.0-1727000000")
    );

    let mut bad = w.cluster.clone();
    bad.spec.image_lookup_format = Some("team-{{.OS}}-*".into());
    let err = ClusterActuator::new(w.clients.clone())
        .reconcile(&bad)
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("spec.imageLookupFormat: {{.OS}} is not {{.BaseOS}} or {{.K8sVersion}}"),
        "{err}"
    );
}

/// Network interface `id`, as AWS describes it.
async fn interface_of(ec2: &aws_sdk_ec2::Client, id: &str) -> aws_sdk_ec2::types::NetworkInterface {
    let d = ec2
        .describe_network_interfaces()
        .network_interface_ids(id)
        .send()
        .await
        .unwrap();
    d.network_interfaces()[0].clone()
}

/// A node machine on network interfaces of the user's (`networkInterfaces`), with the
/// user's groups for its roles (`securityGroupOverrides`) and `extra` (YAML lines, indented
/// 2).
fn on_interfaces(name: &str, enis: &[&str], node: &str, lb: &str, extra: &str) -> Machine {
    let yaml = format!(
        "apiVersion: infrastructure.capa.rs/v1alpha1\nkind: Machine\nmetadata: {{name: {name}}}\nspec:\n  clusterName: c1\n  role: node\n  ami: {{lookup: {{baseOS: ubuntu-24.04}}}}\n  instanceType: t3.large\n  networkInterfaces: [{}]\n  securityGroupOverrides: {{node: {node}, lb: {lb}}}\n{extra}  kubeadm:\n    operation: join\n    kubernetesVersion: v1.31.0\n",
        enis.join(", ")
    );
    provider::spec::parse_documents(&yaml, "test")
        .unwrap()
        .machines
        .remove(0)
}

/// `networkInterfaces` (CAPA's): the instance launched on the user's interfaces, in order,
/// in the first one's subnet; each checked first (it exists, is free, carries the machine's
/// groups), a refusal naming the field and changing nothing; the interfaces never tagged or
/// modified, and still there, free, once the machine is deleted; the list immutable.
#[tokio::test]
async fn a_machine_runs_on_the_users_network_interfaces_which_outlive_it_unchanged() {
    refused_listing(
        "  subnet: {availabilityZone: us-east-1b}\n  publicIP: true\n  networkInterfaces: [eni-1, eni-0123456789abcdef0, eni-0123456789abcdef0]\n",
        &[
            "spec.networkInterfaces: 3 interfaces, at most 2",
            "spec.networkInterfaces[0]: \"eni-1\" is not a eni- id",
            "spec.networkInterfaces[2]: eni-0123456789abcdef0 is named twice",
            "spec.subnet: a machine on spec.networkInterfaces is in its first interface's subnet",
            "spec.publicIP: AWS maps a public address at launch only to an interface it makes",
            "name the user's group in spec.securityGroupOverrides for node, lb",
        ],
    );

    let (w, m) = api_world().await;
    let ec2 = w.fake.ec2_client();
    let owned = |name: &str| filter(name, &["owned"]);
    let vpc_key = "tag:sigs.k8s.io/cluster-api-provider-aws/cluster/c1";
    let vpcs = ec2
        .describe_vpcs()
        .filters(owned(vpc_key))
        .send()
        .await
        .unwrap();
    let vpc_id = vpcs.vpcs()[0].vpc_id().unwrap().to_string();
    let subnets = ec2
        .describe_subnets()
        .filters(owned(vpc_key))
        .filters(filter("availability-zone", &["us-east-1b"]))
        .filters(filter("map-public-ip-on-launch", &["false"]))
        .send()
        .await
        .unwrap();
    let subnet_id = subnets.subnets()[0].subnet_id().unwrap().to_string();
    let group = |name: &'static str| {
        let (ec2, vpc_id) = (ec2.clone(), vpc_id.clone());
        async move {
            ec2.create_security_group()
                .group_name(name)
                .description("the platform team's")
                .vpc_id(vpc_id)
                .send()
                .await
                .unwrap()
                .group_id
                .unwrap()
        }
    };
    let (node_group, lb_group, other_group) = (
        group("platform-nodes").await,
        group("platform-lb").await,
        group("platform-other").await,
    );
    let interface = |groups: Vec<String>| {
        let (ec2, subnet_id) = (ec2.clone(), subnet_id.clone());
        async move {
            ec2.create_network_interface()
                .subnet_id(subnet_id)
                .set_groups(Some(groups))
                .description("the platform team's")
                .tag_specifications(
                    aws_sdk_ec2::types::TagSpecification::builder()
                        .resource_type(aws_sdk_ec2::types::ResourceType::NetworkInterface)
                        .tags(
                            aws_sdk_ec2::types::Tag::builder()
                                .key("team")
                                .value("platform")
                                .build(),
                        )
                        .build(),
                )
                .send()
                .await
                .unwrap()
                .network_interface
                .unwrap()
                .network_interface_id
                .unwrap()
        }
    };
    let primary = interface(vec![node_group.clone(), lb_group.clone()]).await;
    // The second lacks the lb group at first.
    let second = interface(vec![node_group.clone()]).await;
    // What the user made, as AWS shows it (but for the attachment, which a launch makes).
    let held = |id: String| {
        let ec2 = ec2.clone();
        async move {
            let n = interface_of(&ec2, &id).await;
            let mut groups: Vec<_> = n.groups().iter().map(|g| g.group_id().unwrap()).collect();
            groups.sort_unstable();
            format!(
                "{:?} {groups:?} {:?} {:?} {:?}",
                n.tag_set(),
                n.description(),
                n.private_ip_address(),
                n.subnet_id()
            )
        }
    };
    let status_of_eni = |id: String| {
        let ec2 = ec2.clone();
        async move {
            let n = interface_of(&ec2, &id).await;
            n.status().unwrap().as_str().to_string()
        }
    };

    // One the user's own instance holds.
    let taken = interface(vec![node_group.clone(), lb_group.clone()]).await;
    let [cp0]: [Instance; 1] = instances_named(&ec2, "c1-cp-0").await.try_into().unwrap();
    let users = ec2
        .run_instances()
        .image_id(cp0.image_id().unwrap())
        .instance_type(aws_sdk_ec2::types::InstanceType::T3Large)
        .min_count(1)
        .max_count(1)
        .network_interfaces(
            aws_sdk_ec2::types::InstanceNetworkInterfaceSpecification::builder()
                .device_index(0)
                .network_interface_id(&taken)
                .build(),
        )
        .send()
        .await
        .unwrap();
    let users = users.instances()[0].instance_id().unwrap().to_string();

    // Refused before anything is made, naming the field: an interface lacking a group of
    // the machine's, one that does not exist, and one held by another instance.
    for (enis, needle) in [
        (
            vec![taken.as_str()],
            format!(
                "network interface {taken} (spec.networkInterfaces[0] of machine c1-node-eni): \
                 is attached to {users}"
            ),
        ),
        (
            vec![primary.as_str(), second.as_str()],
            format!(
                "network interface {second} (spec.networkInterfaces[1] of machine c1-node-eni): \
                 lacks the machine's security groups {lb_group}"
            ),
        ),
        (
            vec!["eni-0123456789abcdef0"],
            "network interface eni-0123456789abcdef0 (spec.networkInterfaces[0] of machine \
             c1-node-eni): does not exist"
                .to_string(),
        ),
    ] {
        let machine = on_interfaces("c1-node-eni", &enis, &node_group, &lb_group, "");
        w.fake.fake().take_calls();
        let shown = m
            .create(&w.cluster, &machine, None)
            .await
            .unwrap_err()
            .to_string();
        assert!(shown.contains(&needle), "{shown}");
        nothing_changed(&w);
        assert!(instances_named(&ec2, "c1-node-eni").await.is_empty());
    }

    // The user adds the group; the machine is launched on both interfaces, in order.
    ec2.modify_network_interface_attribute()
        .network_interface_id(&second)
        .groups(&node_group)
        .groups(&lb_group)
        .send()
        .await
        .unwrap();
    let before = (held(primary.clone()).await, held(second.clone()).await);
    let machine = on_interfaces(
        "c1-node-eni",
        &[&primary, &second],
        &node_group,
        &lb_group,
        "",
    );
    let (st, i) = create_one(&w, &m, &machine).await;
    let mut attached: Vec<(i32, String)> = i
        .network_interfaces()
        .iter()
        .map(|n| {
            (
                n.attachment().unwrap().device_index().unwrap(),
                n.network_interface_id().unwrap().to_string(),
            )
        })
        .collect();
    attached.sort_unstable();
    assert_eq!(attached, [(0, primary.clone()), (1, second.clone())]);
    assert_eq!(i.subnet_id(), Some(subnet_id.as_str()));
    assert_eq!(status_of_eni(primary.clone()).await, "in-use");

    // Converged: nothing to do. A group the interfaces lack, or other interfaces: refused,
    // nothing changed.
    w.fake.fake().take_calls();
    assert!(
        m.update(&w.cluster, &machine, Some(&st))
            .await
            .unwrap()
            .is_done()
    );
    nothing_changed(&w);
    let more = on_interfaces(
        "c1-node-eni",
        &[&primary, &second],
        &node_group,
        &lb_group,
        &format!("  additionalSecurityGroups: [{other_group}]\n"),
    );
    let shown = m
        .update(&w.cluster, &more, Some(&st))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        shown.contains(&format!(
            "spec.networkInterfaces of machine c1-node-eni): lacks the machine's security \
             groups {other_group}"
        )),
        "{shown}"
    );
    let swapped = on_interfaces(
        "c1-node-eni",
        &[&second, &primary],
        &node_group,
        &lb_group,
        "",
    );
    let err = m.update(&w.cluster, &swapped, Some(&st)).await.unwrap_err();
    assert!(
        matches!(&err, Error::Immutable { field, .. } if field == "spec.networkInterfaces"),
        "{err}"
    );
    nothing_changed(&w);
    assert_eq!(
        (held(primary.clone()).await, held(second.clone()).await),
        before,
        "the user's interfaces are never tagged or modified"
    );

    // Deleted: the interfaces stay, free again, as the user made them.
    m.delete(&w.cluster, &machine, Some(&st)).await.unwrap();
    w.fake
        .fake()
        .with_region("us-east-1", |r| r.clock.advance(Duration::from_secs(600)));
    for eni in [&primary, &second] {
        assert_eq!(status_of_eni(eni.clone()).await, "available");
    }
    assert_eq!(
        (held(primary.clone()).await, held(second.clone()).await),
        before
    );
}

/// `elasticIpPool` (CAPA's): a public machine launched without a public address, then given
/// an Elastic IP of the user's own pool once it runs, allocated once and kept, released when
/// the machine is deleted; the spec checked when read.
#[tokio::test]
async fn a_machine_takes_its_public_address_from_the_users_pool_and_gives_it_back() {
    let problems = refused("  elasticIpPool: {publicIpv4Pool: ipv4pool-ec2-0123456789abcdef0}\n");
    assert!(
        problems.iter().any(|p| p.contains(
            "spec.elasticIpPool: gives the machine its public address, and spec.publicIP is not true"
        )),
        "{problems:?}"
    );
    refused_listing(
        "  publicIP: true\n  elasticIpPool: {publicIpv4Pool: pool-1, publicIpv4PoolFallbackOrder: Elsewhere}\n",
        &[
            "spec.elasticIpPool.publicIpv4Pool: \"pool-1\" is not a ipv4pool-ec2- id",
            "spec.elasticIpPool.publicIpv4PoolFallbackOrder: \"Elsewhere\" is not AmazonPool or None",
        ],
    );

    let fake = fakeaws::spawn_with(fakeaws::Config {
        clock: fakeaws::Clock::virtual_at(
            std::time::UNIX_EPOCH + Duration::from_secs(1_795_961_900),
        ),
        byoip: vec!["us-east-1=198.18.0.0/24".parse().unwrap()],
        ..Default::default()
    })
    .await
    .unwrap();
    let clients = Clients::for_endpoint(fake.endpoint(), "us-east-1");
    let c = ClusterActuator::new(clients.clone());
    let cluster = cluster();
    while !c.reconcile(&cluster).await.unwrap().is_done() {}
    let w = World {
        fake,
        clients,
        cluster,
    };
    let m = MachineActuator::new(w.clients.clone(), bootstrap());
    let ec2 = w.fake.ec2_client();
    let pool = ec2
        .describe_public_ipv4_pools()
        .send()
        .await
        .unwrap()
        .public_ipv4_pools()[0]
        .pool_id()
        .unwrap()
        .to_string();
    let addresses = || {
        let ec2 = ec2.clone();
        async move {
            ec2.describe_addresses()
                .filters(filter("tag:Name", &["c1-cp-0"]))
                .send()
                .await
                .unwrap()
                .addresses()
                .to_vec()
        }
    };
    let cp = machine_yaml(
        "c1-cp-0",
        "controlplane",
        "init",
        &format!("  publicIP: true\n  elasticIpPool: {{publicIpv4Pool: {pool}}}\n"),
        "",
    );

    // Launched without a public address, though its subnet maps one.
    let first = m.create(&w.cluster, &cp, None).await.unwrap();
    let st = first.status.unwrap();
    let [i] = instances_named(&ec2, "c1-cp-0").await.try_into().unwrap();
    assert_eq!(i.public_ip_address(), None);
    assert!(addresses().await.is_empty(), "none while it is pending");
    // Running: its address comes from the pool.
    let mut done = false;
    for _ in 0..5 {
        if m.create(&w.cluster, &cp, Some(&st))
            .await
            .unwrap()
            .is_done()
        {
            done = true;
            break;
        }
    }
    assert!(done);
    let [a] = addresses().await.try_into().unwrap();
    let ip = a.public_ip().unwrap().to_string();
    assert!(ip.starts_with("198.18.0."), "{ip}");
    assert_eq!(a.public_ipv4_pool(), Some(pool.as_str()));
    assert_eq!(a.instance_id(), Some(st.instance_id.as_str()));
    let [i] = instances_named(&ec2, "c1-cp-0").await.try_into().unwrap();
    assert_eq!(i.public_ip_address(), Some(ip.as_str()));
    // Kept: created and updated again, nothing changes.
    w.fake.fake().take_calls();
    m.create(&w.cluster, &cp, Some(&st)).await.unwrap();
    assert!(
        m.update(&w.cluster, &cp, Some(&st))
            .await
            .unwrap()
            .is_done()
    );
    nothing_changed(&w);

    // Deleted: the instance goes, then the address, back in the pool.
    m.delete(&w.cluster, &cp, Some(&st)).await.unwrap();
    assert!(addresses().await.is_empty());
    let free = ec2
        .describe_public_ipv4_pools()
        .pool_ids(&pool)
        .send()
        .await
        .unwrap()
        .public_ipv4_pools()[0]
        .total_available_address_count();
    assert_eq!(free, Some(256));
}

#[tokio::test]
async fn a_machine_of_a_dual_stack_cluster_has_an_ipv6_address_of_its_subnet() {
    let dual = provider::spec::parse(
        "apiVersion: infrastructure.capa.rs/v1alpha1\nkind: Cluster\nmetadata: {name: c1}\nspec:\n  region: us-east-1\n  network: {vpc: {ipv6: {}}, availabilityZoneCount: 2}\n",
        "test",
    )
    .unwrap();
    let w = world_of(dual).await;
    let m = MachineActuator::new(w.clients.clone(), bootstrap());
    let (st, i) = create_one(&w, &m, &machine("c1-cp-0", "controlplane", "init")).await;
    let ec2 = w.fake.ec2_client();
    let sn = ec2
        .describe_subnets()
        .subnet_ids(i.subnet_id().unwrap())
        .send()
        .await
        .unwrap();
    let block: ipnet::Ipv6Net = sn.subnets()[0].ipv6_cidr_block_association_set()[0]
        .ipv6_cidr_block()
        .unwrap()
        .parse()
        .unwrap();
    let held = i.network_interfaces()[0].ipv6_addresses()[0]
        .ipv6_address()
        .unwrap();
    assert!(block.contains(&held.parse::<std::net::Ipv6Addr>().unwrap()));
    assert_eq!(st.ipv6.as_deref(), Some(held));
    // By default (CAPA's), the address is the interface's primary IPv6 address, as EC2
    // describes it: the instance's own IPv6 address for its life.
    let primary = |i: &aws_sdk_ec2::types::Instance| {
        i.network_interfaces()[0]
            .ipv6_addresses()
            .iter()
            .map(|a| a.is_primary_ipv6())
            .collect::<Vec<_>>()
    };
    let described = ec2
        .describe_instances()
        .instance_ids(i.instance_id().unwrap())
        .send()
        .await
        .unwrap();
    let di = &described.reservations()[0].instances()[0];
    assert_eq!(primary(di), [Some(true)]);
    assert_eq!(di.ipv6_address(), Some(held));
    // Disabled, it is an address like another.
    let (_, i) = create_one(
        &w,
        &m,
        &machine_yaml(
            "c1-node-plain6",
            "node",
            "join",
            "  assignPrimaryIPv6: disabled\n",
            "",
        ),
    )
    .await;
    let described = ec2
        .describe_instances()
        .instance_ids(i.instance_id().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(
        primary(&described.reservations()[0].instances()[0]),
        [Some(false)]
    );
    // Its resource name may be answered with that address.
    let named = machine_yaml(
        "c1-node-aaaa",
        "node",
        "join",
        "  privateDnsName: {hostnameType: resource-name, enableResourceNameDnsAAAARecord: true}\n",
        "",
    );
    let (_, i) = create_one(&w, &m, &named).await;
    let o = i.private_dns_name_options().unwrap();
    assert_eq!(o.hostname_type().unwrap().as_str(), "resource-name");
    assert_eq!(o.enable_resource_name_dns_aaaa_record(), Some(true));
    assert!(!i.network_interfaces()[0].ipv6_addresses().is_empty());
    // A machine of a single-stack cluster shows none, and may not ask for a primary IPv6
    // address: refused before any call.
    let w = world().await;
    let m = MachineActuator::new(w.clients.clone(), bootstrap());
    let (st, _) = create_one(&w, &m, &machine("c1-cp-0", "controlplane", "init")).await;
    assert_eq!(st.ipv6, None);
    let enabled = machine_yaml(
        "c1-node-v6",
        "node",
        "join",
        "  assignPrimaryIPv6: enabled\n",
        "",
    );
    refused_before_any_call(
        &w,
        &m,
        &enabled,
        "spec.assignPrimaryIPv6: enabled, but cluster c1 is not dual stack",
    )
    .await;
    let problems = refused("  assignPrimaryIPv6: always\n");
    assert!(
        problems
            .iter()
            .any(|p| p.contains("spec.assignPrimaryIPv6: \"always\" is not enabled or disabled")),
        "{problems:?}"
    );
    let problems =
        refused("  assignPrimaryIPv6: enabled\n  networkInterfaces: [eni-0123456789abcdef0]\n");
    assert!(
        problems
            .iter()
            .any(|p| p.contains("spec.assignPrimaryIPv6: enabled, but networkInterfaces")),
        "{problems:?}"
    );
}

#[test]
fn kubernetes_networks_are_one_cidr_or_a_dual_stack_pair() {
    let read = |pods: &str, services: &str| {
        let yaml = format!(
            "apiVersion: infrastructure.capa.rs/v1alpha1\nkind: Machine\nmetadata: {{name: c1-cp-0}}\nspec:\n  clusterName: c1\n  role: controlplane\n  ami: {{id: ami-0123456789abcdef0}}\n  instanceType: t3.large\n  kubeadm:\n    operation: init\n    kubernetesVersion: v1.31.0\n    podSubnet: \"{pods}\"\n    serviceSubnet: \"{services}\"\n"
        );
        provider::spec::parse_documents(&yaml, "test")
    };
    let m = read("192.168.0.0/16,fd00:10::/56", "10.96.0.0/12,fd00:20::/108").unwrap();
    // The pair goes into kubeadm's ClusterConfiguration as it is.
    let text =
        user_data::kubeadm_config(&m.machines[0], "c1-apiserver.example", &bootstrap()).unwrap();
    assert!(
        text.contains("podSubnet: 192.168.0.0/16,fd00:10::/56"),
        "{text}"
    );
    assert!(
        text.contains("serviceSubnet: 10.96.0.0/12,fd00:20::/108"),
        "{text}"
    );
    for (pods, services, needle) in [
        (
            "192.168.0.0/16,10.0.0.0/8",
            "10.96.0.0/12",
            "podSubnet: \"192.168.0.0/16,10.0.0.0/8\" is one CIDR, or an IPv4 and an IPv6 one",
        ),
        (
            "192.168.0.1/16",
            "10.96.0.0/12",
            "podSubnet: \"192.168.0.1/16\" has host bits set in 192.168.0.1/16 (the network is 192.168.0.0/16)",
        ),
        (
            "192.168.0.0/16",
            "10.96.0.0/12,nope",
            "serviceSubnet: \"10.96.0.0/12,nope\" holds \"nope\", not a CIDR",
        ),
        (
            "192.168.0.0/16",
            "fd00::/108,fd01::/108,10.96.0.0/12",
            "serviceSubnet: \"fd00::/108,fd01::/108,10.96.0.0/12\" is one CIDR",
        ),
    ] {
        let Err(Error::InvalidSpec { problems }) = read(pods, services) else {
            panic!("{pods} {services} accepted");
        };
        assert!(
            problems.iter().any(|p| p.contains(needle)),
            "{needle} in {problems:?}"
        );
    }
}

#[tokio::test]
async fn a_public_machine_in_a_wavelength_zone_takes_a_carrier_address() {
    let cluster = provider::spec::parse(
        "apiVersion: infrastructure.capa.rs/v1alpha1\nkind: Cluster\nmetadata: {name: c1}\nspec:\n  region: us-east-1\n  network:\n    subnets:\n      - {cidrBlock: 10.0.0.0/20, availabilityZone: us-east-1b, public: true}\n      - {cidrBlock: 10.0.16.0/20, availabilityZone: us-east-1b}\n      - {cidrBlock: 10.0.35.0/24, availabilityZone: us-east-1-wl1-bos-wlz-1, public: true}\n",
        "test",
    )
    .unwrap();
    let w = world_opted_in(cluster, &["us-east-1-wl1"]).await;
    let m = MachineActuator::new(w.clients.clone(), bootstrap());
    let yaml = "apiVersion: infrastructure.capa.rs/v1alpha1\nkind: Machine\nmetadata: {name: c1-edge-0}\nspec:\n  clusterName: c1\n  role: node\n  ami: {lookup: {baseOS: ubuntu-24.04}}\n  instanceType: t3.large\n  subnet: {availabilityZone: us-east-1-wl1-bos-wlz-1}\n  publicIP: true\n  kubeadm:\n    operation: join\n    kubernetesVersion: v1.31.0\n";
    let edge = provider::spec::parse_documents(yaml, "test")
        .unwrap()
        .machines
        .remove(0);
    // A join waits for a control plane in service: the init machine first.
    api_up(&w, &m).await;
    let mut status = None;
    for _ in 0..5 {
        let o = m.create(&w.cluster, &edge, status.as_ref()).await.unwrap();
        status = o.status.clone();
        if o.is_done() {
            break;
        }
    }
    let st = status.unwrap();
    let [i] = instances_named(&w.fake.ec2_client(), "c1-edge-0")
        .await
        .try_into()
        .unwrap();
    // The carrier address, on the interface and (as the model says of `PublicIpAddress`) in
    // the machine's status once it runs.
    let nic = &i.network_interfaces()[0];
    let carrier = nic.association().and_then(|a| a.carrier_ip()).unwrap();
    assert_eq!(st.state, "running");
    assert_eq!(st.public_ip.as_deref(), Some(carrier));
    let sn = w
        .fake
        .ec2_client()
        .describe_subnets()
        .subnet_ids(i.subnet_id().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(
        sn.subnets()[0].availability_zone(),
        Some("us-east-1-wl1-bos-wlz-1")
    );
}

/// A machine naming no zone goes to the cluster's first subnet of its kind in a zone AWS does
/// not constrain: us-east-1's use1-az3 (`us-east-1e` in the fake) offers only Xen-based
/// types, where the machine's t3.large would be refused (`Unsupported`). Named, the zone is
/// kept, and AWS's refusal says which zones offer the type.
#[tokio::test]
async fn a_machine_naming_no_zone_skips_a_constrained_one() {
    let cluster = provider::spec::parse(
        "apiVersion: infrastructure.capa.rs/v1alpha1\nkind: Cluster\nmetadata: {name: c1}\nspec:\n  region: us-east-1\n  network:\n    vpc: {cidrBlock: 10.0.0.0/16}\n    subnets:\n      - {cidrBlock: 10.0.0.0/24, availabilityZone: us-east-1e, public: true}\n      - {cidrBlock: 10.0.1.0/24, availabilityZone: us-east-1a, public: true}\n      - {cidrBlock: 10.0.32.0/20, availabilityZone: us-east-1e}\n      - {cidrBlock: 10.0.16.0/20, availabilityZone: us-east-1a}\n",
        "test",
    )
    .unwrap();
    let w = world_of(cluster).await;
    let m = MachineActuator::new(w.clients.clone(), bootstrap());
    let mut init = machine("c1-cp-0", "controlplane", "init");
    init.spec.subnet.availability_zone = None;
    let (_, i) = create_one(&w, &m, &init).await;
    assert_eq!(
        i.placement().and_then(|p| p.availability_zone()),
        Some("us-east-1a"),
        "{i:?}"
    );
    let subnet = w
        .fake
        .ec2_client()
        .describe_subnets()
        .subnet_ids(i.subnet_id().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(subnet.subnets()[0].cidr_block(), Some("10.0.16.0/20"));

    // Named, the constrained zone is kept: AWS refuses the type there, in its own words.
    let mut named = machine("c1-cp-1", "controlplane", "init");
    named.spec.subnet.availability_zone = Some("us-east-1e".into());
    let err = m.create(&w.cluster, &named, None).await.unwrap_err();
    assert!(err.to_string().contains("Unsupported"), "{err}");
    assert!(
        instances_named(&w.fake.ec2_client(), "c1-cp-1")
            .await
            .is_empty()
    );
}
