//! Knob settings as the backend checks them before it sends an engine config: the wire
//! model's rules, with the accepted-but-odd settings logged.

use hipdnn_flatbuffers_sdk::model::knob::{self, KnobSettingError, KnobSettingNote};
use hipdnn_flatbuffers_sdk::model::{Knob, KnobSetting};

/// Checks `settings` against an engine's `knobs`; settings for unknown knobs are ignored
/// and those for deprecated knobs accepted, each with a warning.
///
/// # Errors
/// The first setting that does not fit its knob.
pub(crate) fn check_settings(
    knobs: &[Knob],
    settings: &[KnobSetting],
) -> Result<(), KnobSettingError> {
    knob::check_settings(knobs, settings, |note| match note {
        KnobSettingNote::Unknown { knob_id } => {
            tracing::warn!(knob = %knob_id, "ignoring a setting for a knob this engine does not have");
        }
        KnobSettingNote::Deprecated { knob_id } => {
            tracing::warn!(knob = %knob_id, "knob is deprecated");
        }
    })
}
