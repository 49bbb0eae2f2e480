//! Starts commands from one long-lived thread, with a parent-death signal on Linux.
//!
//! `PR_SET_PDEATHSIG` fires when the *thread* that forked the child exits, not the process. Tokio
//! may poll a tool on a thread that later goes away (a blocking-pool thread retires when idle, a
//! runtime of a finished request shuts down), which would kill a healthy command. So every command
//! is forked by this spawner's own thread, which lives while the spawner or any command it started
//! does: the signal then fires only when the engine's process dies (a crash, `kill -9`).
//!
//! macOS and Windows have no parent-death signal: there the command's group is recorded by the
//! process registry and killed at the next engine open (`process_registry::reap_orphans`).

use std::sync::Mutex;
use std::sync::mpsc;

use tokio::process::{Child, Command};
use tokio::sync::oneshot;

type Job = Box<dyn FnOnce() + Send>;

/// A handle on the spawner thread, started at the first command.
#[derive(Default)]
pub(crate) struct Spawner {
    thread: Mutex<Option<mpsc::Sender<Job>>>,
}

/// Keeps the spawner thread alive while the command it started runs: the thread ends only once
/// the spawner and every lease are gone.
pub(crate) struct Lease {
    _keep: mpsc::Sender<Job>,
}

impl Spawner {
    /// Spawns `cmd` on the spawner thread, inside the caller's runtime (its reactor owns the child's
    /// pipes and exit status), with the parent-death signal set on Linux.
    pub(crate) async fn spawn(&self, mut cmd: Command) -> std::io::Result<(Child, Lease)> {
        die_with_parent(&mut cmd);
        let runtime = tokio::runtime::Handle::current();
        let (reply, answer) = oneshot::channel();
        let job: Job = Box::new(move || {
            let _entered = runtime.enter();
            let _ = reply.send(cmd.spawn());
        });
        let thread = self.thread()?;
        thread.send(job).map_err(|_| gone())?;
        let child = answer.await.map_err(|_| gone())??;
        Ok((child, Lease { _keep: thread }))
    }

    fn thread(&self) -> std::io::Result<mpsc::Sender<Job>> {
        let mut slot = self.thread.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(tx) = slot.as_ref() {
            return Ok(tx.clone());
        }
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new().name("skald-spawner".into()).spawn(move || {
            // Ends when every sender (the spawner's and each lease) is dropped.
            while let Ok(job) = rx.recv() {
                job();
            }
        })?;
        *slot = Some(tx.clone());
        Ok(tx)
    }
}

impl std::fmt::Debug for Spawner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spawner").finish_non_exhaustive()
    }
}

fn gone() -> std::io::Error {
    std::io::Error::other("the command spawner thread stopped")
}

/// Asks the kernel to SIGKILL the command's shell when the engine process dies.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[allow(unsafe_code)]
fn die_with_parent(cmd: &mut Command) {
    use nix::sys::prctl::set_pdeathsig;
    use nix::sys::signal::Signal;
    let parent = std::process::id();
    // SAFETY: the closure runs in the forked child between fork and exec, where only
    // async-signal-safe calls are allowed. It makes two system calls (prctl, getppid), allocates
    // nothing and takes no lock; its error is built from a raw errno (no allocation).
    unsafe {
        cmd.pre_exec(move || {
            set_pdeathsig(Signal::SIGKILL)
                .map_err(|e| std::io::Error::from_raw_os_error(e as i32))?;
            // The engine may have died between the fork and the prctl: the signal would never come.
            if std::os::unix::process::parent_id() != parent {
                return Err(std::io::Error::from_raw_os_error(nix::errno::Errno::ESRCH as i32));
            }
            Ok(())
        });
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn die_with_parent(_cmd: &mut Command) {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::process::Stdio;
    use std::sync::Arc;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::process::{Child, Command};

    use super::{Spawner, die_with_parent};

    /// Waits for a line on stdin, then says `ok`: it answers only if it was not killed meanwhile.
    fn waiter() -> Command {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "read _; echo ok"]).stdin(Stdio::piped()).stdout(Stdio::piped());
        cmd
    }

    /// Runs `start` on a thread of its own and returns once that thread has fully exited (its
    /// `/proc` entry is gone, which the kernel removes after sending parent-death signals).
    fn on_short_lived_thread<T: Send + 'static>(start: impl FnOnce() -> T + Send + 'static) -> T {
        let (out, tid) =
            std::thread::spawn(move || (start(), nix::unistd::gettid())).join().unwrap();
        let task = format!("/proc/self/task/{tid}");
        while std::path::Path::new(&task).exists() {
            std::thread::yield_now();
        }
        out
    }

    async fn answer(mut child: Child) -> (Option<i32>, String) {
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(b"go\n").await;
        }
        let mut said = String::new();
        if let Some(mut stdout) = child.stdout.take() {
            let _ = stdout.read_to_string(&mut said).await;
        }
        (child.wait().await.unwrap().code(), said)
    }

    #[test]
    fn a_command_outlives_the_thread_that_asked_for_it_but_not_one_forked_from_it() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let spawner = Arc::new(Spawner::default());

        let (handle, s) = (rt.handle().clone(), spawner.clone());
        let (child, _lease) =
            on_short_lived_thread(move || handle.block_on(s.spawn(waiter()))).unwrap();
        assert_eq!(rt.block_on(answer(child)), (Some(0), "ok\n".to_string()));

        // The hazard the spawner thread avoids: forked by a thread that then exits, the
        // parent-death signal kills the command although the engine still runs.
        let handle = rt.handle().clone();
        let child = on_short_lived_thread(move || {
            let _entered = handle.enter();
            let mut cmd = waiter();
            die_with_parent(&mut cmd);
            cmd.spawn()
        })
        .unwrap();
        assert_eq!(rt.block_on(answer(child)), (None, String::new()), "killed by SIGKILL");
    }
}
