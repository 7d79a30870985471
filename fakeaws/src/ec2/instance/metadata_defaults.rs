//! The account's instance metadata (IMDS) defaults in a region: GetInstanceMetadataDefaults
//! and ModifyInstanceMetadataDefaults, and what they give a launch. Each option of a new
//! instance comes, in AWS's order of precedence, from the launch (its `MetadataOptions`, or
//! its launch template's), else the account's default, else the image (`ImdsSupport`
//! `v2.0`: tokens required, a hop limit of 2), else AWS's own default (tokens optional, a
//! hop limit of 1, the endpoint enabled, tags off). Instances already running keep theirs.

use crate::generated::ec2::{
    DefaultHttpTokensEnforcedState, DefaultInstanceMetadataEndpointState,
    DefaultInstanceMetadataTagsState, GetInstanceMetadataDefaultsRequest,
    GetInstanceMetadataDefaultsResult, HttpTokensEnforcedState, HttpTokensState,
    InstanceMetadataDefaultsResponse, InstanceMetadataEndpointState, InstanceMetadataTagsState,
    ManagedBy, MetadataDefaultHttpTokensState, ModifyInstanceMetadataDefaultsRequest,
    ModifyInstanceMetadataDefaultsResult,
};
use crate::protocol::error::ApiError;
use crate::region::Region;

/// The account's defaults in a region: `None` where it has no preference.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Defaults {
    /// `HttpTokens`.
    pub http_tokens: Option<HttpTokensState>,
    /// `HttpPutResponseHopLimit` (1 to 64).
    pub hop_limit: Option<i32>,
    /// `HttpEndpoint`.
    pub http_endpoint: Option<InstanceMetadataEndpointState>,
    /// `InstanceMetadataTags`.
    pub tags: Option<InstanceMetadataTagsState>,
    /// `HttpTokensEnforced`, only ever `disabled` here (see ModifyInstanceMetadataDefaults).
    pub tokens_enforced: Option<HttpTokensEnforcedState>,
}

/// `GetInstanceMetadataDefaults`: the options the account set, managed by the account.
pub fn get_instance_metadata_defaults(
    region: &mut Region,
    _input: GetInstanceMetadataDefaultsRequest,
) -> Result<GetInstanceMetadataDefaultsResult, ApiError> {
    let d = &region.imds_defaults;
    Ok(GetInstanceMetadataDefaultsResult {
        account_level: Some(InstanceMetadataDefaultsResponse {
            http_tokens: d.http_tokens,
            http_put_response_hop_limit: d.hop_limit,
            http_endpoint: d.http_endpoint,
            instance_metadata_tags: d.tags,
            managed_by: Some(ManagedBy::Account),
            managed_exception_message: None,
            http_tokens_enforced: d.tokens_enforced,
        }),
    })
}

/// `ModifyInstanceMetadataDefaults`: each option named is set, or cleared by `no-preference`
/// (`-1` for the hop limit); the others stay. Checked whole before anything changes.
pub fn modify_instance_metadata_defaults(
    region: &mut Region,
    input: ModifyInstanceMetadataDefaultsRequest,
) -> Result<ModifyInstanceMetadataDefaultsResult, ApiError> {
    if input.http_tokens.is_none()
        && input.http_put_response_hop_limit.is_none()
        && input.http_endpoint.is_none()
        && input.instance_metadata_tags.is_none()
        && input.http_tokens_enforced.is_none()
    {
        return Err(ApiError::missing_parameter(
            "HttpTokens, HttpPutResponseHopLimit, HttpEndpoint, InstanceMetadataTags or \
             HttpTokensEnforced",
        ));
    }
    let hop_limit = match input.http_put_response_hop_limit {
        None => None,
        Some(-1) => Some(None),
        Some(n @ 1..=64) => Some(Some(n)),
        Some(n) => {
            return Err(ApiError::invalid_parameter(
                "HttpPutResponseHopLimit",
                &n.to_string(),
                "Possible values are integers from 1 to 64, and -1 for no preference.",
            ));
        }
    };
    if input.http_tokens_enforced == Some(DefaultHttpTokensEnforcedState::Enabled) {
        return Err(ApiError::not_implemented(
            "HttpTokensEnforced enabled (refusing launches that allow IMDSv1) is not \
             implemented by fakeaws",
        ));
    }
    let d = &mut region.imds_defaults;
    if let Some(t) = input.http_tokens {
        d.http_tokens = match t {
            MetadataDefaultHttpTokensState::Optional => Some(HttpTokensState::Optional),
            MetadataDefaultHttpTokensState::Required => Some(HttpTokensState::Required),
            MetadataDefaultHttpTokensState::NoPreference => None,
        };
    }
    if let Some(limit) = hop_limit {
        d.hop_limit = limit;
    }
    if let Some(e) = input.http_endpoint {
        d.http_endpoint = match e {
            DefaultInstanceMetadataEndpointState::Enabled => {
                Some(InstanceMetadataEndpointState::Enabled)
            }
            DefaultInstanceMetadataEndpointState::Disabled => {
                Some(InstanceMetadataEndpointState::Disabled)
            }
            DefaultInstanceMetadataEndpointState::NoPreference => None,
        };
    }
    if let Some(t) = input.instance_metadata_tags {
        d.tags = match t {
            DefaultInstanceMetadataTagsState::Enabled => Some(InstanceMetadataTagsState::Enabled),
            DefaultInstanceMetadataTagsState::Disabled => Some(InstanceMetadataTagsState::Disabled),
            DefaultInstanceMetadataTagsState::NoPreference => None,
        };
    }
    if let Some(e) = input.http_tokens_enforced {
        d.tokens_enforced = (e == DefaultHttpTokensEnforcedState::Disabled)
            .then_some(HttpTokensEnforcedState::Disabled);
    }
    Ok(ModifyInstanceMetadataDefaultsResult {
        r#return: Some(true),
    })
}
