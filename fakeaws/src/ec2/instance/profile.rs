//! IAM instance profile associations: the profile an instance launched with, and
//! AssociateIamInstanceProfile, DescribeIamInstanceProfileAssociations,
//! ReplaceIamInstanceProfileAssociation and DisassociateIamInstanceProfile.
//!
//! An instance holds one association at most (`IncorrectState` `There is an existing
//! association for instance i-...`, AWS's words). Each call answers the association while it
//! changes (`associating`, `disassociating`), as AWS answers it; describes show it done
//! right after. Profiles are not checked against IAM (there is no IAM here): a name or an
//! IAM ARN of the region's partition (`arn:aws:iam::`, `arn:aws-cn:iam::`, ...) is taken.

use aws_smithy_types::DateTime;

use crate::ec2::error::Code;
use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::{Kind, page};
use crate::generated::ec2::{
    AssociateIamInstanceProfileRequest, AssociateIamInstanceProfileResult,
    DescribeIamInstanceProfileAssociationsRequest, DescribeIamInstanceProfileAssociationsResult,
    DisassociateIamInstanceProfileRequest, DisassociateIamInstanceProfileResult,
    IamInstanceProfile, IamInstanceProfileAssociation, IamInstanceProfileAssociationState,
    IamInstanceProfileSpecification, InstanceStateName,
    ReplaceIamInstanceProfileAssociationRequest, ReplaceIamInstanceProfileAssociationResult,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::{Instance, iam_profile_name, iam_profile_record};

/// An instance's association with its profile.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Association {
    /// `iip-assoc-...`.
    pub id: String,
    /// When it was made.
    #[serde(with = "crate::state::with::time")]
    pub since: DateTime,
}

/// The association of `i`, in `state`, as the API shows it.
fn render(
    i: &Instance,
    state: IamInstanceProfileAssociationState,
) -> IamInstanceProfileAssociation {
    IamInstanceProfileAssociation {
        association_id: i.iam_association.as_ref().map(|a| a.id.clone()),
        instance_id: Some(i.id.clone()),
        iam_instance_profile: i.iam_profile.as_ref().map(|(arn, id)| IamInstanceProfile {
            arn: Some(arn.clone()),
            id: Some(id.clone()),
        }),
        state: Some(state),
        timestamp: i.iam_association.as_ref().map(|a| a.since),
    }
}

/// Whether `i` is listed with its association: it has one, and is not terminated.
fn listed(i: &Instance) -> bool {
    i.iam_association.is_some() && i.state != InstanceStateName::Terminated
}

/// The instance holding the association `id`.
fn holder<'a>(region: &'a Region, id: &str) -> Result<&'a Instance, ApiError> {
    region
        .instances
        .values()
        .find(|i| listed(i) && i.iam_association.as_ref().is_some_and(|a| a.id == id))
        .ok_or_else(|| {
            ApiError::new(
                Code::InvalidAssociationIDNotFound,
                format!("An invalid association-id of '{id}' was given"),
            )
        })
}

/// Gives instance `instance_id` the profile `spec` under a new association; answers it
/// `associating`.
fn associate(
    region: &mut Region,
    instance_id: &str,
    spec: &IamInstanceProfileSpecification,
) -> Result<IamInstanceProfileAssociation, ApiError> {
    let name = iam_profile_name(&region.name, Some(spec))?
        .ok_or_else(|| ApiError::missing_parameter("IamInstanceProfile.Name"))?;
    let record = iam_profile_record(&region.name, &region.account_id, &name);
    let association = Association {
        id: region.ids.resource("iip-assoc"),
        since: region.clock.now_datetime(),
    };
    let i = Kind::Instance.get_mut(&mut region.instances.0, instance_id)?;
    i.iam_profile = Some(record);
    i.iam_association = Some(association);
    Ok(render(i, IamInstanceProfileAssociationState::Associating))
}

/// `AssociateIamInstanceProfile`: a running or stopped instance without an association takes
/// the profile.
pub fn associate_iam_instance_profile(
    region: &mut Region,
    input: AssociateIamInstanceProfileRequest,
) -> Result<AssociateIamInstanceProfileResult, ApiError> {
    let i = Kind::Instance.get(&region.instances, &input.instance_id)?;
    if !matches!(
        i.state,
        InstanceStateName::Running | InstanceStateName::Stopped
    ) {
        return Err(ApiError::new(
            Code::IncorrectInstanceState,
            format!(
                "The instance '{}' is not in a state from which a profile can be associated: \
                 it is {}.",
                i.id,
                i.state.as_str()
            ),
        ));
    }
    if i.iam_association.is_some() {
        return Err(ApiError::new(
            Code::IncorrectState,
            format!("There is an existing association for instance {}", i.id),
        ));
    }
    let association = associate(region, &input.instance_id, &input.iam_instance_profile)?;
    Ok(AssociateIamInstanceProfileResult {
        iam_instance_profile_association: Some(association),
    })
}

/// `ReplaceIamInstanceProfileAssociation`: the association's instance takes the new profile
/// under a new association, the old one ended.
pub fn replace_iam_instance_profile_association(
    region: &mut Region,
    input: ReplaceIamInstanceProfileAssociationRequest,
) -> Result<ReplaceIamInstanceProfileAssociationResult, ApiError> {
    let instance_id = holder(region, &input.association_id)?.id.clone();
    let association = associate(region, &instance_id, &input.iam_instance_profile)?;
    Ok(ReplaceIamInstanceProfileAssociationResult {
        iam_instance_profile_association: Some(association),
    })
}

/// `DisassociateIamInstanceProfile`: the instance loses its profile; answered
/// `disassociating`.
pub fn disassociate_iam_instance_profile(
    region: &mut Region,
    input: DisassociateIamInstanceProfileRequest,
) -> Result<DisassociateIamInstanceProfileResult, ApiError> {
    let instance_id = holder(region, &input.association_id)?.id.clone();
    let i = Kind::Instance.get_mut(&mut region.instances.0, &instance_id)?;
    let out = render(i, IamInstanceProfileAssociationState::Disassociating);
    i.iam_profile = None;
    i.iam_association = None;
    Ok(DisassociateIamInstanceProfileResult {
        iam_instance_profile_association: Some(out),
    })
}

/// The id of `i`'s association (empty when it has none).
fn association_id(i: &Instance) -> &str {
    i.iam_association.as_ref().map_or("", |a| a.id.as_str())
}

/// An association as DescribeIamInstanceProfileAssociations filters it.
struct Listed<'a>(&'a Instance);

impl Filterable for Listed<'_> {
    const NAMES: &'static [&'static str] = &["instance-id", "state"];
    const TAGGABLE: bool = false;

    fn values(&self, name: &str) -> Vec<String> {
        match name {
            "instance-id" => one(self.0.id.clone()),
            "state" => one(IamInstanceProfileAssociationState::Associated
                .as_str()
                .to_string()),
            _ => Vec::new(),
        }
    }
}

/// `DescribeIamInstanceProfileAssociations`: the associations named (each must exist), else
/// every association of an instance that is not terminated; filters `instance-id` and
/// `state`; `MaxResults` 5..1000 and `NextToken`, not with ids.
pub fn describe_iam_instance_profile_associations(
    region: &mut Region,
    input: DescribeIamInstanceProfileAssociationsRequest,
) -> Result<DescribeIamInstanceProfileAssociationsResult, ApiError> {
    let ids = input.association_ids.unwrap_or_default();
    if !ids.is_empty() && input.max_results.is_some() {
        return Err(ApiError::invalid_combination(
            "The parameter associationIds cannot be used with the parameter maxResults",
        ));
    }
    page::check_max_results(input.max_results, 5, 1000)?;
    let filters = Filters::parse::<Listed<'_>>(input.filters)?;
    let mut found: Vec<&Instance> = Vec::new();
    if ids.is_empty() {
        found.extend(region.instances.values().filter(|i| listed(i)));
    } else {
        for id in &ids {
            found.push(holder(region, id)?);
        }
    }
    found.retain(|i| filters.matches(&Listed(i), None));
    found.sort_by(|a, b| association_id(a).cmp(association_id(b)));
    let (items, next) = page::page(
        found,
        |i| association_id(i),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeIamInstanceProfileAssociationsResult {
        iam_instance_profile_associations: Some(
            items
                .into_iter()
                .map(|i| render(i, IamInstanceProfileAssociationState::Associated))
                .collect(),
        ),
        next_token: next,
    })
}
