//! `cargo xtask`: the project's automation, one subcommand per task.
//!
//! - `codegen [--check]`: trims the AWS API models to the operations fakeaws serves and
//!   generates its wire layer (`fakeaws/src/generated/`).
//! - `bench [--cases N]`: runs every benchmark and the conformance suite, and prints the
//!   figures beside their targets.
//! - `conformance`, `sweep`: the conformance suite and its clean-up.
//! - `mutants`: the conformance suite's kill rate over the provider (cargo-mutants).
//! - `fuzz [--seconds N] [--target T]`: coverage-guided fuzzing of the targets in `fuzz/`.

mod bench;
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
    /// Run every benchmark (criterion and the load, scale and workload ones) and the
    /// conformance suite, and print the figures beside their targets.
    Bench(bench::Args),
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
        Task::Bench(args) => bench::run(&workspace_root()?, &args),
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
