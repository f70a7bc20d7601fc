//! Reading a verified graph allocates nothing: views borrow the bytes.
//!
//! A counting global allocator (one per test binary, hence a binary of its own) counts
//! allocations on this thread while a graph is verified and every field read.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use hipdnn_flatbuffers_sdk::GraphView;

#[path = "support/model_graphs.rs"]
#[allow(dead_code, reason = "this test uses only the ResNet-50 graph")]
mod samples;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = ALLOCATIONS.with(Cell::get);
    let result = f();
    (result, ALLOCATIONS.with(Cell::get) - before)
}

#[test]
fn verifying_and_reading_a_graph_does_not_allocate() {
    let mut graph = samples::resnet50(1);
    graph.validate().unwrap();
    let bytes = graph.to_bytes();
    let (checksum, count) = allocations_during(|| {
        let view = GraphView::from_bytes(&bytes).expect("valid");
        let mut checksum = view.name().len() as i64;
        for tensor in view.tensors() {
            checksum += tensor.uid() + tensor.name().len() as i64 + tensor.alignment();
            checksum += tensor.dims().iter().sum::<i64>() + tensor.strides().iter().sum::<i64>();
            checksum += i64::from(tensor.data_type().to_wire()) + i64::from(tensor.is_virtual());
            checksum += tensor.value().map_or(0, |v| v.as_f64() as i64);
        }
        for node in view.nodes() {
            checksum += node.name().len() as i64 + i64::from(node.compute_data_type().to_wire());
            checksum += node.attributes().type_name().len() as i64;
        }
        checksum
    });
    assert!(checksum > 0);
    assert_eq!(count, 0, "reading a verified graph allocated {count} times");
}
