//! The cluster spec (Kubernetes-style YAML), its defaults, and its validation. A bad spec is
//! rejected with every problem listed at once, before any AWS call that changes anything
//! (the one call validation makes is DescribeAvailabilityZones, to know the region's zones).
//! `types` holds the spec as written, `parse` reads files, `defaults` fills in what the
//! spec leaves out, `validate` checks it all and yields a [`Plan`]; `machine` is the
//! machine spec.

mod defaults;
pub mod machine;
mod parse;
mod types;
mod validate;

pub use defaults::{
    CONSTRAINED_ZONE_IDS, DEFAULT_BASTION_TYPE, DEFAULT_IDLE_TIMEOUT, DEFAULT_VPC_CIDR, Plan,
    PlannedSubnet, Zone, ZoneKind, default_cni_rules, default_subnets, load_balancer_name,
};
pub use machine::Machine;
pub use parse::{Documents, parse, parse_documents};
pub use types::*;
pub use validate::{validate, validate_in};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn zones() -> Vec<String> {
        ["us-east-1a", "us-east-1b", "us-east-1c"]
            .map(String::from)
            .to_vec()
    }

    fn minimal() -> Cluster {
        parse(
            "apiVersion: infrastructure.capa.rs/v1alpha1\nkind: Cluster\nmetadata: {name: c1}\nspec: {region: us-east-1}\n",
            "test",
        )
        .unwrap()
    }

    #[test]
    fn defaults_split_the_vpc_like_capa() {
        let plan = validate(&minimal(), &zones()).unwrap();
        let got: Vec<(String, bool)> = plan
            .subnets
            .iter()
            .map(|s| (s.cidr.unwrap().to_string(), s.public))
            .collect();
        assert_eq!(
            got,
            [
                ("10.0.0.0/20".to_string(), true),
                ("10.0.64.0/18".to_string(), false),
                ("10.0.16.0/20".to_string(), true),
                ("10.0.128.0/18".to_string(), false),
                ("10.0.32.0/20".to_string(), true),
                ("10.0.192.0/18".to_string(), false),
            ]
        );
        assert_eq!(plan.load_balancer_name, "c1-apiserver");
    }

    #[test]
    fn one_zone_leaves_room() {
        let mut c = minimal();
        c.spec.network.availability_zone_count = Some(1);
        let plan = validate(&c, &zones()).unwrap();
        let cidrs: Vec<String> = plan
            .subnets
            .iter()
            .map(|s| s.cidr.unwrap().to_string())
            .collect();
        assert_eq!(cidrs, ["10.0.0.0/18", "10.0.128.0/17"]);
        assert!(
            plan.subnets
                .iter()
                .all(|s| s.cidr.unwrap().prefix_len() > 16)
        );
    }

    #[test]
    fn by_default_a_region_with_two_zones_gets_both() {
        let two = ["us-west-1b", "us-west-1a"].map(String::from).to_vec();
        let plan = validate(&minimal(), &two).unwrap();
        let mut zones: Vec<&str> = plan
            .subnets
            .iter()
            .filter_map(|s| s.zone.as_deref())
            .collect();
        zones.dedup();
        assert_eq!(zones, ["us-west-1a", "us-west-1b"]);
        // Asked for exactly three, it is refused.
        let mut c = minimal();
        c.spec.network.availability_zone_count = Some(3);
        assert!(validate(&c, &two).is_err());
    }

    #[test]
    fn long_names_are_hashed_to_32() {
        let n = load_balancer_name("a-very-long-cluster-name-for-production", None);
        assert_eq!(n.len(), 32);
        assert!(n.ends_with("-k8s"));
        assert_eq!(
            n,
            load_balancer_name("a-very-long-cluster-name-for-production", None)
        );
        assert_ne!(
            n,
            load_balancer_name("a-very-long-cluster-name-for-productioN", None)
        );
    }

    #[test]
    fn every_problem_is_listed() {
        let yaml = r#"
apiVersion: v1
kind: Klaster
metadata: {name: "Bad_Name"}
spec:
  region: mars
  additionalTags: {"aws:x": "y"}
  network:
    vpc: {cidrBlock: 10.0.0.0/8}
    internetGatewayId: igw-12345678
    subnets:
      - {cidrBlock: 10.1.0.0/24, availabilityZone: us-east-1z}
      - {id: subnet-12345678}
  bastion: {enabled: true}
  cniIngressRules:
    - {description: "Let's route", protocol: "4"}
  additionalNodeIngressRules:
    - {description: "métricas", protocol: tcp, fromPort: 9100, toPort: 9100, cidrBlocks: [10.0.0.0/8]}
  controlPlaneLoadBalancer:
    idleTimeout: 0
    healthCheck: {target: "TCP:6443/x", interval: 5, timeout: 5, healthyThreshold: 1, unhealthyThreshold: 3}
"#;
        let c = parse(yaml, "bad.yaml").unwrap();
        let Err(Error::InvalidSpec { problems }) = validate(&c, &zones()) else {
            panic!("accepted");
        };
        let text = problems.join("\n");
        for needle in [
            "apiVersion",
            "kind",
            "metadata.name",
            "spec.region",
            "aws:",
            "between /16 and /28",
            "internetGatewayId",
            "us-east-1z",
            "subnets[1].id",
            "allowedCidrBlocks",
            "idleTimeout",
            "healthCheck.target",
            "healthyThreshold",
            "timeout must be shorter",
            "cniIngressRules[0].description",
            "additionalNodeIngressRules[0].description",
        ] {
            assert!(text.contains(needle), "{needle} missing from:\n{text}");
        }
    }

    #[test]
    fn overlapping_and_outside_subnets() {
        let text = spec_problems(
            "  network:\n    subnets:\n      - {cidrBlock: 10.0.0.0/24, availabilityZone: us-east-1a, public: true}\n      - {cidrBlock: 10.0.0.128/25, availabilityZone: us-east-1a}\n      - {cidrBlock: 10.9.0.0/24, availabilityZone: us-east-1b}\n",
        );
        assert!(text.contains("overlaps"), "{text}");
        assert!(text.contains("not inside the VPC"), "{text}");
    }

    fn spec_problems(spec: &str) -> String {
        let yaml = format!(
            "apiVersion: infrastructure.capa.rs/v1alpha1\nkind: Cluster\nmetadata: {{name: c1}}\nspec:\n  region: us-east-1\n{spec}"
        );
        match validate(&parse(&yaml, "x").unwrap(), &zones()) {
            Err(Error::InvalidSpec { problems }) => problems.join("\n"),
            other => panic!("accepted: {other:?}"),
        }
    }

    #[test]
    fn secondary_ranges_hold_subnets_and_are_checked_as_aws_checks_them() {
        let yaml = r#"
apiVersion: infrastructure.capa.rs/v1alpha1
kind: Cluster
metadata: {name: c1}
spec:
  region: us-east-1
  network:
    vpc:
      cidrBlock: 10.0.0.0/16
      secondaryCidrBlocks: [{ipv4CidrBlock: 100.64.0.0/16}, {ipv4CidrBlock: 10.1.0.0/16}]
    subnets:
      - {cidrBlock: 10.0.0.0/24, availabilityZone: us-east-1a, public: true}
      - {cidrBlock: 100.64.0.0/18, availabilityZone: us-east-1a}
      - {cidrBlock: 10.1.0.0/16, availabilityZone: us-east-1a}
"#;
        let plan = validate(&parse(yaml, "x").unwrap(), &zones()).unwrap();
        assert_eq!(
            plan.secondary_cidrs
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>(),
            ["100.64.0.0/16", "10.1.0.0/16"]
        );

        let text = spec_problems(
            "  network:\n    vpc:\n      cidrBlock: 10.0.0.0/16\n      secondaryCidrBlocks:\n        - {ipv4CidrBlock: 192.168.0.0/16}\n        - {ipv4CidrBlock: 10.0.128.0/17}\n        - {ipv4CidrBlock: 100.64.0.0/12}\n        - {ipv4CidrBlock: 198.19.0.0/16}\n        - {ipv4CidrBlock: 100.64.0.1/16}\n        - {ipv4CidrBlock: 100.80.0.0/16}\n        - {ipv4CidrBlock: 100.80.0.0/20}\n    subnets:\n      - {cidrBlock: 10.0.0.0/24, availabilityZone: us-east-1a, public: true}\n      - {cidrBlock: 100.96.0.0/24, availabilityZone: us-east-1a}\n",
        );
        for needle in [
            "secondaryCidrBlocks[0].ipv4CidrBlock: 192.168.0.0/16 is in the private range",
            "secondaryCidrBlocks[1].ipv4CidrBlock: 10.0.128.0/17 overlaps the VPC's cidrBlock",
            "secondaryCidrBlocks[2].ipv4CidrBlock: 100.64.0.0/12 must be between /16 and /28",
            "secondaryCidrBlocks[3].ipv4CidrBlock: 198.19.0.0/16 is in 198.19.0.0/16",
            "secondaryCidrBlocks[4].ipv4CidrBlock: 100.64.0.1/16 is not a network address",
            "secondaryCidrBlocks[6].ipv4CidrBlock: 100.80.0.0/20 overlaps spec.network.vpc.secondaryCidrBlocks[",
            "subnets[1].cidrBlock: 100.96.0.0/24 is not inside the VPC's 10.0.0.0/16 or",
        ] {
            assert!(text.contains(needle), "{needle} missing from:\n{text}");
        }
        // 10.0.0.0/16 beside a range in 10.0.0.0/15, as AWS refuses it.
        let text = spec_problems(
            "  network:\n    vpc: {cidrBlock: 10.1.0.0/16, secondaryCidrBlocks: [{ipv4CidrBlock: 10.0.0.0/16}]}\n",
        );
        assert!(text.contains("10.0.0.0/15"), "{text}");
        // A VPC of the user's is never given a range.
        let text = spec_problems(
            "  network:\n    vpc: {id: vpc-12345678, secondaryCidrBlocks: [{ipv4CidrBlock: 100.64.0.0/16}]}\n",
        );
        assert!(
            text.contains("only for a VPC the provider creates"),
            "{text}"
        );
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let yaml = "apiVersion: infrastructure.capa.rs/v1alpha1\nkind: Cluster\nmetadata: {name: c1}\nspec: {region: us-east-1, vpcCidr: 10.0.0.0/16}\n";
        let Err(Error::InvalidSpec { problems }) = parse(yaml, "c.yaml") else {
            panic!("accepted");
        };
        assert!(problems[0].contains("vpcCidr"), "{problems:?}");
    }

    /// Found by the `spec` fuzz target: a YAML syntax error used to be answered again and
    /// again by the document reader, and the loader gathered problems until memory ran out.
    #[test]
    fn a_yaml_syntax_error_is_one_problem() {
        for text in [
            "apiVersion: {:?}, expected {:?}",
            "kind: Cluster\n---\n[unclosed",
        ] {
            let Err(Error::InvalidSpec { problems }) = parse_documents(text, "f.yaml") else {
                panic!("accepted {text:?}");
            };
            assert!(!problems.is_empty() && problems.len() <= 2, "{problems:?}");
        }
    }
}
