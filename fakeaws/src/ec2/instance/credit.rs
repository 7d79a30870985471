//! CPU credits of burstable performance instances: the credit option an instance launches
//! with (RunInstances' `CreditSpecification`, else the account's default for its family),
//! DescribeInstanceCreditSpecifications, ModifyInstanceCreditSpecification, and the account's
//! defaults per family (GetDefaultCreditSpecification, ModifyDefaultCreditSpecification).
//!
//! As the user guide documents: `t2` launches `standard` by default, `t3`, `t3a` and `t4g`
//! `unlimited` (and here `t8i` too). An instance keeps its option when resized to a type of
//! another family; one resized onto a burstable family without an option takes that family's
//! default. A type outside the burstable families takes no credit option at launch
//! (`InstanceCreditSpecification.NotSupported`, AWS's words), and is described as `standard`,
//! as the API reference says.

use std::collections::BTreeMap;

use crate::ec2::filter::{Filterable, Filters, one};
use crate::ec2::{Kind, page};
use crate::generated::ec2::{
    DescribeInstanceCreditSpecificationsRequest, DescribeInstanceCreditSpecificationsResult,
    GetDefaultCreditSpecificationRequest, GetDefaultCreditSpecificationResult,
    InstanceCreditSpecification, InstanceFamilyCreditSpecification, InstanceStateName,
    InstanceType, ModifyDefaultCreditSpecificationRequest, ModifyDefaultCreditSpecificationResult,
    ModifyInstanceCreditSpecificationRequest, ModifyInstanceCreditSpecificationResult,
    SuccessfulInstanceCreditSpecificationItem, UnlimitedSupportedInstanceFamily,
    UnsuccessfulInstanceCreditSpecificationErrorCode as ItemCode,
    UnsuccessfulInstanceCreditSpecificationItem, UnsuccessfulInstanceCreditSpecificationItemError,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

use super::Instance;

/// The credit options.
const STANDARD: &str = "standard";
const UNLIMITED: &str = "unlimited";

/// The account's default credit option per burstable family, where it differs from AWS's.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Defaults(BTreeMap<String, String>);

impl Defaults {
    /// The default credit option of `family`: the account's, else AWS's.
    fn of(&self, family: UnlimitedSupportedInstanceFamily) -> &str {
        match self.0.get(family.as_str()) {
            Some(set) => set,
            None if family == UnlimitedSupportedInstanceFamily::T2 => STANDARD,
            None => UNLIMITED,
        }
    }
}

/// The burstable family of `t`, if it is of one.
pub(super) fn family_of(t: InstanceType) -> Option<UnlimitedSupportedInstanceFamily> {
    let family = t.as_str().split('.').next()?;
    UnlimitedSupportedInstanceFamily::from_wire(family)
}

/// `cpu_credits`, checked to be a credit option.
fn option(cpu_credits: &str, parameter: &str) -> Result<String, ApiError> {
    let lower = cpu_credits.to_ascii_lowercase();
    if lower == STANDARD || lower == UNLIMITED {
        Ok(lower)
    } else {
        Err(ApiError::invalid_value(format!(
            "Value ({cpu_credits}) for parameter {parameter} is invalid. Valid values are \
             standard and unlimited."
        )))
    }
}

/// The credit option an instance of type `t` launches with: the one asked for, else the
/// account's default for its family; none for a type outside the burstable families, which
/// may not ask for one.
pub(super) fn at_launch(
    region: &Region,
    t: InstanceType,
    asked: Option<&str>,
) -> Result<Option<String>, ApiError> {
    match (family_of(t), asked) {
        (Some(_), Some(asked)) => option(asked, "CreditSpecification.CpuCredits").map(Some),
        (Some(family), None) => Ok(Some(region.credit_defaults.of(family).to_string())),
        (None, None) => Ok(None),
        (None, Some(_)) => Err(ApiError::new(
            crate::ec2::error::Code::InstanceCreditSpecificationNotSupported,
            format!(
                "The {} instance type does not support T2 Unlimited.",
                t.as_str()
            ),
        )),
    }
}

/// The credit option of an instance resized to `t`: its own when it has one, else the
/// default of `t`'s family.
pub(super) fn after_resize(region: &Region, i: &Instance, t: InstanceType) -> Option<String> {
    i.cpu_credits
        .clone()
        .or_else(|| family_of(t).map(|family| region.credit_defaults.of(family).to_string()))
}

/// An instance as DescribeInstanceCreditSpecifications lists it.
struct Listed<'a>(&'a Instance);

impl Filterable for Listed<'_> {
    const NAMES: &'static [&'static str] = &["instance-id"];
    const TAGGABLE: bool = false;

    fn values(&self, name: &str) -> Vec<String> {
        match name {
            "instance-id" => one(self.0.id.clone()),
            _ => Vec::new(),
        }
    }
}

/// `DescribeInstanceCreditSpecifications`: the instances named (a type outside the burstable
/// families `standard`), else every instance the region still lists whose option is
/// `unlimited`.
pub fn describe_instance_credit_specifications(
    region: &mut Region,
    input: DescribeInstanceCreditSpecificationsRequest,
) -> Result<DescribeInstanceCreditSpecificationsResult, ApiError> {
    let named = input.instance_ids.as_deref().is_some_and(|i| !i.is_empty());
    if named && input.max_results.is_some() {
        return Err(ApiError::invalid_combination(
            "The parameter instancesSet cannot be used with the parameter maxResults",
        ));
    }
    page::check_max_results(input.max_results, 5, 1000)?;
    let filters = Filters::parse::<Listed<'_>>(input.filters)?;
    let instances = Kind::Instance.select(&region.instances, input.instance_ids.as_deref())?;
    let found: Vec<&Instance> = instances
        .into_iter()
        .filter(|i| named || i.cpu_credits.as_deref() == Some(UNLIMITED))
        .filter(|i| filters.matches(&Listed(i), None))
        .collect();
    let (items, next) = page::page(
        found,
        |i| i.id.as_str(),
        input.max_results,
        input.next_token.as_deref(),
    )?;
    Ok(DescribeInstanceCreditSpecificationsResult {
        instance_credit_specifications: Some(
            items
                .into_iter()
                .map(|i| InstanceCreditSpecification {
                    instance_id: Some(i.id.clone()),
                    cpu_credits: Some(i.cpu_credits.clone().unwrap_or_else(|| STANDARD.into())),
                })
                .collect(),
        ),
        next_token: next,
    })
}

/// Why the instance `id` cannot take a credit option, if it cannot.
fn refusal(region: &Region, id: &str) -> Option<(ItemCode, String)> {
    if Kind::Instance.check_shape(id).is_err() {
        return Some((
            ItemCode::InvalidInstanceIDMalformed,
            format!("Invalid id: \"{id}\" (expecting \"i-...\")"),
        ));
    }
    let Some(i) = region.instances.get(id) else {
        return Some((
            ItemCode::InvalidInstanceIDNotFound,
            format!("The instance ID '{id}' does not exist"),
        ));
    };
    if !matches!(
        i.state,
        InstanceStateName::Running | InstanceStateName::Stopped
    ) {
        return Some((
            ItemCode::IncorrectInstanceState,
            format!(
                "The instance '{id}' is not in a state from which its credit option can be \
                 modified: it is {}.",
                i.state.as_str()
            ),
        ));
    }
    if family_of(i.instance_type).is_none() {
        return Some((
            ItemCode::InstanceCreditSpecificationNotSupported,
            format!(
                "The {} instance type does not support T2 Unlimited.",
                i.instance_type.as_str()
            ),
        ));
    }
    None
}

/// `ModifyInstanceCreditSpecification`: each running or stopped burstable instance named takes
/// its new option; each other one is listed as unsuccessful, with why.
pub fn modify_instance_credit_specification(
    region: &mut Region,
    input: ModifyInstanceCreditSpecificationRequest,
) -> Result<ModifyInstanceCreditSpecificationResult, ApiError> {
    if input.instance_credit_specifications.is_empty() {
        return Err(ApiError::missing_parameter("InstanceCreditSpecifications"));
    }
    let mut wanted = Vec::new();
    for item in &input.instance_credit_specifications {
        let cpu_credits = item.cpu_credits.as_deref().ok_or_else(|| {
            ApiError::missing_parameter("InstanceCreditSpecification.N.CpuCredits")
        })?;
        wanted.push((item.instance_id.clone(), option(cpu_credits, "CpuCredits")?));
    }
    let mut successful = Vec::new();
    let mut unsuccessful = Vec::new();
    for (id, cpu_credits) in wanted {
        match refusal(region, &id) {
            Some((code, message)) => {
                unsuccessful.push(UnsuccessfulInstanceCreditSpecificationItem {
                    instance_id: Some(id),
                    error: Some(UnsuccessfulInstanceCreditSpecificationItemError {
                        code: Some(code),
                        message: Some(message),
                    }),
                });
            }
            None => {
                if let Some(i) = region.instances.0.get_mut(&id) {
                    i.cpu_credits = Some(cpu_credits);
                }
                successful.push(SuccessfulInstanceCreditSpecificationItem {
                    instance_id: Some(id),
                });
            }
        }
    }
    Ok(ModifyInstanceCreditSpecificationResult {
        successful_instance_credit_specifications: Some(successful),
        unsuccessful_instance_credit_specifications: Some(unsuccessful),
    })
}

/// `GetDefaultCreditSpecification`.
pub fn get_default_credit_specification(
    region: &mut Region,
    input: GetDefaultCreditSpecificationRequest,
) -> Result<GetDefaultCreditSpecificationResult, ApiError> {
    Ok(GetDefaultCreditSpecificationResult {
        instance_family_credit_specification: Some(InstanceFamilyCreditSpecification {
            instance_family: Some(input.instance_family),
            cpu_credits: Some(region.credit_defaults.of(input.instance_family).to_string()),
        }),
    })
}

/// `ModifyDefaultCreditSpecification`: the family's new default, for the instances launched
/// from then on (at once here; AWS documents up to five minutes for every zone).
pub fn modify_default_credit_specification(
    region: &mut Region,
    input: ModifyDefaultCreditSpecificationRequest,
) -> Result<ModifyDefaultCreditSpecificationResult, ApiError> {
    let cpu_credits = option(&input.cpu_credits, "CpuCredits")?;
    region.credit_defaults.0.insert(
        input.instance_family.as_str().to_string(),
        cpu_credits.clone(),
    );
    Ok(ModifyDefaultCreditSpecificationResult {
        instance_family_credit_specification: Some(InstanceFamilyCreditSpecification {
            instance_family: Some(input.instance_family),
            cpu_credits: Some(cpu_credits),
        }),
    })
}
