//! `cargo xtask`: the project's automation, one subcommand per task.
//!
//! - `codegen [--check]`: trims the AWS API models to the operations fakeaws serves and
//!   generates its wire layer (`fakeaws/src/generated/`).
//! - `bench`: runs the benchmarks and prints their medians.
//! - `conformance`, `sweep`: the conformance suite and its clean-up.
//! - `mutants`: the conformance suite's kill rate over the provider (cargo-mutants).
//! - `fuzz [--seconds N] [--target T]`: coverage-guided fuzzing of the targets in `fuzz/`.

mod codegen;
mod fuzz;
mod mutants;

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "xtask", about = "Project automation for the capa workspace")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Trim the AWS models to the allowlist and generate fakeaws's wire layer.
    Codegen(codegen::Args),
    /// Run the benchmarks (criterion) and print their medians.
    Bench {
        /// Extra arguments passed to `cargo bench` after `--` (e.g. a filter).
        #[arg(trailing_var_arg = true)]
        rest: Vec<String>,
    },
    /// Run the conformance suite (properties and scenarios) and print its table. Flags:
    /// --cases N, --endpoint URL, --real-aws --region R --i-understand-this-creates-aws-resources,
    /// --budget N, --only NAME, --run-id ID.
    Conformance {
        /// Arguments for the conformance runner.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        rest: Vec<String>,
    },
    /// Delete what a conformance run left: --run-id ID or --older-than-hours N, with the
    /// target flags of `conformance`.
    Sweep {
        /// Arguments for the sweep.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        rest: Vec<String>,
    },
    /// Mutation testing: cargo-mutants mutates the provider's cluster and machine modules and
    /// runs the conformance suite against each mutant; `mutants report` sums the shards up.
    Mutants(mutants::Args),
    /// Coverage-guided fuzzing (cargo fuzz, libFuzzer) of the wire layer and the spec loader:
    /// each target in turn, seeded from the tests; fails on a crash.
    Fuzz(fuzz::Args),
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.task {
        Task::Codegen(args) => codegen::run(&workspace_root()?, &args),
        Task::Bench { rest } => bench(&rest),
        Task::Fuzz(args) => fuzz::run(&workspace_root()?, &args),
        Task::Conformance { rest } => conformance(&[], &rest),
        Task::Sweep { rest } => conformance(&["sweep"], &rest),
        Task::Mutants(args) => mutants::run(&workspace_root()?, &args),
    }
}

/// The workspace root: the parent of this crate's manifest directory.
fn workspace_root() -> Result<PathBuf> {
    // `cargo run` sets CARGO_MANIFEST_DIR for the process too; prefer it to the path baked in
    // at build time, which is stale when a target dir is shared by checkouts at other paths.
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest
        .parent()
        .map(PathBuf::from)
        .context("xtask has no parent directory")
}

/// Runs the conformance binary (release build: the suite makes many calls).
fn conformance(first: &[&str], rest: &[String]) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let status = Command::new(cargo)
        .current_dir(workspace_root()?)
        .args([
            "run",
            "--quiet",
            "--locked",
            "--release",
            "-p",
            "conformance",
            "--bin",
            "conformance",
            "--",
        ])
        .args(first)
        .args(rest)
        .status()
        .context("running the conformance suite")?;
    if !status.success() {
        bail!("conformance failed: {status}");
    }
    Ok(())
}

fn bench(rest: &[String]) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let status = Command::new(cargo)
        .current_dir(workspace_root()?)
        .args([
            "bench",
            "--locked",
            "-p",
            "fakeaws",
            "-p",
            "provider",
            "--benches",
            "--",
        ])
        .args(rest)
        .status()
        .context("running cargo bench")?;
    if !status.success() {
        bail!("cargo bench failed: {status}");
    }
    print_medians()
}

/// Prints the median of every criterion benchmark of the last run.
fn print_medians() -> Result<()> {
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => workspace_root()?.join("target"),
    };
    let dir = target.join("criterion");
    let mut rows = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).with_context(|| format!("reading {}", d.display()))? {
            let path = entry?.path();
            if !path.is_dir() {
                continue;
            }
            let estimates = path.join("new").join("estimates.json");
            let Ok(text) = std::fs::read_to_string(&estimates) else {
                if path.file_name().is_some_and(|n| n != "report") {
                    stack.push(path);
                }
                continue;
            };
            let v: serde_json::Value = serde_json::from_str(&text)?;
            if let Some(ns) = v["median"]["point_estimate"].as_f64() {
                let name = path
                    .strip_prefix(&dir)
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default();
                rows.push((name, ns));
            }
        }
    }
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    println!("\n{:<48} {:>14}", "benchmark", "median");
    for (name, ns) in rows {
        if ns >= 1_000_000.0 {
            println!("{name:<48} {:>11.2} ms", ns / 1_000_000.0);
        } else {
            println!("{name:<48} {:>11.1} µs", ns / 1000.0);
        }
    }
    Ok(())
}
