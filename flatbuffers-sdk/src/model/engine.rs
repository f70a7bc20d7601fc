//! Owned engine metadata: knobs, knob settings, engine configs and details.

use flatbuffers::{
    Allocator, FlatBufferBuilder, ForwardsUOffset, UnionWIPOffset, Vector, WIPOffset,
};
use serde::{Deserialize, Serialize};

use super::field::WireField;
use super::json::{self, JsonUnion, scalar_holder, unknown_member};
use super::macros::owned_table;
use crate::error::Error;
use crate::wire;

/// Builds a root buffer from `$value.pack` and returns its bytes.
macro_rules! root_to_bytes {
    ($value:expr, $identifier:expr) => {{
        let mut fbb = FlatBufferBuilder::with_capacity(256);
        let root = $value.pack(&mut fbb);
        fbb.finish(root, $identifier);
        fbb.finished_data().to_vec()
    }};
}

owned_table! {
    /// Constraint on an integer knob: `valid_values`, when non-empty, overrides the
    /// range; otherwise `min_value <= v <= max_value` and `(v - min_value) % step == 0`.
    IntConstraint / IntConstraintArgs {
        min_value: i64,
        max_value: i64,
        step: i64 = 1,
        valid_values: Vec<i64>,
    }
}

owned_table! {
    /// Constraint on a floating-point knob: `min_value <= v <= max_value`.
    FloatConstraint / FloatConstraintArgs {
        min_value: f64,
        max_value: f64,
    }
}

owned_table! {
    /// Constraint on a string knob: a maximum length and/or an enumeration.
    StringConstraint / StringConstraintArgs {
        max_length: i32,
        valid_values: Vec<String>,
    }
}

/// A knob value (`KnobValue` union: `IntValue`, `FloatValue`, `StringValue`).
#[derive(Debug, Clone, PartialEq)]
pub enum KnobValue {
    /// `IntValue`.
    Int(i64),
    /// `FloatValue`.
    Float(f64),
    /// `StringValue`.
    String(String),
}

impl KnobValue {
    /// The name of the value's type as used in messages: `int64`, `float64`, `string`.
    pub fn type_name(&self) -> &'static str {
        match self {
            KnobValue::Int(_) => "int64",
            KnobValue::Float(_) => "float64",
            KnobValue::String(_) => "string",
        }
    }

    pub(crate) fn pack<'b, A: Allocator + 'b>(
        &self,
        fbb: &mut FlatBufferBuilder<'b, A>,
    ) -> (wire::KnobValue, WIPOffset<UnionWIPOffset>) {
        match self {
            KnobValue::Int(value) => (
                wire::KnobValue::IntValue,
                wire::IntValue::create(fbb, &wire::IntValueArgs { value: *value }).as_union_value(),
            ),
            KnobValue::Float(value) => (
                wire::KnobValue::FloatValue,
                wire::FloatValue::create(fbb, &wire::FloatValueArgs { value: *value })
                    .as_union_value(),
            ),
            KnobValue::String(value) => {
                let value = Some(fbb.create_string(value));
                (
                    wire::KnobValue::StringValue,
                    wire::StringValue::create(fbb, &wire::StringValueArgs { value })
                        .as_union_value(),
                )
            }
        }
    }

    /// Reads a union whose tag and value come from a verified table.
    pub(crate) fn unpack(
        tag: wire::KnobValue,
        int: Option<wire::IntValue<'_>>,
        float: Option<wire::FloatValue<'_>>,
        string: Option<wire::StringValue<'_>>,
        location: &str,
    ) -> Result<Option<Self>, Error> {
        Ok(match tag {
            wire::KnobValue::NONE => None,
            wire::KnobValue::IntValue => int.map(|v| KnobValue::Int(v.value())),
            wire::KnobValue::FloatValue => float.map(|v| KnobValue::Float(v.value())),
            wire::KnobValue::StringValue => {
                string.map(|v| KnobValue::String(v.value().unwrap_or_default().to_owned()))
            }
            other => {
                return Err(Error::UnknownUnionTag {
                    location: location.to_owned(),
                    union: "KnobValue",
                    tag: other.0,
                });
            }
        })
    }
}

/// A knob's constraint (`KnobConstraint` union).
#[derive(Debug, Clone, PartialEq)]
pub enum KnobConstraint {
    /// `IntConstraint`.
    Int(IntConstraint),
    /// `FloatConstraint`.
    Float(FloatConstraint),
    /// `StringConstraint`.
    String(StringConstraint),
}

impl JsonUnion for KnobValue {
    const UNION: &'static str = "KnobValue";
    fn member_name(&self) -> &'static str {
        match self {
            KnobValue::Int(_) => "IntValue",
            KnobValue::Float(_) => "FloatValue",
            KnobValue::String(_) => "StringValue",
        }
    }
    fn to_json(&self) -> serde_json::Value {
        match self {
            KnobValue::Int(v) => serde_json::json!({ "value": v }),
            KnobValue::Float(v) => serde_json::json!({ "value": v }),
            KnobValue::String(v) => serde_json::json!({ "value": v }),
        }
    }
    fn from_json(name: &str, value: serde_json::Value) -> Result<Self, String> {
        match name {
            "IntValue" => scalar_holder(name, value).map(KnobValue::Int),
            "FloatValue" => scalar_holder(name, value).map(KnobValue::Float),
            "StringValue" => scalar_holder(name, value).map(KnobValue::String),
            _ => Err(unknown_member::<Self>(name)),
        }
    }
}

impl JsonUnion for KnobConstraint {
    const UNION: &'static str = "KnobConstraint";
    fn member_name(&self) -> &'static str {
        match self {
            KnobConstraint::Int(_) => "IntConstraint",
            KnobConstraint::Float(_) => "FloatConstraint",
            KnobConstraint::String(_) => "StringConstraint",
        }
    }
    fn to_json(&self) -> serde_json::Value {
        let value = match self {
            KnobConstraint::Int(c) => serde_json::to_value(c),
            KnobConstraint::Float(c) => serde_json::to_value(c),
            KnobConstraint::String(c) => serde_json::to_value(c),
        };
        value.expect("constraint tables serialize")
    }
    fn from_json(name: &str, value: serde_json::Value) -> Result<Self, String> {
        let err = |e: serde_json::Error| format!("{name}: {e}");
        match name {
            "IntConstraint" => serde_json::from_value(value)
                .map(KnobConstraint::Int)
                .map_err(err),
            "FloatConstraint" => serde_json::from_value(value)
                .map(KnobConstraint::Float)
                .map_err(err),
            "StringConstraint" => serde_json::from_value(value)
                .map(KnobConstraint::String)
                .map_err(err),
            _ => Err(unknown_member::<Self>(name)),
        }
    }
}

/// A tunable parameter an engine advertises (`Knob`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "KnobJson", into = "KnobJson")]
pub struct Knob {
    /// Dotted id: `global.*` for the standard knobs, `<plugin>.<category>.<name>` otherwise.
    pub knob_id: String,
    /// What the knob does.
    pub description: String,
    /// Value used when the knob is not set (required on the wire).
    pub default_value: KnobValue,
    /// Allowed values; `None` means any value of the default's type.
    pub constraint: Option<KnobConstraint>,
    /// Still accepted, but scheduled for removal.
    pub deprecated: bool,
}

fn is_false(v: &bool) -> bool {
    !*v
}

/// `Knob` as flatc writes it in JSON.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct KnobJson {
    #[serde(default)]
    knob_id: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    description: String,
    #[serde(default)]
    default_value_type: Option<String>,
    #[serde(default)]
    default_value: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    constraint_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    constraint: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "is_false")]
    deprecated: bool,
}

impl From<Knob> for KnobJson {
    fn from(k: Knob) -> Self {
        let (default_value_type, default_value) = json::split(Some(&k.default_value));
        let (constraint_type, constraint) = json::split(k.constraint.as_ref());
        Self {
            knob_id: k.knob_id,
            description: k.description,
            default_value_type,
            default_value,
            constraint_type,
            constraint,
            deprecated: k.deprecated,
        }
    }
}

impl TryFrom<KnobJson> for Knob {
    type Error = String;
    fn try_from(k: KnobJson) -> Result<Self, String> {
        let located = |e: String| format!("knob \"{}\": {e}", k.knob_id);
        let default_value = json::join("default_value", k.default_value_type, k.default_value)
            .and_then(|v| v.ok_or_else(|| "default_value is missing".to_owned()))
            .map_err(located)?;
        let constraint =
            json::join("constraint", k.constraint_type, k.constraint).map_err(located)?;
        Ok(Self {
            knob_id: k.knob_id,
            description: k.description,
            default_value,
            constraint,
            deprecated: k.deprecated,
        })
    }
}

impl Knob {
    /// Writes this table into `fbb` and returns its offset.
    pub fn pack<'b, A: Allocator + 'b>(
        &self,
        fbb: &mut FlatBufferBuilder<'b, A>,
    ) -> WIPOffset<wire::Knob<'b>> {
        let knob_id = self.knob_id.pack(fbb);
        let description = self.description.pack(fbb);
        let (default_value_type, default_value) = self.default_value.pack(fbb);
        let (constraint_type, constraint) = match &self.constraint {
            None => (wire::KnobConstraint::NONE, None),
            Some(KnobConstraint::Int(c)) => (
                wire::KnobConstraint::IntConstraint,
                Some(c.pack(fbb).as_union_value()),
            ),
            Some(KnobConstraint::Float(c)) => (
                wire::KnobConstraint::FloatConstraint,
                Some(c.pack(fbb).as_union_value()),
            ),
            Some(KnobConstraint::String(c)) => (
                wire::KnobConstraint::StringConstraint,
                Some(c.pack(fbb).as_union_value()),
            ),
        };
        wire::Knob::create(
            fbb,
            &wire::KnobArgs {
                knob_id,
                description,
                default_value_type,
                default_value: Some(default_value),
                constraint_type,
                constraint,
                deprecated: self.deprecated,
            },
        )
    }

    /// Copies a verified knob into an owned value.
    ///
    /// # Errors
    /// Unknown union tags.
    pub fn from_view(view: &wire::Knob<'_>) -> Result<Self, Error> {
        let knob_id = view.knob_id().unwrap_or_default();
        let location = format!("knob \"{knob_id}\"");
        let default_value = KnobValue::unpack(
            view.default_value_type(),
            view.default_value_as_int_value(),
            view.default_value_as_float_value(),
            view.default_value_as_string_value(),
            &location,
        )?
        .ok_or_else(|| Error::MissingField {
            location: location.clone(),
            field: "default_value",
        })?;
        let constraint = match view.constraint_type() {
            wire::KnobConstraint::NONE => None,
            wire::KnobConstraint::IntConstraint => view
                .constraint_as_int_constraint()
                .map(|c| IntConstraint::from_view(&c).map(KnobConstraint::Int))
                .transpose()?,
            wire::KnobConstraint::FloatConstraint => view
                .constraint_as_float_constraint()
                .map(|c| FloatConstraint::from_view(&c).map(KnobConstraint::Float))
                .transpose()?,
            wire::KnobConstraint::StringConstraint => view
                .constraint_as_string_constraint()
                .map(|c| StringConstraint::from_view(&c).map(KnobConstraint::String))
                .transpose()?,
            other => {
                return Err(Error::UnknownUnionTag {
                    location,
                    union: "KnobConstraint",
                    tag: other.0,
                });
            }
        };
        Ok(Self {
            knob_id: knob_id.to_owned(),
            description: view.description().unwrap_or_default().to_owned(),
            default_value,
            constraint,
            deprecated: view.deprecated(),
        })
    }
}

/// A value chosen for one knob (`KnobSetting`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "KnobSettingJson", into = "KnobSettingJson")]
pub struct KnobSetting {
    /// The knob's id.
    pub knob_id: String,
    /// The chosen value.
    pub value: KnobValue,
}

/// `KnobSetting` as flatc writes it in JSON.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct KnobSettingJson {
    #[serde(default)]
    knob_id: String,
    #[serde(default)]
    value_type: Option<String>,
    #[serde(default)]
    value: Option<serde_json::Value>,
}

impl From<KnobSetting> for KnobSettingJson {
    fn from(k: KnobSetting) -> Self {
        let (value_type, value) = json::split(Some(&k.value));
        Self {
            knob_id: k.knob_id,
            value_type,
            value,
        }
    }
}

impl TryFrom<KnobSettingJson> for KnobSetting {
    type Error = String;
    fn try_from(k: KnobSettingJson) -> Result<Self, String> {
        let value = json::join("value", k.value_type, k.value)
            .and_then(|v| v.ok_or_else(|| "value is missing".to_owned()))
            .map_err(|e| format!("knob setting \"{}\": {e}", k.knob_id))?;
        Ok(Self {
            knob_id: k.knob_id,
            value,
        })
    }
}

impl KnobSetting {
    /// Makes a setting.
    pub fn new(knob_id: impl Into<String>, value: KnobValue) -> Self {
        Self {
            knob_id: knob_id.into(),
            value,
        }
    }

    /// Writes this table into `fbb` and returns its offset.
    pub fn pack<'b, A: Allocator + 'b>(
        &self,
        fbb: &mut FlatBufferBuilder<'b, A>,
    ) -> WIPOffset<wire::KnobSetting<'b>> {
        let knob_id = self.knob_id.pack(fbb);
        let (value_type, value) = self.value.pack(fbb);
        wire::KnobSetting::create(
            fbb,
            &wire::KnobSettingArgs {
                knob_id,
                value_type,
                value: Some(value),
            },
        )
    }

    /// Copies a verified setting into an owned value.
    ///
    /// # Errors
    /// A missing value or an unknown value type.
    pub fn from_view(view: &wire::KnobSetting<'_>) -> Result<Self, Error> {
        let knob_id = view.knob_id().unwrap_or_default();
        let location = format!("knob setting \"{knob_id}\"");
        let value = KnobValue::unpack(
            view.value_type(),
            view.value_as_int_value(),
            view.value_as_float_value(),
            view.value_as_string_value(),
            &location,
        )?
        .ok_or(Error::MissingField {
            location,
            field: "value",
        })?;
        Ok(Self {
            knob_id: knob_id.to_owned(),
            value,
        })
    }
}

fn pack_settings<'b, A: Allocator + 'b>(
    settings: &[KnobSetting],
    fbb: &mut FlatBufferBuilder<'b, A>,
) -> Option<WIPOffset<Vector<'b, ForwardsUOffset<wire::KnobSetting<'b>>>>> {
    if settings.is_empty() {
        return None;
    }
    let offsets: Vec<_> = settings.iter().map(|s| s.pack(fbb)).collect();
    Some(fbb.create_vector(&offsets))
}

fn unpack_settings(
    view: Option<Vector<'_, ForwardsUOffset<wire::KnobSetting<'_>>>>,
) -> Result<Vec<KnobSetting>, Error> {
    view.map(|v| v.iter().map(|s| KnobSetting::from_view(&s)).collect())
        .transpose()
        .map(Option::unwrap_or_default)
}

/// An engine plus knob choices (`EngineConfig`, a root type).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngineConfig {
    /// The engine's id (FNV-1a of its name).
    pub engine_id: i64,
    /// Knob settings; knobs left out take their defaults.
    pub knobs: Vec<KnobSetting>,
    /// Metric the choice was ranked by (e.g. `"tflops"`), if any.
    pub ranking_metric: String,
}

impl EngineConfig {
    /// Writes this table into `fbb` and returns its offset.
    pub fn pack<'b, A: Allocator + 'b>(
        &self,
        fbb: &mut FlatBufferBuilder<'b, A>,
    ) -> WIPOffset<wire::EngineConfig<'b>> {
        let knobs = pack_settings(&self.knobs, fbb);
        let ranking_metric = self.ranking_metric.pack(fbb);
        wire::EngineConfig::create(
            fbb,
            &wire::EngineConfigArgs {
                engine_id: self.engine_id,
                knobs,
                ranking_metric,
            },
        )
    }

    /// Serializes the config as a root buffer.
    pub fn to_bytes(&self) -> Vec<u8> {
        root_to_bytes!(self, None)
    }

    /// Copies a verified config into an owned value.
    ///
    /// # Errors
    /// Malformed knob settings.
    pub fn from_view(view: &wire::EngineConfig<'_>) -> Result<Self, Error> {
        Ok(Self {
            engine_id: view.engine_id(),
            knobs: unpack_settings(view.knobs())?,
            ranking_metric: view.ranking_metric().unwrap_or_default().to_owned(),
        })
    }
}

/// A matched catalog entry (`EngineCandidate`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngineCandidate {
    /// Candidate id (required on the wire).
    pub id: String,
    /// The knob tuple that selects this candidate.
    pub knob_settings: Vec<KnobSetting>,
    /// Kernel features as JSON (required on the wire).
    pub kernel_features: String,
}

impl EngineCandidate {
    /// Writes this table into `fbb` and returns its offset.
    pub fn pack<'b, A: Allocator + 'b>(
        &self,
        fbb: &mut FlatBufferBuilder<'b, A>,
    ) -> WIPOffset<wire::EngineCandidate<'b>> {
        let id = Some(fbb.create_string(&self.id));
        let knob_settings = pack_settings(&self.knob_settings, fbb);
        let kernel_features = Some(fbb.create_string(&self.kernel_features));
        wire::EngineCandidate::create(
            fbb,
            &wire::EngineCandidateArgs {
                id,
                knob_settings,
                kernel_features,
            },
        )
    }

    /// Copies a verified candidate into an owned value.
    ///
    /// # Errors
    /// Malformed knob settings.
    pub fn from_view(view: &wire::EngineCandidate<'_>) -> Result<Self, Error> {
        Ok(Self {
            id: view.id().to_owned(),
            knob_settings: unpack_settings(view.knob_settings())?,
            kernel_features: view.kernel_features().to_owned(),
        })
    }
}

/// One page of candidates from the optional enumeration API (`EngineCandidatePage`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngineCandidatePage {
    /// Graph the page is for (required on the wire).
    pub graph_id: String,
    /// Device id (required on the wire).
    pub device_id: String,
    /// Device architecture (required on the wire).
    pub device_arch: String,
    /// Problem features as JSON (required on the wire).
    pub problem_features: String,
    /// Device features as JSON (required on the wire).
    pub device_features: String,
    /// Candidates in total.
    pub total_count: u64,
    /// Index of this page's first candidate.
    pub offset: u64,
    /// The candidates on this page.
    pub candidates: Vec<EngineCandidate>,
    /// Engine name.
    pub engine_name: String,
    /// Owning descriptor id, for descriptor-backed engines.
    pub engine_descriptor_id: String,
}

impl EngineCandidatePage {
    /// Writes this table into `fbb` and returns its offset.
    pub fn pack<'b, A: Allocator + 'b>(
        &self,
        fbb: &mut FlatBufferBuilder<'b, A>,
    ) -> WIPOffset<wire::EngineCandidatePage<'b>> {
        let graph_id = Some(fbb.create_string(&self.graph_id));
        let device_id = Some(fbb.create_string(&self.device_id));
        let device_arch = Some(fbb.create_string(&self.device_arch));
        let problem_features = Some(fbb.create_string(&self.problem_features));
        let device_features = Some(fbb.create_string(&self.device_features));
        let candidates = (!self.candidates.is_empty()).then(|| {
            let offsets: Vec<_> = self.candidates.iter().map(|c| c.pack(fbb)).collect();
            fbb.create_vector(&offsets)
        });
        let engine_name = self.engine_name.pack(fbb);
        let engine_descriptor_id = self.engine_descriptor_id.pack(fbb);
        wire::EngineCandidatePage::create(
            fbb,
            &wire::EngineCandidatePageArgs {
                graph_id,
                device_id,
                device_arch,
                problem_features,
                device_features,
                total_count: self.total_count,
                offset: self.offset,
                candidates,
                engine_name,
                engine_descriptor_id,
            },
        )
    }

    /// Copies a verified page into an owned value.
    ///
    /// # Errors
    /// Malformed knob settings.
    pub fn from_view(view: &wire::EngineCandidatePage<'_>) -> Result<Self, Error> {
        Ok(Self {
            graph_id: view.graph_id().to_owned(),
            device_id: view.device_id().to_owned(),
            device_arch: view.device_arch().to_owned(),
            problem_features: view.problem_features().to_owned(),
            device_features: view.device_features().to_owned(),
            total_count: view.total_count(),
            offset: view.offset(),
            candidates: view
                .candidates()
                .map(|v| v.iter().map(|c| EngineCandidate::from_view(&c)).collect())
                .transpose()?
                .unwrap_or_default(),
            engine_name: view.engine_name().unwrap_or_default().to_owned(),
            engine_descriptor_id: view.engine_descriptor_id().unwrap_or_default().to_owned(),
        })
    }
}

/// What an engine says about itself for a graph (`EngineDetails`, a root type).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngineDetails {
    /// The engine's id.
    pub engine_id: i64,
    /// Knobs the engine accepts for this graph.
    pub knobs: Vec<Knob>,
    /// `BehaviorNote` values (kept as integers so unknown notes survive).
    pub behavior_notes: Vec<i32>,
    /// Informational name; never used to name an engine.
    pub name: String,
    /// Candidate page, only from the enumeration API.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidate_page: Option<EngineCandidatePage>,
}

impl EngineDetails {
    /// Writes this table into `fbb` and returns its offset.
    pub fn pack<'b, A: Allocator + 'b>(
        &self,
        fbb: &mut FlatBufferBuilder<'b, A>,
    ) -> WIPOffset<wire::EngineDetails<'b>> {
        let knobs = (!self.knobs.is_empty()).then(|| {
            let offsets: Vec<_> = self.knobs.iter().map(|k| k.pack(fbb)).collect();
            fbb.create_vector(&offsets)
        });
        let behavior_notes = self.behavior_notes.pack(fbb);
        let name = self.name.pack(fbb);
        let candidate_page = self.candidate_page.as_ref().map(|p| p.pack(fbb));
        wire::EngineDetails::create(
            fbb,
            &wire::EngineDetailsArgs {
                engine_id: self.engine_id,
                knobs,
                behavior_notes,
                name,
                candidate_page,
            },
        )
    }

    /// Serializes the details as a root buffer.
    pub fn to_bytes(&self) -> Vec<u8> {
        root_to_bytes!(self, None)
    }

    /// Copies verified details into an owned value.
    ///
    /// # Errors
    /// Unknown union tags in knobs.
    pub fn from_view(view: &wire::EngineDetails<'_>) -> Result<Self, Error> {
        Ok(Self {
            engine_id: view.engine_id(),
            knobs: view
                .knobs()
                .map(|v| v.iter().map(|k| Knob::from_view(&k)).collect())
                .transpose()?
                .unwrap_or_default(),
            behavior_notes: Vec::<i32>::unpack(view.behavior_notes(), "behavior_notes")?,
            name: view.name().unwrap_or_default().to_owned(),
            candidate_page: view
                .candidate_page()
                .map(|p| EngineCandidatePage::from_view(&p))
                .transpose()?,
        })
    }
}

/// A prediction of an engine's performance (`EnginePrediction`, a root type).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EnginePrediction {
    /// The engine's id.
    pub engine_id: i64,
    /// Whether an engine or an exact configuration is predicted.
    pub kind: wire::PredictionKind,
    /// Whether the prediction is usable.
    pub status: wire::PredictionStatus,
    /// Predicted value of `metric`.
    pub value: f64,
    /// Id of the model entry that produced the prediction.
    pub uhd_id: String,
    /// Why the prediction is unavailable or invalid.
    pub reason: String,
    /// The predicted configuration, for configuration predictions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine_config: Option<EngineConfig>,
    /// Bindings as JSON.
    pub binding_json: String,
    /// Features as JSON.
    pub features_json: String,
    /// The metric `value` is in (e.g. `"tflops"`).
    pub metric: String,
}

impl EnginePrediction {
    /// Writes this table into `fbb` and returns its offset.
    pub fn pack<'b, A: Allocator + 'b>(
        &self,
        fbb: &mut FlatBufferBuilder<'b, A>,
    ) -> WIPOffset<wire::EnginePrediction<'b>> {
        let uhd_id = self.uhd_id.pack(fbb);
        let reason = self.reason.pack(fbb);
        let engine_config = self.engine_config.as_ref().map(|c| c.pack(fbb));
        let binding_json = self.binding_json.pack(fbb);
        let features_json = self.features_json.pack(fbb);
        let metric = self.metric.pack(fbb);
        wire::EnginePrediction::create(
            fbb,
            &wire::EnginePredictionArgs {
                engine_id: self.engine_id,
                kind: self.kind,
                status: self.status,
                value: self.value,
                uhd_id,
                reason,
                engine_config,
                binding_json,
                features_json,
                metric,
            },
        )
    }

    /// Serializes the prediction as a root buffer.
    pub fn to_bytes(&self) -> Vec<u8> {
        root_to_bytes!(self, None)
    }

    /// Copies a verified prediction into an owned value.
    ///
    /// # Errors
    /// Malformed knob settings in the embedded config.
    pub fn from_view(view: &wire::EnginePrediction<'_>) -> Result<Self, Error> {
        Ok(Self {
            engine_id: view.engine_id(),
            kind: view.kind(),
            status: view.status(),
            value: view.value(),
            uhd_id: view.uhd_id().unwrap_or_default().to_owned(),
            reason: view.reason().unwrap_or_default().to_owned(),
            engine_config: view
                .engine_config()
                .map(|c| EngineConfig::from_view(&c))
                .transpose()?,
            binding_json: view.binding_json().unwrap_or_default().to_owned(),
            features_json: view.features_json().unwrap_or_default().to_owned(),
            metric: view.metric().unwrap_or_default().to_owned(),
        })
    }
}

/// A graph and, optionally, a compiled plan in one container
/// (`SerializedGraphAndPlan`, file identifier `"HDGP"`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SerializedGraphAndPlan {
    /// A serialized `Graph`.
    pub graph_blob: Vec<u8>,
    /// A serialized execution plan (opaque here).
    pub plan_blob: Vec<u8>,
}

impl SerializedGraphAndPlan {
    /// The container's file identifier.
    pub const IDENTIFIER: &'static str = "HDGP";

    /// Writes this table into `fbb` and returns its offset.
    pub fn pack<'b, A: Allocator + 'b>(
        &self,
        fbb: &mut FlatBufferBuilder<'b, A>,
    ) -> WIPOffset<wire::SerializedGraphAndPlan<'b>> {
        let graph_blob = self.graph_blob.pack(fbb);
        let plan_blob = self.plan_blob.pack(fbb);
        wire::SerializedGraphAndPlan::create(
            fbb,
            &wire::SerializedGraphAndPlanArgs {
                graph_blob,
                plan_blob,
            },
        )
    }

    /// Serializes the container, with its file identifier.
    pub fn to_bytes(&self) -> Vec<u8> {
        root_to_bytes!(self, Some(Self::IDENTIFIER))
    }

    /// Copies a verified container into an owned value.
    pub fn from_view(view: &wire::SerializedGraphAndPlan<'_>) -> Self {
        Self {
            graph_blob: view
                .graph_blob()
                .map(|b| b.bytes().to_vec())
                .unwrap_or_default(),
            plan_blob: view
                .plan_blob()
                .map(|b| b.bytes().to_vec())
                .unwrap_or_default(),
        }
    }
}
