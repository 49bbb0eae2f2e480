//! Rows of "A model that tries" measured through the `skald` binary: data_dir.
//!
//! What a FIFO, a read-only database or a full disk does to the real binary: every command ends
//! (and says which file is at fault and what to do), `skald serve` keeps answering and stops on
//! SIGTERM, and a turn cut off by the disk can be resumed once there is room again.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{Value, json};
use skald_testkit::matrix::{Row, excerpt};
use skald_testkit::{FakeLlm, Reply};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;
use tokio_tungstenite::tungstenite::Message;

use crate::suite::chat::{cli, dirs, run};
use crate::suite::serve::ws_request;

/// How long one API call may take before the row counts it as hung.
const ANSWER_WITHIN: Duration = Duration::from_secs(5);

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Replaces `path` in one step (a rename, as editors save) by a FIFO nobody writes to.
fn swap_in_a_fifo(path: &Path) {
    let fifo = path.with_extension("fifo");
    mkfifo(&fifo);
    std::fs::rename(&fifo, path).unwrap();
}

// ---- a FIFO in the working directory ---------------------------------------------------------

/// The model reads a FIFO in the working directory (no approval needed): before, the read
/// blocked forever, and even after `skald stop` the process never exited. Now the model is told
/// what the path is, the turn answers, and the process exits.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_read_in_the_working_dir_ends_the_turn_and_the_process() {
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, work) = dirs();
    mkfifo(&work.join("pipe"));
    fake.push(Reply::tool_call("read_file", &json!({"path": "pipe"}).to_string()));
    fake.push(Reply::text("It is a pipe, not a file."));
    let mut chat = cli(&fake, &data);
    chat.args(["chat", "--workdir"]).arg(&work).arg("read pipe");
    let (code, out, err) = run(chat).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("It is a pipe, not a file."), "{out}");
    let told = fake.requests()[1].body["messages"].to_string();
    let pipe = work.join("pipe").display().to_string();
    assert!(
        told.contains(&format!(
            "{pipe} is a FIFO (named pipe), not a regular file; read_file reads regular files only"
        )),
        "{told}"
    );
}

// ---- the data dir's modes ----------------------------------------------------------------------

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// A new data dir is private from the first command; one from before (readable by others) is
/// narrowed at the next start, which says so once.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_data_dir_is_private_and_an_old_one_is_narrowed_with_a_note() {
    use std::os::unix::fs::PermissionsExt;
    let fake = FakeLlm::start().await.unwrap();
    let (_dir, data, _work) = dirs();
    let list = || {
        let mut cmd = cli(&fake, &data);
        cmd.args(["sessions", "list"]);
        run(cmd)
    };
    let (code, _, err) = list().await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(err, "", "a new data dir is made private without a word");
    let db = data.join("skald.db");
    assert_eq!((mode(&data), mode(&db), mode(&data.join("config.yml"))), (0o700, 0o600, 0o600));

    // As an earlier Skald left it.
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (code, _, err) = list().await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err,
        format!(
            "skald: note: made the data dir {dir} private to you (mode 0755 → 0700): it holds \
             your conversations\nskald: note: made the database private to you: {db} (0644 → \
             0600)\n",
            dir = data.display(),
            db = db.display()
        )
    );
    assert_eq!((mode(&data), mode(&db)), (0o700, 0o600));
    let (_, _, again) = list().await;
    assert_eq!(again, "", "said once");
}

// ---- config.yml replaced by a FIFO under `skald serve` ----------------------------------------

/// A running `skald serve` on `data`; killed on drop.
struct Serve {
    child: Child,
    port: u16,
    token: String,
    http: reqwest::Client,
}

impl Serve {
    /// With `fake` as the env-defined model (no turn runs here, so it is never asked).
    async fn start(fake: &FakeLlm, data: &Path) -> Serve {
        let mut serve = cli(fake, data);
        serve.args(["serve", "--port", "0"]).env("SKALD_UI_DIR", data.with_file_name("no-ui"));
        let mut child = serve.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let mut first = BufReader::new(child.stdout.take().unwrap()).lines();
        let line = tokio::time::timeout(Duration::from_secs(60), first.next_line())
            .await
            .expect("serve did not start")
            .unwrap()
            .expect("serve exited before listening");
        let rest = line.strip_prefix("listening on http://127.0.0.1:").unwrap();
        let (port, token) = rest.split_once("/?token=").unwrap();
        Serve {
            child,
            port: port.parse().unwrap(),
            token: token.to_string(),
            http: reqwest::Client::builder().timeout(ANSWER_WITHIN).build().unwrap(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// `POST /api/<op>`: the status and body, or why there was no answer.
    async fn call(&self, op: &str, params: Value) -> Result<(u16, Value), String> {
        let req = self.http.post(self.url(&format!("/api/{op}"))).bearer_auth(&self.token);
        let resp = req.json(&params).send().await.map_err(|e| format!("{op}: no answer ({e})"))?;
        let status = resp.status().as_u16();
        let body = resp.json().await.map_err(|e| format!("{op}: no body ({e})"))?;
        Ok((status, body))
    }

    /// The API calls a page makes on load: each must answer.
    async fn page_load(&self) -> Result<String, String> {
        let mut answered = Vec::new();
        for (op, params) in [
            ("settings", json!({})),
            (
                "list_sessions",
                json!({"query": {"source": null, "search": null, "page": 1, "per_page": 20}}),
            ),
            ("inbox", json!({})),
            ("list_agents", json!({})),
        ] {
            let (status, _) = self.call(op, params).await?;
            answered.push(format!("{op} {status}"));
        }
        Ok(answered.join(", "))
    }

    /// SIGTERM; the exit code and how long it took, or `None` if it did not exit in `within`.
    async fn terminate(&mut self, within: Duration) -> Option<(Option<i32>, Duration)> {
        let pid = self.child.id().unwrap().to_string();
        let sent = std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(sent.success());
        let start = Instant::now();
        let status = tokio::time::timeout(within, self.child.wait()).await.ok()?.unwrap();
        Some((status.code(), start.elapsed()))
    }
}

/// Waits for the next `config_reloaded` event on `socket`.
async fn next_reload(
    socket: &mut (impl futures::Stream<Item = Result<Message, impl std::fmt::Debug>> + Unpin),
) -> Option<Value> {
    let wait = async {
        while let Some(Ok(msg)) = socket.next().await {
            if let Message::Text(text) = msg {
                let v: Value = serde_json::from_str(&text).unwrap();
                if v["event"]["type"] == "config_reloaded" {
                    return Some(v["event"].clone());
                }
            }
        }
        None
    };
    tokio::time::timeout(Duration::from_secs(10), wait).await.ok().flatten()
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_yml_replaced_by_a_fifo_while_serve_runs() {
    let fake = FakeLlm::start().await.unwrap();
    let (_root, data, _work) = dirs();
    let mut serve = Serve::start(&fake, &data).await;
    let config = data.join("config.yml");
    let good = std::fs::read(&config).unwrap();
    let ws = format!("ws://127.0.0.1:{}/api/ws?token={}", serve.port, serve.token);
    let (mut socket, _) =
        tokio_tungstenite::connect_async(ws_request(&ws, Some(&serve.url("")))).await.unwrap();

    swap_in_a_fifo(&config);
    let reload = next_reload(&mut socket).await;
    let reload_error = reload.as_ref().and_then(|r| r["error"].as_str()).unwrap_or_default();
    let during = serve.page_load().await;
    // A save reads the file first: it is refused with the same reason, and writes nothing.
    let save = serve.call("save_llm_clients", json!({"clients": [], "fallback": []})).await;
    let still_fifo = std::fs::symlink_metadata(&config)
        .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_fifo(&m.file_type()));

    // The person puts the file back: the configuration loads again, the API still answers.
    let back = data.join("config.back");
    std::fs::write(&back, &good).unwrap();
    std::fs::rename(&back, &config).unwrap();
    let reload_after = next_reload(&mut socket).await;
    let after = serve.page_load().await;
    let stopped = serve.terminate(Duration::from_secs(15)).await;

    let mut row = Row::new("attacker.config-fifo");
    row.redact(data.display().to_string(), "<data>");
    let save_said = match &save {
        Ok((status, body)) => {
            format!("{status} {}", excerpt(body["message"].as_str().unwrap_or(""), 160))
        }
        Err(e) => e.clone(),
    };
    row.user_sees(format!(
        "config_reloaded: {}; the page's calls: {}; save_llm_clients: {save_said}; the file put \
         back: config_reloaded {}, the page's calls: {}; SIGTERM: {}",
        match &reload {
            Some(r) => format!("ok {}, error {}", r["ok"], excerpt(reload_error, 200)),
            None => "none within 10 s".into(),
        },
        during.as_deref().unwrap_or_else(|e| e),
        match &reload_after {
            Some(r) => format!("ok {}", r["ok"]),
            None => "none within 10 s".into(),
        },
        after.as_deref().unwrap_or_else(|e| e),
        match stopped {
            Some((code, took)) if took < Duration::from_secs(11) => {
                format!("exit {}, within the 5 s grace and the 5 s drain", code.unwrap_or(-1))
            }
            Some((code, _)) => format!("exit {} only after the grace", code.unwrap_or(-1)),
            None => "still running after 15 s".into(),
        }
    ))
    .model_sees(format!(
        "{} model requests: no turn ran (the configuration in force stayed the one loaded at \
         start)",
        fake.requests().len()
    ))
    .stored(format!(
        "config.yml left a FIFO while it was one (nothing written over it): {}; the file put back \
         loads",
        if still_fifo { "yes" } else { "no" }
    ))
    .lost_if(!still_fifo, "the FIFO the person put there was replaced");
    let answered = during.is_ok() && after.is_ok() && save.is_ok();
    let clean_exit = matches!(stopped, Some((Some(0), took)) if took < Duration::from_secs(11));
    let reloaded = reload_after.is_some_and(|r| r["ok"] == true);
    if !answered || !clean_exit || !reloaded {
        row.recovered_if(false, "an API call, the reload or SIGTERM hung on the FIFO");
    } else {
        let said = format!("{reload_error} {save_said}");
        row.clear_error(&said, &[&config.display().to_string(), "FIFO", "regular file"]);
    }
    row.finish();
}

// ---- a read-only database, a full disk --------------------------------------------------------

/// `unshare` arguments for a mount namespace of the test's own, so the small file system a row
/// mounts is real and disappears with it: `-m` as root (CI), else `-rm` (a user namespace).
fn private_mounts() -> &'static [&'static str] {
    for args in [&["-m"][..], &["-r", "-m"][..]] {
        let works = std::process::Command::new("unshare")
            .args(args)
            .arg("true")
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if works {
            return args;
        }
    }
    panic!(
        "these rows mount a small file system in a mount namespace of their own: run them as \
         root, or where unprivileged user namespaces are allowed (`unshare -rm true`)"
    );
}

/// A data dir on a tmpfs mounted at `<root>/disk` in a private mount namespace, driven by one
/// shell script (the mount lives as long as the script); each step's output lands in
/// `<root>/out/<step>.{out,err,code}`.
struct Disk {
    root: tempfile::TempDir,
    fake: FakeLlm,
}

impl Disk {
    async fn new() -> Disk {
        let root = tempfile::tempdir().unwrap();
        for dir in ["disk", "out", "work"] {
            std::fs::create_dir(root.path().join(dir)).unwrap();
        }
        Disk { root, fake: FakeLlm::start().await.unwrap() }
    }

    fn path(&self, rel: &str) -> PathBuf {
        std::fs::canonicalize(self.root.path()).unwrap().join(rel)
    }

    /// The database as the steps name it.
    fn db(&self) -> PathBuf {
        self.path("disk/data/skald.db")
    }

    /// Runs `script` after mounting a tmpfs of `size` on `$DISK`. `skald_to STEP ARGS…` runs
    /// `skald --data-dir $DATA ARGS…` with its output in `out/STEP.*`.
    async fn run(&self, size: &str, script: &str) {
        let prelude = format!(
            "set -e\nmount -t tmpfs -o size={size} tmpfs \"$DISK\"\n\
             skald_to() {{ step=$1; shift; \"$SKALD\" --data-dir \"$DATA\" \"$@\" \
             >\"$OUT/$step.out\" 2>\"$OUT/$step.err\" && echo 0 >\"$OUT/$step.code\" \
             || echo $? >\"$OUT/$step.code\"; }}\n"
        );
        let mut cmd = tokio::process::Command::new("unshare");
        cmd.args(private_mounts())
            .args(["sh", "-c", &format!("{prelude}{script}")])
            .env("SKALD", env!("CARGO_BIN_EXE_skald"))
            .env("DISK", self.path("disk"))
            .env("DATA", self.path("disk/data"))
            .env("OUT", self.path("out"))
            .env("WORK", self.path("work"))
            .env_remove("SKALD_DATA_DIR")
            .env_remove("SKALD_LLM_API_KEY")
            .env("SKALD_LLM_BASE_URL", self.fake.base_url())
            .env("SKALD_LLM_MODEL", "fake-model")
            .kill_on_drop(true);
        let out = tokio::time::timeout(Duration::from_secs(120), cmd.output())
            .await
            .expect("a step hung")
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    /// A step's (exit code, stdout, stderr).
    fn step(&self, step: &str) -> (i32, String, String) {
        let read = |ext: &str| {
            std::fs::read_to_string(self.path(&format!("out/{step}.{ext}"))).unwrap_or_default()
        };
        (read("code").trim().parse().unwrap_or(-1), read("out"), read("err"))
    }

    fn row(&self, id: &str) -> Row {
        let mut row = Row::new(id);
        row.redact(self.path("disk/data").display().to_string(), "<data>")
            .redact(self.path("disk").display().to_string(), "<disk>")
            .redact(self.path("work").display().to_string(), "<workdir>");
        row
    }
}

/// The exit code and the first lines of what a step printed, for a table cell.
fn said(disk: &Disk, step: &str) -> String {
    let (code, out, err) = disk.step(step);
    format!("exit {code}, {}", excerpt(&format!("{out}{err}"), 260))
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_database() {
    let disk = Disk::new().await;
    disk.fake.push(Reply::text("Hello there."));
    // A session is stored; then the file system holding the data dir turns read-only.
    disk.run(
        "16m",
        "skald_to chat chat --workdir \"$WORK\" hello\n\
         mount -o remount,ro \"$DISK\"\n\
         skald_to list sessions list\n\
         skald_to inbox inbox\n\
         skald_to show sessions show 1\n\
         skald_to again chat --workdir \"$WORK\" 'hello again'\n",
    )
    .await;
    let (chat, _, chat_err) = disk.step("chat");
    assert_eq!(chat, 0, "{chat_err}");
    let (list, list_out, list_err) = disk.step("list");
    let (inbox, _, _) = disk.step("inbox");
    let (show, show_out, _) = disk.step("show");
    let (again, again_out, again_err) = disk.step("again");
    let db = disk.db().display().to_string();
    let mut row = disk.row("attacker.readonly-db");
    let listed = if list_out.contains("1 sessions") { "session 1 listed" } else { "no session" };
    row.user_sees(format!(
        "`skald sessions list`: exit {list}, {listed}, and on stderr {}; `skald inbox`: exit \
         {inbox}; `skald sessions show 1`: exit {show}; `skald chat` (a new message): {}",
        excerpt(list_err.trim(), 200),
        said(&disk, "again")
    ))
    .model_sees(format!(
        "{} request (the first chat, before the file system turned read-only); none for the \
         message that could not be stored",
        disk.fake.requests().len()
    ))
    .stored(format!(
        "the session and its answer, shown from the read-only database: {}",
        if show_out.contains("Hello there.") { "yes" } else { "no" }
    ))
    .lost_if(!show_out.contains("Hello there."), "the stored conversation, unreadable")
    .lost_if(disk.fake.requests().len() != 1, "a model request for a message never stored");
    let reads_work = list == 0 && list_out.contains("1 sessions") && inbox == 0 && show == 0;
    if !reads_work || again == 0 {
        row.recovered_if(false, "reads failed, or a write seemed to succeed");
    } else {
        // What the person reads: the note naming the file, then the error.
        let told = format!("{list_err} {again_out}{again_err}");
        row.clear_error(&told, &[&db, "read-only", "needs to write"]);
    }
    row.finish();
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disk_that_fills_up_during_a_turn() {
    let disk = Disk::new().await;
    // The model's command fills the disk the data dir is on; its result cannot be stored.
    let fill =
        format!("dd if=/dev/zero of={}/filler bs=64k; echo filled", disk.path("disk").display());
    disk.fake.push(Reply::tool_call("execute_cmd", &json!({"command": fill}).to_string()));
    disk.fake.push(Reply::text("Noted: the command may have run."));
    disk.run(
        "16m",
        "skald_to chat chat --approve-all --workdir \"$WORK\" 'fill it'\n\
         rm -f \"$DISK/filler\"\n\
         skald_to resume resume 1\n\
         skald_to show sessions show 1\n\
         skald_to inbox inbox\n",
    )
    .await;
    let (chat, chat_out, chat_err) = disk.step("chat");
    let (resume, _, _) = disk.step("resume");
    let (_, show_out, _) = disk.step("show");
    let told = disk.fake.requests().get(1).map(|r| {
        let msgs = r.body["messages"].as_array().cloned().unwrap_or_default();
        let results: Vec<String> = msgs
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap_or_default().to_string())
            .collect();
        results.join(" ")
    });
    let db = disk.db().display().to_string();
    let mut row = disk.row("attacker.disk-full");
    row.user_sees(format!(
        "`skald chat`: {}; after `rm` of the filler, `skald resume 1`: {}; `skald \
         inbox`: {}",
        said(&disk, "chat"),
        said(&disk, "resume"),
        said(&disk, "inbox")
    ))
    .model_sees(match &told {
        Some(t) => format!("after the resume, the call is answered with {}", excerpt(t, 200)),
        None => "no request after the failure".into(),
    })
    // The tree without its header line (it carries the creation time).
    .stored(excerpt(show_out.split_once('\n').map_or("", |(_, tree)| tree), 300))
    .lost_if(!show_out.contains("fill it"), "the prompt")
    .lost_if(!show_out.contains("Noted: the command may have run."), "the answer after the resume");
    if chat == 0 || resume != 0 {
        row.recovered_if(false, "the turn did not fail, or the resume did not answer");
    } else {
        row.clear_error(
            &format!("{chat_out}{chat_err}"),
            &[&db, "is full", "free space", "skald resume 1"],
        );
    }
    row.finish();
}
