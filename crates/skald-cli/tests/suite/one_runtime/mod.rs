//! Issue 22 ("One runtime for all work") checked with real processes: two `skald serve`s sharing
//! one data dir's work queue, one of them killed mid-way (`two_serves`); what sessions parked on
//! a person cost while they wait (`parked`, a measurement); and many sources sending turns at
//! once through `serve`'s API (`load`). `scripts/runtime-bench.sh` runs the measurements.
//! Linux only: processes are read from `/proc`.
#![cfg(target_os = "linux")]

mod load;
mod parked;
mod two_serves;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use skald_testkit::FakeLlm;

/// Whether a measurement runs: `scripts/test.sh` runs every ignored test (`--run-ignored all`,
/// for those that need a server it starts), and a measurement must not cost CI a minute each.
/// Set by `scripts/runtime-bench.sh`.
pub(super) fn opted_in(var: &str, test: &str) -> bool {
    let on = std::env::var_os(var).is_some();
    if !on {
        eprintln!("{test}: skipped (set {var}=1 to run it)");
    }
    on
}

/// The `skald` binary under test: `SKALD_BIN` when set (a private copy of a fresh build, or an
/// older build for a before/after measurement), else the one cargo built for this test.
pub(super) fn skald_bin() -> PathBuf {
    std::env::var_os("SKALD_BIN")
        .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_skald")), PathBuf::from)
}

/// `skald` with the fake as the env-defined model and nothing from the user's environment.
fn skald_cmd(data: &Path, fake: &FakeLlm) -> Command {
    let mut cmd = Command::new(skald_bin());
    cmd.arg("--data-dir")
        .arg(data)
        .env("SKALD_LLM_BASE_URL", fake.base_url())
        .env("SKALD_LLM_MODEL", "fake-model")
        .env_remove("SKALD_DATA_DIR")
        .env_remove("SKALD_LLM_API_KEY");
    cmd
}

/// A running `skald serve --port 0`, killed on drop so a failed assertion leaves nothing behind.
pub(super) struct Serve {
    child: Child,
    base: String,
    token: String,
    stderr: PathBuf,
    http: reqwest::Client,
}

impl Serve {
    /// Starts `serve` on `data` in `cwd` with `envs` added (its stderr goes to `stderr`), without
    /// waiting for it: several can open the data dir at once. [`Serve::ready`] waits.
    pub(super) fn spawn(
        data: &Path,
        cwd: &Path,
        fake: &FakeLlm,
        stderr: &Path,
        envs: &[(&str, &str)],
    ) -> Self {
        let log = std::fs::File::create(stderr).unwrap();
        let child = skald_cmd(data, fake)
            .args(["serve", "--port", "0"])
            .envs(envs.iter().copied())
            .current_dir(cwd)
            // No UI build is needed: the API answers without one.
            .env("SKALD_UI_DIR", cwd)
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .unwrap();
        Self {
            child,
            base: String::new(),
            token: String::new(),
            stderr: stderr.to_path_buf(),
            http: reqwest::Client::new(),
        }
    }

    /// Reads the `listening on` line (bounded: a serve that does not start fails the test with
    /// its stderr).
    pub(super) fn ready(mut self) -> Self {
        let stdout = self.child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(Duration::from_secs(30)).unwrap_or_default();
        let Some(rest) = line.trim().strip_prefix("listening on ") else {
            panic!("skald serve did not start: {line:?}\n{}", self.stderr());
        };
        let (base, token) = rest.split_once("/?token=").unwrap();
        self.base = base.to_string();
        self.token = token.to_string();
        self
    }

    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `POST /api/<op>` with `body`: the status and the JSON answer.
    pub(super) async fn call(&self, op: &str, body: Value) -> (u16, Value) {
        let url = format!("{}/api/{op}", self.base);
        let sent = self.http.post(url).bearer_auth(&self.token).json(&body).send();
        let resp = tokio::time::timeout(Duration::from_secs(30), sent)
            .await
            .unwrap_or_else(|_| panic!("{op} did not answer in 30 s"))
            .unwrap();
        let status = resp.status().as_u16();
        (status, resp.json().await.unwrap_or(Value::Null))
    }

    /// The WebSocket address streaming every event.
    pub(super) fn ws_url(&self) -> String {
        format!("{}/api/ws?token={}", self.base.replace("http://", "ws://"), self.token)
    }

    /// SIGKILL, and the exit collected.
    pub(super) fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// Whether the process still runs.
    pub(super) fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// What it wrote on stderr so far.
    pub(super) fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One process as `/proc/<pid>/stat` tells.
#[derive(Debug, Clone, Copy)]
pub(super) struct Proc {
    pub(super) pid: u32,
    pub(super) ppid: u32,
    pub(super) pgrp: i64,
}

/// Every live process (zombies are dead: they only wait to be collected).
pub(super) fn processes() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // The command name may hold spaces and parentheses: the fields follow the last ')'.
            let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
            if matches!(fields.first(), Some(&("Z" | "X"))) {
                return None;
            }
            Some(Proc {
                pid,
                ppid: fields.get(1)?.parse().ok()?,
                pgrp: fields.get(2)?.parse().ok()?,
            })
        })
        .collect()
}

/// The live processes whose working directory is `dir`.
pub(super) fn processes_in(dir: &Path) -> Vec<u32> {
    processes()
        .into_iter()
        .filter(|p| std::fs::read_link(format!("/proc/{}/cwd", p.pid)).is_ok_and(|cwd| cwd == dir))
        .map(|p| p.pid)
        .collect()
}

/// CPU time the process used so far (user + system, all its threads), from `/proc/<pid>/stat`.
pub(super) fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_secs_f64(ticks as f64 / clock_ticks() as f64)
}

/// The kernel's clock ticks per second (`getconf CLK_TCK`).
fn clock_ticks() -> u64 {
    let out = Command::new("getconf").arg("CLK_TCK").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// The `p`-th percentile (0–100) of `values` (nearest rank); zero for none.
pub(super) fn percentile(values: &[Duration], p: f64) -> Duration {
    let mut v = values.to_vec();
    v.sort();
    if v.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

pub(super) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
