//! What `capa` shows: progress lines while it works (a tracing layer over the provider's
//! `capa::progress` events), the tree of what a cluster holds, its machines, and counts.

use std::fmt::Write as _;

use provider::cluster::ClusterStatus;
use provider::machine::MachineStatus;
use provider::spec::Machine;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// Prints progress events (target `capa::progress`) as plain lines on stderr.
pub(super) struct Progress;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Progress {
    fn on_event(
        &self,
        event: &tracing::Event<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        if event.metadata().target() != "capa::progress" {
            return;
        }
        struct Message(String);
        impl tracing::field::Visit for Message {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                if field.name() == "message" {
                    let _ = write!(self.0, "{value:?}");
                } else {
                    let _ = write!(self.0, " {}={value:?}", field.name());
                }
            }
        }
        let mut m = Message(String::new());
        event.record(&mut m);
        eprintln!("  · {}", m.0);
    }
}

pub(super) fn init_logging() {
    // RUST_LOG adds ordinary log lines (e.g. RUST_LOG=provider=debug); progress is always on.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off"));
    let _ = tracing_subscriber::registry()
        .with(Progress)
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_filter(filter),
        )
        .try_init();
}

use tracing_subscriber::Layer as _;

pub(super) fn count(status: &ClusterStatus) -> (usize, usize) {
    let mut owned = 0;
    let mut existing = 0;
    let mut add = |managed: bool| {
        if managed {
            owned += 1;
        } else {
            existing += 1;
        }
    };
    for r in status
        .vpc
        .iter()
        .chain(&status.internet_gateway)
        .chain(&status.egress_only_internet_gateway)
        .chain(&status.carrier_gateway)
    {
        add(r.managed);
    }
    for s in &status.subnets {
        add(s.managed);
    }
    for _ in &status.nat_gateways {
        add(true);
        add(true);
    }
    for _ in &status.route_tables {
        add(true);
    }
    for g in status.security_groups.values() {
        add(g.managed);
    }
    if let Some(b) = &status.bastion {
        add(b.managed);
    }
    if let Some(l) = &status.load_balancer {
        add(l.managed);
    }
    (owned, existing)
}

pub(super) fn tree(status: &ClusterStatus) -> String {
    let tag = |managed: bool| if managed { "owned" } else { "pre-existing" };
    let mut t = String::new();
    if let Some(v) = &status.vpc {
        let _ = writeln!(
            t,
            "vpc {} {} [{}]",
            v.id,
            status
                .vpc_ranges()
                .chain(&status.vpc_ipv6_cidr)
                .cloned()
                .collect::<Vec<_>>()
                .join(" "),
            tag(v.managed)
        );
    }
    if let Some(g) = &status.internet_gateway {
        let _ = writeln!(t, "├─ internet gateway {} [{}]", g.id, tag(g.managed));
    }
    if let Some(g) = &status.carrier_gateway {
        let _ = writeln!(t, "├─ carrier gateway {} [{}]", g.id, tag(g.managed));
    }
    if let Some(g) = &status.egress_only_internet_gateway {
        let _ = writeln!(
            t,
            "├─ egress-only internet gateway {} [{}]",
            g.id,
            tag(g.managed)
        );
    }
    for s in &status.subnets {
        let _ = writeln!(
            t,
            "├─ subnet {} {}{} {}{} {} [{}]",
            s.id,
            s.cidr,
            s.ipv6_cidr
                .as_deref()
                .map(|c| format!(" {c}"))
                .unwrap_or_default(),
            s.zone,
            s.edge_zone
                .as_deref()
                .map(|k| format!(" ({k})"))
                .unwrap_or_default(),
            if s.public { "public" } else { "private" },
            tag(s.managed)
        );
        for r in status.route_tables.iter().filter(|r| r.subnet_id == s.id) {
            let _ = writeln!(
                t,
                "│  └─ route table {} 0.0.0.0/0 -> {} [owned]",
                r.id,
                r.default_route.as_deref().unwrap_or("(none yet)")
            );
        }
        for n in status.nat_gateways.iter().filter(|n| n.subnet_id == s.id) {
            let _ = writeln!(
                t,
                "│  └─ nat gateway {} ({}) eip {} for {} [owned]",
                n.id, n.state, n.allocation_id, n.zone
            );
        }
    }
    for (role, g) in &status.security_groups {
        let _ = writeln!(
            t,
            "├─ security group {} {} [{}]",
            role.as_str(),
            g.id,
            tag(g.managed)
        );
    }
    if let Some(b) = &status.bastion {
        let _ = writeln!(
            t,
            "├─ bastion {} {} {} [{}]",
            b.id,
            b.state,
            b.public_ip.as_deref().unwrap_or(""),
            tag(b.managed)
        );
    }
    if let Some(l) = &status.load_balancer {
        let _ = writeln!(
            t,
            "├─ load balancer {} {} {} [{}]",
            l.name,
            l.scheme,
            l.dns_name,
            tag(l.managed)
        );
    }
    t
}

pub(super) fn machine_line(m: &Machine, st: Option<&MachineStatus>, last: bool) -> String {
    let glyph = if last { "└─" } else { "├─" };
    match st {
        Some(st) => format!(
            "{glyph} machine {} ({}) {} {} {}{}[owned]",
            m.metadata.name,
            m.spec.role.as_str(),
            st.instance_id,
            st.state,
            st.private_ip
                .as_deref()
                .map(|ip| format!("{ip} "))
                .unwrap_or_default(),
            if st.in_load_balancer {
                "in load balancer "
            } else {
                ""
            }
        ),
        None => format!("{glyph} machine {} (no instance)", m.metadata.name),
    }
}

/// The cluster's conditions, one line each: ready, or why not.
pub(super) fn conditions(status: &ClusterStatus) -> String {
    let mut out = String::from("conditions:\n");
    for c in &status.conditions {
        if c.ready {
            out.push_str(&format!("  {:<16} ready\n", c.kind));
        } else {
            out.push_str(&format!("  {:<16} not ready: {}\n", c.kind, c.reason));
        }
    }
    out
}
