//! Running cases: the [`Provider`] interface and the check of what a provider wrote.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

use hipdnn_flatbuffers_sdk::model::Graph;

use super::prepare::tensor_attrs;
use super::{Case, CaseResult, Outcome, Report, SkipList, standard_cases};
use crate::data::{decode, test_seed};
use crate::tensor::dims_usize;
use crate::tolerance::compare_rounded;

/// Something that executes graphs: a plugin, an engine, or the references.
pub trait Provider {
    /// Name used in reports.
    fn name(&self) -> &str;

    /// Runs `graph`, reading inputs from and writing outputs into `buffers` (see the
    /// [module docs](self)). An `Err` (e.g. "not applicable") fails the case unless a
    /// skip rule covers it.
    ///
    /// # Errors
    /// Whatever the provider cannot do, in its own words.
    fn execute(&self, graph: &Graph, buffers: &mut BTreeMap<i64, Vec<u8>>) -> Result<(), String>;
}

/// Runs one case against `provider` with inputs drawn under `seed`.
pub fn run_case<P: Provider + ?Sized>(provider: &P, case: &Case, seed: u64) -> Outcome {
    let prepared = match case.prepare(seed) {
        Ok(p) => p,
        Err(e) => return Outcome::Failed(format!("the reference cannot run this case: {e}")),
    };
    let mut buffers = prepared.buffers.clone();
    let result = catch_unwind(AssertUnwindSafe(|| {
        provider.execute(&prepared.graph, &mut buffers)
    }));
    match result {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Outcome::Failed(format!("provider rejected the case: {e}")),
        Err(panic) => {
            let msg = hipdnn_data_sdk::panic_message(panic.as_ref());
            return Outcome::Failed(format!("provider panicked: {msg}"));
        }
    }
    if buffers.keys().ne(prepared.buffers.keys()) {
        return Outcome::Failed("provider added or removed buffers".into());
    }
    for uid in prepared.inputs.keys() {
        if buffers[uid] != prepared.buffers[uid] {
            let name = &tensor_attrs(&prepared.graph, *uid).name;
            return Outcome::Failed(format!("provider modified input \"{name}\" (uid {uid})"));
        }
    }
    for (uid, want) in &prepared.expected {
        let t = tensor_attrs(&prepared.graph, *uid);
        let got = match decode(
            t.data_type,
            &buffers[uid],
            &dims_usize(&t.dims),
            &dims_usize(&t.strides),
        ) {
            Ok(g) => g,
            Err(e) => return Outcome::Failed(format!("output \"{}\": {e}", t.name)),
        };
        let tol = case.tolerance(t.data_type);
        let cmp = compare_rounded(&got.logical(), &want.logical(), tol, t.data_type, 1.0);
        if !cmp.passed {
            return Outcome::Failed(format!(
                "output \"{}\" ({}, atol {:e}, rtol {:e}): {cmp}",
                t.name, t.data_type, tol.atol, tol.rtol
            ));
        }
    }
    Outcome::Passed
}

/// Runs `cases` against `provider`, skipping what `skips` covers, with the seed of
/// [`test_seed`].
pub fn run_cases<P: Provider + ?Sized>(provider: &P, cases: &[Case], skips: &SkipList) -> Report {
    let seed = test_seed();
    let results = cases
        .iter()
        .map(|case| CaseResult {
            name: case.name.clone(),
            outcome: match skips.reason_for(case) {
                Some(reason) => Outcome::Skipped(reason.to_owned()),
                None => run_case(provider, case, seed),
            },
        })
        .collect();
    Report {
        provider: provider.name().to_owned(),
        seed,
        results,
    }
}

/// Runs the [`standard_cases`] against `provider`.
pub fn run_suite<P: Provider + ?Sized>(provider: &P, skips: &SkipList) -> Report {
    run_cases(provider, &standard_cases(), skips)
}

#[cfg(test)]
mod tests {
    use hipdnn_data_sdk::DataType;

    use super::*;
    use crate::conformance::Op;
    use crate::data::encode;
    use crate::executor::ReferenceProvider;
    use crate::graphs::{Layout, uid_of};

    #[test]
    fn reference_provider_passes_the_whole_suite() {
        let report = run_suite(&ReferenceProvider, &SkipList::new());
        report.assert_passed();
        assert_eq!(report.passed(), report.results.len());
        assert!(report.results.len() > 500, "{} cases", report.results.len());
    }

    /// Runs the references, then distorts every output value.
    struct Perturbing;

    impl Provider for Perturbing {
        fn name(&self) -> &str {
            "perturbing"
        }
        fn execute(
            &self,
            graph: &Graph,
            buffers: &mut BTreeMap<i64, Vec<u8>>,
        ) -> Result<(), String> {
            let before = buffers.clone();
            crate::executor::execute_graph(graph, buffers)?;
            for t in &graph.tensors {
                let Some(bytes) = buffers.get_mut(&t.uid) else {
                    continue;
                };
                if *bytes == before[&t.uid] {
                    continue; // an input
                }
                let (d, s) = (dims_usize(&t.dims), dims_usize(&t.strides));
                let mut h = decode(t.data_type, bytes, &d, &s).unwrap();
                h.map_inplace(|v| 1.5 * v + 0.5);
                *bytes = encode(t.data_type, &h).unwrap();
            }
            Ok(())
        }
    }

    #[test]
    fn perturbed_outputs_fail_every_case() {
        let report = run_suite(&Perturbing, &SkipList::new());
        assert_eq!(report.passed(), 0, "{}", report.summary());
        assert_eq!(report.failures().len(), report.results.len());
        assert!(
            report
                .failures()
                .iter()
                .all(|(_, why)| why.contains("mismatches"))
        );
        let r = std::panic::catch_unwind(|| report.assert_passed());
        assert!(r.is_err());
    }

    struct Picky;

    impl Provider for Picky {
        fn name(&self) -> &str {
            "picky"
        }
        fn execute(
            &self,
            graph: &Graph,
            buffers: &mut BTreeMap<i64, Vec<u8>>,
        ) -> Result<(), String> {
            match graph.name.as_str() {
                "matmul" => Err("matmul is not applicable".into()),
                "reduction" => Ok(()), // claims success, writes nothing
                "layernorm" => panic!("layernorm kernel crashed"),
                "rmsnorm" => {
                    // Scribbles on an input.
                    let uid = uid_of(graph, "x");
                    buffers.get_mut(&uid).unwrap()[0] ^= 1;
                    crate::executor::execute_graph(graph, buffers)
                }
                _ => crate::executor::execute_graph(graph, buffers),
            }
        }
    }

    #[test]
    fn rejections_silence_and_crashes_fail_unless_skipped() {
        let cases: Vec<Case> = standard_cases()
            .into_iter()
            .filter(|c| c.dtype == DataType::Float && c.layout == Layout::Nchw)
            .collect();
        let report = run_cases(&Picky, &cases, &SkipList::new());
        let failed: BTreeMap<&str, &str> = report.failures().into_iter().collect();
        assert!(failed["matmul/2d_4x5x3/fp32/nchw"].contains("not applicable"));
        assert!(failed["reduction/add_spatial/fp32/nchw"].contains("mismatches"));
        assert!(failed["layernorm/4x3x16_last_inference/fp32/nchw"].contains("panicked"));
        assert!(failed["rmsnorm/4x16_inference/fp32/nchw"].contains("modified input"));
        assert!(report.passed() > 0);
        assert!(failed.keys().all(|n| {
            ["matmul/", "reduction/", "layernorm/", "rmsnorm/"]
                .iter()
                .any(|p| n.starts_with(p))
        }));

        let skips = SkipList::new()
            .pattern("matmul/*", "no matmul")
            .pattern("reduction/*/fp32/*", "reductions not written")
            .predicate("layernorm crashes", |c| {
                matches!(c.op, Op::Layernorm { .. })
            })
            .pattern("rmsnorm/*", "in-place rmsnorm");
        let report = run_cases(&Picky, &cases, &skips);
        assert!(report.failures().is_empty(), "{}", report.summary());
        assert!(
            report
                .skips()
                .iter()
                .any(|(n, why)| n.starts_with("matmul/") && *why == "no matmul")
        );
        assert!(
            report
                .skips()
                .iter()
                .any(|(_, why)| *why == "layernorm crashes")
        );
        let summary = report.summary();
        assert!(summary.contains("SKIPPED"), "{summary}");
        assert!(summary.contains("no matmul"), "{summary}");
        report.assert_passed();
        assert_eq!(report.passed() + report.skips().len(), cases.len());
    }
}
