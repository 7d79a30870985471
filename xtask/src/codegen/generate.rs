//! Step 2: the trimmed model and the allowlist give the Rust of one service: shapes, enums,
//! decoders, encoders, the `Action` enum, the `Api` trait and the dispatch.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// Enum values AWS sends or takes that its model's enum does not list, by shape: an attached
/// internet gateway's attachment is `available` on the wire (what the AWS CLI and the SDKs
/// show), while the model's `AttachmentStatus` says `attached`; DescribeAccountAttributes
/// takes the four attribute names its documentation lists beside the model's two; a network
/// interface CreateNetworkInterface just made is `pending` (the API reference's example
/// answer), a status the model's `NetworkInterfaceStatus` leaves out.
const WIRE_EXTRAS: &[(&str, &str)] = &[
    ("AttachmentStatus", "available"),
    ("NetworkInterfaceStatus", "pending"),
    ("AccountAttributeName", "max-instances"),
    (
        "AccountAttributeName",
        "vpc-max-security-groups-per-interface",
    ),
    ("AccountAttributeName", "max-elastic-ips"),
    ("AccountAttributeName", "vpc-max-elastic-ips"),
];

/// Enum values AWS spells on the wire otherwise than its model does, by shape: a VPC
/// endpoint's `State` is `available`, `pendingAcceptance`, ... on the wire (what the AWS CLI
/// shows, and what terraform's provider matches on), while the model's enum capitalises
/// them. The enum sends and takes the wire's spelling.
const WIRE_SPELLINGS: &[(&str, &str, &str)] = &[
    ("State", "PendingAcceptance", "pendingAcceptance"),
    ("State", "Pending", "pending"),
    ("State", "Available", "available"),
    ("State", "Deleting", "deleting"),
    ("State", "Deleted", "deleted"),
    ("State", "Rejected", "rejected"),
    ("State", "Failed", "failed"),
    ("State", "Expired", "expired"),
    ("State", "Partial", "partial"),
];

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};

use super::*;

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Protocol {
    /// `ec2` (Smithy ec2Query): flattened lists, capitalised locationName keys, no Result wrapper.
    Ec2,
    /// `query` (Smithy awsQuery): `member` lists, `<OpResult>` wrapper, `<ResponseMetadata>`.
    Query,
}

pub(super) struct Generator<'a> {
    pub(super) service: &'a str,
    pub(super) protocol: Protocol,
    pub(super) model: &'a Value,
    pub(super) shapes: &'a Map<String, Value>,
    pub(super) allowed: &'a Map<String, Value>,
    /// Top-level input shapes: name -> the members the fake supports.
    pub(super) inputs: BTreeMap<String, Vec<String>>,
    pub(super) decode: BTreeSet<String>,
    pub(super) encode: BTreeSet<String>,
    pub(super) out: String,
}

impl<'a> Generator<'a> {
    pub(super) fn new(
        service: &'a str,
        model: &'a Value,
        allowed: &'a Map<String, Value>,
    ) -> Result<Self> {
        let protocol = match model["metadata"]["protocol"].as_str() {
            Some("ec2") => Protocol::Ec2,
            Some("query") => Protocol::Query,
            other => bail!("{service}: unsupported protocol {other:?}"),
        };
        let shapes = model["shapes"].as_object().context("no shapes")?;
        let mut g = Generator {
            service,
            protocol,
            model,
            shapes,
            allowed,
            inputs: BTreeMap::new(),
            decode: BTreeSet::new(),
            encode: BTreeSet::new(),
            out: String::new(),
        };
        for (op, members) in allowed {
            let def = &model["operations"][op];
            let input = def["input"]["shape"]
                .as_str()
                .with_context(|| format!("{op} has no input shape"))?;
            let shape = g.shape(input)?;
            let all: Vec<String> = shape["members"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            let supported: Vec<String> = match members.as_array() {
                Some(list) if list.iter().any(|v| v == "*") => all.clone(),
                Some(list) => list
                    .iter()
                    .map(|v| {
                        v.as_str()
                            .map(String::from)
                            .context("member names are strings")
                    })
                    .collect::<Result<_>>()?,
                None => bail!("allowlist entry for {op} must be a list of member names"),
            };
            for m in &supported {
                if !all.contains(m) {
                    bail!("{op}: allowlisted member {m} is not in {input}");
                }
            }
            for r in required(shape) {
                if !supported.contains(&r) {
                    bail!("{op}: required member {r} must be allowlisted");
                }
            }
            for m in &supported {
                let target = shape["members"][m]["shape"]
                    .as_str()
                    .context("member shape")?;
                g.reach(target, true)?;
            }
            g.inputs.insert(input.to_string(), supported);
            g.decode.insert(input.to_string());
            if let Some(output) = def["output"]["shape"].as_str() {
                g.reach(output, false)?;
            }
        }
        Ok(g)
    }

    fn shape(&self, name: &str) -> Result<&'a Value> {
        self.shapes
            .get(name)
            .with_context(|| format!("{}: shape {name} missing from the model", self.service))
    }

    fn reach(&mut self, name: &str, input: bool) -> Result<()> {
        let set = if input {
            &mut self.decode
        } else {
            &mut self.encode
        };
        if !set.insert(name.to_string()) {
            return Ok(());
        }
        let shape = self.shape(name)?;
        match shape["type"].as_str() {
            Some("map") => bail!("{name}: map shapes are not supported by the generator"),
            Some("list") => {
                let member = shape["member"]["shape"].as_str().context("list member")?;
                if self.shape(member)?["type"] == "list" {
                    bail!("{name}: lists of lists are not supported by the generator");
                }
            }
            _ => {}
        }
        for r in referenced(shape) {
            self.reach(&r, input)?;
        }
        Ok(())
    }

    pub(super) fn generate(mut self) -> Result<String> {
        let svc = self.service;
        let meta = &self.model["metadata"];
        let _ = write!(
            self.out,
            "{HEADER}//! The {} wire layer ({} protocol, API version {}).\n\n\
             #![allow(missing_docs, clippy::large_enum_variant, clippy::too_many_lines, \
             clippy::enum_variant_names, clippy::upper_case_acronyms, non_camel_case_types)]\n\n\
             use crate::protocol::error::ApiError;\n\
             use crate::protocol::query::{{Decode, FormReader}};\n\
             use crate::protocol::xml::{{EncodeMembers, XmlWriter}};\n\
             #[allow(unused_imports)]\n\
             use crate::protocol::Float;\n\
             #[allow(unused_imports)]\n\
             use aws_smithy_types::{{Blob, DateTime}};\n\n",
            meta["serviceId"].as_str().unwrap_or(svc),
            meta["protocol"].as_str().unwrap_or(""),
            meta["apiVersion"].as_str().unwrap_or(""),
        );
        let _ = writeln!(
            self.out,
            "/// The API version this wire layer speaks (the `Version` parameter).\n\
             pub const API_VERSION: &str = {:?};\n\
             /// The XML namespace of responses.\n\
             pub const XML_NAMESPACE: &str = {:?};\n",
            meta["apiVersion"].as_str().unwrap_or(""),
            namespace(meta["xmlNamespace"].as_str().unwrap_or("")),
        );
        self.gen_operations_list()?;
        self.gen_documented_filters();
        let shape_names: BTreeSet<String> = self.decode.union(&self.encode).cloned().collect();
        for name in &shape_names {
            let shape = self.shape(name)?;
            match shape["type"].as_str() {
                Some("structure") if shape.get("exception").is_none() => self.gen_struct(name)?,
                Some("string") if shape.get("enum").is_some() => self.gen_enum(name)?,
                _ => {}
            }
        }
        self.gen_errors()?;
        self.gen_dispatch()?;
        Ok(self.out)
    }

    fn gen_operations_list(&mut self) -> Result<()> {
        let names = self.model["operationNames"]
            .as_array()
            .context("trimmed model lacks operationNames")?;
        let _ = writeln!(
            self.out,
            "/// Every operation of the service's model, sorted: served or not.\n\
             pub const ALL_OPERATIONS: &[&str] = &["
        );
        for n in names {
            let _ = writeln!(self.out, "    {:?},", n.as_str().unwrap_or_default());
        }
        let _ = writeln!(self.out, "];\n");
        Ok(())
    }

    /// The filter names the API reference documents for each served operation taking
    /// filters (`documentedFilters` of the trimmed model).
    fn gen_documented_filters(&mut self) {
        let Some(ops) = self.model["operations"].as_object() else {
            return;
        };
        let _ = writeln!(
            self.out,
            "/// The filter names the API reference documents for each served operation that \
             takes filters\n/// (`tag:<key>` left out), by operation.\n\
             pub const DOCUMENTED_FILTERS: &[(&str, &[&str])] = &["
        );
        for (op, def) in ops {
            let Some(names) = def["documentedFilters"].as_array() else {
                continue;
            };
            let _ = writeln!(self.out, "    ({op:?}, &[");
            for n in names {
                let _ = writeln!(self.out, "        {:?},", n.as_str().unwrap_or_default());
            }
            let _ = writeln!(self.out, "    ]),");
        }
        let _ = writeln!(self.out, "];\n");
    }

    /// The Rust type of a shape used as a field.
    fn rust_type(&self, name: &str) -> Result<String> {
        let shape = self.shape(name)?;
        Ok(match shape["type"].as_str().unwrap_or_default() {
            "string" if shape.get("enum").is_some() => type_name(name),
            "string" => "String".into(),
            "integer" => "i32".into(),
            "long" => "i64".into(),
            "boolean" => "bool".into(),
            // Compared and hashed by their bits (`crate::protocol::Float`).
            "double" | "float" => "Float".into(),
            "timestamp" => "DateTime".into(),
            "blob" => "Blob".into(),
            "list" => format!(
                "Vec<{}>",
                self.rust_type(shape["member"]["shape"].as_str().context("list member")?)?
            ),
            "structure" => type_name(name),
            other => bail!("{name}: unsupported shape type {other}"),
        })
    }

    /// The form key of a member (request side).
    fn input_key(&self, member_name: &str, member: &Value) -> String {
        match self.protocol {
            Protocol::Ec2 => {
                if let Some(q) = member["queryName"].as_str() {
                    q.to_string()
                } else if let Some(l) = member["locationName"].as_str() {
                    capitalize(l)
                } else {
                    member_name.to_string()
                }
            }
            Protocol::Query => member["locationName"]
                .as_str()
                .unwrap_or(member_name)
                .to_string(),
        }
    }

    /// The XML element name of a member (response side).
    fn output_name<'m>(&self, member_name: &'m str, member: &'m Value) -> &'m str {
        member["locationName"].as_str().unwrap_or(member_name)
    }

    fn gen_struct(&mut self, name: &str) -> Result<()> {
        let shape = self.shape(name)?;
        let ty = type_name(name);
        let members = shape["members"].as_object().cloned().unwrap_or_default();
        let req = required(shape);
        let top_level = self.inputs.get(name).cloned();
        let is_input = self.decode.contains(name);
        let is_output = self.encode.contains(name);
        let included: Vec<(String, Value)> = members
            .into_iter()
            .filter(|(m, _)| top_level.as_ref().is_none_or(|s| s.contains(m)))
            .collect();

        // The input keys of the members, sorted: what a structure's decoder looks its
        // members up by (`FormReader::members`), each by its place in this list.
        let mut keys: Vec<String> = if is_input {
            included
                .iter()
                .map(|(m, member)| self.input_key(m, member))
                .collect()
        } else {
            Vec::new()
        };
        keys.sort();
        if let Some(k) = keys.iter().find(|k| k.contains('.')) {
            bail!("{name}: the input key {k} holds a dot");
        }
        if keys.windows(2).any(|w| w[0] == w[1]) {
            bail!("{name}: two members share an input key");
        }
        let mut fields = String::new();
        let mut decode = String::new();
        let mut encode = String::new();
        for (mname, member) in &included {
            let target = member["shape"].as_str().context("member shape")?;
            let fty = self.rust_type(target)?;
            let field = field_name(mname);
            let is_required = is_input && req.contains(mname);
            let full_ty = if is_required {
                fty.clone()
            } else {
                format!("Option<{fty}>")
            };
            // Answer shapes are also what the fake's records hold, so they are stored in the
            // state file too; timestamps and blobs go through the fake's own serde helpers.
            if is_output {
                if let Some(with) = stored_with(&full_ty) {
                    let _ = writeln!(
                        fields,
                        "    #[serde(with = \"crate::state::with::{with}\")]"
                    );
                }
                if !is_required {
                    let _ = writeln!(
                        fields,
                        "    #[serde(default, skip_serializing_if = \"Option::is_none\")]"
                    );
                }
            }
            let _ = writeln!(fields, "    pub {field}: {full_ty},");
            let tshape = self.shape(target)?;
            if is_input {
                let key = self.input_key(mname, member);
                let slot = keys.binary_search(&key).ok().context("member key")?;
                let read = if tshape["type"] == "list" {
                    let item = match self.protocol {
                        Protocol::Ec2 => "None".to_string(),
                        Protocol::Query => format!(
                            "Some({:?})",
                            tshape["member"]["locationName"]
                                .as_str()
                                .unwrap_or("member")
                        ),
                    };
                    format!("r.list_at(m_[{slot}], at_, {key:?}, {item})?")
                } else {
                    format!("r.field_at(m_[{slot}], at_, {key:?})?")
                };
                let _ = writeln!(decode, "        let {field} = {read};");
                if let Some(check) = constraint_check(tshape, &field, &key) {
                    let _ = writeln!(decode, "        {check}");
                }
                if is_required {
                    let _ = writeln!(
                        decode,
                        "        let {field} = FormReader::required({field}, at_, {key:?})?;"
                    );
                }
            }
            if is_output {
                let elem = self.output_name(mname, member);
                let (list, one) = if is_required {
                    ("list_value", "value")
                } else {
                    ("list_field", "field")
                };
                let line = if tshape["type"] == "list" {
                    let item = tshape["member"]["locationName"]
                        .as_str()
                        .unwrap_or("member");
                    format!("w.{list}({elem:?}, {item:?}, &self.{field});")
                } else {
                    format!("w.{one}({elem:?}, &self.{field});")
                };
                let _ = writeln!(encode, "        {line}");
            }
        }
        // An input is hashed for the idempotency ledger's fingerprint of a request.
        let derive = match (is_input, is_output) {
            (true, false) => "Debug, Clone, PartialEq, Hash",
            (true, true) => {
                "Debug, Clone, Default, PartialEq, Hash, serde::Serialize, serde::Deserialize"
            }
            _ => "Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize",
        };
        let _ = writeln!(
            self.out,
            "/// The `{name}` shape.\n#[derive({derive})]\npub struct {ty} {{\n{fields}}}\n"
        );
        if is_input {
            let names: Vec<String> = included.iter().map(|(m, _)| field_name(m)).collect();
            let keys: Vec<String> = keys.iter().map(|k| format!("{k:?}")).collect();
            let found = if keys.is_empty() { "_" } else { "m_" };
            let _ = writeln!(
                self.out,
                "impl Decode for {ty} {{\n    \
                 fn decode(r: &mut FormReader, at_: &str) -> Result<Option<Self>, ApiError> {{\n        \
                 let Some({found}) = r.members(at_, &[{}]) else {{ return Ok(None); }};\n{decode}        \
                 Ok(Some(Self {{ {} }}))\n    }}\n}}\n",
                keys.join(", "),
                names.join(", ")
            );
        }
        if is_output {
            let _ = writeln!(
                self.out,
                "impl EncodeMembers for {ty} {{\n    \
                 #[allow(unused_variables)]\n    \
                 fn encode_members(&self, w: &mut XmlWriter) {{\n{encode}    }}\n}}\n"
            );
        }
        Ok(())
    }

    fn gen_enum(&mut self, name: &str) -> Result<()> {
        let shape = self.shape(name)?;
        let ty = type_name(name);
        let model: Vec<String> = shape["enum"]
            .as_array()
            .context("enum values")?
            .iter()
            .filter_map(|v| v.as_str())
            .map(|v| {
                WIRE_SPELLINGS
                    .iter()
                    .find(|(shape, model, _)| *shape == name && *model == v)
                    .map_or(v, |(_, _, wire)| *wire)
                    .to_string()
            })
            .collect();
        // Values AWS answers that the model's enum lacks: the enum takes them too (after the
        // model's), while `VALUES` stays the model's.
        let mut values = model.clone();
        for (shape_name, extra) in WIRE_EXTRAS {
            if *shape_name == name && !values.iter().any(|v| v == extra) {
                values.push((*extra).to_string());
            }
        }
        let mut used = BTreeSet::new();
        let mut variants = Vec::new();
        for v in &values {
            let mut ident = variant_name(v);
            let base = ident.clone();
            let mut n = 2;
            while !used.insert(ident.clone()) {
                ident = format!("{base}{n}");
                n += 1;
            }
            variants.push(ident);
        }
        let mut body = String::new();
        for (v, ident) in values.iter().zip(&variants) {
            let _ = writeln!(body, "    /// `{v}`\n    {ident},");
        }
        let mut as_str = String::new();
        let mut from = String::new();
        for (v, ident) in values.iter().zip(&variants) {
            let _ = writeln!(as_str, "            Self::{ident} => {v:?},");
            let _ = writeln!(from, "            {v:?} => Self::{ident},");
        }
        let list: Vec<String> = model.iter().map(|v| format!("{v:?}")).collect();
        let _ = writeln!(
            self.out,
            "/// The `{name}` enum.\n\
             #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]\n\
             pub enum {ty} {{\n{body}}}\n\n\
             impl {ty} {{\n    \
             /// Every value the model allows, in model order.\n    \
             pub const VALUES: &'static [&'static str] = &[{}];\n    \
             /// The wire value.\n    \
             pub fn as_str(&self) -> &'static str {{\n        match self {{\n{as_str}        }}\n    }}\n    \
             /// Parses a wire value.\n    \
             pub fn from_wire(s: &str) -> Option<Self> {{\n        Some(match s {{\n{from}            _ => return None,\n        }})\n    }}\n}}\n\n\
             crate::protocol::wire_enum!({ty});\n",
            list.join(", ")
        );
        Ok(())
    }

    fn gen_errors(&mut self) -> Result<()> {
        let mut rows = Vec::new();
        for shape in self.shapes.values() {
            if let Some(err) = shape.get("error") {
                let code = err["code"].as_str().context("error code")?;
                let status = err["httpStatusCode"].as_u64().unwrap_or(400);
                let sender = err["senderFault"].as_bool().unwrap_or(true);
                rows.push(format!("    ({code:?}, {status}, {sender}),"));
            }
        }
        rows.sort();
        let _ = writeln!(
            self.out,
            "/// The error codes the model declares: (code, HTTP status, sender fault).\n\
             pub const MODELED_ERRORS: &[(&str, u16, bool)] = &[\n{}\n];\n",
            rows.join("\n")
        );
        Ok(())
    }

    fn gen_dispatch(&mut self) -> Result<()> {
        let mut variants = String::new();
        let mut names = String::new();
        let mut froms = String::new();
        let mut methods = String::new();
        let mut arms = String::new();
        let mut responses = String::new();
        let mut encodes = String::new();
        for (op, _) in self.allowed {
            let def = &self.model["operations"][op];
            let input = def["input"]["shape"].as_str().context("input")?;
            let input_ty = type_name(input);
            let output_ty = match def["output"]["shape"].as_str() {
                Some(o) => type_name(o),
                None => "()".to_string(),
            };
            let method = field_name(op);
            let _ = writeln!(variants, "    /// `{op}`\n    {op},");
            let _ = writeln!(names, "            Self::{op} => {op:?},");
            let _ = writeln!(froms, "            {op:?} => Self::{op},");
            let _ = writeln!(
                methods,
                "    /// Serves `{op}`.\n    \
                 fn {method}(&mut self, input: {input_ty}) -> Result<{output_ty}, ApiError>;"
            );
            let shape = self.shape(input)?;
            let supported = &self.inputs[input];
            let unsupported: Vec<String> = shape["members"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .filter(|(k, _)| !supported.contains(k))
                        .map(|(k, v)| format!("{:?}", self.input_key(k, v)))
                        .collect()
                })
                .unwrap_or_default();
            let dry_run = if supported.iter().any(|m| m == "DryRun") {
                "if input.dry_run == Some(true) { return Err(ApiError::dry_run()); }"
            } else {
                ""
            };
            let has_output = def["output"]["shape"].is_string();
            let encode = match (self.protocol, has_output) {
                (Protocol::Ec2, true) => format!(
                    "crate::protocol::xml::ec2_response({op:?}, XML_NAMESPACE, request_id, &**output)"
                ),
                (Protocol::Ec2, false) => format!(
                    "crate::protocol::xml::ec2_return_true({op:?}, XML_NAMESPACE, request_id)"
                ),
                (Protocol::Query, true) => format!(
                    "crate::protocol::xml::query_response({op:?}, XML_NAMESPACE, request_id, Some(&**output))"
                ),
                (Protocol::Query, false) => format!(
                    "crate::protocol::xml::query_response::<()>({op:?}, XML_NAMESPACE, request_id, None)"
                ),
            };
            // The response variant, its pattern in `encode`, and how the arm serves it.
            let (variant, pattern, serve) = if has_output {
                (
                    format!("{op}(Box<{output_ty}>)"),
                    format!("{op}(output)"),
                    format!("Ok(Response::{op}(Box::new(api.{method}(input)?)))"),
                )
            } else {
                (
                    op.to_string(),
                    op.to_string(),
                    format!("api.{method}(input)?;\n            Ok(Response::{op})"),
                )
            };
            let _ = writeln!(responses, "    /// `{op}`\n    {variant},");
            let _ = writeln!(encodes, "            Self::{pattern} => {encode},");
            let _ = writeln!(
                arms,
                "        Action::{op} => {{\n            \
                 r.reject_unsupported({op:?}, &[{}])?;\n            \
                 let input = FormReader::required({input_ty}::decode(r, \"\")?, \"\", \"\")?;\n            \
                 r.finish()?;\n            {dry_run}\n            \
                 {serve}\n        }}",
                unsupported.join(", ")
            );
        }
        let _ = writeln!(
            self.out,
            "/// The operations fakeaws serves for this service.\n\
             #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]\n\
             pub enum Action {{\n{variants}}}\n\n\
             impl Action {{\n    \
             /// The operation's name, as in the `Action` parameter.\n    \
             pub fn name(&self) -> &'static str {{\n        match self {{\n{names}        }}\n    }}\n    \
             /// The served operation of that name, if any.\n    \
             pub fn from_name(s: &str) -> Option<Self> {{\n        Some(match s {{\n{froms}            _ => return None,\n        }})\n    }}\n}}\n\n\
             /// The semantics behind the wire layer: one method per served operation.\n\
             pub trait Api {{\n{methods}}}\n\n\
             /// What a served operation answered, not yet written: the server writes it after it\n\
             /// lets go of the region, so that encoding holds nobody up. Two equal answers\n\
             /// are written alike (no member is a float), which lets the server reuse one.\n\
             /// Each output is boxed: an answer is moved several times on its way to the\n\
             /// writer, and the largest output is hundreds of bytes.\n\
             #[derive(Debug, Clone, PartialEq)]\n\
             pub enum Response {{\n{responses}}}\n\n\
             impl Response {{\n    \
             /// The response body of this answer, with `request_id`.\n    \
             pub fn encode(&self, request_id: &str) -> String {{\n        match self {{\n{encodes}        }}\n    }}\n}}\n\n\
             /// Decodes and validates the input of `action` from `r`, and calls `api`.\n\
             pub fn execute<A: Api + ?Sized>(api: &mut A, action: Action, r: &mut FormReader) -> Result<Response, ApiError> {{\n    \
             match action {{\n{arms}\n    }}\n}}\n"
        );
        Ok(())
    }
}

pub(super) fn required(shape: &Value) -> Vec<String> {
    shape["required"]
        .as_array()
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

pub(super) fn constraint_check(shape: &Value, field: &str, key: &str) -> Option<String> {
    let min = shape["min"].as_i64();
    let max = shape["max"].as_i64();
    if min.is_none() && max.is_none() {
        return None;
    }
    let fmt = |v: Option<i64>| match v {
        Some(n) => format!("Some({n})"),
        None => "None".to_string(),
    };
    match shape["type"].as_str()? {
        "integer" | "long" => Some(format!(
            "r.check_range({field}.map(i64::from), at_, {key:?}, {}, {})?;",
            fmt(min),
            fmt(max)
        )),
        "string" if shape.get("enum").is_none() => Some(format!(
            "r.check_length({field}.as_deref(), at_, {key:?}, {}, {})?;",
            fmt(min),
            fmt(max)
        )),
        "list" => Some(format!(
            "r.check_count({field}.as_ref().map(Vec::len), at_, {key:?}, {}, {})?;",
            fmt(min),
            fmt(max)
        )),
        _ => None,
    }
}

/// The helper module (under `crate::state::with`) that stores a field of type `ty` in the
/// state file, for the types serde does not know: timestamps and blobs.
fn stored_with(ty: &str) -> Option<&'static str> {
    match ty {
        "DateTime" => Some("time"),
        "Option<DateTime>" => Some("time_opt"),
        "Blob" => Some("blob"),
        "Option<Blob>" => Some("blob_opt"),
        _ => None,
    }
}
