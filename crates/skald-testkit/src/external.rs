//! External servers a test suite needs: their URL from the environment, never a silent pass.

/// The URL in the environment variable `var`: the address of a server that some suites test
/// against and that runs outside the test process (the LiteLLM proxy of `SKALD_LITELLM_URL`).
///
/// Such tests carry `#[ignore = "needs VAR …"]`, so a plain `cargo nextest run` reports them as
/// skipped, never as passed; `scripts/test.sh` starts each server, exports its variable and runs
/// the ignored tests too. A test run without its variable set (or set empty) panics here with
/// `how_to_start`: a missing server is a failure, not a pass.
pub fn require_external(var: &str, how_to_start: &str) -> String {
    match std::env::var(var) {
        Ok(url) if !url.trim().is_empty() => url.trim().to_owned(),
        _ => panic!(
            "{var} is unset: this test needs an external server ({how_to_start}, then export \
             {var}; scripts/test.sh does both)"
        ),
    }
}
