//! Seeded test data: the seed of a test run, and (re-exported from `hipdnn-reference`)
//! the generator, rounding to a tensor's type and conversion to and from tensor bytes.
//!
//! # Seeds
//!
//! Every random value in the test SDK comes from a [`DataGen`] seeded from
//! [`test_seed`]: the `u64` in the environment variable `HIPDNN_TEST_SEED` (decimal or
//! `0x` hexadecimal), or [`DEFAULT_SEED`] when it is unset. A failing run is reproduced
//! by exporting the seed it printed. Conformance cases derive their own stream from the
//! seed and the case name ([`DataGen::for_case`]), so a case draws the same data whichever
//! other cases run.

pub use hipdnn_reference::data::*;

/// Seed used when `HIPDNN_TEST_SEED` is not set (hipDNN's default global test seed).
pub const DEFAULT_SEED: u64 = 1;

/// The environment variable that overrides [`DEFAULT_SEED`].
pub const SEED_ENV: &str = "HIPDNN_TEST_SEED";

/// The seed for this run: `HIPDNN_TEST_SEED` if set, else [`DEFAULT_SEED`].
///
/// # Panics
/// If the variable is set but is not a `u64`: a typo must not silently run with
/// another seed.
pub fn test_seed() -> u64 {
    match std::env::var(SEED_ENV) {
        Ok(v) => parse_seed(&v)
            .unwrap_or_else(|| panic!("{SEED_ENV}={v:?} is not a u64 (decimal or 0x hex)")),
        Err(_) => DEFAULT_SEED,
    }
}

/// A generator seeded from [`test_seed`].
pub fn data_gen_from_env() -> DataGen {
    DataGen::new(test_seed())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_seed_is_parsed_or_defaults() {
        // The variable is read, never written here: tests share the process environment.
        let expected = std::env::var(SEED_ENV)
            .ok()
            .and_then(|v| parse_seed(&v))
            .unwrap_or(DEFAULT_SEED);
        assert_eq!(test_seed(), expected);
        assert_eq!(
            data_gen_from_env().values(4, 0.0, 1.0, hipdnn_data_sdk::DataType::Float),
            DataGen::new(expected).values(4, 0.0, 1.0, hipdnn_data_sdk::DataType::Float)
        );
    }
}
