// The well-behaved plugin: the plugin SDK's minimal example (one named engine,
// `EXAMPLE_RELU_ENGINE`, API 1.4.0), built here so the backend's tests can load it.

include!("../../plugin-sdk/examples/minimal_plugin.rs");
