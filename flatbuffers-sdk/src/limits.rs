//! How large a graph may be: the bounds graph validation enforces before anyone
//! allocates or loops over a tensor.
//!
//! A graph is a few hundred bytes whatever its tensors' sizes: a `2²⁰ × 2²⁰` tensor with
//! zero strides costs the same bytes as a `2 × 2` one. Everything downstream (input
//! generation, the CPU references, engines' plans) does work proportional to the
//! *logical* size, so validation bounds it, together with the rank, before any of that
//! runs. The defaults sit far above what real workloads use (see [`GraphLimits::DEFAULT`])
//! and every bound can be raised (or lowered, as the fuzzing harness does) with an
//! environment variable.

use std::sync::OnceLock;

/// Environment variable overriding [`GraphLimits::max_rank`].
pub const MAX_TENSOR_RANK_ENV: &str = "HIPDNN_MAX_TENSOR_RANK";
/// Environment variable overriding [`GraphLimits::max_tensor_elements`].
pub const MAX_TENSOR_ELEMENTS_ENV: &str = "HIPDNN_MAX_TENSOR_ELEMENTS";
/// Environment variable overriding [`GraphLimits::max_graph_elements`].
pub const MAX_GRAPH_ELEMENTS_ENV: &str = "HIPDNN_MAX_GRAPH_ELEMENTS";

/// Bounds on the shapes of a graph's tensors, checked by graph validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphLimits {
    /// Most dimensions a tensor may have.
    pub max_rank: usize,
    /// Most logical elements (the product of the dims, whatever the strides) of one
    /// tensor, and most elements the strides of a tensor with a buffer may address
    /// (`1 + Σ (dims[i] - 1) · strides[i]`, the buffer's extent).
    pub max_tensor_elements: u64,
    /// Most elements of all the graph's tensors together: each counts its logical
    /// elements, or its buffer's extent when that is larger; virtual tensors count.
    pub max_graph_elements: u64,
}

impl GraphLimits {
    /// The defaults: rank 8, 2³⁶ elements per tensor, 2³⁸ per graph.
    ///
    /// * Rank 8 is cuDNN's `CUDNN_DIM_MAX`, the bound of the API hipDNN follows; the
    ///   operations of the schema use rank 3 to 6 (convolutions up to 3-D, attention and
    ///   grouped matmuls at 4 or 5), and no provider takes more.
    /// * 2³⁶ elements (6.9·10¹⁰) is 128 GiB in a 16-bit type and 256 GiB in `FLOAT`: more
    ///   than one GPU holds today. The largest tensors of real workloads, LLM logits of
    ///   batch × sequence × vocabulary, stay below 2³⁴ (16 × 8192 × 128256).
    /// * 2³⁸ per graph leaves room for a convolution or matmul whose input, weights and
    ///   output are each near the per-tensor bound.
    pub const DEFAULT: Self = Self {
        max_rank: 8,
        max_tensor_elements: 1 << 36,
        max_graph_elements: 1 << 38,
    };

    /// The defaults with each bound replaced by its environment variable where set
    /// ([`MAX_TENSOR_RANK_ENV`], [`MAX_TENSOR_ELEMENTS_ENV`], [`MAX_GRAPH_ELEMENTS_ENV`];
    /// decimal or `0x` hex, at least 1). A value that does not parse is ignored with a
    /// warning.
    pub fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// [`GraphLimits::from_env`] over any source of variables.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let mut limits = Self::DEFAULT;
        let read = |name: &str, default: u64| -> u64 {
            let Some(text) = lookup(name) else {
                return default;
            };
            match parse_bound(&text) {
                Some(value) => value,
                None => {
                    tracing::warn!(
                        "{name}={text:?} is not a positive integer (decimal or 0x hex); using {default}"
                    );
                    default
                }
            }
        };
        limits.max_rank = usize::try_from(read(MAX_TENSOR_RANK_ENV, limits.max_rank as u64))
            .unwrap_or(usize::MAX);
        limits.max_tensor_elements = read(MAX_TENSOR_ELEMENTS_ENV, limits.max_tensor_elements);
        limits.max_graph_elements = read(MAX_GRAPH_ELEMENTS_ENV, limits.max_graph_elements);
        limits
    }

    /// The limits plain `validate` applies: [`GraphLimits::from_env`], read once, at the
    /// first validation of the process.
    pub fn current() -> &'static Self {
        static CURRENT: OnceLock<GraphLimits> = OnceLock::new();
        CURRENT.get_or_init(Self::from_env)
    }
}

impl Default for GraphLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

fn parse_bound(text: &str) -> Option<u64> {
    let text = text.trim().replace('_', "");
    let value = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok()?,
        None => text.parse().ok()?,
    };
    (value > 0).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_replace_the_defaults_and_bad_values_are_ignored() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        assert_eq!(GraphLimits::from_lookup(env(&[])), GraphLimits::DEFAULT);
        let set = GraphLimits::from_lookup(env(&[
            (MAX_TENSOR_RANK_ENV, "12"),
            (MAX_TENSOR_ELEMENTS_ENV, "0x100000"),
            (MAX_GRAPH_ELEMENTS_ENV, "4_000_000"),
        ]));
        assert_eq!(
            set,
            GraphLimits {
                max_rank: 12,
                max_tensor_elements: 1 << 20,
                max_graph_elements: 4_000_000,
            }
        );
        let bad = GraphLimits::from_lookup(env(&[
            (MAX_TENSOR_RANK_ENV, "0"),
            (MAX_TENSOR_ELEMENTS_ENV, "-1"),
            (MAX_GRAPH_ELEMENTS_ENV, "lots"),
        ]));
        assert_eq!(bad, GraphLimits::DEFAULT);
    }
}
