//! Every scenario file of `scenarios/scenarios/` against the in-process fake.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use conformance::{Env, Target, runner};
use fakeaws::sim::profile::Profile;

#[tokio::test]
async fn every_scenario_passes() {
    let all = scenarios::load_all(&scenarios::dir()).unwrap();
    assert!(all.len() >= 10);
    let mut failures = Vec::new();
    for s in &all {
        let profile = conformance::runner::profile_for(s, &Profile::calm()).unwrap();
        let env = Env::with_profile(
            &Target::InProcess,
            "scenarios",
            1_795_961_900,
            profile,
            conformance::target::seed_of(&s.name, 0),
        )
        .await
        .unwrap();
        if let Err(e) = runner::run(&env, s).await {
            failures.push(format!("{}: {e}", s.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
