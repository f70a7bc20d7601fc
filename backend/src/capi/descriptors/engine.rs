//! ENGINEHEUR (the engines ranked for a graph), ENGINE (one engine of a graph) and
//! ENGINECFG (an engine with knob settings).

use std::sync::OnceLock;

use hipdnn_data_sdk::engine_id_to_hex;
use hipdnn_flatbuffers_sdk::model::{Knob, KnobSetting};

use super::attributes::{GetTarget, SetValue};
use super::graph::GraphRef;
use super::knob_info::KnobInfoDescriptor;
use super::tensor::{put_bool, set_bool};
use super::{
    HIPDNN_ATTR_ENGINE_BEHAVIOR_NOTE, HIPDNN_ATTR_ENGINE_GLOBAL_INDEX,
    HIPDNN_ATTR_ENGINE_KNOB_INFO, HIPDNN_ATTR_ENGINE_NAME_EXT, HIPDNN_ATTR_ENGINE_OPERATION_GRAPH,
    HIPDNN_ATTR_ENGINECFG_ENGINE, HIPDNN_ATTR_ENGINECFG_KNOB_CHOICES,
    HIPDNN_ATTR_ENGINECFG_WORKSPACE_SIZE, HIPDNN_ATTR_ENGINEHEUR_FIND_FIRST_EXT,
    HIPDNN_ATTR_ENGINEHEUR_MODE, HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
    HIPDNN_ATTR_ENGINEHEUR_RESULTS, HIPDNN_HEUR_MODE_FALLBACK, HIPDNN_TYPE_BACKEND_DESCRIPTOR,
    HIPDNN_TYPE_BEHAVIOR_NOTE, HIPDNN_TYPE_CHAR, HIPDNN_TYPE_HEUR_MODE, HIPDNN_TYPE_INT64,
};
use super::{Kind, hipdnnBackendDescriptor_t, into_raw, unsupported_attribute, wrong_kind};
use crate::status::*;

/// An engine heuristic descriptor: as in hipDNN, the mode is required and
/// `HIPDNN_HEUR_MODE_FALLBACK` is the only one (the backend's static ranking); with
/// `HIPDNN_ATTR_ENGINEHEUR_FIND_FIRST_EXT` set, finalize only asks whether any engine
/// runs the graph and the results hold at most the best-ranked one.
#[derive(Debug, Default)]
pub(super) struct HeuristicDescriptor {
    graph: Option<GraphRef>,
    /// The mode, once set (always `HIPDNN_HEUR_MODE_FALLBACK`).
    mode: Option<i32>,
    find_first: bool,
    /// Engine ids, best first (set by finalize).
    results: Vec<i64>,
}

impl HeuristicDescriptor {
    pub(super) const TYPE_NAME: &str = "ENGINEHEUR";

    pub(super) fn set(&mut self, value: SetValue) -> BackendResult<()> {
        match value.name {
            HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH => {
                self.graph = Some(GraphRef::of(value.descriptor()?, value.name)?);
            }
            HIPDNN_ATTR_ENGINEHEUR_MODE => {
                value.expect_type(HIPDNN_TYPE_HEUR_MODE)?;
                // SAFETY: the type is checked: one enum value.
                let mode = unsafe { value.one::<i32>() }?;
                if mode != HIPDNN_HEUR_MODE_FALLBACK {
                    return Err(BackendError::not_supported(format!(
                        "HIPDNN_ATTR_ENGINEHEUR_MODE: heuristic mode {mode} is not supported; \
                         the one mode is HIPDNN_HEUR_MODE_FALLBACK ({HIPDNN_HEUR_MODE_FALLBACK})"
                    )));
                }
                self.mode = Some(mode);
            }
            HIPDNN_ATTR_ENGINEHEUR_FIND_FIRST_EXT => self.find_first = set_bool(&value)?,
            other => return Err(unsupported_attribute(Self::TYPE_NAME, other)),
        }
        Ok(())
    }

    pub(super) fn finalize(&mut self) -> BackendResult<()> {
        let g = self.graph.as_ref().ok_or_else(|| {
            BackendError::bad_param(
                "the ENGINEHEUR descriptor has no operation graph (HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH)",
            )
        })?;
        if self.mode.is_none() {
            return Err(BackendError::bad_param(
                "the ENGINEHEUR descriptor has no heuristic mode (HIPDNN_ATTR_ENGINEHEUR_MODE: \
                 HIPDNN_HEUR_MODE_FALLBACK)",
            ));
        }
        let ranked = g.handle.handle().ranked_engines(&g.graph)?.into_iter();
        let keep = if self.find_first { 1 } else { usize::MAX };
        self.results = ranked.take(keep).map(|e| e.id).collect();
        Ok(())
    }

    /// `HIPDNN_ATTR_ENGINEHEUR_RESULTS` fills caller-created ENGINECFG descriptors with
    /// the ranked engines (no knob settings) and finalizes them.
    pub(super) fn get(&self, target: GetTarget) -> BackendResult<()> {
        match (&self.graph, target.name) {
            (_, HIPDNN_ATTR_ENGINEHEUR_MODE) => {
                target.expect_type(HIPDNN_TYPE_HEUR_MODE)?;
                let mode = self.mode.unwrap_or(HIPDNN_HEUR_MODE_FALLBACK);
                // SAFETY: the type is checked: one enum value.
                unsafe { target.put(&[mode]) }
            }
            (_, HIPDNN_ATTR_ENGINEHEUR_FIND_FIRST_EXT) => put_bool(&target, self.find_first),
            (Some(graph), HIPDNN_ATTR_ENGINEHEUR_RESULTS) => {
                target.expect_type(HIPDNN_TYPE_BACKEND_DESCRIPTOR)?;
                target.write_count(self.results.len())?;
                for (t, &id) in target.descriptors(self.results.len()).zip(&self.results) {
                    let t = t?;
                    if !matches!(t.kind, Kind::EngineConfig(_)) {
                        return Err(wrong_kind(target.name, "ENGINECFG", &t.kind));
                    }
                    t.kind = Kind::EngineConfig(EngineConfigDescriptor {
                        engine: Some((graph.clone(), id)),
                        ..EngineConfigDescriptor::default()
                    });
                    t.finalized = true;
                }
                Ok(())
            }
            (_, other) => Err(unsupported_attribute(Self::TYPE_NAME, other)),
        }
    }
}

/// An engine descriptor.
#[derive(Debug, Default)]
pub(super) struct EngineDescriptor {
    graph: Option<GraphRef>,
    id: Option<i64>,
    /// The engine's name (set by finalize).
    name: String,
    /// The engine's behavior notes for the graph (set by finalize).
    notes: Vec<i32>,
    /// The knobs the engine takes for the graph (set by finalize).
    knobs: Vec<Knob>,
}

impl EngineDescriptor {
    pub(super) const TYPE_NAME: &str = "ENGINE";

    pub(super) fn set(&mut self, value: SetValue) -> BackendResult<()> {
        match value.name {
            HIPDNN_ATTR_ENGINE_OPERATION_GRAPH => {
                self.graph = Some(GraphRef::of(value.descriptor()?, value.name)?);
            }
            HIPDNN_ATTR_ENGINE_GLOBAL_INDEX => {
                value.expect_type(HIPDNN_TYPE_INT64)?;
                // SAFETY: the type is checked: one int64.
                self.id = Some(unsafe { value.one::<i64>() }?);
            }
            other => return Err(unsupported_attribute(Self::TYPE_NAME, other)),
        }
        Ok(())
    }

    pub(super) fn finalize(&mut self) -> BackendResult<()> {
        let (Some(g), Some(engine)) = (self.graph.as_ref(), self.id) else {
            return Err(BackendError::bad_param(
                "the ENGINE descriptor needs an operation graph and a global index (the engine id)",
            ));
        };
        let handle = g.handle.handle();
        // An engine named explicitly is usable even where the ranking's engine order
        // (HIPDNN_HEUR_FALLBACK_ENGINE_ORDER) leaves it out.
        let applicable = handle.applicable_engines(&g.graph);
        let Some(found) = applicable.into_iter().find(|e| e.id == engine) else {
            return Err(BackendError::not_supported(format!(
                "engine {} cannot run graph '{}' on this handle",
                engine_id_to_hex(engine),
                g.graph.graph().name
            )));
        };
        self.name = found.name;
        let details = handle.engine_details(engine, &g.graph)?;
        self.notes = details.behavior_notes;
        self.knobs = details.knobs;
        Ok(())
    }

    pub(super) fn get(&self, target: GetTarget) -> BackendResult<()> {
        match (self.id, target.name) {
            (Some(id), HIPDNN_ATTR_ENGINE_GLOBAL_INDEX) => {
                target.expect_type(HIPDNN_TYPE_INT64)?;
                // SAFETY: the type is checked: int64s.
                unsafe { target.put(&[id]) }
            }
            (_, HIPDNN_ATTR_ENGINE_NAME_EXT) => {
                target.expect_type(HIPDNN_TYPE_CHAR)?;
                let mut bytes = self.name.clone().into_bytes();
                bytes.push(0);
                if !target.count_only() && target.requested < bytes.len() {
                    return Err(BackendError::new(
                        HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT,
                        format!(
                            "the engine name needs {} bytes, the buffer has {}",
                            bytes.len(),
                            target.requested
                        ),
                    ));
                }
                // SAFETY: the type is checked: chars.
                unsafe { target.put(&bytes) }
            }
            (_, HIPDNN_ATTR_ENGINE_KNOB_INFO) => {
                target.expect_type(HIPDNN_TYPE_BACKEND_DESCRIPTOR)?;
                let n = self.knobs.len();
                if target.count_only() || target.requested == 0 {
                    return target.write_count(n);
                }
                // As hipDNN: room for every knob, or nothing is made.
                if target.requested < n {
                    return Err(BackendError::bad_param(format!(
                        "attribute {}: the engine has {n} knobs, the array has room for {}",
                        target.name, target.requested
                    )));
                }
                let made: Vec<hipdnnBackendDescriptor_t> = self
                    .knobs
                    .iter()
                    .map(|k| into_raw(Kind::KnobInfo(KnobInfoDescriptor::new(k.clone())), true))
                    .collect();
                // SAFETY: the type is checked: descriptor pointers; room for `n`.
                unsafe { target.put(&made) }
            }
            (_, HIPDNN_ATTR_ENGINE_BEHAVIOR_NOTE) => {
                target.expect_type(HIPDNN_TYPE_BEHAVIOR_NOTE)?;
                // SAFETY: the type is checked: behavior notes (`int32_t`-sized).
                unsafe { target.put(&self.notes) }
            }
            (_, other) => Err(unsupported_attribute(Self::TYPE_NAME, other)),
        }
    }
}

/// An engine config descriptor: an engine of a graph and knob settings.
#[derive(Debug, Default)]
pub(super) struct EngineConfigDescriptor {
    pub(super) engine: Option<(GraphRef, i64)>,
    pub(super) knobs: Vec<KnobSetting>,
    /// The workspace bytes the plugin reports for this config, once asked (at finalize,
    /// or at the first read for a config the heuristic filled).
    workspace: OnceLock<i64>,
}

impl EngineConfigDescriptor {
    pub(super) const TYPE_NAME: &str = "ENGINECFG";

    pub(super) fn set(&mut self, value: SetValue) -> BackendResult<()> {
        match value.name {
            HIPDNN_ATTR_ENGINECFG_ENGINE => {
                let d = value.descriptor()?;
                let Kind::Engine(EngineDescriptor {
                    graph: Some(graph),
                    id: Some(id),
                    ..
                }) = &d.kind
                else {
                    return Err(wrong_kind(value.name, "finalized ENGINE", &d.kind));
                };
                self.engine = Some((graph.clone(), *id));
            }
            HIPDNN_ATTR_ENGINECFG_KNOB_CHOICES => {
                let mut settings = Vec::new();
                for d in value.descriptors()? {
                    let d = d?;
                    let Kind::KnobChoice(choice) = &d.kind else {
                        return Err(wrong_kind(value.name, "KNOB_CHOICE", &d.kind));
                    };
                    let Some(setting) = choice.setting() else {
                        return Err(wrong_kind(value.name, "KNOB_CHOICE", &d.kind));
                    };
                    settings.push(setting);
                }
                self.knobs = settings;
            }
            other => return Err(unsupported_attribute(Self::TYPE_NAME, other)),
        }
        Ok(())
    }

    /// Checks the settings against the engine's knobs for the graph.
    pub(super) fn finalize(&mut self) -> BackendResult<()> {
        let (g, id) = self.engine.as_ref().ok_or_else(|| {
            BackendError::bad_param(
                "the ENGINECFG descriptor has no engine (HIPDNN_ATTR_ENGINECFG_ENGINE)",
            )
        })?;
        let details = g.handle.handle().engine_details(*id, &g.graph)?;
        hipdnn_flatbuffers_sdk::model::knob::check_settings(&details.knobs, &self.knobs).map_err(
            |e| BackendError::bad_param(format!("engine {}: {e}", engine_id_to_hex(*id))),
        )?;
        // As hipDNN, the workspace is asked for here, so a plugin that cannot size the
        // config fails the finalize.
        self.workspace().map(drop)
    }

    /// The workspace bytes the engine needs for the graph with these settings.
    fn workspace(&self) -> BackendResult<i64> {
        if let Some(&size) = self.workspace.get() {
            return Ok(size);
        }
        let (g, id) = self.engine.as_ref().ok_or_else(|| {
            BackendError::bad_param(
                "the ENGINECFG descriptor has no engine (HIPDNN_ATTR_ENGINECFG_ENGINE)",
            )
        })?;
        let size = g
            .handle
            .handle()
            .workspace_size(&g.graph, *id, &self.knobs)?;
        let size = i64::try_from(size).map_err(|_| {
            BackendError::new(
                HIPDNN_STATUS_INTERNAL_ERROR,
                format!(
                    "engine {}: a workspace of {size} bytes does not fit an int64_t",
                    engine_id_to_hex(*id)
                ),
            )
        })?;
        Ok(*self.workspace.get_or_init(|| size))
    }

    /// `HIPDNN_ATTR_ENGINECFG_WORKSPACE_SIZE` (read-only): one `INT64`, the bytes of
    /// workspace a plan of this config needs; as in hipDNN the caller asks for exactly
    /// one element into a non-null array.
    pub(super) fn get(&self, target: GetTarget) -> BackendResult<()> {
        match target.name {
            HIPDNN_ATTR_ENGINECFG_WORKSPACE_SIZE => {
                target.expect_type(HIPDNN_TYPE_INT64)?;
                if target.requested != 1 {
                    return Err(BackendError::bad_param(format!(
                        "attribute {}: the workspace size is read as exactly 1 element",
                        target.name
                    )));
                }
                if target.count_only() {
                    return Err(BackendError::new(
                        HIPDNN_STATUS_BAD_PARAM_NULL_POINTER,
                        format!("attribute {}: the array is null", target.name),
                    ));
                }
                let size = self.workspace()?;
                // SAFETY: the type is checked: int64s.
                unsafe { target.put(&[size]) }
            }
            other => Err(unsupported_attribute(Self::TYPE_NAME, other)),
        }
    }
}
