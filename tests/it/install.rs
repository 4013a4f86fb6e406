//! Installing without Rust: `scripts/release` packs an archive whose checksum file matches and
//! whose binary runs; `install.sh` fetches it from a server (a local one here), checks it and
//! installs it, and refuses a missing archive, a wrong checksum or a folder it cannot write,
//! leaving nothing half-installed.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use crate::util::{bin, text};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `scripts/release --out DIR` around a stripped copy of the test binary (a release build
/// takes minutes): the archive's path.
fn release(dir: &Path) -> PathBuf {
    let small = dir.join("baton-stripped");
    let st = Command::new("strip")
        .arg("-o")
        .arg(&small)
        .arg(bin())
        .status()
        .unwrap();
    assert!(st.success());
    let o = Command::new(repo().join("scripts/release"))
        .arg("--out")
        .arg(dir.join("out"))
        .arg("--bin")
        .arg(&small)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    PathBuf::from(String::from_utf8(o.stdout).unwrap().trim())
}

/// A file server on loopback for `dir`, until dropped; `overrides` answer some paths instead.
struct Server {
    url: String,
    server: Arc<tiny_http::Server>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(dir: PathBuf, overrides: Vec<(String, Vec<u8>)>) -> Server {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let url = format!("http://{}", server.server_addr().to_ip().unwrap());
        let s = server.clone();
        let thread = std::thread::spawn(move || {
            for req in s.incoming_requests() {
                let name = req.url().trim_start_matches('/').to_string();
                let body = overrides
                    .iter()
                    .find(|(p, _)| *p == name)
                    .map(|(_, b)| b.clone())
                    .or_else(|| {
                        (!name.contains("..")).then(|| std::fs::read(dir.join(&name)).ok())?
                    });
                let _ = match body {
                    Some(b) => req.respond(tiny_http::Response::from_data(b)),
                    None => req.respond(tiny_http::Response::empty(404)),
                };
            }
        });
        Server {
            url,
            server,
            thread: Some(thread),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn install(home: &Path, args: &[&str]) -> Output {
    Command::new("sh")
        .arg(repo().join("install.sh"))
        .args(args)
        .env("HOME", home)
        .env_remove("BATON_RELEASE_URL")
        .output()
        .unwrap()
}

#[test]
fn a_release_archive_is_checked_and_installed_from_a_server() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = release(tmp.path());
    let name = archive.file_name().unwrap().to_string_lossy().into_owned();
    let version = env!("CARGO_PKG_VERSION");
    assert!(name.starts_with(&format!("baton-{version}-")) && name.ends_with(".tar.gz"));
    let out = archive.parent().unwrap();
    // The checksum file matches the archive.
    let o = Command::new("sha256sum")
        .args(["-c", &format!("{name}.sha256")])
        .current_dir(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    // What it holds, and its binary runs.
    let x = tmp.path().join("x");
    std::fs::create_dir_all(&x).unwrap();
    assert!(
        Command::new("tar")
            .arg("-xzf")
            .arg(&archive)
            .arg("-C")
            .arg(&x)
            .status()
            .unwrap()
            .success()
    );
    let root = x.join(name.trim_end_matches(".tar.gz"));
    for f in [
        "baton",
        "README.md",
        "LICENSE-MIT",
        "LICENSE-APACHE",
        "man/baton.1",
        "man/baton-run.1",
        "completions/baton.bash",
        "completions/_baton",
        "completions/baton.fish",
    ] {
        assert!(root.join(f).is_file(), "{f} missing from the archive");
    }
    let v = Command::new(root.join("baton"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&v.stdout).starts_with(&format!("baton {version} (")));

    let server = Server::start(out.to_path_buf(), vec![]);
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let url = format!("{}/{name}", server.url);
    let o = install(&home, &["--url", &url]);
    assert!(o.status.success(), "{}", text(&o));
    let installed = home.join(".local/bin/baton");
    let v = Command::new(&installed).arg("--version").output().unwrap();
    assert!(String::from_utf8_lossy(&v.stdout).starts_with(&format!("baton {version}")));
    assert!(home.join(".local/share/man/man1/baton.1").is_file());
    assert!(text(&o).contains("is not on your PATH"), "{}", text(&o));
}

#[test]
fn a_missing_archive_a_wrong_checksum_or_an_unwritable_folder_installs_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = release(tmp.path());
    let name = archive.file_name().unwrap().to_string_lossy().into_owned();
    let out = archive.parent().unwrap().to_path_buf();
    let wrong = format!("{} {name}\n", "0".repeat(64)).into_bytes();
    let server = Server::start(
        out,
        vec![(format!("tampered/{name}.sha256"), wrong.clone())],
    );
    // The tampered path serves the real archive too.
    let mut bytes = Vec::new();
    std::fs::File::open(&archive)
        .unwrap()
        .read_to_end(&mut bytes)
        .unwrap();
    let tampered = Server::start(
        tmp.path().join("nothing"),
        vec![(name.clone(), bytes), (format!("{name}.sha256"), wrong)],
    );
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join(".local/bin")).unwrap();
    // A baton already there stays as it was whatever fails.
    std::fs::write(home.join(".local/bin/baton"), "old").unwrap();
    let cases = [
        (
            format!("{}/baton-0.0.0-none.tar.gz", server.url),
            vec![],
            "could not download",
        ),
        (
            format!("{}/{name}", tampered.url),
            vec![],
            "checksum mismatch",
        ),
        (
            format!("{}/{name}", server.url),
            vec!["--to", "/dev/null/bin"],
            "cannot write to /dev/null/bin",
        ),
        (
            format!("{}/notes.txt", server.url),
            vec![],
            "is not a release archive",
        ),
    ];
    for (url, extra, says) in cases {
        let mut args = vec!["--url", url.as_str()];
        args.extend(extra.iter().copied());
        let o = install(&home, &args);
        assert_ne!(o.status.code(), Some(0), "{url}");
        let t = text(&o);
        assert!(t.contains(says), "{url}: {t}");
        assert_eq!(
            std::fs::read_to_string(home.join(".local/bin/baton")).unwrap(),
            "old"
        );
        let leftovers: Vec<_> = std::fs::read_dir(home.join(".local/bin"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(leftovers.len(), 1, "{leftovers:?}");
    }
    let o = install(&home, &[]);
    crate::util::assert_exit(&o, 2);
    assert!(text(&o).contains("--url"), "{}", text(&o));
}

/// The tagged-release workflow cannot run here; its shape is checked: it runs on `v*` tags,
/// builds every target with the `dist` profile, packs each with scripts/release (whose
/// options it uses exist), and publishes the archives, their checksums and install.sh.
#[test]
fn the_release_workflow_is_well_formed_and_uses_the_release_script() {
    use yaml_rust2::{Yaml, YamlLoader};
    let text = std::fs::read_to_string(repo().join(".github/workflows/release.yml")).unwrap();
    let docs = YamlLoader::load_from_str(&text).unwrap();
    let w = &docs[0];
    let tags: Vec<&str> = w["on"]["push"]["tags"]
        .as_vec()
        .unwrap()
        .iter()
        .filter_map(Yaml::as_str)
        .collect();
    assert_eq!(tags, ["v*"]);
    let build = &w["jobs"]["build"];
    let targets: Vec<&str> = build["strategy"]["matrix"]["include"]
        .as_vec()
        .unwrap()
        .iter()
        .filter_map(|m| m["target"].as_str())
        .collect();
    assert!(
        targets.contains(&"x86_64-unknown-linux-gnu") && targets.len() >= 4,
        "{targets:?}"
    );
    let runs: String = build["steps"]
        .as_vec()
        .unwrap()
        .iter()
        .filter_map(|s| s["run"].as_str())
        .collect();
    assert!(runs.contains("--profile dist") && runs.contains("scripts/release --out dist"));
    let help = Command::new(repo().join("scripts/release"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for opt in ["--out", "--bin", "--target", "BATON_DOCS_BIN"] {
        assert!(runs.contains(opt), "the workflow does not use {opt}");
        assert!(help.contains(opt), "scripts/release has no {opt}");
    }
    let publish: String = w["jobs"]["publish"]["steps"]
        .as_vec()
        .unwrap()
        .iter()
        .filter_map(|s| s["with"]["files"].as_str())
        .collect();
    for f in ["*.tar.gz", "*.sha256", "install.sh"] {
        assert!(publish.contains(f), "{f} is not published");
    }
    let cargo = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    assert!(cargo.contains("[profile.dist]"), "no dist profile");
}

/// scripts/release refuses an option without its value (it used to loop forever on one at the
/// end), `--profile` beside `--bin`, and an empty profile: exit 2, nothing written.
#[test]
fn the_release_script_refuses_bad_arguments_and_writes_nothing() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("dist");
    let d = dir.to_str().unwrap();
    for args in [
        vec!["--out"],
        vec!["--out", d, "--profile"],
        vec!["--out", d, "--bin"],
        vec!["--out", d, "--bin", "/bin/true", "--profile", "dev"],
        vec!["--out", d, "--profile", ""],
    ] {
        let mut child = Command::new(repo().join("scripts/release"))
            .args(&args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let t0 = std::time::Instant::now();
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            if t0.elapsed() > std::time::Duration::from_secs(20) {
                let _ = child.kill();
                panic!("{args:?}: still running after 20 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        assert_eq!(status.code(), Some(2), "{args:?}");
        assert!(!dir.exists(), "{args:?} wrote {dir:?}");
    }
}
