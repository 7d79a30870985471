//! Launch templates: CreateLaunchTemplate, CreateLaunchTemplateVersion, DescribeLaunchTemplates,
//! DescribeLaunchTemplateVersions, ModifyLaunchTemplate, DeleteLaunchTemplate,
//! DeleteLaunchTemplateVersions, and RunInstances' `LaunchTemplate` ([`resolve`]).
//!
//! A template has numbered versions (1, 2, ...; a number is never used twice), a default one
//! (version 1 until ModifyLaunchTemplate says otherwise) and a latest one. A version's data is
//! kept as DescribeLaunchTemplateVersions answers it (`data`). RunInstances takes the members it
//! leaves out from the version it names (`$Default` unless told), and tags each instance with
//! `aws:ec2launchtemplate:id` and `aws:ec2launchtemplate:version`, as AWS does.

mod data;

use std::collections::BTreeMap;

use aws_smithy_types::DateTime;

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, flag, one};
use crate::ec2::{Kind, fingerprint, page, tags};
use crate::generated::ec2::{
    CreateLaunchTemplateRequest, CreateLaunchTemplateResult, CreateLaunchTemplateVersionRequest,
    CreateLaunchTemplateVersionResult, DeleteLaunchTemplateRequest, DeleteLaunchTemplateResult,
    DeleteLaunchTemplateVersionsRequest, DeleteLaunchTemplateVersionsResponseErrorItem,
    DeleteLaunchTemplateVersionsResponseSuccessItem, DeleteLaunchTemplateVersionsResult,
    DescribeLaunchTemplateVersionsRequest, DescribeLaunchTemplateVersionsResult,
    DescribeLaunchTemplatesRequest, DescribeLaunchTemplatesResult,
    LaunchTemplate as LaunchTemplateOut, LaunchTemplateErrorCode, LaunchTemplateSpecification,
    LaunchTemplateVersion as VersionOut, ModifyLaunchTemplateRequest, ModifyLaunchTemplateResult,
    ResourceType, ResponseError, ResponseLaunchTemplateData, RunInstancesRequest,
};
use crate::protocol::error::ApiError;
use crate::protocol::xml::format_timestamp;
use crate::region::Region;

crate::region::table! {
    /// Launch templates by id.
    LaunchTemplates of LaunchTemplate
}

/// One launch template.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct LaunchTemplate {
    /// `lt-...`.
    pub id: String,
    /// Its name, unique in the region.
    pub name: String,
    /// When it was created.
    #[serde(with = "crate::state::with::time")]
    pub created: DateTime,
    /// The default version's number.
    pub default_version: i64,
    /// The highest version number given so far (numbers are not reused).
    pub last_number: i64,
    /// Its versions by number.
    pub versions: BTreeMap<i64, Version>,
}

/// One version of a launch template.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Version {
    /// Its description.
    pub description: Option<String>,
    /// When it was created.
    #[serde(with = "crate::state::with::time")]
    pub created: DateTime,
    /// Its data, as AWS answers it.
    pub data: ResponseLaunchTemplateData,
}

impl LaunchTemplate {
    fn latest(&self) -> i64 {
        self.versions
            .keys()
            .next_back()
            .copied()
            .unwrap_or(self.last_number)
    }

    /// The number `version` names (`$Latest`, `$Default` or a number), if it exists.
    fn number(&self, version: &str) -> Result<i64, ApiError> {
        let n = match version {
            "$Latest" => self.latest(),
            "$Default" => self.default_version,
            v => v.parse::<i64>().map_err(|_| {
                ApiError::invalid_value(format!(
                    "The launch template version '{v}' is not valid: give a version number, $Latest or $Default."
                ))
            })?,
        };
        if self.versions.contains_key(&n) {
            Ok(n)
        } else {
            Err(version_not_found(&self.id, version))
        }
    }
}

fn version_not_found(id: &str, version: &str) -> ApiError {
    ApiError::new(
        Code::InvalidLaunchTemplateIdVersionNotFound,
        format!("Could not find launch template version {version} for launch template {id}"),
    )
}

fn name_not_found() -> ApiError {
    ApiError::new(
        Code::InvalidLaunchTemplateNameNotFoundException,
        "At least one of the launch templates specified in the request does not exist.",
    )
}

/// Checks a template name as AWS does: 3 to 128 of letters, digits and `( ) . - / _`.
fn check_name(name: &str) -> Result<(), ApiError> {
    let ok = (3..=128).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "().-/_".contains(c));
    if ok {
        Ok(())
    } else {
        Err(ApiError::new(
            Code::InvalidLaunchTemplateNameMalformedException,
            "A launch template name must be between 3 and 128 characters, and may contain letters, numbers, and the following characters: - ( ) . / _.",
        ))
    }
}

/// The id of the template a request names by `id` or `name` (exactly one of them).
fn named(region: &Region, id: Option<&str>, name: Option<&str>) -> Result<String, ApiError> {
    match (id, name) {
        (Some(_), Some(_)) => Err(ApiError::invalid_combination(
            "Specify either LaunchTemplateId or LaunchTemplateName, not both.",
        )),
        (None, None) => Err(ApiError::missing_parameter(
            "LaunchTemplateId or LaunchTemplateName",
        )),
        (Some(id), None) => Ok(Kind::LaunchTemplate
            .get(&region.launch_templates, id)?
            .id
            .clone()),
        (None, Some(name)) => region
            .launch_templates
            .values()
            .find(|t| t.name == name)
            .map(|t| t.id.clone())
            .ok_or_else(name_not_found),
    }
}

fn created_by(region: &Region) -> String {
    format!(
        "arn:{}:iam::{}:root",
        crate::ec2::account::arn_partition(&region.name),
        region.account_id
    )
}

fn render(region: &Region, t: &LaunchTemplate) -> LaunchTemplateOut {
    LaunchTemplateOut {
        launch_template_id: Some(t.id.clone()),
        launch_template_name: Some(t.name.clone()),
        create_time: Some(t.created),
        created_by: Some(created_by(region)),
        default_version_number: Some(t.default_version),
        latest_version_number: Some(t.latest()),
        tags: region.tags.tag_set(&t.id),
        operator: None,
    }
}

fn render_version(region: &Region, t: &LaunchTemplate, n: i64, v: &Version) -> VersionOut {
    VersionOut {
        launch_template_id: Some(t.id.clone()),
        launch_template_name: Some(t.name.clone()),
        version_number: Some(n),
        version_description: v.description.clone(),
        create_time: Some(v.created),
        created_by: Some(created_by(region)),
        default_version: Some(n == t.default_version),
        launch_template_data: Some(v.data.clone()),
        operator: None,
    }
}

fn check_description(d: Option<&String>) -> Result<(), ApiError> {
    match d {
        Some(d) if d.chars().count() > 255 => Err(ApiError::invalid_parameter(
            "VersionDescription",
            d,
            "A version description is at most 255 characters.",
        )),
        _ => Ok(()),
    }
}

/// `CreateLaunchTemplate`: a template with its version 1, the default and the latest.
pub fn create_launch_template(
    region: &mut Region,
    mut input: CreateLaunchTemplateRequest,
) -> Result<CreateLaunchTemplateResult, ApiError> {
    let token = input.client_token.take();
    let print = fingerprint(&input);
    if let Some(id) = region
        .ledger
        .replay("CreateLaunchTemplate", token.as_deref(), &print)?
        && let Some(t) = region.launch_templates.get(&id)
    {
        return Ok(CreateLaunchTemplateResult {
            launch_template: Some(render(region, t)),
            warning: None,
        });
    }
    let name = input.launch_template_name;
    check_name(&name)?;
    check_description(input.version_description.as_ref())?;
    if region.launch_templates.values().any(|t| t.name == name) {
        return Err(ApiError::new(
            Code::InvalidLaunchTemplateNameAlreadyExistsException,
            format!("Launch template name already in use: {name}"),
        ));
    }
    let data = data::from_request(input.launch_template_data)?;
    let tags = tags::from_specs(
        input.tag_specifications.as_deref(),
        ResourceType::LaunchTemplate,
    )?;
    if region.launch_templates.len() >= region.limits.launch_templates {
        return Err(ApiError::new(
            Code::LaunchTemplateLimitExceeded,
            "You've reached the maximum number of launch templates for this account.",
        ));
    }
    let id = region.ids.resource("lt");
    let now = region.clock.now_datetime();
    let template = LaunchTemplate {
        id: id.clone(),
        name,
        created: now,
        default_version: 1,
        last_number: 1,
        versions: BTreeMap::from([(
            1,
            Version {
                description: input.version_description,
                created: now,
                data,
            },
        )]),
    };
    region.tags.insert(&id, tags);
    region
        .ledger
        .record("CreateLaunchTemplate", token.as_deref(), &print, &id);
    let out = render(region, &template);
    region.launch_templates.0.insert(id, template);
    Ok(CreateLaunchTemplateResult {
        launch_template: Some(out),
        warning: None,
    })
}

/// `CreateLaunchTemplateVersion`: the next number; from `SourceVersion`'s data with the given
/// members laid over it, or from the given members alone.
pub fn create_launch_template_version(
    region: &mut Region,
    mut input: CreateLaunchTemplateVersionRequest,
) -> Result<CreateLaunchTemplateVersionResult, ApiError> {
    let token = input.client_token.take();
    let print = fingerprint(&input);
    let replayed = region
        .ledger
        .replay("CreateLaunchTemplateVersion", token.as_deref(), &print)?;
    if let Some(key) = replayed
        && let Some((id, n)) = key.split_once(' ')
        && let Ok(n) = n.parse::<i64>()
        && let Some(out) = version_made(region, id, n)
    {
        return Ok(out);
    }
    let id = named(
        region,
        input.launch_template_id.as_deref(),
        input.launch_template_name.as_deref(),
    )?;
    check_description(input.version_description.as_ref())?;
    let given = data::from_request(input.launch_template_data)?;
    let t = Kind::LaunchTemplate.get(&region.launch_templates, &id)?;
    let source = match input.source_version.as_deref() {
        Some(v) => t.versions.get(&t.number(v)?),
        None => None,
    };
    let data = match source {
        Some(source) => data::overlay(&source.data, given)?,
        None => given,
    };
    let now = region.clock.now_datetime();
    let Some(t) = region.launch_templates.0.get_mut(&id) else {
        return Err(Kind::LaunchTemplate.not_found(&[&id]));
    };
    t.last_number += 1;
    let n = t.last_number;
    t.versions.insert(
        n,
        Version {
            description: input.version_description,
            created: now,
            data,
        },
    );
    region.ledger.record(
        "CreateLaunchTemplateVersion",
        token.as_deref(),
        &print,
        &format!("{id} {n}"),
    );
    version_made(region, &id, n).ok_or_else(|| version_not_found(&id, &n.to_string()))
}

/// The answer of a CreateLaunchTemplateVersion that made version `n` of template `id`.
fn version_made(region: &Region, id: &str, n: i64) -> Option<CreateLaunchTemplateVersionResult> {
    let t = region.launch_templates.get(id)?;
    let v = t.versions.get(&n)?;
    Some(CreateLaunchTemplateVersionResult {
        launch_template_version: Some(render_version(region, t, n, v)),
        warning: None,
    })
}

impl Filterable for (&LaunchTemplate, &Region) {
    const NAMES: &'static [&'static str] = &["create-time", "launch-template-name"];

    fn values(&self, name: &str) -> Vec<String> {
        let (t, _) = *self;
        match name {
            "create-time" => one(format_timestamp(t.created)),
            "launch-template-name" => one(t.name.clone()),
            _ => Vec::new(),
        }
    }
}

/// `DescribeLaunchTemplates`: by ids, names or filters, paginated.
pub fn describe_launch_templates(
    region: &mut Region,
    input: DescribeLaunchTemplatesRequest,
) -> Result<DescribeLaunchTemplatesResult, ApiError> {
    let filters = Filters::parse::<(&LaunchTemplate, &Region)>(input.filters)?;
    let region = &*region;
    let names = input.launch_template_names.unwrap_or_default();
    for name in &names {
        if !region.launch_templates.values().any(|t| &t.name == name) {
            return Err(name_not_found());
        }
    }
    let found: Vec<&LaunchTemplate> = Kind::LaunchTemplate
        .select(
            &region.launch_templates,
            input.launch_template_ids.as_deref(),
        )?
        .into_iter()
        .filter(|t| names.is_empty() || names.contains(&t.name))
        .filter(|t| filters.matches(&(*t, region), region.tags.get(&t.id)))
        .collect();
    let (items, next) = page::page(
        found,
        |t| t.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeLaunchTemplatesResult {
        launch_templates: Some(items.into_iter().map(|t| render(region, t)).collect()),
        next_token: next,
    })
}

/// One version, with its template, as DescribeLaunchTemplateVersions filters it.
struct Listed<'a> {
    template: &'a LaunchTemplate,
    number: i64,
    version: &'a Version,
    key: String,
}

impl Filterable for Listed<'_> {
    const NAMES: &'static [&'static str] = &[
        "create-time",
        "ebs-optimized",
        "http-endpoint",
        "http-protocol-ipv4",
        "host-resource-group-arn",
        "http-tokens",
        "iam-instance-profile",
        "image-id",
        "instance-type",
        "is-default-version",
        "kernel-id",
        "license-configuration-arn",
        "network-card-index",
        "ram-disk-id",
    ];
    // No kernels, RAM disks, licences, host resource groups or network cards here; the
    // metadata service's IPv4 endpoint is not a template member the fake keeps.
    const NEVER_SET: &'static [&'static str] = &[
        "http-protocol-ipv4",
        "host-resource-group-arn",
        "kernel-id",
        "license-configuration-arn",
        "network-card-index",
        "ram-disk-id",
    ];
    const TAGGABLE: bool = false;

    fn values(&self, name: &str) -> Vec<String> {
        let d = &self.version.data;
        let metadata = d.metadata_options.as_ref();
        match name {
            "create-time" => one(format_timestamp(self.version.created)),
            "ebs-optimized" => d.ebs_optimized.map(flag).unwrap_or_default(),
            "http-endpoint" => metadata
                .and_then(|m| m.http_endpoint)
                .map(|e| one(e.as_str()))
                .unwrap_or_default(),
            "http-tokens" => metadata
                .and_then(|m| m.http_tokens)
                .map(|e| one(e.as_str()))
                .unwrap_or_default(),
            "iam-instance-profile" => d
                .iam_instance_profile
                .as_ref()
                .and_then(|p| p.arn.clone().or_else(|| p.name.clone()))
                .map(one)
                .unwrap_or_default(),
            "image-id" => d.image_id.clone().map(one).unwrap_or_default(),
            "instance-type" => d.instance_type.map(|t| one(t.as_str())).unwrap_or_default(),
            "is-default-version" => flag(self.number == self.template.default_version),
            _ => Vec::new(),
        }
    }
}

/// `DescribeLaunchTemplateVersions`: of one template (by `Versions`, `$Latest`, `$Default`,
/// numbers, or a `MinVersion`..`MaxVersion` range, else all), or the `$Latest` and `$Default`
/// versions of every template; newest first, filtered, paginated.
pub fn describe_launch_template_versions(
    region: &mut Region,
    input: DescribeLaunchTemplateVersionsRequest,
) -> Result<DescribeLaunchTemplateVersionsResult, ApiError> {
    let filters = Filters::parse::<Listed<'_>>(input.filters)?;
    let region = &*region;
    let versions = input.versions.unwrap_or_default();
    let one_template = input.launch_template_id.is_some() || input.launch_template_name.is_some();
    let templates: Vec<&LaunchTemplate> = if one_template {
        let id = named(
            region,
            input.launch_template_id.as_deref(),
            input.launch_template_name.as_deref(),
        )?;
        vec![Kind::LaunchTemplate.get(&region.launch_templates, &id)?]
    } else {
        if let Some(v) = versions.iter().find(|v| !v.starts_with('$')) {
            return Err(ApiError::invalid_value(format!(
                "Version {v} cannot be described across launch templates: only $Latest and $Default can."
            )));
        }
        region.launch_templates.values().collect()
    };
    let bound = |raw: Option<&String>| -> Result<Option<i64>, ApiError> {
        raw.map(|r| {
            r.parse::<i64>().map_err(|_| {
                ApiError::invalid_value(format!("The version bound '{r}' is not a number."))
            })
        })
        .transpose()
    };
    let (min, max) = (
        bound(input.min_version.as_ref())?,
        bound(input.max_version.as_ref())?,
    );
    let mut listed = Vec::new();
    for t in templates {
        let numbers: Vec<i64> = if versions.is_empty() {
            t.versions.keys().copied().collect()
        } else {
            let mut numbers = Vec::new();
            for v in &versions {
                numbers.push(t.number(v)?);
            }
            numbers.sort_unstable();
            numbers.dedup();
            numbers
        };
        for n in numbers.into_iter().rev() {
            if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
                continue;
            }
            if let Some(version) = t.versions.get(&n) {
                listed.push(Listed {
                    template: t,
                    number: n,
                    version,
                    key: format!("{} {:020}", t.id, i64::MAX - n),
                });
            }
        }
    }
    listed.retain(|l| filters.matches(l, None));
    let (items, next) = page::page(
        listed,
        |l| l.key.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeLaunchTemplateVersionsResult {
        launch_template_versions: Some(
            items
                .into_iter()
                .map(|l| render_version(region, l.template, l.number, l.version))
                .collect(),
        ),
        next_token: next,
    })
}

/// `ModifyLaunchTemplate`: a new default version.
pub fn modify_launch_template(
    region: &mut Region,
    input: ModifyLaunchTemplateRequest,
) -> Result<ModifyLaunchTemplateResult, ApiError> {
    let id = named(
        region,
        input.launch_template_id.as_deref(),
        input.launch_template_name.as_deref(),
    )?;
    if let Some(v) = input.default_version.as_deref() {
        let n = Kind::LaunchTemplate
            .get(&region.launch_templates, &id)?
            .number(v)?;
        if let Some(t) = region.launch_templates.0.get_mut(&id) {
            t.default_version = n;
        }
    }
    let t = Kind::LaunchTemplate.get(&region.launch_templates, &id)?;
    Ok(ModifyLaunchTemplateResult {
        launch_template: Some(render(region, t)),
    })
}

/// `DeleteLaunchTemplate`: the template and every version; answers what it was.
pub fn delete_launch_template(
    region: &mut Region,
    input: DeleteLaunchTemplateRequest,
) -> Result<DeleteLaunchTemplateResult, ApiError> {
    let id = named(
        region,
        input.launch_template_id.as_deref(),
        input.launch_template_name.as_deref(),
    )?;
    let out = region.launch_templates.get(&id).map(|t| render(region, t));
    region.launch_templates.0.remove(&id);
    region.tags.remove_resource(&id);
    Ok(DeleteLaunchTemplateResult {
        launch_template: out,
    })
}

/// `DeleteLaunchTemplateVersions`: each version named, but never the default one; each
/// answered as deleted or not, with why.
pub fn delete_launch_template_versions(
    region: &mut Region,
    input: DeleteLaunchTemplateVersionsRequest,
) -> Result<DeleteLaunchTemplateVersionsResult, ApiError> {
    let id = named(
        region,
        input.launch_template_id.as_deref(),
        input.launch_template_name.as_deref(),
    )?;
    let Some(t) = region.launch_templates.0.get_mut(&id) else {
        return Err(Kind::LaunchTemplate.not_found(&[&id]));
    };
    let mut deleted = Vec::new();
    let mut refused = Vec::new();
    for raw in input.versions {
        let number = raw.parse::<i64>().ok();
        let refusal = match number {
            None => Some((
                LaunchTemplateErrorCode::LaunchTemplateVersionDoesNotExist,
                format!("The version '{raw}' is not a version number."),
            )),
            Some(n) if n == t.default_version => Some((
                LaunchTemplateErrorCode::UnexpectedError,
                "Cannot delete the default version of a launch template.".to_string(),
            )),
            Some(n) if t.versions.remove(&n).is_none() => Some((
                LaunchTemplateErrorCode::LaunchTemplateVersionDoesNotExist,
                format!("The specified launch template version, {n}, does not exist."),
            )),
            Some(_) => None,
        };
        match refusal {
            None => deleted.push(DeleteLaunchTemplateVersionsResponseSuccessItem {
                launch_template_id: Some(t.id.clone()),
                launch_template_name: Some(t.name.clone()),
                version_number: number,
            }),
            Some((code, message)) => refused.push(DeleteLaunchTemplateVersionsResponseErrorItem {
                launch_template_id: Some(t.id.clone()),
                launch_template_name: Some(t.name.clone()),
                version_number: number,
                response_error: Some(ResponseError {
                    code: Some(code),
                    message: Some(message),
                }),
            }),
        }
    }
    Ok(DeleteLaunchTemplateVersionsResult {
        successfully_deleted_launch_template_versions: Some(deleted),
        unsuccessfully_deleted_launch_template_versions: Some(refused),
    })
}

/// Completes a RunInstances request from the launch template it names; answers the
/// template's id and the version used, for the instances' `aws:ec2launchtemplate:*` tags.
pub fn resolve(
    region: &Region,
    spec: &LaunchTemplateSpecification,
    input: &mut RunInstancesRequest,
) -> Result<(String, i64), ApiError> {
    let id = named(
        region,
        spec.launch_template_id.as_deref(),
        spec.launch_template_name.as_deref(),
    )?;
    let t = Kind::LaunchTemplate.get(&region.launch_templates, &id)?;
    let n = t.number(spec.version.as_deref().unwrap_or("$Default"))?;
    if let Some(v) = t.versions.get(&n) {
        data::merge_into(&v.data, input);
    }
    Ok((id, n))
}
