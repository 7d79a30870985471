//! `cargo xtask fuzz`: coverage-guided fuzzing (cargo fuzz, libFuzzer, on the stable toolchain
//! without a sanitizer) of the targets in `fuzz/`: `request` (the form decoder and the
//! generated decode of every served operation, through a fresh fake), `sigv4_scope`,
//! `xml_writer` and `spec` (the provider's spec loader).
//!
//! Each target's corpus lives in `fuzz/corpus/<target>/` (not committed), seeded from the
//! tests on every run: the request bodies and `Authorization` headers the tests send, every
//! served operation's bare envelope, the example specs. A run prints, per target, the
//! executions, the corpus size and the coverage libFuzzer reports, and fails on the first
//! crash (its input kept under `fuzz/artifacts/<target>/`).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The fuzz targets, in the order they run.
pub const TARGETS: [&str; 4] = ["request", "sigv4_scope", "xml_writer", "spec"];

/// Arguments of `cargo xtask fuzz`.
#[derive(clap::Args)]
pub struct Args {
    /// Seconds each target runs.
    #[arg(long, default_value_t = 60)]
    seconds: u64,
    /// Only this target (default: all of them, one after the other).
    #[arg(long)]
    target: Option<String>,
}

/// Builds the targets, seeds their corpora, runs each for `--seconds`.
pub fn run(root: &Path, args: &Args) -> Result<()> {
    let targets: Vec<&str> = match &args.target {
        Some(t) if TARGETS.contains(&t.as_str()) => vec![t.as_str()],
        Some(t) => bail!("no fuzz target {t}; the targets: {}", TARGETS.join(", ")),
        None => TARGETS.to_vec(),
    };
    let fuzz = root.join("fuzz");
    let status = cargo_fuzz(root)
        .args(["build", "--release", "--sanitizer", "none"])
        .status()
        .context("running cargo fuzz (install it: cargo install cargo-fuzz --locked)")?;
    if !status.success() {
        bail!("cargo fuzz build failed: {status}");
    }
    let mut rows = Vec::new();
    for t in targets {
        let corpus = fuzz.join("corpus").join(t);
        std::fs::create_dir_all(&corpus)?;
        let seeds = seeds(root, t)?;
        for (i, s) in seeds.iter().enumerate() {
            std::fs::write(corpus.join(format!("seed-{i:04}")), s)?;
        }
        let artifacts = fuzz.join("artifacts").join(t);
        std::fs::create_dir_all(&artifacts)?;
        let out = cargo_fuzz(root)
            .args(["run", "--release", "--sanitizer", "none", t])
            .arg(&corpus)
            .arg("--")
            .arg(format!("-max_total_time={}", args.seconds))
            .arg(format!("-artifact_prefix={}/", artifacts.display()))
            .arg("-print_final_stats=1")
            .arg("-max_len=65536")
            .output()
            .with_context(|| format!("running fuzz target {t}"))?;
        let log = String::from_utf8_lossy(&out.stderr);
        let stat = |name: &str| -> Option<u64> {
            log.lines()
                .find_map(|l| l.strip_prefix(&format!("stat::{name}:")))
                .and_then(|v| v.trim().parse().ok())
        };
        let coverage = log
            .lines()
            .rev()
            .find_map(|l| l.split_once(" cov: ").map(|(_, r)| r.to_string()))
            .and_then(|r| r.split_whitespace().next().map(String::from))
            .unwrap_or_else(|| "?".into());
        let corpus_size = std::fs::read_dir(&corpus).map(|d| d.count()).unwrap_or(0);
        if !out.status.success() {
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            // libFuzzer never ran (the target did not build): not a crash of the target.
            if stat("number_of_executed_units").is_none() && !log.contains("ERROR: libFuzzer") {
                bail!(
                    "fuzz target {t} did not run (cargo fuzz failed before fuzzing):\n{}",
                    tail.join("\n")
                );
            }
            bail!(
                "fuzz target {t} found a crash (input under {}):\n{}",
                artifacts.display(),
                tail.join("\n")
            );
        }
        rows.push((
            t,
            stat("number_of_executed_units").unwrap_or(0),
            stat("average_exec_per_sec").unwrap_or(0),
            coverage,
            corpus_size,
            seeds.len(),
        ));
    }
    let mut table = format!(
        "\n{:<12} {:>14} {:>10} {:>9} {:>8} {:>6}\n",
        "target", "executions", "execs/s", "coverage", "corpus", "seeds"
    );
    for (t, n, rate, cov, corpus, seeds) in rows {
        let _ = writeln!(
            table,
            "{t:<12} {n:>14} {rate:>10} {cov:>9} {corpus:>8} {seeds:>6}"
        );
    }
    println!("{table}no crash in {} s per target", args.seconds);
    Ok(())
}

/// `cargo fuzz`, in `fuzz/`'s own target directory (its builds are instrumented: they
/// never share the workspace's).
fn cargo_fuzz(root: &Path) -> Command {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut cmd = Command::new(cargo);
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map_or_else(
            || root.join("fuzz").join("target"),
            |t| {
                let name = t
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "target".into());
                t.with_file_name(format!("{name}-fuzz"))
            },
        );
    cmd.current_dir(root.join("fuzz"))
        .arg("fuzz")
        .env("CARGO_TARGET_DIR", target);
    cmd
}

/// The seed inputs of `target`, from the tests and examples.
fn seeds(root: &Path, target: &str) -> Result<Vec<Vec<u8>>> {
    let mut out: BTreeSet<Vec<u8>> = BTreeSet::new();
    match target {
        "request" => {
            // Every form a test sends, by the service its Version names; then each served
            // operation's bare envelope, of both services.
            for form in literals(&root.join("fakeaws"), "Action=")? {
                let elb = form.contains("Version=2012-06-01");
                for how in [0u8, 2] {
                    let mut s = vec![how | u8::from(elb)];
                    s.extend(form.as_bytes());
                    out.insert(s);
                }
            }
            for (file, version, service) in
                [("ec2.rs", "2016-11-15", 0u8), ("elb.rs", "2012-06-01", 1u8)]
            {
                let path = root.join("fakeaws/src/generated").join(file);
                for op in operations(&path)? {
                    let mut s = vec![service];
                    s.extend(format!("Action={op}&Version={version}").as_bytes());
                    out.insert(s);
                }
            }
        }
        "sigv4_scope" => {
            for header in literals(&root.join("fakeaws"), "AWS4-HMAC-SHA256 Credential=")? {
                out.insert(header.into_bytes());
            }
            for cred in [
                "AKIDEXAMPLE/20261201/us-east-1/ec2/aws4_request",
                "AKIDEXAMPLE/20261201/eu-west-3/elasticloadbalancing/aws4_request",
            ] {
                out.insert(cred.as_bytes().to_vec());
            }
        }
        "xml_writer" => {
            for t in [
                "",
                "plain",
                "a<b>&c\"d'e",
                "tab\tnew\nline\rcr",
                "\u{1}\u{0}\u{FFFE}\u{FFFF}",
                "üñíçødé 日本 🚀",
                "]]>",
            ] {
                out.insert(t.as_bytes().to_vec());
            }
            out.insert(b"one\xFFtwo\xFF\xFFfour".to_vec());
        }
        "spec" => {
            for dir in ["examples", "provider/tests"] {
                let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
                    continue;
                };
                for e in entries {
                    let path = e?.path();
                    if path.extension().is_some_and(|x| x == "yaml" || x == "yml") {
                        out.insert(std::fs::read(&path)?);
                    }
                }
            }
            for doc in literals(&root.join("provider/src/spec"), "apiVersion:")? {
                out.insert(doc.into_bytes());
            }
        }
        other => bail!("no fuzz target {other}"),
    }
    Ok(out.into_iter().collect())
}

/// The names in a generated file's `ALL_OPERATIONS`.
fn operations(path: &Path) -> Result<Vec<String>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let start = text
        .find("pub const ALL_OPERATIONS")
        .with_context(|| format!("no ALL_OPERATIONS in {}", path.display()))?;
    let list = &text[start..];
    let end = list.find("];").unwrap_or(list.len());
    Ok(list[..end]
        .split('"')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect())
}

/// The string literals (`"..."`, one line, Rust escapes undone) that start with `prefix` in
/// every `.rs` file under `dir`.
fn literals(dir: &Path, prefix: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let path = e?.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path)?;
            let needle = format!("\"{prefix}");
            let mut rest = text.as_str();
            while let Some(at) = rest.find(&needle) {
                rest = &rest[at + 1..];
                if let Some(lit) = literal(rest) {
                    out.push(lit);
                }
            }
        }
    }
    Ok(out)
}

/// The literal that `text` begins (after its opening quote), its escapes undone; None when
/// it does not end on its line (a multi-line literal is left out) or holds an escape beyond
/// the simple ones.
fn literal(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\n' => return None,
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                '\\' => out.push('\\'),
                '"' => out.push('"'),
                '\'' => out.push('\''),
                // A line continuation: the newline and the next line's indent vanish.
                '\n' => {
                    let rest: String = chars.clone().collect();
                    let skipped = rest.len() - rest.trim_start().len();
                    for _ in 0..rest[..skipped].chars().count() {
                        chars.next();
                    }
                }
                _ => return None,
            },
            c => out.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_read_with_their_escapes_undone() {
        assert_eq!(literal("a\\tb\" rest").as_deref(), Some("a\tb"));
        assert_eq!(literal("a\\\"b\"").as_deref(), Some("a\"b"));
        assert_eq!(literal("one \\\n    two\"").as_deref(), Some("one two"));
        assert_eq!(literal("no end\n\"").as_deref(), None);
        assert_eq!(literal("\\u{1F680}\"").as_deref(), None);
    }

    #[test]
    fn every_served_operation_seeds_the_request_target() {
        let root = crate::workspace_root().unwrap();
        let ops = operations(&root.join("fakeaws/src/generated/ec2.rs")).unwrap_or_default();
        assert!(ops.iter().any(|o| o == "DescribeVpcs"), "{ops:?}");
        let seeds = seeds(&root, "request").unwrap_or_default();
        assert!(
            seeds
                .iter()
                .any(|s| s.ends_with(b"Action=DescribeVpcs&Version=2016-11-15")),
            "{} seeds",
            seeds.len()
        );
    }
}
