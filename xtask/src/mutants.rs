//! `cargo xtask mutants`: how many deliberate bugs in the provider the conformance suite
//! catches. cargo-mutants (installed on first use, at a pinned version) makes each mutant of
//! `provider/src/cluster/` and `provider/src/machine/` (a function body replaced, an operator
//! flipped, a condition negated...), builds it, and runs the conformance suite's properties and
//! scenarios (`CONFORMANCE_CASES` generated cases per property) against it: a mutant the
//! suite fails on is caught, one it passes is missed, one that does not build is unviable.
//!
//! A whole run takes hours on a small machine, so it is sharded: `--shard K/N` runs every
//! N-th mutant from the K-th, and the shards may run in different sessions, on different
//! machines. Each shard's outcomes are kept in the repository,
//! `conformance/mutants/shard-K-of-N.txt`, with the fingerprint of the source it mutated (a
//! mutant is named by file, line and column, so a changed source makes other mutants).
//! `cargo xtask mutants report` reads the shards of the current source (older ones are
//! stale and left out, named) and writes `conformance/MUTANTS.md`: the kill rate, and every
//! missed mutant, with the reason it survives when `conformance/mutants-equivalent.txt` names
//! it (a mutant that changes no behaviour a user could see, and why), or as missed.
//!
//! Mutants are built in place (cargo-mutants puts every file back after each one), so run a
//! shard in a checkout of its own (`git worktree add`), not in the one you edit; they are
//! built without debug info in a target directory of their own, beside the workspace's. A
//! run killed mid-mutant leaves that mutant in its file; the next run refuses to start until
//! it is put back.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The cargo-mutants release this task runs.
pub const CARGO_MUTANTS_VERSION: &str = "27.1.0";

/// The files mutated.
const FILES: &[&str] = &[
    "provider/src/cluster/**/*.rs",
    "provider/src/machine/**/*.rs",
];

/// `cargo xtask mutants` arguments.
#[derive(clap::Args)]
pub struct Args {
    /// `run` (the default), `list` (the mutants, without running them) or `report`.
    #[arg(default_value = "run")]
    what: String,
    /// Which shard to run: K/N, the K-th (from 0) of N.
    #[arg(long, default_value = "0/1")]
    shard: String,
    /// Generated cases per property in each mutant's test run.
    #[arg(long, default_value_t = 3)]
    cases: u32,
    /// Seconds a mutant's test run may take before it counts as a timeout.
    #[arg(long, default_value_t = 900)]
    timeout: u32,
    /// With `report`: the source fingerprint to report on (default: the working tree's), for
    /// a run made on an earlier commit while the provider moved on.
    #[arg(long)]
    source: Option<String>,
}

/// Runs the task.
pub fn run(root: &Path, args: &Args) -> Result<()> {
    match args.what.as_str() {
        "run" => mutate(root, args, false),
        "list" => mutate(root, args, true),
        "recheck" => recheck(root, args),
        "report" => report(root, args.source.as_deref()),
        other => bail!("mutants {other}: expected run, list, recheck or report"),
    }
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string())
}

/// The workspace's cargo target directory (`CARGO_TARGET_DIR`, else `target/`).
pub(crate) fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
}

/// Installs cargo-mutants at the pinned version unless it is there.
fn ensure_installed() -> Result<()> {
    let version = Command::new(cargo())
        .args(["mutants", "--version"])
        .output();
    if let Ok(out) = &version
        && out.status.success()
        && String::from_utf8_lossy(&out.stdout).contains(CARGO_MUTANTS_VERSION)
    {
        return Ok(());
    }
    eprintln!("xtask: installing cargo-mutants {CARGO_MUTANTS_VERSION}");
    let status = Command::new(cargo())
        .args(["install", "--locked", "cargo-mutants", "--version"])
        .arg(CARGO_MUTANTS_VERSION)
        .status()
        .context("running cargo install cargo-mutants")?;
    if !status.success() {
        bail!("cargo install cargo-mutants failed: {status}");
    }
    Ok(())
}

fn shard_dir(root: &Path, shard: &str) -> Result<PathBuf> {
    let (k, n) = shard
        .split_once('/')
        .and_then(|(k, n)| Some((k.parse::<u32>().ok()?, n.parse::<u32>().ok()?)))
        .filter(|(k, n)| k < n)
        .with_context(|| format!("--shard {shard}: expected K/N with K < N"))?;
    Ok(target_dir(root)
        .join("mutants")
        .join(format!("shard-{k}-of-{n}")))
}

/// Where shard records are kept.
fn records_dir(root: &Path) -> PathBuf {
    root.join("conformance").join("mutants")
}

/// Refuses a tree that still holds a mutant: a run in place that was killed mid-mutant leaves
/// the mutated line behind, and every later shard would mutate (and fingerprint) a broken
/// provider.
fn refuse_leftover_mutants(root: &Path) -> Result<()> {
    const MARKER: &str = "~ changed by cargo-mutants ~";
    let mut dirty = Vec::new();
    let mut dirs = vec![root.join("provider").join("src")];
    while let Some(dir) = dirs.pop() {
        let entries =
            std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))?;
        for entry in entries {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && std::fs::read_to_string(&path)
                    .with_context(|| format!("reading {}", path.display()))?
                    .contains(MARKER)
            {
                dirty.push(path.display().to_string());
            }
        }
    }
    if !dirty.is_empty() {
        dirty.sort();
        bail!(
            "a mutant was left behind by an interrupted run in {}; restore them (`git checkout \
             -- FILE` in this mutants checkout) before running a shard",
            dirty.join(", ")
        );
    }
    Ok(())
}

/// The fingerprint of the mutated source: git's hash of the list of its files with their
/// contents' hashes (working-tree contents, committed or not).
fn fingerprint(root: &Path) -> Result<String> {
    let git = |args: &[&str], input: Option<&str>| -> Result<String> {
        use std::io::Write as _;
        let mut child = Command::new("git")
            .current_dir(root)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .with_context(|| format!("running git {}", args.join(" ")))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(input.unwrap_or_default().as_bytes())?;
        }
        let out = child.wait_with_output()?;
        if !out.status.success() {
            bail!("git {} failed: {}", args.join(" "), out.status);
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let files = git(
        &[
            "ls-files",
            "--",
            "provider/src/cluster",
            "provider/src/machine",
        ],
        None,
    )?;
    let paths: Vec<&str> = files.lines().filter(|l| l.ends_with(".rs")).collect();
    if paths.is_empty() {
        bail!("no provider source found under {}", root.display());
    }
    let hashes = git(&["hash-object", "--stdin-paths"], Some(&paths.join("\n")))?;
    let listing: String = paths
        .iter()
        .zip(hashes.lines())
        .map(|(p, h)| format!("{h} {p}\n"))
        .collect();
    let id = git(&["hash-object", "--stdin"], Some(&listing))?;
    Ok(id.trim().chars().take(12).collect())
}

/// The cargo-mutants command over the provider's mutated files.
fn mutants_command(root: &Path) -> Command {
    let mut cmd = Command::new(cargo());
    cmd.current_dir(root)
        .args(["mutants", "--package", "provider"]);
    for f in FILES {
        cmd.args(["--file", f]);
    }
    cmd
}

/// Makes `cmd` build and test each mutant, with its outcomes written under `out`.
fn testing(cmd: &mut Command, root: &Path, args: &Args, out: &Path) {
    // In place: a copy of the tree would build the AWS SDK again for every run. Without
    // debug info, in a target directory of their own: linking the test binaries is most
    // of a mutant's build, and the workspace's own builds stay untouched.
    cmd.args(["--in-place", "--no-shuffle", "--baseline", "skip"])
        .args(["--test-package", "conformance"])
        .args(["--timeout", &args.timeout.to_string()])
        .arg("--output")
        .arg(out)
        .env("CARGO_TARGET_DIR", build_dir(root))
        .env("CARGO_PROFILE_DEV_DEBUG", "0")
        .env("CARGO_PROFILE_TEST_DEBUG", "0")
        .env("CONFORMANCE_CASES", args.cases.to_string())
        // To the build as well as the test: only these two test binaries are linked.
        .args([
            "--cargo-arg=--test=properties",
            "--cargo-arg=--test=scenarios",
        ]);
}

/// The outcomes cargo-mutants wrote under `out`, one `outcome<TAB>mutant` line each.
fn outcomes(out: &Path) -> (String, usize) {
    let results = out.join("mutants.out");
    let mut lines = String::new();
    let mut n = 0;
    for outcome in OUTCOMES {
        for m in lines_of(&results.join(format!("{outcome}.txt"))) {
            let _ = writeln!(lines, "{outcome}\t{m}");
            n += 1;
        }
    }
    (lines, n)
}

fn mutate(root: &Path, args: &Args, list: bool) -> Result<()> {
    ensure_installed()?;
    refuse_leftover_mutants(root)?;
    let out = shard_dir(root, &args.shard)?;
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let source = fingerprint(root)?;
    let mut cmd = mutants_command(root);
    if list {
        cmd.arg("--list");
    } else {
        testing(&mut cmd, root, args, &out);
        cmd.args(["--shard", &args.shard]);
    }
    let status = cmd.status().context("running cargo mutants")?;
    // cargo-mutants exits non-zero when any mutant is missed: that is a result, not an error.
    if list {
        if !status.success() {
            bail!("cargo mutants --list failed: {status}");
        }
        return Ok(());
    }
    let (lines, n) = outcomes(&out);
    if n == 0 {
        bail!(
            "shard {} recorded no outcome (cargo mutants: {status}); see {}",
            args.shard,
            out.join("mutants.out").display()
        );
    }
    let record = format!(
        "# cargo xtask mutants --shard {}: {} generated cases per property\n# source \
         {source}\n{lines}",
        args.shard, args.cases
    );
    let dir = records_dir(root);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let file = dir.join(format!("shard-{}.txt", args.shard.replace('/', "-of-")));
    std::fs::write(&file, record).with_context(|| format!("writing {}", file.display()))?;
    eprintln!(
        "xtask: shard {} done: {n} mutants recorded in {}; `cargo xtask mutants report` sums up \
         every shard",
        args.shard,
        file.display()
    );
    Ok(())
}

/// A mutant's name without its line and column (`file: description`): what stays the same
/// when the source around it moves.
fn moved_key(name: &str) -> String {
    match name.split_once(": ") {
        Some((place, what)) => {
            let file = place.split(':').next().unwrap_or(place);
            format!("{file}: {what}")
        }
        None => name.to_string(),
    }
}

/// A regex matching exactly the mutant `name`.
fn name_regex(name: &str) -> String {
    let escaped = name.chars().fold(String::new(), |mut out, c| {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
        out
    });
    format!("^{escaped}$")
}

/// Where a mutant sits: (line, column) from its name.
fn position(name: &str) -> (u32, u32) {
    let place = name.split_once(": ").map_or(name, |(p, _)| p);
    let mut parts = place.rsplit(':').map(|p| p.parse().unwrap_or(0));
    let col = parts.next().unwrap_or(0);
    let line = parts.next().unwrap_or(0);
    (line, col)
}

/// The remakes of `missed` (a mutant of the run) among `now` (today's mutants): the one at
/// the same rank among the mutants of its file and description when their number is
/// unchanged (the code around it moved), else every one of them (the code changed).
fn remakes<'a>(missed: &str, then: &[String], now: &'a [String]) -> Vec<&'a String> {
    let key = moved_key(missed);
    let mut olds: Vec<&String> = then.iter().filter(|m| moved_key(m) == key).collect();
    olds.sort_by_key(|m| position(m));
    olds.dedup();
    let mut news: Vec<&String> = now.iter().filter(|m| moved_key(m) == key).collect();
    news.sort_by_key(|m| position(m));
    match olds.iter().position(|m| *m == missed) {
        Some(rank) if olds.len() == news.len() => news.get(rank).copied().into_iter().collect(),
        _ => news,
    }
}

/// Every mutant the shards recorded for `source`, with its outcome.
fn recorded(root: &Path, source: &str) -> Result<Vec<(String, String)>> {
    let mut all = Vec::new();
    for (_, text) in shard_records(root)? {
        if text.lines().any(|l| l == format!("# source {source}")) {
            all.extend(
                text.lines()
                    .filter(|l| !l.starts_with('#'))
                    .filter_map(|l| l.split_once('\t'))
                    .map(|(o, m)| (o.to_string(), m.to_string())),
            );
        }
    }
    Ok(all)
}

/// `recheck`: every mutant missed on `--source` that is not named equivalent, made again on
/// the working tree's source ([`remakes`]: found by file and description, wherever its line
/// moved) and run against today's suite. The outcomes go to
/// `conformance/mutants/recheck-of-SOURCE.txt`, which `report` reads: a missed mutant all of
/// whose remakes are caught counts as caught since. A mutant an earlier recheck caught is not
/// run again (the suite only grows); its lines are kept, under the source it was caught on, so
/// a recheck stopped part-way can be resumed.
fn recheck(root: &Path, args: &Args) -> Result<()> {
    let Some(old) = args.source.as_deref() else {
        bail!("mutants recheck: --source SOURCE names the run whose missed mutants to rerun");
    };
    ensure_installed()?;
    refuse_leftover_mutants(root)?;
    let equivalent = equivalents(root)?;
    let then = recorded(root, old)?;
    let names: Vec<String> = then.iter().map(|(_, m)| m.clone()).collect();
    let listing = mutants_command(root)
        .arg("--list")
        .output()
        .context("running cargo mutants --list")?;
    if !listing.status.success() {
        bail!("cargo mutants --list failed: {}", listing.status);
    }
    let now: Vec<String> = String::from_utf8_lossy(&listing.stdout)
        .lines()
        .map(String::from)
        .collect();
    // Each remake, with the missed mutant it stands for.
    let mut from: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (_, m) in then
        .iter()
        .filter(|(o, m)| o == "missed" && !equivalent.contains_key(m))
    {
        for r in remakes(m, &names, &now) {
            from.entry(r.clone()).or_default().push(m.clone());
        }
    }
    if from.is_empty() {
        bail!("no mutant missed on source {old} (and not named equivalent) is made today");
    }
    // An earlier recheck's catches stand (the suite only grows): those mutants are not run
    // again, and their lines are kept, under the source they were caught on.
    let (earlier_on, earlier) = rechecked(root, old)?;
    let kept: std::collections::BTreeSet<String> = earlier
        .iter()
        .filter(|(_, o)| o.iter().all(|o| o == "caught" || o == "timeout"))
        .map(|(m, _)| m.clone())
        .collect();
    from.retain(|_, ms| {
        ms.retain(|m| !kept.contains(m));
        !ms.is_empty()
    });
    if from.is_empty() {
        bail!("every missed mutant of {old} was caught by an earlier recheck");
    }
    let source = fingerprint(root)?;
    let out = target_dir(root)
        .join("mutants")
        .join(format!("recheck-of-{old}"));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let mut cmd = mutants_command(root);
    testing(&mut cmd, root, args, &out);
    for r in from.keys() {
        cmd.arg("--re").arg(name_regex(r));
    }
    eprintln!(
        "xtask: rechecking the missed mutants of {old} on {source}: {} remakes",
        from.len()
    );
    let status = cmd.status().context("running cargo mutants")?;
    let (lines, n) = outcomes(&out);
    if n == 0 {
        bail!(
            "the recheck recorded no outcome (cargo mutants: {status}); see {}",
            out.join("mutants.out").display()
        );
    }
    // One line per remake and the mutant it stands for: outcome, the run's name, today's.
    let mut record = format!(
        "# cargo xtask mutants recheck --source {old}: {} generated cases per property\n\
         # source {source}\n",
        args.cases
    );
    for (outcome, r) in lines.lines().filter_map(|l| l.split_once('\t')) {
        for m in from.get(r).into_iter().flatten() {
            let _ = writeln!(record, "{outcome}\t{m}\t{r}");
        }
    }
    let file = records_dir(root).join(format!("recheck-of-{old}.txt"));
    if !kept.is_empty() {
        let _ = writeln!(
            record,
            "# caught in an earlier recheck, on source {}, and not run again:",
            earlier_on.as_deref().unwrap_or("unrecorded")
        );
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("reading {}", file.display()))?;
        for line in text.lines().filter(|l| {
            !l.starts_with('#') && l.split('\t').nth(1).is_some_and(|m| kept.contains(m))
        }) {
            let _ = writeln!(record, "{line}");
        }
    }
    std::fs::write(&file, record).with_context(|| format!("writing {}", file.display()))?;
    eprintln!(
        "xtask: recheck done: {n} remakes recorded in {}",
        file.display()
    );
    Ok(())
}

/// The outcomes of the remakes of each missed mutant, by its name in the run.
type Remade = BTreeMap<String, Vec<String>>;

/// The recheck of `source`'s missed mutants, if one ran: the source it ran on, and the
/// outcomes of each one's remakes.
fn rechecked(root: &Path, source: &str) -> Result<(Option<String>, Remade)> {
    let path = records_dir(root).join(format!("recheck-of-{source}.txt"));
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((None, BTreeMap::new())),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let on = text
        .lines()
        .find_map(|l| l.strip_prefix("# source "))
        .map(String::from);
    let mut remade: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (outcome, rest) in text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
    {
        let m = rest.split_once('\t').map_or(rest, |(m, _)| m);
        remade
            .entry(m.to_string())
            .or_default()
            .push(outcome.to_string());
    }
    Ok((on, remade))
}

/// Every shard record: its name (`shard-K-of-N`) and text.
fn shard_records(root: &Path) -> Result<Vec<(String, String)>> {
    let dir = records_dir(root);
    let entries = std::fs::read_dir(&dir)
        .with_context(|| format!("no shard has run yet ({} is missing)", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("shard-"))
        })
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|file| {
            let name = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            Ok((name, text))
        })
        .collect()
}

/// The outcomes cargo-mutants writes, one file each.
const OUTCOMES: [&str; 4] = ["caught", "missed", "unviable", "timeout"];

/// Where mutants are built.
fn build_dir(root: &Path) -> PathBuf {
    let t = target_dir(root);
    let name = t
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "target".into());
    t.with_file_name(format!("{name}-mutants"))
}

/// Reads the equivalents file: `mutant name<TAB>reason` per line (`#` starts a comment).
fn equivalents(root: &Path) -> Result<BTreeMap<String, String>> {
    named(root, "mutants-equivalent.txt")
}

/// Reads `conformance/<file>`: `mutant name<TAB>text` per line (`#` starts a comment).
fn named(root: &Path, file: &str) -> Result<BTreeMap<String, String>> {
    let path = root.join("conformance").join(file);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    Ok(text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .map(|(m, why)| (m.trim().to_string(), why.trim().to_string()))
        .collect())
}

fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|t| {
            t.lines()
                .filter(|l| !l.trim().is_empty())
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

fn report(root: &Path, source: Option<&str>) -> Result<()> {
    let source = match source {
        Some(s) => s.to_string(),
        None => fingerprint(root)?,
    };
    let mut by: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut shards = Vec::new();
    let mut stale = Vec::new();
    let mut of_n = std::collections::BTreeSet::new();
    for (name, text) in shard_records(root)? {
        if !text.lines().any(|l| l == format!("# source {source}")) {
            stale.push(name);
            continue;
        }
        if let Some((_, n)) = name.rsplit_once("-of-") {
            of_n.insert(n.to_string());
        }
        shards.push(name);
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            if let Some((outcome, m)) = line.split_once('\t') {
                by.entry(outcome.to_string())
                    .or_default()
                    .push(m.to_string());
            }
        }
    }
    let count = |o: &str| by.get(o).map_or(0, Vec::len);
    let (caught, missed, unviable, timeout) = (
        count("caught"),
        count("missed"),
        count("unviable"),
        count("timeout"),
    );
    let viable = caught + missed + timeout;
    let equivalent = equivalents(root)?;
    let missed_list = by.get("missed").cloned().unwrap_or_default();
    let explained = missed_list
        .iter()
        .filter(|m| equivalent.contains_key(*m))
        .count();
    // Missed in the run, caught by the suite since: every remake in the recheck caught.
    let (rechecked_on, remade) = rechecked(root, &source)?;
    let verdict = |m: &str| -> Option<bool> {
        let outcomes = remade.get(m)?;
        Some(outcomes.iter().all(|o| o == "caught" || o == "timeout"))
    };
    let caught_since = missed_list
        .iter()
        .filter(|m| !equivalent.contains_key(*m) && verdict(m) == Some(true))
        .count();
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# Mutation testing of the provider\n\nWritten by `cargo xtask mutants report` from {} \
         shard(s) of {} of `cargo xtask mutants --shard K/N` (cargo-mutants \
         {CARGO_MUTANTS_VERSION} over `provider/src/cluster/` and `provider/src/machine/`, \
         source {source}, tested by the conformance suite's properties and scenarios): {}.\n",
        shards.len(),
        of_n.iter().cloned().collect::<Vec<_>>().join(", "),
        shards.join(", ")
    );
    if !stale.is_empty() {
        let _ = writeln!(
            md,
            "Left out, recorded for another source: {}.\n",
            stale.join(", ")
        );
    }
    let rate = |n: usize| {
        if viable == 0 {
            0.0
        } else {
            100.0 * n as f64 / viable as f64
        }
    };
    let _ = writeln!(
        md,
        "| outcome | mutants |\n|---|---|\n| caught | {caught} |\n| missed | {missed} \
         ({explained} equivalent) |\n| timeout (counted as caught) | {timeout} |\n| unviable \
         (does not build) | {unviable} |\n\nKill rate: {:.1}% of {viable} viable mutants \
         ({:.1}% with the equivalent ones left out).\n",
        rate(caught + timeout),
        if viable > explained {
            100.0 * (caught + timeout) as f64 / (viable - explained) as f64
        } else {
            0.0
        }
    );
    if let Some(on) = &rechecked_on {
        let _ = writeln!(
            md,
            "The missed ones were run again on source {on} (`cargo xtask mutants recheck \
             --source {source}`, each found by file and description wherever its line moved; \
             those an earlier recheck had caught were not run again, and \
             `conformance/mutants/recheck-of-{source}.txt` names the source each was caught \
             on).\n"
        );
    }
    if caught_since > 0 {
        let _ = writeln!(
            md,
            "Since the run, the suite catches {caught_since} more of them (below): {:.1}% of \
             the viable mutants ({:.1}% with the equivalent ones left out).\n",
            rate(caught + timeout + caught_since),
            if viable > explained {
                100.0 * (caught + timeout + caught_since) as f64 / (viable - explained) as f64
            } else {
                0.0
            }
        );
    }
    let _ = writeln!(md, "## Missed\n");
    if missed_list.is_empty() {
        let _ = writeln!(md, "None.");
    }
    for m in &missed_list {
        match (equivalent.get(m), verdict(m)) {
            (Some(why), _) => {
                let _ = writeln!(md, "- `{m}`: equivalent: {why}");
            }
            (None, Some(true)) => {
                let _ = writeln!(md, "- `{m}`: missed in the run, caught since");
            }
            (None, Some(false)) => {
                let _ = writeln!(md, "- `{m}`: **missed** (and again in the recheck)");
            }
            (None, None) if rechecked_on.is_some() => {
                let _ = writeln!(
                    md,
                    "- `{m}`: **missed** (not in the recheck: it was stopped before this one, \
                     or the rechecked source no longer makes it)"
                );
            }
            (None, None) => {
                let _ = writeln!(md, "- `{m}`: **missed**");
            }
        }
    }
    let path = root.join("conformance").join("MUTANTS.md");
    std::fs::write(&path, md).with_context(|| format!("writing {}", path.display()))?;
    println!(
        "{caught} caught, {missed} missed ({explained} equivalent), {timeout} timeouts, \
         {unviable} unviable: kill rate {:.1}%; written to {}",
        rate(caught + timeout),
        path.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_moved_mutant_is_found_at_its_rank() {
        let then = names(&[
            "provider/src/a.rs:10:8: delete ! in f",
            "provider/src/a.rs:20:8: delete ! in f",
            "provider/src/a.rs:30:5: replace f -> bool with true",
        ]);
        // Five lines added above: the same mutants, moved.
        let now = names(&[
            "provider/src/a.rs:35:5: replace f -> bool with true",
            "provider/src/a.rs:15:8: delete ! in f",
            "provider/src/a.rs:25:8: delete ! in f",
        ]);
        assert_eq!(
            remakes("provider/src/a.rs:20:8: delete ! in f", &then, &now),
            vec!["provider/src/a.rs:25:8: delete ! in f"]
        );
        // A third `!` in f: which one it became is unknown, so all are remade.
        let changed = names(&[
            "provider/src/a.rs:15:8: delete ! in f",
            "provider/src/a.rs:25:8: delete ! in f",
            "provider/src/a.rs:26:8: delete ! in f",
        ]);
        assert_eq!(
            remakes("provider/src/a.rs:20:8: delete ! in f", &then, &changed).len(),
            3
        );
        // Gone from the source: nothing to remake.
        assert!(remakes("provider/src/a.rs:20:8: delete ! in f", &then, &[]).is_empty());
    }

    #[test]
    fn a_name_regex_matches_only_that_name() {
        let r = name_regex("provider/src/a.rs:20:8: replace && with || in f -> Result<(), E>");
        assert!(r.starts_with("^provider/src/a\\.rs:20:8: replace \\&\\& with \\|\\| in"));
        assert!(r.ends_with("Result<\\(\\), E>$"));
        assert_eq!(position("provider/src/a.rs:20:8: x"), (20, 8));
        assert_eq!(
            moved_key("provider/src/a.rs:20:8: x: y"),
            "provider/src/a.rs: x: y"
        );
    }
}
