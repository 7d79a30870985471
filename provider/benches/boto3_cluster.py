"""The workload bench's boto3 client (provider/benches/workload.rs runs it).

    python3 - ENDPOINT cluster N FIRST  # clusters FIRST.. (N of them) up and deleted again
    python3 - ENDPOINT describe N 0     # N DescribeVpcs calls (the canned floor's load)

A cluster is what the provider builds for the three-zone example, in the order a Cluster API
provider makes the calls: a VPC with DNS support, a public and a private subnet per zone, an
internet gateway, an Elastic IP and a NAT gateway per public subnet, a route table per subnet,
five security groups with their rules, the API server's classic ELB, and a bastion instance;
then all of it deleted again. boto3 drives AWS as a Python tool does: one call after another
on a keep-alive connection, no retries (a refusal fails the run). Prints `calls N`: the calls
it made.
"""

import sys

import boto3
from botocore.config import Config

ENDPOINT, MODE, N, FIRST = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
OPTIONS = dict(
    endpoint_url=ENDPOINT,
    region_name="us-east-1",
    aws_access_key_id="AKIDBENCH",
    aws_secret_access_key="bench",
    config=Config(retries={"max_attempts": 1}),
)
EC2 = boto3.client("ec2", **OPTIONS)
ELB = boto3.client("elb", **OPTIONS)
CALLS = 0


def call(operation, **params):
    global CALLS
    CALLS += 1
    return operation(**params)


def tags(resource_type, name, cluster):
    return [
        {
            "ResourceType": resource_type,
            "Tags": [
                {"Key": "Name", "Value": name},
                {"Key": f"sigs.k8s.io/cluster-api-provider-aws/cluster/{cluster}", "Value": "owned"},
            ],
        }
    ]


ZONES = [
    ("us-east-1a", "10.0.0.0/20", "10.0.64.0/18"),
    ("us-east-1b", "10.0.16.0/20", "10.0.128.0/18"),
    ("us-east-1c", "10.0.32.0/20", "10.0.192.0/18"),
]
ROLES = ["bastion", "apiserver-lb", "lb", "controlplane", "node"]


def cluster(n):
    name = f"bench-{n}"
    owned = f"sigs.k8s.io/cluster-api-provider-aws/cluster/{name}"
    # Up.
    call(EC2.describe_vpcs, Filters=[{"Name": f"tag:{owned}", "Values": ["owned"]}])
    vpc = call(EC2.create_vpc, CidrBlock="10.0.0.0/16", TagSpecifications=tags("vpc", name, name))
    vpc = vpc["Vpc"]["VpcId"]
    call(EC2.modify_vpc_attribute, VpcId=vpc, EnableDnsSupport={"Value": True})
    call(EC2.modify_vpc_attribute, VpcId=vpc, EnableDnsHostnames={"Value": True})
    call(EC2.describe_availability_zones, Filters=[{"Name": "state", "Values": ["available"]}])
    subnets = []
    for zone, public, private in ZONES:
        for cidr, is_public in ((public, True), (private, False)):
            s = call(
                EC2.create_subnet,
                VpcId=vpc,
                CidrBlock=cidr,
                AvailabilityZone=zone,
                TagSpecifications=tags("subnet", f"{name}-{zone}", name),
            )["Subnet"]["SubnetId"]
            if is_public:
                call(EC2.modify_subnet_attribute, SubnetId=s, MapPublicIpOnLaunch={"Value": True})
            subnets.append((s, is_public))
    call(EC2.describe_subnets, Filters=[{"Name": "vpc-id", "Values": [vpc]}])
    igw = call(EC2.create_internet_gateway, TagSpecifications=tags("internet-gateway", name, name))
    igw = igw["InternetGateway"]["InternetGatewayId"]
    call(EC2.attach_internet_gateway, InternetGatewayId=igw, VpcId=vpc)
    addresses, nats = [], []
    for s, is_public in subnets:
        if is_public:
            a = call(EC2.allocate_address, Domain="vpc", TagSpecifications=tags("elastic-ip", name, name))
            addresses.append(a["AllocationId"])
            nat = call(
                EC2.create_nat_gateway,
                SubnetId=s,
                AllocationId=a["AllocationId"],
                TagSpecifications=tags("natgateway", name, name),
            )
            nats.append(nat["NatGateway"]["NatGatewayId"])
    call(EC2.describe_nat_gateways, Filters=[{"Name": "vpc-id", "Values": [vpc]}])
    tables = []
    for i, (s, is_public) in enumerate(subnets):
        rt = call(EC2.create_route_table, VpcId=vpc, TagSpecifications=tags("route-table", name, name))
        rt = rt["RouteTable"]["RouteTableId"]
        target = {"GatewayId": igw} if is_public else {"NatGatewayId": nats[i // 2]}
        call(EC2.create_route, RouteTableId=rt, DestinationCidrBlock="0.0.0.0/0", **target)
        call(EC2.associate_route_table, RouteTableId=rt, SubnetId=s)
        tables.append(rt)
    call(EC2.describe_route_tables, Filters=[{"Name": "vpc-id", "Values": [vpc]}])
    groups = []
    for role in ROLES:
        g = call(
            EC2.create_security_group,
            GroupName=f"{name}-{role}",
            Description=f"Kubernetes cluster {name}: {role}",
            VpcId=vpc,
            TagSpecifications=tags("security-group", f"{name}-{role}", name),
        )
        groups.append(g["GroupId"])
    for g in groups:
        call(
            EC2.authorize_security_group_ingress,
            GroupId=g,
            IpPermissions=[
                {"IpProtocol": "tcp", "FromPort": 22, "ToPort": 22, "IpRanges": [{"CidrIp": "0.0.0.0/0", "Description": "SSH"}]},
                {"IpProtocol": "tcp", "FromPort": 6443, "ToPort": 6443, "UserIdGroupPairs": [{"GroupId": groups[1], "Description": "API"}]},
            ],
        )
    call(EC2.describe_security_groups, Filters=[{"Name": "vpc-id", "Values": [vpc]}])
    lb = f"{name}-apiserver"
    call(
        ELB.create_load_balancer,
        LoadBalancerName=lb,
        Listeners=[{"Protocol": "TCP", "LoadBalancerPort": 6443, "InstanceProtocol": "TCP", "InstancePort": 6443}],
        Subnets=[s for s, is_public in subnets if is_public],
        SecurityGroups=[groups[1]],
        Scheme="internet-facing",
        Tags=[{"Key": owned, "Value": "owned"}],
    )
    call(
        ELB.configure_health_check,
        LoadBalancerName=lb,
        HealthCheck={"Target": "TCP:6443", "Interval": 10, "Timeout": 5, "UnhealthyThreshold": 3, "HealthyThreshold": 5},
    )
    call(ELB.describe_load_balancers, LoadBalancerNames=[lb])
    call(ELB.describe_tags, LoadBalancerNames=[lb])
    image = call(EC2.describe_images, Owners=["amazon"], MaxResults=5)["Images"][0]["ImageId"]
    bastion = call(
        EC2.run_instances,
        ImageId=image,
        MinCount=1,
        MaxCount=1,
        InstanceType="t3.micro",
        SubnetId=subnets[0][0],
        SecurityGroupIds=[groups[0]],
        TagSpecifications=tags("instance", f"{name}-bastion", name),
    )["Instances"][0]["InstanceId"]
    call(EC2.describe_instances, Filters=[{"Name": f"tag:{owned}", "Values": ["owned"]}, {"Name": "vpc-id", "Values": [vpc]}])
    # Down.
    call(EC2.terminate_instances, InstanceIds=[bastion])
    call(ELB.delete_load_balancer, LoadBalancerName=lb)
    for nat in nats:
        call(EC2.delete_nat_gateway, NatGatewayId=nat)
    call(EC2.describe_nat_gateways, NatGatewayIds=nats)
    for a in addresses:
        call(EC2.release_address, AllocationId=a)
    for rt in tables:
        table = call(EC2.describe_route_tables, RouteTableIds=[rt])["RouteTables"][0]
        for association in table["Associations"]:
            call(EC2.disassociate_route_table, AssociationId=association["RouteTableAssociationId"])
        call(EC2.delete_route_table, RouteTableId=rt)
    call(EC2.describe_instances, InstanceIds=[bastion])
    for g in groups:
        call(
            EC2.revoke_security_group_ingress,
            GroupId=g,
            IpPermissions=[{"IpProtocol": "tcp", "FromPort": 6443, "ToPort": 6443, "UserIdGroupPairs": [{"GroupId": groups[1]}]}],
        )
    for g in groups:
        call(EC2.delete_security_group, GroupId=g)
    call(EC2.detach_internet_gateway, InternetGatewayId=igw, VpcId=vpc)
    call(EC2.delete_internet_gateway, InternetGatewayId=igw)
    for s, _ in subnets:
        call(EC2.delete_subnet, SubnetId=s)
    call(EC2.delete_vpc, VpcId=vpc)


if MODE == "cluster":
    for n in range(FIRST, FIRST + N):
        cluster(n)
elif MODE == "describe":
    for _ in range(N):
        assert len(call(EC2.describe_vpcs)["Vpcs"]) == 1
else:
    sys.exit(f"unknown mode {MODE!r}")
print(f"calls {CALLS}")
