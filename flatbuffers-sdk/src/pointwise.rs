//! Facts about pointwise modes that every consumer of graphs needs alike.

use crate::wire::PointwiseMode;

/// How many inputs a pointwise node of `mode` takes: 1 (unary), 2 (binary; the
/// backward activations take the forward input and the incoming gradient) or 3
/// (`BINARY_SELECT`). `None` for `UNSET` and values this schema does not know.
pub fn pointwise_arity(mode: PointwiseMode) -> Option<usize> {
    use PointwiseMode as M;
    Some(match mode {
        M::ABS
        | M::CEIL
        | M::ELU_FWD
        | M::ERF
        | M::EXP
        | M::FLOOR
        | M::GELU_APPROX_TANH_FWD
        | M::GELU_FWD
        | M::GEN_INDEX
        | M::IDENTITY
        | M::LOG
        | M::LOGICAL_NOT
        | M::NEG
        | M::RECIPROCAL
        | M::RELU_FWD
        | M::RSQRT
        | M::SIGMOID_FWD
        | M::SIN
        | M::SOFTPLUS_FWD
        | M::SQRT
        | M::SWISH_FWD
        | M::TAN
        | M::TANH_FWD => 1,
        M::ADD
        | M::ADD_SQUARE
        | M::CMP_EQ
        | M::CMP_GE
        | M::CMP_GT
        | M::CMP_LE
        | M::CMP_LT
        | M::CMP_NEQ
        | M::DIV
        | M::ELU_BWD
        | M::GELU_APPROX_TANH_BWD
        | M::GELU_BWD
        | M::LOGICAL_AND
        | M::LOGICAL_OR
        | M::MAX_OP
        | M::MIN_OP
        | M::MUL
        | M::RELU_BWD
        | M::SIGMOID_BWD
        | M::SOFTPLUS_BWD
        | M::SUB
        | M::SWISH_BWD
        | M::TANH_BWD => 2,
        M::BINARY_SELECT => 3,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_mode_but_unset_has_an_arity() {
        for value in 1..=47 {
            let mode = PointwiseMode(value);
            assert!(
                mode.variant_name().is_some(),
                "mode {value} is in the schema"
            );
            assert!(pointwise_arity(mode).is_some(), "{mode:?}");
        }
        assert_eq!(pointwise_arity(PointwiseMode::UNSET), None);
        assert_eq!(pointwise_arity(PointwiseMode(48)), None);
        assert_eq!(pointwise_arity(PointwiseMode::RELU_FWD), Some(1));
        assert_eq!(pointwise_arity(PointwiseMode::RELU_BWD), Some(2));
        assert_eq!(pointwise_arity(PointwiseMode::BINARY_SELECT), Some(3));
    }
}
