//! Every case a named test: [`PluginSuite`] turns the suite's cases into `libtest-mimic`
//! trials, so a plugin's conformance run filters, lists and reports like `cargo test`.

use std::path::PathBuf;
use std::sync::Arc;

use hipdnn_test_sdk::conformance::{Case, Outcome, Provider, SkipList, run_case, standard_cases};
use hipdnn_test_sdk::data::test_seed;
use libtest_mimic::{Arguments, Completion, Failed, Trial};

use crate::gpu::GpuAllocator;
use crate::memory::DeviceAllocator;
use crate::plugin::{EngineProvider, PluginUnderTest};

/// Which engines of the plugin a run covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineChoice {
    /// Every engine the plugin has.
    All,
    /// The engine with this name, or this id (decimal or `0x` hex).
    Named(String),
}

/// One pass of the suite over engines of the plugin: the engines, knob settings and the
/// cases skipped (each with its reason).
///
/// Its tests are named `<label>/<case name>`; the label is the engine's name, followed
/// by the knob settings in brackets when there are any, unless
/// [`label`](Self::label) sets another.
#[derive(Debug)]
pub struct EngineRun {
    engines: EngineChoice,
    label: Option<String>,
    knobs: Vec<(String, String)>,
    skips: SkipList,
}

impl EngineRun {
    /// Every engine of the plugin, default knobs, no skips.
    pub fn all_engines() -> Self {
        Self {
            engines: EngineChoice::All,
            label: None,
            knobs: Vec::new(),
            skips: SkipList::new(),
        }
    }

    /// The engine named `name_or_id`, default knobs, no skips.
    pub fn engine(name_or_id: &str) -> Self {
        Self {
            engines: EngineChoice::Named(name_or_id.to_owned()),
            ..Self::all_engines()
        }
    }

    /// Sets knob `id` to `value` (as text, typed by the knob the engine advertises).
    pub fn knob(mut self, id: &str, value: &str) -> Self {
        self.knobs.push((id.to_owned(), value.to_owned()));
        self
    }

    /// Skips what `skips` covers.
    pub fn skips(mut self, skips: SkipList) -> Self {
        self.skips = skips;
        self
    }

    /// Names the run's tests `<label>/<case name>` (for an engine choice of one engine;
    /// with several, `<label>.<engine name>/<case name>`).
    pub fn label(mut self, label: &str) -> Self {
        self.label = Some(label.to_owned());
        self
    }

    fn label_for(&self, engine: &str, several: bool) -> String {
        match &self.label {
            Some(label) if several => format!("{label}.{engine}"),
            Some(label) => label.clone(),
            None if self.knobs.is_empty() => engine.to_owned(),
            None => {
                let knobs: Vec<String> =
                    self.knobs.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("{engine}[{}]", knobs.join(","))
            }
        }
    }
}

/// The conformance suite against one engine plugin's shared library, through the
/// backend: one test per (run, case).
///
/// ```no_run
/// use hipdnn_conformance::{EngineRun, PluginSuite};
/// use hipdnn_test_sdk::conformance::SkipList;
///
/// // A test target with `harness = false`: `cargo test --test conformance -- conv_fprop/`.
/// fn main() {
///     let skips = SkipList::new().pattern("*/bf16/*", "no bf16 kernels yet");
///     PluginSuite::new("target/debug/libmy_plugin.so")
///         .with_run(EngineRun::engine("MY_ENGINE").skips(skips))
///         .main()
/// }
/// ```
pub struct PluginSuite {
    plugin: PluginSource,
    runs: Vec<EngineRun>,
    device: DeviceChoice,
    cases: Option<Vec<Case>>,
}

/// Where device engines get their memory.
enum DeviceChoice {
    /// A [`GpuAllocator`] on device 0, opened when a device engine's case first needs it.
    Gpu,
    /// This allocator.
    Given(Arc<dyn DeviceAllocator>),
    /// None: device engines' cases fail saying so.
    Without,
}

impl DeviceChoice {
    fn allocator(&self) -> Option<Arc<dyn DeviceAllocator>> {
        match self {
            Self::Gpu => Some(Arc::new(GpuAllocator::new(0))),
            Self::Given(device) => Some(Arc::clone(device)),
            Self::Without => None,
        }
    }

    fn describe(&self) -> String {
        match self {
            Self::Gpu => "CUDA device 0 when it opens".to_owned(),
            Self::Given(device) => device.name().to_owned(),
            Self::Without => "none".to_owned(),
        }
    }
}

impl std::fmt::Debug for PluginSuite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginSuite")
            .field("plugin", &self.plugin)
            .field("runs", &self.runs)
            .field("device", &self.device.describe())
            .field("cases", &self.cases.as_ref().map(Vec::len))
            .finish()
    }
}

/// The plugin a suite runs against.
#[derive(Debug)]
enum PluginSource {
    /// Loaded when the tests are made.
    Path(PathBuf),
    /// Loaded already.
    Loaded(Arc<PluginUnderTest>),
}

impl PluginSuite {
    /// The suite against the plugin at `plugin`; with no [`with_run`](Self::with_run),
    /// every engine with default knobs and no skips.
    pub fn new(plugin: impl Into<PathBuf>) -> Self {
        Self::with_source(PluginSource::Path(plugin.into()))
    }

    /// The suite against a plugin already loaded (a process loads one plugin: see
    /// [`PluginUnderTest`]).
    pub fn loaded(plugin: Arc<PluginUnderTest>) -> Self {
        Self::with_source(PluginSource::Loaded(plugin))
    }

    fn with_source(plugin: PluginSource) -> Self {
        Self {
            plugin,
            runs: Vec::new(),
            device: DeviceChoice::Gpu,
            cases: None,
        }
    }

    /// Adds a pass over engines of the plugin.
    pub fn with_run(mut self, run: EngineRun) -> Self {
        self.runs.push(run);
        self
    }

    /// Gives device engines their memory from `device`. Without this call they get a
    /// [`GpuAllocator`] on CUDA device 0, opened when a device engine's first case
    /// needs it: on a machine without a GPU those cases fail with the reason
    /// (`libcuda.so.1 not found`, `no CUDA device`, ...).
    pub fn device_allocator(mut self, device: Arc<dyn DeviceAllocator>) -> Self {
        self.device = DeviceChoice::Given(device);
        self
    }

    /// Gives device engines no memory: every case of a device engine fails, saying that
    /// no device allocator is available (for engines that must not be handed a real
    /// GPU's memory, such as a stand-in that reads its pointers on the host).
    pub fn without_device_allocator(mut self) -> Self {
        self.device = DeviceChoice::Without;
        self
    }

    /// Runs `cases` instead of [`standard_cases`].
    pub fn cases(mut self, cases: Vec<Case>) -> Self {
        self.cases = Some(cases);
        self
    }

    /// Loads the plugin and makes one trial per (run, case). A case a run skips is a
    /// test ignored with the skip's reason, unless `args` asks for ignored tests
    /// (`--ignored`, `--include-ignored`): then it runs, so a stale skip shows.
    ///
    /// # Errors
    /// When the plugin cannot be loaded or a run names an engine it does not have.
    pub fn trials(self, args: &Arguments) -> Result<Vec<Trial>, String> {
        let plugin = match self.plugin {
            PluginSource::Path(path) => Arc::new(PluginUnderTest::load(path)?),
            PluginSource::Loaded(plugin) => plugin,
        };
        let runs = if self.runs.is_empty() {
            vec![EngineRun::all_engines()]
        } else {
            self.runs
        };
        let cases = Arc::new(self.cases.unwrap_or_else(standard_cases));
        let seed = test_seed();
        // One allocator for the whole run: the GPU opens (or fails) once.
        let device = self.device.allocator();
        let run_skipped = args.ignored || args.include_ignored;
        let mut trials = Vec::new();
        for run in &runs {
            let engines = match &run.engines {
                EngineChoice::All => plugin.engines().to_vec(),
                EngineChoice::Named(name) => vec![plugin.engine(name)?.clone()],
            };
            let several = engines.len() > 1;
            for engine in engines {
                let label = run.label_for(&engine.name, several);
                let provider = Arc::new(EngineProvider::new(
                    Arc::clone(&plugin),
                    engine,
                    label.clone(),
                    run.knobs.clone(),
                    device.clone(),
                ));
                for (index, case) in cases.iter().enumerate() {
                    let name = format!("{label}/{}", case.name);
                    let (provider, cases) = (Arc::clone(&provider), Arc::clone(&cases));
                    let test = move || check(&*provider, &cases[index], seed);
                    trials.push(match run.skips.reason_for(case) {
                        None => Trial::test(name, test),
                        Some(_) if run_skipped => Trial::test(name, test).with_ignored_flag(true),
                        Some(reason) => {
                            let reason = reason.to_owned();
                            Trial::ignorable_test(name, move || {
                                Ok(Completion::ignored_with(reason))
                            })
                        }
                    });
                }
            }
        }
        Ok(trials)
    }

    /// Runs the suite as a test binary's `main`: the command line's libtest arguments
    /// (filters, `--list`, `--test-threads`, `--ignored`, ...), then exits with the
    /// result. A plugin that cannot be loaded fails with its reason (exit status 101).
    pub fn main(self) -> ! {
        self.main_with_args(Arguments::from_args())
    }

    /// [`main`](Self::main) with arguments already parsed.
    pub fn main_with_args(self, args: Arguments) -> ! {
        match self.trials(&args) {
            Ok(trials) => libtest_mimic::run(&args, trials).exit(),
            Err(error) => {
                eprintln!("hipdnn-conformance: {error}");
                std::process::exit(101)
            }
        }
    }
}

/// Runs `case` against `provider` as one test: a failure's message says why and with
/// which seed.
fn check<P: Provider + ?Sized>(provider: &P, case: &Case, seed: u64) -> Result<(), Failed> {
    match run_case(provider, case, seed) {
        Outcome::Passed => Ok(()),
        Outcome::Failed(why) => Err(format!(
            "{why}\n(inputs drawn with seed {seed}; rerun with HIPDNN_TEST_SEED={seed})"
        )
        .into()),
        Outcome::Skipped(why) => Err(format!("run_case skipped the case: {why}").into()),
    }
}

/// The suite against the plugin at `plugin`, as a test binary's `main`: the engine named
/// `engine` (every engine when `None`) with default knobs, skipping what `skips` covers.
pub fn main_for_plugin(plugin: impl Into<PathBuf>, engine: Option<&str>, skips: SkipList) -> ! {
    let run = match engine {
        Some(name) => EngineRun::engine(name),
        None => EngineRun::all_engines(),
    };
    PluginSuite::new(plugin).with_run(run.skips(skips)).main()
}
