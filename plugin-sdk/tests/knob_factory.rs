//! `KnobFactory::build` promises a checked knob; these are definitions it must refuse.

use hipdnn_plugin_sdk::knobs::{KnobError, KnobFactory};

/// A constraint of another type than the knob's default is never applied:
/// `check_value` matches constraint and value by type and skips the rest. Today
/// `KnobFactory::float("x", 0.5).range(0, 1)` builds, is advertised with the range
/// 0..=1, and accepts a setting of 1000.0. `build` must refuse such definitions.
#[test]
fn knob_factory_refuses_a_constraint_of_another_type() {
    let cases = [
        (
            "float knob, int range",
            KnobFactory::float("test.knob.alpha", 0.5).range(0, 1),
        ),
        (
            "int knob, float range",
            KnobFactory::int("test.knob.tile", 16).float_range(1.0, 64.0),
        ),
        (
            "string knob, int range",
            KnobFactory::string("test.knob.algo", "auto").range(0, 1),
        ),
        (
            "int knob, string values",
            KnobFactory::int("test.knob.tile", 16).valid_strings(&["16"]),
        ),
    ];
    for (what, factory) in cases {
        let built = factory.build();
        assert!(
            matches!(built, Err(KnobError::BadConstraint { .. })),
            "{what}: {built:?}"
        );
    }
}
