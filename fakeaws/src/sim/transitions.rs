//! State transitions driven by the fake's clock. A resource entering a transient state
//! (`pending`, `stopping`, `shutting-down`, `deleting`) schedules its next step here; every
//! request to the region first applies the steps that are due. By default a step is due at
//! once, so it completes by the next observation and the SDK's waiters finish on their first
//! poll. A test can hold a subject's steps (and release them later), or give them a delay and
//! advance the virtual clock, without sleeping.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, SystemTime};

/// What a scheduled step applies to.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Subject {
    /// An instance leaving `pending`, `stopping` or `shutting-down`.
    Instance,
    /// A terminated instance disappearing from Describe calls (AWS keeps it about an hour).
    InstancePurge,
    /// A NAT gateway leaving `pending` or `deleting`.
    NatGateway,
    /// A deleted NAT gateway disappearing from Describe calls (AWS keeps it about an hour).
    NatGatewayPurge,
    /// An instance registered with a classic load balancer passing its health check.
    LoadBalancerRegistration,
    /// A VPC endpoint leaving `pending` or `deleting`.
    VpcEndpoint,
    /// A network interface leaving `pending`, or its attachment `attaching` or `detaching`.
    NetworkInterface,
    /// A deleted classic load balancer's node interface (or one of a subnet it left) going
    /// away: AWS's linger some minutes, holding their subnets and security groups.
    LoadBalancerInterface,
    /// An EBS snapshot leaving `pending`.
    Snapshot,
    /// A volume modification going `optimizing`, then `completed`.
    VolumeModification,
    /// An image CreateImage made leaving `pending`.
    Image,
    /// The account's block public access for AMIs taking its new state (AWS: up to 10
    /// minutes after EnableImageBlockPublicAccess or DisableImageBlockPublicAccess).
    ImageBlockPublicAccess,
    /// An Elastic IP's reverse DNS record taking the name ModifyAddressAttribute or
    /// ResetAddressAttribute asked for (`PENDING` until then).
    AddressPtr,
    /// A VPC peering connection leaving `initiating-request`, `provisioning` or `deleting`.
    VpcPeering,
    /// A VPC peering request not accepted within 7 days expiring.
    VpcPeeringExpiry,
    /// An ended VPC peering connection disappearing from Describe calls (AWS keeps a failed
    /// one 2 hours, a rejected, expired or deleted one 2 days: checked every 2 hours).
    VpcPeeringPurge,
    /// An interrupted Spot Instance's two-minute notice running out: EC2 terminates it.
    SpotInterruption,
    /// A Capacity Reservation of `limited` end reaching its end date.
    CapacityReservationExpiry,
    /// A customer-managed prefix list's change in progress (`create-in-progress`, ...) done.
    PrefixList,
    /// A maintain EC2 Fleet making up its target capacity (after one of its instances shut
    /// down, or ModifyFleet).
    Fleet,
    /// A Site-to-Site VPN connection leaving `pending` or `deleting`, and its static routes
    /// theirs.
    VpnConnection,
}

impl Subject {
    /// The names of the subjects whose steps a profile can slow (`Subject::named`).
    pub const NAMES: &'static [&'static str] = &[
        "instance",
        "natGateway",
        "loadBalancerRegistration",
        "vpcEndpoint",
        "networkInterface",
        "loadBalancerInterface",
        "snapshot",
        "volumeModification",
        "image",
        "imageBlockPublicAccess",
        "addressPtr",
        "vpcPeeringConnection",
        "prefixList",
        "fleet",
        "vpnConnection",
    ];

    /// The subject a profile names: `instance`, `natGateway`, `loadBalancerRegistration`,
    /// `vpcEndpoint`, `networkInterface`, `loadBalancerInterface`, `snapshot`,
    /// `volumeModification`, `image`, `imageBlockPublicAccess`, `addressPtr`,
    /// `vpcPeeringConnection`, `prefixList`, `fleet`, `vpnConnection`.
    pub fn named(name: &str) -> Option<Subject> {
        match name {
            "instance" => Some(Subject::Instance),
            "natGateway" => Some(Subject::NatGateway),
            "loadBalancerRegistration" => Some(Subject::LoadBalancerRegistration),
            "vpcEndpoint" => Some(Subject::VpcEndpoint),
            "networkInterface" => Some(Subject::NetworkInterface),
            "loadBalancerInterface" => Some(Subject::LoadBalancerInterface),
            "snapshot" => Some(Subject::Snapshot),
            "volumeModification" => Some(Subject::VolumeModification),
            "image" => Some(Subject::Image),
            "imageBlockPublicAccess" => Some(Subject::ImageBlockPublicAccess),
            "addressPtr" => Some(Subject::AddressPtr),
            "vpcPeeringConnection" => Some(Subject::VpcPeering),
            "prefixList" => Some(Subject::PrefixList),
            "fleet" => Some(Subject::Fleet),
            "vpnConnection" => Some(Subject::VpnConnection),
            _ => None,
        }
    }

    /// The default delay: none for transient states, AWS's retention for purges.
    fn default_delay(self) -> Duration {
        match self {
            Subject::InstancePurge | Subject::NatGatewayPurge => Duration::from_secs(3600),
            Subject::VpcPeeringExpiry => crate::ec2::vpc_peering::ACCEPT_WITHIN,
            Subject::VpcPeeringPurge => Duration::from_secs(2 * 3600),
            Subject::SpotInterruption => crate::ec2::spot_request::INTERRUPTION_NOTICE,
            _ => Duration::ZERO,
        }
    }
}

/// The scheduled steps of one region.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Transitions {
    #[serde(with = "crate::state::with::pairs")]
    queue: BTreeMap<(SystemTime, u64), (Subject, String)>,
    seq: u64,
    // Holds and delays steer a run (they come from the configuration or a test), so the
    // state file does not keep them.
    #[serde(skip)]
    held: BTreeSet<Subject>,
    #[serde(skip)]
    delays: BTreeMap<Subject, Duration>,
    failures: BTreeMap<Subject, VecDeque<(String, String)>>,
}

impl Transitions {
    /// Schedules the next step of `subject` `id`, due after the subject's delay.
    pub fn schedule(&mut self, now: SystemTime, subject: Subject, id: &str) {
        let delay = self
            .delays
            .get(&subject)
            .copied()
            .unwrap_or_else(|| subject.default_delay());
        self.seq += 1;
        self.queue
            .insert((now + delay, self.seq), (subject, id.to_string()));
    }

    /// Schedules a step of `subject` `id` due at `at` (a date the resource names, such as a
    /// reservation's end), whatever the subject's delay.
    pub fn schedule_at(&mut self, at: SystemTime, subject: Subject, id: &str) {
        self.seq += 1;
        self.queue.insert((at, self.seq), (subject, id.to_string()));
    }

    /// Removes and returns the steps due at `now` whose subject is not held, in due order.
    pub fn take_due(&mut self, now: SystemTime) -> Vec<(Subject, String)> {
        let due: Vec<(SystemTime, u64)> = self
            .queue
            .iter()
            .take_while(|((at, _), _)| *at <= now)
            .filter(|(_, (subject, _))| !self.held.contains(subject))
            .map(|(k, _)| *k)
            .collect();
        due.into_iter()
            .filter_map(|k| self.queue.remove(&k))
            .collect()
    }

    /// Keeps every step of `subject` waiting until `release`.
    pub fn hold(&mut self, subject: Subject) {
        self.held.insert(subject);
    }

    /// Lets the held steps of `subject` complete at the next observation.
    pub fn release(&mut self, subject: Subject) {
        self.held.remove(&subject);
    }

    /// Sets the delay of `subject`'s future steps.
    pub fn set_delay(&mut self, subject: Subject, delay: Duration) {
        self.delays.insert(subject, delay);
    }

    /// Makes the next step of `subject` out of its transient state fail, the way AWS reports
    /// it: `code` and `message` (for a NAT gateway: `failed` with that failure code and
    /// message). Several calls fail as many steps, in order.
    pub fn fail_next(&mut self, subject: Subject, code: &str, message: &str) {
        self.failures
            .entry(subject)
            .or_default()
            .push_back((code.to_string(), message.to_string()));
    }

    /// The failure the next step of `subject` must take, if one was asked for.
    pub fn take_failure(&mut self, subject: Subject) -> Option<(String, String)> {
        self.failures.get_mut(&subject)?.pop_front()
    }

    /// The number of steps waiting.
    pub fn pending(&self) -> usize {
        self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_subjects_wait_and_delays_follow_the_clock() {
        let t0 = SystemTime::UNIX_EPOCH;
        let mut t = Transitions::default();
        t.hold(Subject::Instance);
        t.schedule(t0, Subject::Instance, "i-1");
        t.schedule(t0, Subject::NatGateway, "nat-1");
        t.schedule(t0, Subject::InstancePurge, "i-2");
        assert_eq!(t.take_due(t0), [(Subject::NatGateway, "nat-1".to_string())]);
        assert!(t.take_due(t0).is_empty());
        t.release(Subject::Instance);
        assert_eq!(t.take_due(t0), [(Subject::Instance, "i-1".to_string())]);
        assert!(t.take_due(t0 + Duration::from_secs(3599)).is_empty());
        assert_eq!(t.take_due(t0 + Duration::from_secs(3600)).len(), 1);
        assert_eq!(t.pending(), 0);
    }
}
