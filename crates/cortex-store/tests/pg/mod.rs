//! A private PostgreSQL server for the store tests: `initdb` and `postgres`
//! from Debian's packages (`/usr/lib/postgresql/*/bin`, or `PG_BIN`), on a
//! free 127.0.0.1 port, its data in a temporary folder. Started once per
//! test binary, as `nobody` when the tests run as root (PostgreSQL refuses
//! root), and killed when the test process exits (parent-death signal).
//! Each test gets its own database. Without the binaries each PostgreSQL
//! test records a skip (`cortex_testkit`) and returns.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::time::{Duration, Instant};

struct Server {
    port: u16,
}

static SERVER: OnceLock<Option<Server>> = OnceLock::new();
/// For the exit hook: the server's pid and its folder.
static PID: AtomicI32 = AtomicI32::new(0);
static DIR: OnceLock<PathBuf> = OnceLock::new();

/// Runs at process exit (the test harness exits through `exit`): the
/// server and its data go with the tests.
extern "C" fn cleanup() {
    let pid = PID.load(Ordering::SeqCst);
    if pid > 0 {
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    if let Some(dir) = DIR.get() {
        let _ = std::fs::remove_dir_all(dir);
    }
}
static NEXT_DB: AtomicU32 = AtomicU32::new(0);

fn bin_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("PG_BIN") {
        return Some(PathBuf::from(dir));
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|bin| bin.join("initdb").exists() && bin.join("postgres").exists())
        .collect();
    found.sort();
    found.pop()
}

/// Run as `nobody` when root; die with the test process.
fn as_server_user(cmd: &mut Command) {
    let root = unsafe { libc::geteuid() } == 0;
    unsafe {
        cmd.pre_exec(move || {
            if root && (libc::setgid(65534) != 0 || libc::setuid(65534) != 0) {
                return Err(std::io::Error::last_os_error());
            }
            // After setuid, which clears the parent-death signal.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

fn start() -> Option<Server> {
    let bin = bin_dir()?;
    let dir = tempfile::tempdir().expect("tempdir").keep();
    let _ = DIR.set(dir.clone());
    unsafe {
        libc::atexit(cleanup);
    }
    if unsafe { libc::geteuid() } == 0 {
        std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).expect("chown");
    }
    let data = dir.join("data");
    let mut initdb = Command::new(bin.join("initdb"));
    initdb
        .args([
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
            "-D",
        ])
        .arg(&data)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    as_server_user(&mut initdb);
    let out = initdb.output().expect("run initdb");
    assert!(
        out.status.success(),
        "initdb failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    // A long-lived thread spawns the server: the parent-death signal fires
    // when the spawning thread exits, and this one never does.
    let (tx, rx) = std::sync::mpsc::channel();
    let postgres = bin.join("postgres");
    let (data_arg, socket_dir) = (data.clone(), dir.clone());
    std::thread::spawn(move || {
        let mut cmd = Command::new(postgres);
        cmd.arg("-D")
            .arg(&data_arg)
            .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-k"])
            .arg(&socket_dir)
            .args(["-c", "fsync=off", "-c", "max_connections=200"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        as_server_user(&mut cmd);
        let child = cmd.spawn();
        if let Ok(child) = &child {
            PID.store(child.id() as i32, Ordering::SeqCst);
        }
        let _ = tx.send(child.is_ok());
        if let Ok(mut child) = child {
            let _ = child.wait();
        }
        loop {
            std::thread::park();
        }
    });
    assert!(rx.recv().unwrap_or(false), "cannot start postgres");
    wait_ready(&bin, port);
    Some(Server { port })
}

fn wait_ready(bin: &Path, port: u16) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let ready = Command::new(bin.join("pg_isready"))
            .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "postgres"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ready {
            return;
        }
        assert!(Instant::now() < deadline, "postgres did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A fresh database's URL, or `None` (the calling test's skip recorded)
/// when PostgreSQL is not installed.
pub async fn database() -> Option<String> {
    let Some(server) = SERVER.get_or_init(start).as_ref() else {
        cortex_testkit::skip_current(
            "postgresql",
            "no initdb and postgres under /usr/lib/postgresql/*/bin or PG_BIN \
             (scripts/install-deps installs them)",
        );
        return None;
    };
    let name = format!(
        "t{}_{}",
        std::process::id(),
        NEXT_DB.fetch_add(1, Ordering::Relaxed)
    );
    let admin = format!("postgres://postgres@127.0.0.1:{}/postgres", server.port);
    let (client, connection) = tokio_postgres::connect(&admin, tokio_postgres::NoTls)
        .await
        .expect("connect to postgres");
    let task = tokio::spawn(connection);
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .expect("create database");
    drop(client);
    let _ = task.await;
    Some(format!(
        "postgres://postgres@127.0.0.1:{}/{name}",
        server.port
    ))
}
