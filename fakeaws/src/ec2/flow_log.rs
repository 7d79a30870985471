//! VPC flow logs: CreateFlowLogs, DescribeFlowLogs, DeleteFlowLogs.
//!
//! A flow log watches a VPC, a subnet or a network interface and publishes to CloudWatch
//! Logs, S3 or Kinesis Data Firehose. The fake has none of those services: a destination is
//! checked for its shape (an ARN of the right service, a log group name CloudWatch Logs
//! takes) and taken as reachable, so every flow log is `ACTIVE` and delivers with `SUCCESS`;
//! no record is ever written.
//!
//! CreateFlowLogs answers per resource, as AWS does: what fails for one resource (it does not
//! exist, it already has a flow log of that configuration, or as many as its quota allows) is
//! an `Unsuccessful` item and the others are made; what is wrong with the request itself is
//! an error and makes nothing. DeleteFlowLogs likewise lists the ids it does not know. A
//! flow log lives as long as its resource: deleting the VPC, subnet or interface removes it
//! (the API reference: flow logs of deleted VPCs are removed automatically).

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::{Kind, fingerprint, page, tags};
use crate::generated::ec2::{
    CreateFlowLogsRequest, CreateFlowLogsResult, DeleteFlowLogsRequest, DeleteFlowLogsResult,
    DescribeFlowLogsRequest, DescribeFlowLogsResult, DestinationFileFormat,
    DestinationOptionsResponse, FlowLog as FlowLogOut, FlowLogsResourceType, LogDestinationType,
    ResourceType, TrafficType, UnsuccessfulItem, UnsuccessfulItemError,
};
use crate::protocol::error::ApiError;
use crate::region::Region;
use aws_smithy_types::DateTime;

crate::region::table! {
    /// Flow logs by id.
    FlowLogs of FlowLog
}

/// One flow log.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct FlowLog {
    /// `fl-...`.
    pub id: String,
    /// The VPC, subnet or network interface it watches.
    pub resource_id: String,
    /// The traffic it records.
    pub traffic_type: TrafficType,
    /// Where it publishes.
    pub destination_type: LogDestinationType,
    /// The CloudWatch Logs group, when named by `LogGroupName`.
    pub log_group_name: Option<String>,
    /// The destination's ARN, when given by `LogDestination`.
    pub log_destination: Option<String>,
    /// The IAM role EC2 publishes with.
    pub permission_arn: Option<String>,
    /// The IAM role for publishing to another account.
    pub cross_account_role: Option<String>,
    /// The record format.
    pub log_format: String,
    /// The aggregation interval, in seconds (60 or 600).
    pub max_aggregation_interval: i32,
    /// An S3 destination's options: file format, Hive-compatible prefixes, hourly
    /// partitions.
    pub s3_options: Option<(DestinationFileFormat, bool, bool)>,
    /// When it was made.
    #[serde(with = "crate::state::with::time")]
    pub created: DateTime,
}

/// The record format of a flow log made without `LogFormat` (the version 2 fields).
pub const DEFAULT_FORMAT: &str = "${version} ${account-id} ${interface-id} ${srcaddr} \
     ${dstaddr} ${srcport} ${dstport} ${protocol} ${packets} ${bytes} ${start} ${end} \
     ${action} ${log-status}";

/// The fields a flow log record of a VPC, subnet or interface may hold (the VPC User Guide's
/// "Flow log records", versions 2 to 8).
const FIELDS: &[&str] = &[
    "version",
    "account-id",
    "interface-id",
    "srcaddr",
    "dstaddr",
    "srcport",
    "dstport",
    "protocol",
    "packets",
    "bytes",
    "start",
    "end",
    "action",
    "log-status",
    "vpc-id",
    "subnet-id",
    "instance-id",
    "tcp-flags",
    "type",
    "pkt-srcaddr",
    "pkt-dstaddr",
    "region",
    "az-id",
    "sublocation-type",
    "sublocation-id",
    "pkt-src-aws-service",
    "pkt-dst-aws-service",
    "flow-direction",
    "traffic-path",
    "ecs-cluster-arn",
    "ecs-cluster-name",
    "ecs-container-instance-arn",
    "ecs-container-instance-id",
    "ecs-container-id",
    "ecs-second-container-id",
    "ecs-service-name",
    "ecs-task-definition-arn",
    "ecs-task-arn",
    "ecs-task-id",
    "reject-reason",
    "resource-id",
    "encryption-status",
];

/// The most resources one CreateFlowLogs names (the model's documentation: 300 for the
/// resource types other than transit gateways').
const MAX_RESOURCES: usize = 300;

/// The most ids one DescribeFlowLogs or DeleteFlowLogs names (the model's documentation).
const MAX_IDS: usize = 1000;

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::new(Code::InvalidParameter, message)
}

fn render(region: &Region, f: &FlowLog) -> FlowLogOut {
    FlowLogOut {
        creation_time: Some(f.created),
        deliver_logs_permission_arn: f.permission_arn.clone(),
        deliver_cross_account_role: f.cross_account_role.clone(),
        deliver_logs_status: Some("SUCCESS".to_string()),
        flow_log_id: Some(f.id.clone()),
        flow_log_status: Some("ACTIVE".to_string()),
        log_group_name: f.log_group_name.clone(),
        resource_id: Some(f.resource_id.clone()),
        traffic_type: Some(f.traffic_type),
        log_destination_type: Some(f.destination_type),
        log_destination: f.log_destination.clone(),
        log_format: Some(f.log_format.clone()),
        tags: region.tags.tag_set(&f.id),
        max_aggregation_interval: Some(f.max_aggregation_interval),
        destination_options: f.s3_options.map(|(format, hive, hourly)| {
            DestinationOptionsResponse {
                file_format: Some(format),
                hive_compatible_partitions: Some(hive),
                per_hour_partition: Some(hourly),
            }
        }),
        ..Default::default()
    }
}

impl Filterable for FlowLog {
    const NAMES: &'static [&'static str] = &[
        "deliver-log-status",
        "log-destination-type",
        "flow-log-id",
        "log-group-name",
        "resource-id",
        "traffic-type",
    ];

    fn values(&self, name: &str) -> Vec<String> {
        match name {
            "deliver-log-status" => one("SUCCESS"),
            "log-destination-type" => one(self.destination_type.as_str()),
            "flow-log-id" => one(self.id.clone()),
            "log-group-name" => self.log_group_name.clone().into_iter().collect(),
            "resource-id" => one(self.resource_id.clone()),
            "traffic-type" => one(self.traffic_type.as_str()),
            _ => Vec::new(),
        }
    }
}

/// Where a new flow log publishes, checked.
struct Destination {
    kind: LogDestinationType,
    log_group_name: Option<String>,
    log_destination: Option<String>,
    permission_arn: Option<String>,
    s3_options: Option<(DestinationFileFormat, bool, bool)>,
}

/// Whether `name` is a CloudWatch Logs group name: 1 to 512 of letters, digits and
/// `_-/.#`.
fn is_log_group_name(name: &str) -> bool {
    (1..=512).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-/.#".contains(&b))
}

/// The parts after `arn:PARTITION:SERVICE:` of `arn`, if it is an ARN of `service`.
fn arn_of<'a>(arn: &'a str, service: &str) -> Option<&'a str> {
    let rest = arn.strip_prefix("arn:")?;
    let (partition, rest) = rest.split_once(':')?;
    if !partition.starts_with("aws") {
        return None;
    }
    rest.strip_prefix(service)?.strip_prefix(':')
}

/// Whether `arn` is an IAM role's ARN (`arn:aws:iam::123456789012:role/NAME`).
fn is_role_arn(arn: &str) -> bool {
    arn_of(arn, "iam")
        .and_then(|r| r.strip_prefix(':'))
        .and_then(|r| r.split_once(":role/"))
        .is_some_and(|(account, name)| {
            account.len() == 12 && account.bytes().all(|b| b.is_ascii_digit()) && !name.is_empty()
        })
}

/// `REGION:ACCOUNT:` then what follows, of an ARN of a regional service.
fn regional(rest: &str) -> Option<&str> {
    let (region, rest) = rest.split_once(':')?;
    let (account, rest) = rest.split_once(':')?;
    (!region.is_empty() && account.len() == 12 && account.bytes().all(|b| b.is_ascii_digit()))
        .then_some(rest)
}

/// Whether `bucket` is an S3 bucket name: 3 to 63 of lower-case letters, digits, `.` and
/// `-`, beginning and ending with a letter or digit.
fn is_bucket_name(bucket: &str) -> bool {
    let edge = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    (3..=63).contains(&bucket.len())
        && bucket
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-')
        && edge(bucket.bytes().next())
        && edge(bucket.bytes().last())
}

fn bad_destination(arn: &str, what: &str) -> ApiError {
    invalid(format!(
        "LogDestination: {arn} is not a valid ARN of {what}."
    ))
}

/// Checks where `input` publishes, every member against its destination type.
fn destination(input: &mut CreateFlowLogsRequest) -> Result<Destination, ApiError> {
    let kind = input
        .log_destination_type
        .unwrap_or(LogDestinationType::CloudWatchLogs);
    let log_group_name = input.log_group_name.take();
    let log_destination = input.log_destination.take();
    let permission_arn = input.deliver_logs_permission_arn.take();
    if let Some(arn) = permission_arn.as_deref().filter(|a| !is_role_arn(a)) {
        return Err(invalid(format!(
            "DeliverLogsPermissionArn: {arn} is not the ARN of an IAM role."
        )));
    }
    if kind != LogDestinationType::S3 && input.destination_options.is_some() {
        return Err(invalid(
            "DestinationOptions is only applicable for s3 delivery.",
        ));
    }
    if kind != LogDestinationType::CloudWatchLogs && log_group_name.is_some() {
        return Err(invalid(format!(
            "LogGroupName is not applicable for {} delivery.",
            kind.as_str()
        )));
    }
    let mut s3_options = None;
    match kind {
        LogDestinationType::CloudWatchLogs => {
            match (&log_group_name, &log_destination) {
                (Some(_), Some(_)) => {
                    return Err(invalid(
                        "Please only provide LogGroupName or only provide LogDestination.",
                    ));
                }
                (None, None) => {
                    return Err(invalid(
                        "LogGroupName or LogDestination is required for cloud-watch-logs \
                         delivery.",
                    ));
                }
                (Some(name), None) if !is_log_group_name(name) => {
                    return Err(invalid(format!(
                        "LogGroupName: {name} is not a valid log group name."
                    )));
                }
                (None, Some(arn)) => {
                    let group = arn_of(arn, "logs")
                        .and_then(regional)
                        .and_then(|r| r.strip_prefix("log-group:"));
                    if !group.is_some_and(is_log_group_name) {
                        return Err(bad_destination(arn, "a CloudWatch Logs log group"));
                    }
                }
                (Some(_), None) => {}
            }
            if permission_arn.is_none() {
                return Err(invalid(
                    "DeliverLogsPermissionArn is required for cloud-watch-logs delivery.",
                ));
            }
        }
        LogDestinationType::S3 => {
            let arn = log_destination
                .as_deref()
                .ok_or_else(|| invalid("LogDestination is required for s3 delivery."))?;
            let path = arn_of(arn, "s3").and_then(|r| r.strip_prefix("::"));
            let (bucket, prefix) = path
                .map(|p| p.split_once('/').unwrap_or((p, "")))
                .unwrap_or_default();
            if !is_bucket_name(bucket) {
                return Err(bad_destination(arn, "an S3 bucket"));
            }
            if prefix.split('/').any(|folder| folder == "AWSLogs") {
                return Err(invalid(format!(
                    "LogDestination: {arn} uses AWSLogs as a subfolder name, which is reserved."
                )));
            }
            if permission_arn.is_some() {
                return Err(invalid(
                    "DeliverLogsPermissionArn is not applicable for s3 delivery",
                ));
            }
            let options = input.destination_options.take();
            let options = options.as_ref();
            s3_options = Some((
                options
                    .and_then(|o| o.file_format)
                    .unwrap_or(DestinationFileFormat::PlainText),
                options
                    .and_then(|o| o.hive_compatible_partitions)
                    .unwrap_or(false),
                options.and_then(|o| o.per_hour_partition).unwrap_or(false),
            ));
        }
        LogDestinationType::KinesisDataFirehose => {
            let arn = log_destination.as_deref().ok_or_else(|| {
                invalid("LogDestination is required for kinesis-data-firehose delivery.")
            })?;
            let stream = arn_of(arn, "firehose").and_then(regional).and_then(|r| {
                r.strip_prefix("deliverystream/")
                    .or_else(|| r.strip_prefix("deliverystream:"))
            });
            if stream.is_none_or(str::is_empty) {
                return Err(bad_destination(
                    arn,
                    "a Kinesis Data Firehose delivery stream",
                ));
            }
        }
    }
    Ok(Destination {
        kind,
        log_group_name,
        log_destination,
        permission_arn,
        s3_options,
    })
}

/// The record format `LogFormat` asks for: `${field}` of the documented fields, separated by
/// spaces, at least one.
fn log_format(asked: Option<String>) -> Result<String, ApiError> {
    let Some(format) = asked else {
        return Ok(DEFAULT_FORMAT.to_string());
    };
    let mut fields = 0;
    for token in format.split(' ').filter(|t| !t.is_empty()) {
        let field = token
            .strip_prefix("${")
            .and_then(|t| t.strip_suffix('}'))
            .ok_or_else(|| {
                invalid(format!(
                    "LogFormat: '{token}' is not a field; fields are written ${{field-id}}, \
                     separated by spaces."
                ))
            })?;
        if !FIELDS.contains(&field) {
            return Err(invalid(format!("LogFormat: unknown field '{field}'.")));
        }
        fields += 1;
    }
    if fields == 0 {
        return Err(invalid("LogFormat must include at least one field."));
    }
    Ok(format)
}

/// The kind of resource a flow log of `resource_type` watches.
fn watched(resource_type: FlowLogsResourceType) -> Result<Kind, ApiError> {
    match resource_type {
        FlowLogsResourceType::VPC => Ok(Kind::Vpc),
        FlowLogsResourceType::Subnet => Ok(Kind::Subnet),
        FlowLogsResourceType::NetworkInterface => Ok(Kind::NetworkInterface),
        other => Err(ApiError::not_implemented(format!(
            "fakeaws serves flow logs of VPCs, subnets and network interfaces (ResourceType {})",
            other.as_str()
        ))),
    }
}

/// Why a flow log cannot be made for `resource`, if it cannot.
fn refusal(
    region: &Region,
    kind: Kind,
    resource: &str,
    traffic: TrafficType,
    to: &Destination,
) -> Option<(String, String)> {
    if Kind::of_id(resource) != Some(kind) || region.check_taggable(resource).is_err() {
        // AWS names the VPC's code `InvalidVpcId.NotFound` here, not DescribeVpcs'
        // `InvalidVpcID.NotFound`.
        let stem = match kind {
            Kind::Vpc => "InvalidVpcId",
            Kind::Subnet => "InvalidSubnetId",
            _ => "InvalidNetworkInterfaceId",
        };
        return Some((
            format!("{stem}.NotFound"),
            format!("Unknown resource {resource}"),
        ));
    }
    let on_resource: Vec<&FlowLog> = region
        .flow_logs
        .values()
        .filter(|f| f.resource_id == resource)
        .collect();
    let same = |f: &&FlowLog| {
        f.traffic_type == traffic
            && f.destination_type == to.kind
            && f.log_group_name == to.log_group_name
            && f.log_destination == to.log_destination
    };
    if on_resource.iter().any(same) {
        return Some((
            Code::FlowLogAlreadyExists.as_str().to_string(),
            "Error. There is an existing Flow Log with the same configuration and log \
             destination."
                .to_string(),
        ));
    }
    let quota = region.limits.flow_logs_per_resource;
    if on_resource.len() >= quota {
        return Some((
            Code::FlowLogsLimitExceeded.as_str().to_string(),
            format!("{resource} already has {quota} flow logs, the most a resource may have."),
        ));
    }
    None
}

/// `CreateFlowLogs`: a flow log for each resource that can have one, the others listed in
/// `Unsuccessful`; the same ClientToken with the same request answers the same flow logs.
pub fn create_flow_logs(
    region: &mut Region,
    mut input: CreateFlowLogsRequest,
) -> Result<CreateFlowLogsResult, ApiError> {
    let token = input.client_token.take();
    let print = fingerprint(&input);
    if let Some(ids) = region
        .ledger
        .replay("CreateFlowLogs", token.as_deref(), &print)?
    {
        return Ok(CreateFlowLogsResult {
            client_token: token,
            flow_log_ids: Some(
                ids.split(' ')
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect(),
            ),
            unsuccessful: Some(Vec::new()),
        });
    }
    let kind = watched(input.resource_type)?;
    if input.resource_ids.is_empty() {
        return Err(ApiError::missing_parameter("ResourceId"));
    }
    if input.resource_ids.len() > MAX_RESOURCES {
        return Err(ApiError::invalid_parameter(
            "ResourceId",
            &input.resource_ids.len().to_string(),
            "A call makes flow logs for at most 300 resources.",
        ));
    }
    let traffic = input
        .traffic_type
        .ok_or_else(|| ApiError::missing_parameter("TrafficType"))?;
    let to = destination(&mut input)?;
    let interval = input.max_aggregation_interval.unwrap_or(600);
    if interval != 60 && interval != 600 {
        return Err(ApiError::invalid_parameter(
            "MaxAggregationInterval",
            &interval.to_string(),
            "The maximum aggregation interval is 60 or 600 seconds.",
        ));
    }
    let format = log_format(input.log_format.take())?;
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::VpcFlowLog,
    )?;
    let created = region.clock.now_datetime();
    let mut ids = Vec::new();
    let mut unsuccessful = Vec::new();
    for resource in input.resource_ids {
        if let Some((code, message)) = refusal(region, kind, &resource, traffic, &to) {
            unsuccessful.push(UnsuccessfulItem {
                error: Some(UnsuccessfulItemError {
                    code: Some(code),
                    message: Some(message),
                }),
                resource_id: Some(resource),
            });
            continue;
        }
        let log = FlowLog {
            id: region.ids.resource("fl"),
            resource_id: resource,
            traffic_type: traffic,
            destination_type: to.kind,
            log_group_name: to.log_group_name.clone(),
            log_destination: to.log_destination.clone(),
            permission_arn: to.permission_arn.clone(),
            cross_account_role: input.deliver_cross_account_role.clone(),
            log_format: format.clone(),
            max_aggregation_interval: interval,
            s3_options: to.s3_options,
            created,
        };
        region.tags.insert(&log.id, tags.clone());
        ids.push(log.id.clone());
        region.flow_logs.0.insert(log.id.clone(), log);
    }
    region
        .ledger
        .record("CreateFlowLogs", token.as_deref(), &print, &ids.join(" "));
    // AWS answers a token of its own when the call gave none.
    let token = token.unwrap_or_else(|| region.ids.request_id());
    Ok(CreateFlowLogsResult {
        client_token: Some(token),
        flow_log_ids: Some(ids),
        unsuccessful: Some(unsuccessful),
    })
}

/// `DescribeFlowLogs`: by ids (each must exist), filters, pages.
pub fn describe_flow_logs(
    region: &mut Region,
    input: DescribeFlowLogsRequest,
) -> Result<DescribeFlowLogsResult, ApiError> {
    let filters = Filters::parse::<FlowLog>(input.filter)?;
    let region = &*region;
    if input
        .flow_log_ids
        .as_ref()
        .is_some_and(|i| i.len() > MAX_IDS)
    {
        return Err(ApiError::invalid_value(
            "A call names at most 1000 flow log ids.",
        ));
    }
    let found = Kind::FlowLog.describe(
        &region.consistency,
        &region.flow_logs,
        input.flow_log_ids.as_deref(),
        None,
        |f| filters.matches(f, region.tags.get(&f.id)),
    )?;
    let (items, next) = page::page(
        found,
        |f| f.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeFlowLogsResult {
        flow_logs: Some(items.into_iter().map(|f| render(region, f)).collect()),
        next_token: next,
    })
}

/// `DeleteFlowLogs`: each id named that exists is deleted; the others are listed in
/// `Unsuccessful` (`InvalidFlowLogId.NotFound`, AWS's words).
pub fn delete_flow_logs(
    region: &mut Region,
    input: DeleteFlowLogsRequest,
) -> Result<DeleteFlowLogsResult, ApiError> {
    if input.flow_log_ids.is_empty() {
        return Err(ApiError::missing_parameter("FlowLogId"));
    }
    if input.flow_log_ids.len() > MAX_IDS {
        return Err(ApiError::invalid_value(
            "A call names at most 1000 flow log ids.",
        ));
    }
    let missing: Vec<&String> = input
        .flow_log_ids
        .iter()
        .filter(|id| !region.flow_logs.contains_key(id.as_str()))
        .collect();
    let message = format!(
        "These flow log ids in the input list are not found: [TotalCount: {}] {}",
        missing.len(),
        missing
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let unsuccessful = missing
        .iter()
        .map(|id| UnsuccessfulItem {
            error: Some(UnsuccessfulItemError {
                code: Some(format!("{}.NotFound", Kind::FlowLog.code())),
                message: Some(message.clone()),
            }),
            resource_id: Some((*id).clone()),
        })
        .collect();
    for id in &input.flow_log_ids {
        if region.flow_logs.0.remove(id).is_some() {
            region.tags.remove_resource(id);
        }
    }
    Ok(DeleteFlowLogsResult {
        unsuccessful: Some(unsuccessful),
    })
}

/// Removes the flow logs of `resource`, which is being deleted.
pub fn resource_gone(region: &mut Region, resource: &str) {
    if region.flow_logs.is_empty() {
        return;
    }
    let gone: Vec<String> = region
        .flow_logs
        .values()
        .filter(|f| f.resource_id == resource)
        .map(|f| f.id.clone())
        .collect();
    for id in gone {
        region.flow_logs.0.remove(&id);
        region.tags.remove_resource(&id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_formats_are_taken_and_others_refused() {
        assert_eq!(log_format(None).unwrap(), DEFAULT_FORMAT);
        assert!(log_format(Some(DEFAULT_FORMAT.to_string())).is_ok());
        let custom = "${version} ${vpc-id} ${subnet-id} ${instance-id} ${srcaddr} ${dstaddr} \
                      ${srcport} ${dstport} ${protocol} ${tcp-flags} ${type} ${pkt-srcaddr} \
                      ${pkt-dstaddr}";
        assert!(log_format(Some(custom.to_string())).is_ok());
        for bad in [
            "",
            " ",
            "${nope}",
            "version",
            "${version} srcaddr",
            "${version",
        ] {
            assert_eq!(
                log_format(Some(bad.to_string())).unwrap_err().code,
                "InvalidParameter",
                "{bad:?}"
            );
        }
    }

    #[test]
    fn destinations_are_checked_for_their_shape() {
        assert!(is_role_arn(
            "arn:aws:iam::123456789012:role/publishFlowLogs"
        ));
        assert!(!is_role_arn("arn:aws:iam::1234:role/x"));
        assert!(!is_role_arn("arn:aws:iam::123456789012:user/x"));
        assert!(is_bucket_name("flow-log-bucket"));
        assert!(!is_bucket_name("Flow_Logs"));
        assert!(!is_bucket_name("ab"));
        assert!(is_log_group_name("/aws/vpc/flow-logs#1"));
        assert!(!is_log_group_name("a group"));
    }
}
