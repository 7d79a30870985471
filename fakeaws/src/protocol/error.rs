//! `ApiError`: an AWS error (code, message, HTTP status) and its two wire envelopes; the
//! `error_codes!` macro that declares a service's codes as an enum, and [`Common`], the codes
//! of the query protocols that both services answer. EC2's own codes are
//! `crate::ec2::error::Code`, classic ELB's `crate::elb::error::Code`: no code is written
//! anywhere else.

use std::borrow::Cow;

use crate::protocol::xml::escape;

/// Declares an enum of AWS error codes: each variant documented, with its exact code;
/// `as_str` gives the code and an `ApiError` takes the variant where it takes a code.
macro_rules! error_codes {
    ($(#[$m:meta])* $vis:vis enum $name:ident {
        $($(#[$vm:meta])* $variant:ident = $code:literal,)*
    }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $($(#[$vm])* $variant,)*
        }

        impl $name {
            /// The exact AWS code.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $code,)*
                }
            }
        }

        impl From<$name> for std::borrow::Cow<'static, str> {
            fn from(code: $name) -> Self {
                std::borrow::Cow::Borrowed(code.as_str())
            }
        }

        impl PartialEq<$name> for std::borrow::Cow<'static, str> {
            fn eq(&self, code: &$name) -> bool {
                self.as_ref() == code.as_str()
            }
        }
    };
}
pub(crate) use error_codes;

error_codes! {
    /// The codes of the query protocols, answered by EC2 and classic ELB alike.
    pub enum Common {
        /// A required parameter is missing.
        MissingParameter = "MissingParameter",
        /// A parameter's value is invalid.
        InvalidParameterValue = "InvalidParameterValue",
        /// Parameters that cannot go together.
        InvalidParameterCombination = "InvalidParameterCombination",
        /// A parameter the operation does not have.
        UnknownParameter = "UnknownParameter",
        /// What the model defines and fakeaws does not serve (HTTP 501).
        NotImplemented = "NotImplemented",
        /// The request would have succeeded, but DryRun was set (HTTP 412).
        DryRunOperation = "DryRunOperation",
        /// Something still depends on the resource.
        DependencyViolation = "DependencyViolation",
        /// A value outside the model's constraints (awsQuery).
        ValidationError = "ValidationError",
        /// An internal failure (HTTP 500).
        InternalError = "InternalError",
        /// The service cannot answer for now (HTTP 503).
        Unavailable = "Unavailable",
        /// An action the service does not have.
        InvalidAction = "InvalidAction",
        /// No `Action` parameter.
        MissingAction = "MissingAction",
        /// A `Version` the service does not speak.
        NoSuchVersion = "NoSuchVersion",
        /// A credential scope naming no service fakeaws serves.
        UnknownService = "UnknownService",
        /// Credentials that do not allow the call (HTTP 401).
        AuthFailure = "AuthFailure",
        /// An access key that does not exist (awsQuery services, HTTP 403).
        InvalidClientTokenId = "InvalidClientTokenId",
        /// A signature that is not the one the secret gives (HTTP 403).
        SignatureDoesNotMatch = "SignatureDoesNotMatch",
        /// A signature missing a part AWS requires (HTTP 400).
        IncompleteSignature = "IncompleteSignature",
        /// A request signed more than 15 minutes from the server's time (HTTP 400).
        RequestExpired = "RequestExpired",
        /// No credentials at all.
        MissingAuthenticationToken = "MissingAuthenticationToken",
        /// A region name that is not one.
        InvalidRegion = "InvalidRegion",
        /// A request body larger than the endpoint takes (HTTP 413).
        RequestEntityTooLarge = "RequestEntityTooLarge",
        /// Request headers larger (or more) than the endpoint takes (HTTP 431; the code S3
        /// gives the same refusal).
        RequestHeaderSectionTooLarge = "RequestHeaderSectionTooLarge",
    }
}

/// An error answered to the client: the exact AWS code, a message, and the HTTP status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ApiError {
    /// The AWS error code, such as `InvalidVpcID.NotFound`.
    pub code: Cow<'static, str>,
    /// The human-readable message.
    pub message: String,
    /// The HTTP status code of the response.
    pub status: u16,
}

impl ApiError {
    /// An error with AWS's usual status for `code` (400 for client errors).
    pub fn new(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        let code = code.into();
        let status = default_status(&code);
        ApiError {
            code,
            message: message.into(),
            status,
        }
    }

    /// The same error answered with another HTTP status.
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    /// `MissingParameter` for the form key `name`.
    pub fn missing_parameter(name: &str) -> Self {
        Self::new(
            Common::MissingParameter,
            format!("The request must contain the parameter {name}"),
        )
    }

    /// `InvalidParameterValue` with `message`.
    pub fn invalid_value(message: impl Into<String>) -> Self {
        Self::new(Common::InvalidParameterValue, message)
    }

    /// `InvalidParameterValue` for a value of the form key `name`.
    pub fn invalid_parameter(name: &str, value: &str, why: &str) -> Self {
        Self::invalid_value(format!(
            "Value ({value}) for parameter {name} is invalid. {why}"
        ))
    }

    /// `InvalidParameterCombination` with `message`.
    pub fn invalid_combination(message: impl Into<String>) -> Self {
        Self::new(Common::InvalidParameterCombination, message)
    }

    /// `UnknownParameter` for the form key `name`.
    pub fn unknown_parameter(name: &str) -> Self {
        Self::new(
            Common::UnknownParameter,
            format!("The parameter {name} is not recognized"),
        )
    }

    /// `NotImplemented` (HTTP 501): what the model defines but fakeaws does not serve yet.
    pub fn not_implemented(what: impl Into<String>) -> Self {
        Self::new(Common::NotImplemented, what)
    }

    /// `DryRunOperation` (HTTP 412): the request would have succeeded.
    pub fn dry_run() -> Self {
        Self::new(
            Common::DryRunOperation,
            "Request would have succeeded, but DryRun flag is set.",
        )
    }

    /// `DependencyViolation` with `message`.
    pub fn dependency_violation(message: impl Into<String>) -> Self {
        Self::new(Common::DependencyViolation, message)
    }

    /// Writes the EC2 (ec2Query) error envelope.
    pub fn to_ec2_xml(&self, request_id: &str) -> String {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error><Code>{}</Code>\
             <Message>{}</Message></Error></Errors><RequestID>{}</RequestID></Response>",
            escape(&self.code),
            escape(&self.message),
            escape(request_id)
        )
    }

    /// Writes the awsQuery error envelope (classic ELB); `sender` picks the `<Type>`.
    pub fn to_query_xml(&self, namespace: &str, request_id: &str, sender: bool) -> String {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ErrorResponse xmlns=\"{}\"><Error><Type>{}</Type>\
             <Code>{}</Code><Message>{}</Message></Error><RequestId>{}</RequestId></ErrorResponse>",
            escape(namespace),
            if sender { "Sender" } else { "Receiver" },
            escape(&self.code),
            escape(&self.message),
            escape(request_id)
        )
    }
}

/// AWS's HTTP status for an error code of the EC2/query common errors.
fn default_status(code: &str) -> u16 {
    match code {
        "RequestLimitExceeded" | "Unavailable" | "ServiceUnavailable" => 503,
        "InternalError" | "InternalFailure" => 500,
        "NotImplemented" => 501,
        "DryRunOperation" => 412,
        "AuthFailure" => 401,
        "UnauthorizedOperation" | "InvalidClientTokenId" => 403,
        "InvalidConfigurationRequest" => 409,
        _ => 400,
    }
}
