//! Knobs: what an engine lets users tune, and checking what they chose.
//!
//! Engines advertise [`Knob`]s in their details; users pick values that arrive as
//! [`KnobSetting`]s in the engine config. Ids are dotted: `global.*` is reserved for the
//! standard knobs below, custom knobs use `<plugin>.<category>.<name>`.

use hipdnn_flatbuffers_sdk::model::{
    FloatConstraint, IntConstraint, Knob, KnobConstraint, KnobSetting, KnobValue, StringConstraint,
};

use crate::error::{PluginError, PluginResult};

pub use hipdnn_flatbuffers_sdk::model::knob::{check_value, constraint_type_mismatch, resolve};

/// `global.benchmarking` (int64, default 0): when 1, engines may run and time variants.
pub const BENCHMARKING_KNOB_NAME: &str = "global.benchmarking";
/// `global.deterministic` (int64, default 0): when 1, results must be bitwise reproducible.
pub const DETERMINISTIC_KNOB_NAME: &str = "global.deterministic";
/// `global.workspace_size_limit` (int64 bytes, default -1 = no limit).
pub const WORKSPACE_SIZE_LIMIT_KNOB_NAME: &str = "global.workspace_size_limit";

/// The reserved namespace.
pub const GLOBAL_PREFIX: &str = "global.";

/// Why a knob definition was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KnobError {
    /// A custom knob in the reserved `global.` namespace.
    #[error("knob \"{0}\": the global. namespace is reserved for the standard knobs")]
    ReservedNamespace(String),
    /// An empty id or one with empty dotted parts.
    #[error("knob \"{0}\": ids are dotted names like <plugin>.<category>.<name>")]
    BadId(String),
    /// A default outside the knob's own constraint.
    #[error("knob \"{id}\": default {value} violates its constraint: {reason}")]
    DefaultViolatesConstraint {
        /// Knob id.
        id: String,
        /// The default.
        value: String,
        /// Why.
        reason: String,
    },
    /// A constraint that admits nothing (`min > max`, `step <= 0`).
    #[error("knob \"{id}\": {reason}")]
    BadConstraint {
        /// Knob id.
        id: String,
        /// Why.
        reason: String,
    },
}

impl From<KnobError> for PluginError {
    fn from(e: KnobError) -> Self {
        PluginError::internal(e.to_string())
    }
}

/// Builds [`Knob`] definitions, checked: the id's namespace, the constraint, and that
/// the default satisfies it.
///
/// ```
/// use hipdnn_plugin_sdk::knobs::KnobFactory;
/// let threads = KnobFactory::int("cpu.exec.threads", 0)
///     .description("worker threads; 0 = all cores")
///     .range(0, 256)
///     .build()
///     .unwrap();
/// assert_eq!(threads.knob_id, "cpu.exec.threads");
/// assert!(KnobFactory::int("global.mine", 0).build().is_err());
/// ```
#[derive(Debug, Clone)]
pub struct KnobFactory {
    knob: Knob,
    global: bool,
}

impl KnobFactory {
    fn new(id: &str, default_value: KnobValue) -> Self {
        Self {
            knob: Knob {
                knob_id: id.to_owned(),
                description: String::new(),
                default_value,
                constraint: None,
                deprecated: false,
            },
            global: false,
        }
    }

    /// An int64 knob with its default.
    pub fn int(id: &str, default: i64) -> Self {
        Self::new(id, KnobValue::Int(default))
    }

    /// A float64 knob with its default.
    pub fn float(id: &str, default: f64) -> Self {
        Self::new(id, KnobValue::Float(default))
    }

    /// A string knob with its default.
    pub fn string(id: &str, default: &str) -> Self {
        Self::new(id, KnobValue::String(default.to_owned()))
    }

    /// What the knob does (shown to users).
    pub fn description(mut self, text: &str) -> Self {
        self.knob.description = text.to_owned();
        self
    }

    /// Marks the knob deprecated: still accepted, with a warning.
    pub fn deprecated(mut self) -> Self {
        self.knob.deprecated = true;
        self
    }

    fn int_constraint(&mut self) -> &mut IntConstraint {
        if !matches!(self.knob.constraint, Some(KnobConstraint::Int(_))) {
            self.knob.constraint = Some(KnobConstraint::Int(IntConstraint {
                min_value: i64::MIN,
                max_value: i64::MAX,
                step: 1,
                valid_values: Vec::new(),
            }));
        }
        match &mut self.knob.constraint {
            Some(KnobConstraint::Int(c)) => c,
            _ => unreachable!("set just above"),
        }
    }

    /// Integer knobs: `min <= v <= max`.
    pub fn range(mut self, min: i64, max: i64) -> Self {
        let c = self.int_constraint();
        c.min_value = min;
        c.max_value = max;
        self
    }

    /// Integer knobs: `(v - min) % step == 0`.
    pub fn step(mut self, step: i64) -> Self {
        self.int_constraint().step = step;
        self
    }

    /// Integer knobs: only these values (overrides the range).
    pub fn valid_ints(mut self, values: &[i64]) -> Self {
        self.int_constraint().valid_values = values.to_vec();
        self
    }

    /// Float knobs: `min <= v <= max`.
    pub fn float_range(mut self, min: f64, max: f64) -> Self {
        self.knob.constraint = Some(KnobConstraint::Float(FloatConstraint {
            min_value: min,
            max_value: max,
        }));
        self
    }

    fn string_constraint(&mut self) -> &mut StringConstraint {
        if !matches!(self.knob.constraint, Some(KnobConstraint::String(_))) {
            self.knob.constraint = Some(KnobConstraint::String(StringConstraint::default()));
        }
        match &mut self.knob.constraint {
            Some(KnobConstraint::String(c)) => c,
            _ => unreachable!("set just above"),
        }
    }

    /// String knobs: at most this many bytes.
    pub fn max_length(mut self, max: i32) -> Self {
        self.string_constraint().max_length = max;
        self
    }

    /// String knobs: only these values.
    pub fn valid_strings(mut self, values: &[&str]) -> Self {
        self.string_constraint().valid_values = values.iter().map(|s| (*s).to_owned()).collect();
        self
    }

    /// Checks and returns the knob.
    ///
    /// # Errors
    /// A custom knob in `global.`, a malformed id, a constraint admitting nothing, or a
    /// default outside the constraint.
    pub fn build(self) -> Result<Knob, KnobError> {
        let id = &self.knob.knob_id;
        if id.is_empty() || id.split('.').any(str::is_empty) {
            return Err(KnobError::BadId(id.clone()));
        }
        if !self.global && id.starts_with(GLOBAL_PREFIX) {
            return Err(KnobError::ReservedNamespace(id.clone()));
        }
        if let Some(reason) = constraint_type_mismatch(&self.knob) {
            return Err(KnobError::BadConstraint {
                id: id.clone(),
                reason,
            });
        }
        match &self.knob.constraint {
            Some(KnobConstraint::Int(c))
                if c.valid_values.is_empty() && (c.min_value > c.max_value || c.step <= 0) =>
            {
                return Err(KnobError::BadConstraint {
                    id: id.clone(),
                    reason: format!(
                        "range {}..={} with step {} admits nothing",
                        c.min_value, c.max_value, c.step
                    ),
                });
            }
            Some(KnobConstraint::Float(c))
                if c.min_value
                    .partial_cmp(&c.max_value)
                    .is_none_or(|o| o.is_gt()) =>
            {
                return Err(KnobError::BadConstraint {
                    id: id.clone(),
                    reason: format!("range {}..={} admits nothing", c.min_value, c.max_value),
                });
            }
            _ => {}
        }
        if let Err(reason) = check_value(&self.knob, &self.knob.default_value) {
            return Err(KnobError::DefaultViolatesConstraint {
                id: id.clone(),
                value: self.knob.default_value.to_string(),
                reason,
            });
        }
        Ok(self.knob)
    }
}

/// The standard knobs, for engines that honour them.
pub mod global {
    use super::*;

    fn standard(factory: KnobFactory) -> Knob {
        KnobFactory {
            global: true,
            ..factory
        }
        .build()
        .expect("the standard knobs are well-formed")
    }

    /// `global.benchmarking`: 0 or 1, default 0.
    pub fn benchmarking() -> Knob {
        standard(
            KnobFactory::int(BENCHMARKING_KNOB_NAME, 0)
                .description(
                    "1: the engine may run and time variants to choose one (first run slower)",
                )
                .valid_ints(&[0, 1]),
        )
    }

    /// `global.deterministic`: 0 or 1, default 0.
    pub fn deterministic() -> Knob {
        standard(
            KnobFactory::int(DETERMINISTIC_KNOB_NAME, 0)
                .description("1: results must be bitwise reproducible from run to run")
                .valid_ints(&[0, 1]),
        )
    }

    /// `global.workspace_size_limit`: bytes, default -1 (no limit).
    pub fn workspace_size_limit() -> Knob {
        standard(
            KnobFactory::int(WORKSPACE_SIZE_LIMIT_KNOB_NAME, -1)
                .description("largest workspace in bytes the engine may ask for; -1: no limit")
                .range(-1, i64::MAX),
        )
    }
}

/// The standard `global.*` knobs as an engine config chose them, typed.
///
/// Engines embed it in their own [`Settings`](crate::Settings) and read it with
/// [`GlobalSettings::from_choices`]; an engine that has no knobs of its own can use it as
/// its `Settings` directly. Knobs left unset read as their defaults (off, no limit).
///
/// ```
/// use hipdnn_plugin_sdk::KnobChoices;
/// use hipdnn_plugin_sdk::knobs::{GlobalSettings, KnobSettingFactory, global};
///
/// let knobs = [global::deterministic(), global::workspace_size_limit()];
/// let settings = [KnobSettingFactory::int("global.workspace_size_limit", 4096)];
/// let chosen = GlobalSettings::from_choices(&KnobChoices { knobs: &knobs, settings: &settings });
/// assert_eq!(chosen.workspace_size_limit, Some(4096));
/// assert!(!chosen.deterministic && !chosen.benchmarking);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GlobalSettings {
    /// `global.deterministic`: results must be bitwise reproducible from run to run.
    pub deterministic: bool,
    /// `global.workspace_size_limit`: the largest workspace in bytes a plan may ask for
    /// (`None`: no limit).
    pub workspace_size_limit: Option<usize>,
    /// `global.benchmarking`: the engine may run and time variants to choose one.
    pub benchmarking: bool,
}

impl GlobalSettings {
    /// Reads the standard knobs from `choices` (already checked against the engine's
    /// knobs, so values are in range).
    pub fn from_choices(choices: &crate::KnobChoices<'_>) -> Self {
        Self {
            deterministic: choices.int(DETERMINISTIC_KNOB_NAME) == Some(1),
            workspace_size_limit: choices
                .int(WORKSPACE_SIZE_LIMIT_KNOB_NAME)
                .and_then(|limit| usize::try_from(limit).ok()),
            benchmarking: choices.int(BENCHMARKING_KNOB_NAME) == Some(1),
        }
    }
}

impl crate::Settings for GlobalSettings {
    fn from_choices(choices: &crate::KnobChoices<'_>) -> PluginResult<Self> {
        Ok(GlobalSettings::from_choices(choices))
    }
}

/// Builds [`KnobSetting`]s (for tests and hosts).
#[derive(Debug, Clone, Copy)]
pub struct KnobSettingFactory;

impl KnobSettingFactory {
    /// An int64 setting.
    pub fn int(id: &str, value: i64) -> KnobSetting {
        KnobSetting::new(id, KnobValue::Int(value))
    }

    /// A float64 setting.
    pub fn float(id: &str, value: f64) -> KnobSetting {
        KnobSetting::new(id, KnobValue::Float(value))
    }

    /// A string setting.
    pub fn string(id: &str, value: &str) -> KnobSetting {
        KnobSetting::new(id, KnobValue::String(value.to_owned()))
    }
}

/// Checks settings against the advertised knobs, as the final interpreter of a config:
/// a type mismatch or a value outside the constraint is `BAD_PARAM` naming the knob;
/// an unknown knob is ignored with a warning (forward compatibility), a deprecated one
/// is accepted with a warning.
///
/// # Errors
/// `BAD_PARAM` for the first invalid setting.
pub fn check_settings(knobs: &[Knob], settings: &[KnobSetting]) -> PluginResult<()> {
    hipdnn_flatbuffers_sdk::model::knob::check_settings(knobs, settings)
        .map_err(|e| PluginError::bad_param(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_knobs_may_not_use_the_global_namespace() {
        let err = KnobFactory::int("global.threads", 1).build().unwrap_err();
        assert_eq!(err, KnobError::ReservedNamespace("global.threads".into()));
        assert!(err.to_string().contains("reserved"));
        assert!(KnobFactory::int("", 1).build().is_err());
        assert!(KnobFactory::int("cpu..x", 1).build().is_err());
        assert_eq!(global::benchmarking().knob_id, BENCHMARKING_KNOB_NAME);
        assert_eq!(global::deterministic().knob_id, DETERMINISTIC_KNOB_NAME);
        assert_eq!(
            global::workspace_size_limit().default_value,
            KnobValue::Int(-1)
        );
    }

    #[test]
    fn global_settings_read_the_standard_knobs() {
        let knobs = [
            global::benchmarking(),
            global::deterministic(),
            global::workspace_size_limit(),
        ];
        let read = |settings: &[KnobSetting]| {
            GlobalSettings::from_choices(&crate::KnobChoices {
                knobs: &knobs,
                settings,
            })
        };
        assert_eq!(read(&[]), GlobalSettings::default());
        let chosen = read(&[
            KnobSettingFactory::int(BENCHMARKING_KNOB_NAME, 1),
            KnobSettingFactory::int(DETERMINISTIC_KNOB_NAME, 1),
            KnobSettingFactory::int(WORKSPACE_SIZE_LIMIT_KNOB_NAME, 0),
        ]);
        assert_eq!(
            chosen,
            GlobalSettings {
                deterministic: true,
                workspace_size_limit: Some(0),
                benchmarking: true,
            }
        );
        // Knobs the engine does not advertise read as unset.
        let none = GlobalSettings::from_choices(&crate::KnobChoices {
            knobs: &[],
            settings: &[],
        });
        assert_eq!(none, GlobalSettings::default());
    }

    #[test]
    fn defaults_must_satisfy_their_constraint() {
        assert!(KnobFactory::int("a.b", 3).range(0, 2).build().is_err());
        assert!(
            KnobFactory::int("a.b", 3)
                .range(1, 9)
                .step(2)
                .build()
                .is_ok()
        );
        assert!(
            KnobFactory::int("a.b", 4)
                .range(1, 9)
                .step(2)
                .build()
                .is_err()
        );
        assert!(KnobFactory::int("a.b", 4).range(9, 1).build().is_err());
        assert!(
            KnobFactory::float("a.b", 0.5)
                .float_range(0.0, 1.0)
                .build()
                .is_ok()
        );
        assert!(
            KnobFactory::float("a.b", 0.5)
                .float_range(1.0, 0.0)
                .build()
                .is_err()
        );
        assert!(
            KnobFactory::string("a.b", "x")
                .valid_strings(&["y"])
                .build()
                .is_err()
        );
        assert!(
            KnobFactory::string("a.b", "long")
                .max_length(2)
                .build()
                .is_err()
        );
        let knob = KnobFactory::int("a.b", 16)
            .valid_ints(&[16, 32])
            .deprecated()
            .description("d")
            .build()
            .unwrap();
        assert!(knob.deprecated);
        assert_eq!(knob.description, "d");
    }

    #[test]
    fn settings_are_checked_against_knobs() {
        let knobs = vec![
            KnobFactory::int("cpu.threads", 0)
                .range(0, 8)
                .build()
                .unwrap(),
            KnobFactory::string("cpu.algo", "auto")
                .valid_strings(&["auto", "gemm"])
                .build()
                .unwrap(),
            KnobFactory::float("cpu.alpha", 0.0)
                .float_range(-1.0, 1.0)
                .deprecated()
                .build()
                .unwrap(),
        ];
        assert!(check_settings(&knobs, &[KnobSettingFactory::int("cpu.threads", 4)]).is_ok());
        let err = check_settings(&knobs, &[KnobSettingFactory::int("cpu.threads", 9)]).unwrap_err();
        assert_eq!(err.status, crate::abi::HIPDNN_PLUGIN_STATUS_BAD_PARAM);
        assert!(
            err.message.contains("cpu.threads") && err.message.contains("outside"),
            "{}",
            err.message
        );
        let err =
            check_settings(&knobs, &[KnobSettingFactory::float("cpu.threads", 1.0)]).unwrap_err();
        assert!(err.message.contains("expects int64"), "{}", err.message);
        assert!(check_settings(&knobs, &[KnobSettingFactory::string("cpu.algo", "fft")]).is_err());
        assert!(check_settings(&knobs, &[KnobSettingFactory::int("cpu.unknown", 1)]).is_ok());
        assert!(check_settings(&knobs, &[KnobSettingFactory::float("cpu.alpha", 0.5)]).is_ok());
        let settings = [KnobSettingFactory::int("cpu.threads", 2)];
        assert_eq!(
            resolve(&knobs, &settings, "cpu.threads"),
            Some(&KnobValue::Int(2))
        );
        assert_eq!(
            resolve(&knobs, &settings, "cpu.algo"),
            Some(&KnobValue::String("auto".into()))
        );
        assert_eq!(resolve(&knobs, &settings, "nope"), None);
    }
}
