//! `hipdnn-conformance`: the provider conformance suite against an engine plugin's
//! shared library, one test per case (see the library's documentation).

use std::process::ExitCode;

use hipdnn_conformance::{EngineRun, PluginSuite};
use hipdnn_test_sdk::conformance::SkipList;
use libtest_mimic::Arguments;

const USAGE: &str = "\
usage: hipdnn-conformance --plugin PATH [--engine NAME_OR_ID]... [--knob ID=VALUE]...
                          [--skip PATTERN=REASON]... [TEST ARGS]

Runs the provider conformance suite against the engine plugin at PATH, loaded through
the backend: every engine of the plugin, or each --engine given; knobs set on each;
cases whose name matches a --skip pattern ('*' any run, '?' one character) are reported
as ignored with the reason. Tests are named <engine>/<op>/<shape>/<dtype>/<layout>.

TEST ARGS are the usual test-harness arguments: a name filter, --exact, --skip FILTER,
--list, --test-threads N, --ignored, --include-ignored, --nocapture, --quiet, ...
Inputs are drawn with the seed in HIPDNN_TEST_SEED (a fixed default otherwise).

Device engines (no host-memory behavior note in their details) run on CUDA device 0
(CUDA_VISIBLE_DEVICES picks it) through the CUDA driver, loaded at run time
(libcuda.so, then libcuda.so.1 and other names, searched by the dynamic loader:
LD_LIBRARY_PATH first). When no GPU opens, their cases fail with the reason
('libcuda.so.1 not found', 'no CUDA device', ...).";

/// Our options, and the rest for the test harness.
#[derive(Debug, Default)]
struct Options {
    plugin: Option<String>,
    engines: Vec<String>,
    knobs: Vec<(String, String)>,
    skips: Vec<(String, String)>,
    harness: Vec<String>,
}

fn split_pair(flag: &str, text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((a, b)) if !a.trim().is_empty() => Ok((a.trim().to_owned(), b.trim().to_owned())),
        _ => Err(format!("{flag} '{text}' is not of the form A=B")),
    }
}

fn parse(args: impl IntoIterator<Item = String>) -> Result<Option<Options>, String> {
    let mut options = Options::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        // `--skip FILTER` is also the harness's: ours has `=` in its value.
        let ours = ["--plugin", "--engine", "--knob", "--skip"].contains(&flag.as_str());
        if arg == "--help" || arg == "-h" {
            return Ok(None);
        }
        if !ours {
            options.harness.push(arg);
            continue;
        }
        let value = match inline {
            Some(v) => v,
            None => args.next().ok_or_else(|| format!("{flag} needs a value"))?,
        };
        match flag.as_str() {
            "--plugin" => options.plugin = Some(value),
            "--engine" => options.engines.push(value),
            "--knob" => options.knobs.push(split_pair("--knob", &value)?),
            _ if value.contains('=') => options.skips.push(split_pair("--skip", &value)?),
            // A harness `--skip FILTER`.
            _ => options.harness.extend([flag, value]),
        }
    }
    Ok(Some(options))
}

fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1)) {
        Ok(Some(options)) => options,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("hipdnn-conformance: {error}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let Some(plugin) = options.plugin else {
        eprintln!("hipdnn-conformance: --plugin PATH is required\n\n{USAGE}");
        return ExitCode::from(2);
    };
    let args = Arguments::from_iter(
        std::iter::once("hipdnn-conformance".to_owned()).chain(options.harness),
    );
    let engines: Vec<Option<String>> = if options.engines.is_empty() {
        vec![None]
    } else {
        options.engines.into_iter().map(Some).collect()
    };
    let mut suite = PluginSuite::new(plugin);
    for engine in engines {
        let mut run = match engine {
            Some(name) => EngineRun::engine(&name),
            None => EngineRun::all_engines(),
        };
        let mut skips = SkipList::new();
        for (pattern, reason) in &options.skips {
            skips = skips.pattern(pattern, reason);
        }
        for (id, value) in &options.knobs {
            run = run.knob(id, value);
        }
        suite = suite.with_run(run.skips(skips));
    }
    suite.main_with_args(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn our_options_and_the_harness_arguments_are_told_apart() {
        let o = parse(args(&[
            "--plugin",
            "lib.so",
            "--engine=E",
            "--knob",
            "a.b=2",
            "--skip",
            "*/bf16/*=no bf16",
            "--skip",
            "matmul",
            "conv_fprop/",
            "--list",
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(o.plugin.as_deref(), Some("lib.so"));
        assert_eq!(o.engines, ["E"]);
        assert_eq!(o.knobs, [("a.b".to_owned(), "2".to_owned())]);
        assert_eq!(o.skips, [("*/bf16/*".to_owned(), "no bf16".to_owned())]);
        assert_eq!(o.harness, ["--skip", "matmul", "conv_fprop/", "--list"]);
        assert!(parse(args(&["--help"])).unwrap().is_none());
        assert!(
            parse(args(&["--knob", "novalue"]))
                .unwrap_err()
                .contains("A=B")
        );
        assert!(
            parse(args(&["--plugin"]))
                .unwrap_err()
                .contains("needs a value")
        );
    }
}
