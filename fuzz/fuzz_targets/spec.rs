//! The spec loader: any text as a spec file (clusters and machines, many YAML documents),
//! parsed, defaulted and validated as `capa up` does before any AWS call. Whatever comes in:
//! no panic; a spec refused is refused with at least one problem named; a spec accepted
//! yields a plan within it (the VPC CIDR holds every subnet).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let docs = match provider::spec::parse_documents(text, "fuzz") {
        Ok(d) => d,
        Err(provider::Error::InvalidSpec { problems }) => {
            assert!(!problems.is_empty());
            return;
        }
        Err(_) => return,
    };
    if let Some(cluster) = &docs.cluster {
        let region = &cluster.spec.region;
        let zones: Vec<String> = ["a", "b", "c"]
            .iter()
            .map(|z| format!("{region}{z}"))
            .collect();
        match provider::spec::validate(cluster, &zones) {
            Ok(plan) => {
                if let Some(vpc) = plan.vpc_cidr {
                    for s in plan.subnets.iter().filter_map(|s| s.cidr) {
                        assert!(vpc.contains(&s), "subnet {s} outside {vpc}");
                    }
                }
            }
            Err(provider::Error::InvalidSpec { problems }) => assert!(!problems.is_empty()),
            Err(_) => {}
        }
    }
    for machine in &docs.machines {
        let _ = provider::spec::machine::validate(machine);
    }
});
