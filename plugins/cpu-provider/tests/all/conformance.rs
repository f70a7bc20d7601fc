//! The shared provider conformance suite (hipdnn-test-sdk) through `CPU_ENGINE`'s
//! in-process plan API, with both the default and the direct convolution algorithms.

use std::collections::BTreeMap;

use hipdnn_cpu_provider::kernels::ConvAlgo;
use hipdnn_cpu_provider::{CpuSettings, Plan};
use hipdnn_flatbuffers_sdk::model::Graph;
use hipdnn_plugin_sdk::abi::hipdnnPluginDeviceBuffer_t;
use hipdnn_plugin_sdk::{Buffers, MemoryKind};
use hipdnn_test_sdk::conformance::{Provider, SkipList, run_suite};

struct Cpu(CpuSettings);

impl Provider for Cpu {
    fn name(&self) -> &str {
        "CPU_ENGINE"
    }

    fn execute(&self, graph: &Graph, buffers: &mut BTreeMap<i64, Vec<u8>>) -> Result<(), String> {
        let plan = Plan::from_model(graph, &self.0).map_err(|e| e.message)?;
        // Buffers as the host passes them; copy into f32-aligned storage first.
        let mut aligned: BTreeMap<i64, Vec<u32>> = buffers
            .iter()
            .map(|(&uid, b)| {
                let mut v = vec![0u32; b.len().div_ceil(4)];
                bytemuck_copy(b, &mut v);
                (uid, v)
            })
            .collect();
        let raw: Vec<hipdnnPluginDeviceBuffer_t> = aligned
            .iter_mut()
            .map(|(&uid, v)| hipdnnPluginDeviceBuffer_t {
                uid,
                ptr: v.as_mut_ptr().cast(),
            })
            .collect();
        let mut ws = vec![0u8; plan.workspace_size()];
        // SAFETY: every buffer is host memory holding its tensor, alive and unshared for
        // the call; the workspace has the size the plan asked for.
        unsafe {
            plan.execute(
                &Buffers::new(&raw, MemoryKind::Host),
                ws.as_mut_ptr().cast(),
                ws.len(),
            )
        }
        .map_err(|e| e.message)?;
        for (uid, b) in buffers.iter_mut() {
            let v = &aligned[uid];
            for (i, byte) in b.iter_mut().enumerate() {
                *byte = v[i / 4].to_le_bytes()[i % 4];
            }
        }
        Ok(())
    }
}

fn bytemuck_copy(src: &[u8], dst: &mut [u32]) {
    for (i, chunk) in src.chunks(4).enumerate() {
        let mut w = [0u8; 4];
        w[..chunk.len()].copy_from_slice(chunk);
        dst[i] = u32::from_le_bytes(w);
    }
}

#[test]
fn conformance_suite_default_settings() {
    let report = run_suite(
        &Cpu(CpuSettings {
            threads: 2,
            ..CpuSettings::default()
        }),
        &SkipList::new(),
    );
    report.print_summary();
    report.assert_passed();
}

#[test]
fn conformance_suite_direct_convolutions() {
    let settings = CpuSettings {
        threads: 3,
        conv_algo: ConvAlgo::Direct,
        ..CpuSettings::default()
    };
    let skips = SkipList::new().predicate("only convolutions depend on the algorithm", |c| {
        !c.name.starts_with("conv")
    });
    let report = run_suite(&Cpu(settings), &skips);
    report.print_summary();
    report.assert_passed();
}
