//! `hipdnn-fuzz`: the fuzzing harness's command (see the library docs).
//!
//! ```text
//! hipdnn-fuzz TARGET [--cases N] [--seconds S] [--seed N|fresh] [--findings DIR] [--corpus DIR]
//! hipdnn-fuzz run-check --hipdnn PATH --plugins DIR [--cases N] [--seconds S] [--seed N|fresh]
//! hipdnn-fuzz seed [DIR]          rewrite the seed corpus (default: fuzz/corpus)
//! ```
//!
//! TARGET is `graph-json`, `graph-fb`, `engine-details`, `npy`, `capi` or `all`. Exit
//! status 1 when a run has findings (their inputs are written to `--findings DIR`,
//! default `target/fuzz-findings`), 2 for a usage error. `--corpus DIR` starts from the
//! files of DIR instead of `fuzz/corpus/TARGET`: `--corpus target/fuzz-findings --cases 0`
//! replays findings.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use hipdnn_fuzz::end_to_end::{Installed, fuzz_end_to_end};
use hipdnn_fuzz::targets::Target;
use hipdnn_fuzz::{
    Budget, CountingAlloc, Report, corpus_root, fresh_seed, fuzz, load_corpus, load_dir,
};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

const USAGE: &str = "usage: hipdnn-fuzz TARGET|all|run-check|seed [--cases N] [--seconds S] \
[--seed N|fresh] [--findings DIR] [--corpus DIR] [--hipdnn PATH --plugins DIR]";

struct Args {
    what: String,
    cases: u64,
    seconds: u64,
    seed: u64,
    findings: PathBuf,
    corpus: Option<PathBuf>,
    hipdnn: Option<PathBuf>,
    plugins: Option<PathBuf>,
    rest: Vec<String>,
}

fn parse() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let what = it.next().ok_or(USAGE)?;
    let mut args = Args {
        what,
        cases: u64::MAX,
        seconds: 60,
        seed: 1,
        findings: PathBuf::from("target/fuzz-findings"),
        corpus: None,
        hipdnn: None,
        plugins: None,
        rest: Vec::new(),
    };
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        let number = |v: String| {
            v.parse::<u64>()
                .or_else(|_| u64::from_str_radix(v.trim_start_matches("0x"), 16))
                .map_err(|_| format!("{flag}: '{v}' is not a number"))
        };
        match flag.as_str() {
            "--cases" => args.cases = number(value()?)?,
            "--seconds" => args.seconds = number(value()?)?,
            "--seed" => {
                let v = value()?;
                args.seed = if v == "fresh" {
                    fresh_seed()
                } else {
                    number(v)?
                };
            }
            "--findings" => args.findings = PathBuf::from(value()?),
            "--corpus" => args.corpus = Some(PathBuf::from(value()?)),
            "--hipdnn" => args.hipdnn = Some(PathBuf::from(value()?)),
            "--plugins" => args.plugins = Some(PathBuf::from(value()?)),
            _ if !flag.starts_with("--") => args.rest.push(flag),
            _ => return Err(format!("unknown option {flag}\n{USAGE}")),
        }
    }
    Ok(args)
}

fn keep_findings(dir: &std::path::Path, name: &str, report: &Report) {
    for (i, f) in report.findings.iter().enumerate() {
        let _ = std::fs::create_dir_all(dir);
        let path = dir.join(format!("{name}-{i}"));
        if std::fs::write(&path, &f.input).is_ok() {
            eprintln!("finding {}: {}", path.display(), f.message);
        }
    }
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let budget = Budget {
        cases: args.cases,
        time: Duration::from_secs(args.seconds),
    };
    let mut findings = 0;
    match args.what.as_str() {
        "seed" => {
            let root = args.rest.first().map_or_else(corpus_root, PathBuf::from);
            match hipdnn_fuzz::seeds::write_corpus(&root) {
                Ok(n) => println!("wrote {n} seed files under {}", root.display()),
                Err(e) => {
                    eprintln!("{e}");
                    return ExitCode::FAILURE;
                }
            }
        }
        "run-check" => {
            let (Some(hipdnn), Some(plugins)) = (args.hipdnn.clone(), args.plugins.clone()) else {
                eprintln!("run-check needs --hipdnn PATH and --plugins DIR\n{USAGE}");
                return ExitCode::from(2);
            };
            let seeds = match args
                .corpus
                .as_deref()
                .map_or_else(|| load_corpus(Target::GraphJson), load_dir)
            {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("{e}");
                    return ExitCode::from(2);
                }
            };
            // HIPDNN_PLUGIN_DIR is resolved against the backend's directory when relative.
            let plugins = match std::path::absolute(&plugins) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("--plugins {}: {e}", plugins.display());
                    return ExitCode::from(2);
                }
            };
            let report = fuzz_end_to_end(&Installed { hipdnn, plugins }, &seeds, args.seed, budget);
            print!(
                "run-check: {}",
                report.summary(Target::GraphJson, args.seed)
            );
            keep_findings(&args.findings, "run-check", &report);
            findings += report.findings.len();
        }
        what => {
            let targets: Vec<Target> = if what == "all" {
                Target::ALL.to_vec()
            } else if let Some(t) = Target::from_name(what) {
                vec![t]
            } else {
                eprintln!("unknown target '{what}'\n{USAGE}");
                return ExitCode::from(2);
            };
            for target in targets {
                let seeds = match args
                    .corpus
                    .as_deref()
                    .map_or_else(|| load_corpus(target), load_dir)
                {
                    Ok(s) => s,
                    Err(e) => {
                        eprintln!("{e}");
                        return ExitCode::from(2);
                    }
                };
                let report = fuzz(target, &seeds, args.seed, budget);
                print!("{}", report.summary(target, args.seed));
                keep_findings(&args.findings, target.name(), &report);
                findings += report.findings.len();
            }
        }
    }
    if findings > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
