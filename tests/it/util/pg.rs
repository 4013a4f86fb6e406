//! A real PostgreSQL server for the queue-backend tests (and `benches/queue.rs`, which includes
//! this file): found on PATH or in `/usr/lib/postgresql/*/bin`, `initdb`'d into a temp
//! directory, listening only on a Unix socket there, stopped and removed when the process
//! exits. initdb refuses to run as root: as root the server runs as the `postgres` user (the
//! Debian package's) through `runuser`, its directory handed to that user.
//!
//! One server per test process; one database per test ([`PgServer::database`]). Without a
//! server binary the tests print `skipped: …` and pass — unless `BATON_REQUIRE_POSTGRES=1`
//! (CI), which makes that a failure.

#![allow(dead_code)] // the bench uses part of it

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

pub struct PgServer {
    pub root: PathBuf,
    pub socket: PathBuf,
    bin: PathBuf,
    run_as: Option<&'static str>,
    next: AtomicU32,
    /// The server's `-o` options, for a restart.
    opts: String,
}

/// The directory holding initdb, pg_ctl and postgres.
fn find_bin() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p).find(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file())
    });
    on_path.or_else(|| {
        let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let v = e.file_name().to_str()?.parse::<u32>().ok()?;
                let bin = e.path().join("bin");
                bin.join("initdb").is_file().then_some((v, bin))
            })
            .collect();
        found.sort();
        found.pop().map(|(_, b)| b)
    })
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

impl PgServer {
    /// A server binary's command, as the server's user.
    fn cmd(&self, prog: &str) -> Command {
        let exe = self.bin.join(prog);
        match self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(exe);
                c
            }
            None => Command::new(exe),
        }
    }

    /// Start a server. `settings`: `-c` settings of the server (`fsync=off` for tests).
    pub fn start(settings: &[&str]) -> Result<PgServer, String> {
        let bin = find_bin().ok_or(
            "no PostgreSQL server binary (initdb) on PATH or in /usr/lib/postgresql/*/bin",
        )?;
        let root = tempfile::Builder::new()
            .prefix("baton-pg")
            .tempdir()
            .map_err(|e| e.to_string())?
            .keep();
        let run_as = is_root().then_some("postgres");
        let socket = root.join("sock");
        std::fs::create_dir_all(&socket).map_err(|e| e.to_string())?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| e.to_string())?;
        if let Some(user) = run_as {
            let st = Command::new("chown")
                .args(["-R", &format!("{user}:")])
                .arg(&root)
                .status()
                .map_err(|e| e.to_string())?;
            if !st.success() {
                return Err(format!("chown to the `{user}` user failed (is there one?)"));
            }
        }
        let server = PgServer {
            root,
            socket,
            bin,
            run_as,
            next: AtomicU32::new(0),
            opts: String::new(),
        };
        let data = server.root.join("data");
        let out = server
            .cmd("initdb")
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ])
            .output()
            .map_err(|e| format!("initdb: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let mut server = server;
        server.opts = format!(
            "-k {} -c listen_addresses='' -c max_connections=200",
            server.socket.display()
        );
        for s in settings {
            server.opts.push_str(&format!(" -c {s}"));
        }
        server.pg_start()?;
        Ok(server)
    }

    fn pg_start(&self) -> Result<(), String> {
        let out = self
            .cmd("pg_ctl")
            .arg("-D")
            .arg(self.root.join("data"))
            .arg("-l")
            .arg(self.root.join("server.log"))
            .args(["-w", "-o", &self.opts, "start"])
            .stdout(Stdio::null())
            .output()
            .map_err(|e| format!("pg_ctl: {e}"))?;
        if !out.status.success() {
            let log = std::fs::read_to_string(self.root.join("server.log")).unwrap_or_default();
            return Err(format!(
                "pg_ctl start failed: {}{log}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(())
    }

    /// Stop the server at once (as a crash or a failover does: no clean shutdown) and start
    /// it again.
    pub fn restart(&self) {
        self.down(|| ());
    }

    /// Stop the server at once while `f` runs, then start it again: a database that is away.
    pub fn down<T>(&self, f: impl FnOnce() -> T) -> T {
        let st = self
            .cmd("pg_ctl")
            .arg("-D")
            .arg(self.root.join("data"))
            .args(["-m", "immediate", "-w", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("pg_ctl stop");
        assert!(st.success(), "pg_ctl stop failed");
        let out = f();
        self.pg_start().expect("the server starts again");
        out
    }

    /// The server's processes: the postmaster (first line of postmaster.pid) and its children.
    fn processes(&self) -> Vec<i32> {
        let pid_file = std::fs::read_to_string(self.root.join("data/postmaster.pid")).unwrap();
        let main: i32 = pid_file.lines().next().unwrap().trim().parse().unwrap();
        let mut out = vec![main];
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let ppid = stat
                .rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().nth(1))
                .and_then(|p| p.parse::<i32>().ok());
            if ppid == Some(main) {
                out.push(pid);
            }
        }
        out
    }

    /// Freeze every server process (SIGSTOP) while `f` runs, then let them go on: a server
    /// that hangs without closing its connections.
    pub fn paused<T>(&self, f: impl FnOnce() -> T) -> T {
        let pids = self.processes();
        for &p in &pids {
            // SAFETY: signals to the server's own processes.
            unsafe { libc::kill(p, libc::SIGSTOP) };
        }
        let out = f();
        for &p in &pids {
            // SAFETY: as above.
            unsafe { libc::kill(p, libc::SIGCONT) };
        }
        out
    }

    pub fn stop(&self) {
        let _ = self
            .cmd("pg_ctl")
            .arg("-D")
            .arg(self.root.join("data"))
            .args(["-m", "immediate", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = std::fs::remove_dir_all(&self.root);
    }

    /// The connection string of database `db`.
    pub fn url(&self, db: &str) -> String {
        format!("host={} user=postgres dbname={db}", self.socket.display())
    }

    /// A new empty database; its connection string.
    pub fn database(&self) -> String {
        let name = format!(
            "t{}_{}",
            std::process::id(),
            self.next.fetch_add(1, Ordering::SeqCst)
        );
        let mut c = postgres::Client::connect(&self.url("postgres"), postgres::NoTls)
            .expect("connect to the test server");
        c.batch_execute(&format!("CREATE DATABASE {name}"))
            .expect("create a test database");
        self.url(&name)
    }
}

static SERVER: OnceLock<Result<PgServer, String>> = OnceLock::new();

extern "C" fn stop_at_exit() {
    if let Some(Ok(s)) = SERVER.get() {
        s.stop();
    }
}

/// A server of the test's own (stopped when dropped), for a test that restarts or pauses it:
/// `None` after a `skipped: …` line, as [`server`].
pub fn private(test: &str) -> Option<Private> {
    // Lease and heartbeat timings: these tests run alone.
    super::turn::alone();
    match PgServer::start(&["fsync=off", "full_page_writes=off"]) {
        Ok(s) => Some(Private(s)),
        Err(why) => {
            skip_or_fail(test, why);
            None
        }
    }
}

pub struct Private(pub PgServer);

impl Drop for Private {
    fn drop(&mut self) {
        self.0.stop();
    }
}

fn skip_or_fail(test: &str, why: String) {
    // Only a missing server binary is a reason to skip, and not in CI.
    if find_bin().is_none() && std::env::var_os("BATON_REQUIRE_POSTGRES").is_none_or(|v| v != "1") {
        let _ = writeln!(std::io::stderr().lock(), "skipped: {test}: {why}");
    } else {
        panic!("{test}: no PostgreSQL server to test against: {why}");
    }
}

/// The test process's server (started on first use, stopped at exit), or `None` after a
/// `skipped: <test>: …` line when this machine has no PostgreSQL server binary.
pub fn server(test: &str) -> Option<&'static PgServer> {
    // Lease and heartbeat timings: these tests run alone.
    super::turn::alone();
    let s = SERVER.get_or_init(|| {
        let s = PgServer::start(&[
            "fsync=off",
            "synchronous_commit=off",
            "full_page_writes=off",
        ]);
        if s.is_ok() {
            // SAFETY: registers a plain function to run at exit.
            unsafe {
                libc::atexit(stop_at_exit);
            }
        }
        s
    });
    match s {
        Ok(s) => Some(s),
        Err(why) => {
            skip_or_fail(test, why.clone());
            None
        }
    }
}
