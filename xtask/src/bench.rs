//! `cargo xtask bench`: every benchmark of the workspace in one run, and a table of the
//! figures the project holds itself to.
//!
//! - `cargo bench --workspace`: the criterion benchmarks (medians printed from their
//!   estimates), and the benchmarks with a harness of their own (`fakeaws/benches/load.rs`,
//!   `scale.rs`, `provider/benches/workload.rs`), which print `figure` lines: `figure`, name,
//!   value, unit, target, separated by tabs;
//! - the conformance suite against the in-process fake (release build, `--cases N`): generated
//!   cases and scenarios per second.
//!
//! - when valgrind is installed, the workload bench's replay (`--replay-only`) under
//!   callgrind, collecting inside `Fake::handle` only: the instructions the fake executes per
//!   request, which the machine's noise does not move (a change's cost, read exactly).
//!
//! - when perf is installed and may sample, the workload bench under `perf record` (the CPU
//!   clock, with call chains): of the samples of the fake's server threads and of the canned
//!   floor's, the share in the kernel, and the share inside the kernel waking the client's
//!   thread as an answer is sent (`sock_def_readable`). What the floor is made of, read from a
//!   profile rather than guessed: the part no handler can spend less than.
//!
//! Figures with a numeric target (`>= 0.75`, `< 1000`, `<= 0.05`) are marked met or missed.

use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::mutants::target_dir;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};

/// `cargo xtask bench` arguments.
#[derive(clap::Args)]
pub struct Args {
    /// Generated cases per property in the conformance run (0: no conformance run).
    #[arg(long, default_value_t = 4)]
    cases: u32,
    /// Extra arguments passed to `cargo bench` after `--` (e.g. a filter).
    #[arg(trailing_var_arg = true)]
    rest: Vec<String>,
}

/// One figure a benchmark printed.
struct Figure {
    name: String,
    value: String,
    unit: String,
    target: String,
}

impl Figure {
    fn parse(line: &str) -> Option<Figure> {
        let mut f = line.strip_prefix("figure\t")?.split('\t');
        Some(Figure {
            name: f.next()?.to_string(),
            value: f.next()?.to_string(),
            unit: f.next()?.to_string(),
            target: f.next().unwrap_or("-").to_string(),
        })
    }

    /// Whether the value meets a numeric target; `None` when the target is not a comparison.
    fn met(&self) -> Option<bool> {
        let value: f64 = self.value.parse().ok()?;
        let (op, bound) = self.target.split_once(' ')?;
        let bound: f64 = bound.trim().parse().ok()?;
        match op {
            ">=" => Some(value >= bound),
            ">" => Some(value > bound),
            "<=" => Some(value <= bound),
            "<" => Some(value < bound),
            _ => None,
        }
    }
}

/// Runs the task.
pub fn run(root: &Path, args: &Args) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut child = Command::new(&cargo)
        .current_dir(root)
        .args(["bench", "--locked", "--workspace", "--benches", "--"])
        .args(&args.rest)
        .stdout(Stdio::piped())
        .spawn()
        .context("running cargo bench")?;
    let mut figures = Vec::new();
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines() {
            let line = line.context("reading cargo bench's output")?;
            println!("{line}");
            figures.extend(Figure::parse(&line));
        }
    }
    let status = child.wait().context("waiting for cargo bench")?;
    if !status.success() {
        bail!("cargo bench failed: {status}");
    }
    if args.cases > 0 {
        figures.push(conformance_rate(root, &cargo, args.cases)?);
    }
    figures.extend(instructions_per_call(root, &cargo)?);
    figures.extend(kernel_shares(root, &cargo)?);
    print_medians(&target_dir(root))?;
    println!("\n{:<56} {:>12}  {:<36} target", "figure", "value", "unit");
    for f in &figures {
        let mark = match f.met() {
            Some(true) => " (met)",
            Some(false) => " (MISSED)",
            None => "",
        };
        println!(
            "{:<56} {:>12}  {:<36} {}{mark}",
            f.name, f.value, f.unit, f.target
        );
    }
    Ok(())
}

/// Runs the conformance suite against the in-process fake and reads its table: the cases
/// (generated cases of every property, and one per scenario) it ran per second of the run.
fn conformance_rate(root: &Path, cargo: &str, cases: u32) -> Result<Figure> {
    // With the benches as well: `cargo bench` just built them, and the same targets unify
    // the same features, so the release build of the AWS SDK is reused, not made again.
    let status = Command::new(cargo)
        .current_dir(root)
        .args([
            "build",
            "--quiet",
            "--locked",
            "--release",
            "--workspace",
            "--bins",
            "--benches",
        ])
        .status()
        .context("building the conformance runner")?;
    if !status.success() {
        bail!("building the conformance runner failed: {status}");
    }
    let started = Instant::now();
    let out = Command::new(target_dir(root).join("release").join("conformance"))
        .current_dir(root)
        .args(["--cases", &cases.to_string()])
        .output()
        .context("running the conformance suite")?;
    let wall = started.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&out.stdout);
    print!("{text}");
    if !out.status.success() {
        bail!("the conformance suite failed: {}", out.status);
    }
    let ran = cases_in(&text);
    if ran == 0 {
        bail!("the conformance suite's table named no case");
    }
    Ok(Figure {
        name: "conformance_cases_per_second".into(),
        value: format!("{:.2}", ran as f64 / wall),
        unit: format!("cases/s ({ran} cases, --cases {cases})"),
        target: "-".into(),
    })
}

/// The instructions `Fake::handle` executes per request over the workload bench's replay,
/// counted by callgrind (collection toggled on inside `Fake::handle` alone); `None` when
/// valgrind is not installed.
///
/// The function is named exactly: callgrind toggles collection at the entry and exit of every
/// function the pattern matches, so a pattern that also matched the closures inside
/// `Fake::handle` (`*Fake::handle*`, used until 2026-12-04) turned collection off inside them
/// and left out whatever the compiler put there (the answer's encoding, a fifth of the work).
fn instructions_per_call(root: &Path, cargo: &str) -> Result<Option<Figure>> {
    if Command::new("valgrind").arg("--version").output().is_err() {
        println!("valgrind is not installed: no instruction count");
        return Ok(None);
    }
    let profile = target_dir(root).join("callgrind.workload.out");
    let out = workload_under(
        root,
        cargo,
        &format!(
            "'valgrind', '--tool=callgrind', '--toggle-collect=fakeaws::server::Fake::handle', \
             '--callgrind-out-file={}'",
            profile.display()
        ),
        "--replay-only",
    )
    .context("running the workload replay under callgrind")?;
    if !out.status.success() {
        bail!(
            "the workload replay under callgrind failed: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let handled = stdout
        .lines()
        .find_map(|l| l.strip_prefix("handled\t")?.trim().parse::<u64>().ok())
        .filter(|n| *n > 0)
        .context("the replay did not say how many requests it handled")?;
    let collected = collected_in(&stderr).context("callgrind reported no instruction count")?;
    Ok(Some(Figure {
        name: "workload_replayed_fake_instructions_per_call".into(),
        value: format!("{}", collected / handled),
        unit: format!("instructions ({handled} requests in Fake::handle, callgrind)"),
        target: "-".into(),
    }))
}

/// The workload bench binary `cargo bench` just built, run with `arg` through `runner` (a
/// comma-separated list of quoted words, a TOML array's items: the runner builds nothing
/// again).
fn workload_under(
    root: &Path,
    cargo: &str,
    runner: &str,
    arg: &str,
) -> std::io::Result<std::process::Output> {
    Command::new(cargo)
        .current_dir(root)
        .args(["bench", "--quiet", "--locked", "--workspace", "--config"])
        .arg(format!("target.'cfg(all())'.runner = [{runner}]"))
        .args(["--bench", "workload", "--", arg])
        .output()
}

/// The instructions callgrind collected, from its summary on stderr (`==PID== Collected : N`).
fn collected_in(stderr: &str) -> Option<u64> {
    stderr.lines().find_map(|l| {
        let (_, n) = l.split_once("Collected :")?;
        n.trim().replace(',', "").parse().ok()
    })
}

/// The workload bench's server threads (`provider/benches/workload.rs`): the fake's, and the
/// canned floor's; and the figure name each is reported under.
const PROFILED_THREADS: [(&str, &str); 2] = [
    ("fakeaws-server", "workload_server"),
    ("canned-server", "workload_floor"),
];

/// The kernel function in which a socket's reader is woken when data reaches it: on loopback,
/// the sender's `write` runs it, waking the client's thread (on another CPU, an interrupt to it).
const WAKING_THE_READER: &str = "sock_def_readable";

/// Where the workload's server threads spend their CPU, from `perf record` of the workload
/// bench: per thread kind, the share of its samples in the kernel and the share waking the
/// client. Empty when perf is not installed or may not sample (`perf_event_paranoid`).
fn kernel_shares(root: &Path, cargo: &str) -> Result<Vec<Figure>> {
    if Command::new("perf").arg("--version").output().is_err() {
        println!("perf is not installed: no kernel share of the server's CPU");
        return Ok(Vec::new());
    }
    let data = target_dir(root).join("perf.workload.data");
    let out = workload_under(
        root,
        cargo,
        &format!(
            "'perf', 'record', '--quiet', '-e', 'cpu-clock', '-g', '-o', '{}', '--'",
            data.display()
        ),
        "--bench",
    )
    .context("running the workload bench under perf")?;
    if !out.status.success() {
        println!(
            "perf could not profile the workload ({}): no kernel share of the server's CPU\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        return Ok(Vec::new());
    }
    let mut script = Command::new("perf")
        .args(["script", "--no-inline", "-F", "comm,ip,sym", "-i"])
        .arg(&data)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("running perf script")?;
    let mut tally = SampleTally::default();
    if let Some(stdout) = script.stdout.take() {
        for line in BufReader::new(stdout).lines() {
            tally.line(&line.context("reading perf script's output")?);
        }
    }
    tally.end_sample();
    script.wait().context("waiting for perf script")?;
    let mut figures = Vec::new();
    for (comm, figure) in PROFILED_THREADS {
        let Some(t) = tally.threads.get(comm).filter(|t| t.samples > 0) else {
            continue;
        };
        let share = |n: u64| format!("{:.1}", 100.0 * n as f64 / t.samples as f64);
        figures.push(Figure {
            name: format!("{figure}_cpu_in_kernel"),
            value: share(t.kernel),
            unit: format!("% of {} samples of its threads (perf)", t.samples),
            target: "-".into(),
        });
        // Without the kernel's symbols, no frame is named and the wake-up is not seen.
        if tally.kernel_named {
            figures.push(Figure {
                name: format!("{figure}_cpu_waking_the_client"),
                value: share(t.waking),
                unit: format!("% of its samples in {WAKING_THE_READER} (perf)"),
                target: "-".into(),
            });
        }
    }
    Ok(figures)
}

/// What one kind of thread's samples held.
#[derive(Default, Debug, PartialEq)]
struct ThreadSamples {
    samples: u64,
    /// Samples taken in the kernel (their innermost frame's address is the kernel's).
    kernel: u64,
    /// Samples taken while waking a socket's reader ([`WAKING_THE_READER`] on the stack).
    waking: u64,
}

/// Samples of `perf script -F comm,ip,sym` tallied per thread name: a sample is a line naming
/// the thread, then one line per frame (a tab, the address, the symbol), innermost first.
#[derive(Default)]
struct SampleTally {
    threads: std::collections::BTreeMap<String, ThreadSamples>,
    /// The sample being read: its thread, whether its innermost frame is the kernel's,
    /// whether it is waking a reader, and how many frames were read.
    comm: Option<String>,
    kernel: bool,
    waking: bool,
    frames: usize,
    /// Whether any kernel frame had a name (perf read the kernel's symbols).
    kernel_named: bool,
}

impl SampleTally {
    fn line(&mut self, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        if !line.starts_with(char::is_whitespace) {
            self.end_sample();
            self.comm = Some(line.trim().to_string());
            return;
        }
        let mut parts = line.split_whitespace();
        let in_kernel = parts
            .next()
            .and_then(|ip| u64::from_str_radix(ip, 16).ok())
            .is_some_and(|ip| ip >= 0xffff_8000_0000_0000);
        let symbol = parts.next().unwrap_or_default();
        if self.frames == 0 {
            self.kernel = in_kernel;
        }
        self.frames += 1;
        if in_kernel && !symbol.is_empty() && symbol != "[unknown]" {
            self.kernel_named = true;
        }
        self.waking |= symbol == WAKING_THE_READER;
    }

    /// Counts the sample read so far, if any.
    fn end_sample(&mut self) {
        if let Some(comm) = self.comm.take() {
            let t = self.threads.entry(comm).or_default();
            t.samples += 1;
            t.kernel += u64::from(self.kernel);
            t.waking += u64::from(self.waking);
        }
        self.kernel = false;
        self.waking = false;
        self.frames = 0;
    }
}

/// The cases a conformance table ran: the sum of its rows' case counts. Rows are
/// `NAME CASES RESULT CALLS` (a property) or `scenario NAME 1 RESULT CALLS`.
fn cases_in(table: &str) -> u64 {
    table
        .lines()
        .filter_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            let n = cols.len();
            let result = cols.get(n.checked_sub(2)?)?;
            if !matches!(*result, "pass" | "FAIL") {
                return None;
            }
            cols.get(n.checked_sub(3)?)?.parse::<u64>().ok()
        })
        .sum()
}

/// Prints the median of every criterion benchmark of the last run.
fn print_medians(target: &Path) -> Result<()> {
    let dir = target.join("criterion");
    let mut rows = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries {
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_conformance_table_counts_the_cases_of_properties_and_scenarios() {
        let table = "conformance against in-process fake (run r1, faults: calm, seed 1)\n\
                     property / scenario        cases result  API calls\n\
                     idempotence                    4   pass        423\n\
                     isolation                      1   FAIL        170\n\
                     scenario greenfield-1-zone     1   pass        163\n\
                     scenario a-long-name-of-a-scenario      1   pass        219\n\
                     3 passed, 1 failed in 53.3 s\n";
        assert_eq!(cases_in(table), 7);
    }

    #[test]
    fn callgrinds_count_is_read_from_its_summary() {
        let stderr = "==4242== Events    : Ir\n==4242== Collected : 131656898\n==4242== \n";
        assert_eq!(collected_in(stderr), Some(131_656_898));
        assert_eq!(collected_in("==1== I   refs:      1,234\n"), None);
    }

    #[test]
    fn perf_samples_are_tallied_per_thread_in_the_kernel_and_waking_the_client() {
        let script = "canned-server \n\
                      \tffffffff82261179 _raw_spin_unlock_irqrestore\n\
                      \tffffffff81d0c6a1 sock_def_readable\n\
                      \tffffffff81d3e0d0 tcp_sendmsg\n\
                      \t          1416c20 hyper::proto::h1::io::Buffered::poll_flush\n\
                      \n\
                      canned-server \n\
                      \tffffffff8224d116 do_syscall_64\n\
                      \t           20ca3 epoll_wait\n\
                      \n\
                      canned-server \n\
                      \t           cf9750 mi_malloc\n\
                      \n\
                      fakeaws-server \n\
                      \t           cf9750 fakeaws::server::Fake::handle\n\
                      \t      ffffffff81d0c6a1 sock_def_readable\n";
        let mut tally = SampleTally::default();
        for line in script.lines() {
            tally.line(line);
        }
        tally.end_sample();
        assert_eq!(
            tally.threads["canned-server"],
            ThreadSamples {
                samples: 3,
                kernel: 2,
                waking: 1
            }
        );
        // Only the innermost frame says where a sample was taken.
        assert_eq!(
            tally.threads["fakeaws-server"],
            ThreadSamples {
                samples: 1,
                kernel: 0,
                waking: 1
            }
        );
        assert!(tally.kernel_named);
    }

    #[test]
    fn a_figure_line_is_read_and_judged_against_its_target() {
        let f = Figure::parse("figure\tratio\t0.812\tof the ceiling\t>= 0.75").unwrap();
        assert_eq!(
            (f.name.as_str(), f.unit.as_str()),
            ("ratio", "of the ceiling")
        );
        assert_eq!(f.met(), Some(true));
        let f = Figure::parse("figure\tmedian\t1200.5\tµs\t< 1000").unwrap();
        assert_eq!(f.met(), Some(false));
        let f = Figure::parse("figure\trss\t512\tbytes\tlinear").unwrap();
        assert_eq!(f.met(), None);
        assert!(Figure::parse("Benchmarking cluster").is_none());
    }
}
