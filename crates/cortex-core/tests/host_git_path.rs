//! A `git` earlier on `PATH` (a workspace's `bin/` on the user's `PATH`, say)
//! is never what Cortex runs: host-side git is run by absolute path. Its own
//! test binary, since it changes this process's `PATH`.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

#[test]
fn a_git_earlier_on_path_is_not_run() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let marker = tmp.path().join("marker");
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    let status = Command::new("/usr/bin/env")
        .args(["bash", "-c", "git init -q && echo hi > f && git add f && git -c user.name=t -c user.email=t@t commit -qm c"])
        .current_dir(&repo)
        .status()
        .expect("bash");
    assert!(status.success());
    let fake_bin = repo.join("bin");
    std::fs::create_dir_all(&fake_bin).expect("mkdir");
    let fake = fake_bin.join("git");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\necho \"fake git $*\" >> {}\nexit 1\n",
            marker.display()
        ),
    )
    .expect("fake git");
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = format!(
        "{}:{}",
        fake_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // SAFETY: the only test of this binary; nothing else reads the
    // environment concurrently.
    unsafe { std::env::set_var("PATH", &path) };
    // Live: a PATH lookup finds the fake.
    let _ = Command::new("git")
        .arg("status")
        .output()
        .expect("fake git");
    assert!(std::fs::read_to_string(&marker).is_ok_and(|m| m.contains("fake git")));
    std::fs::remove_file(&marker).expect("reset");

    let copy = tmp.path().join("copy");
    cortex_core::materialise_copy(&repo, &copy).expect("copy");
    assert!(!marker.exists(), "the git on PATH ran");
    assert_eq!(std::fs::read_to_string(copy.join("f")).expect("f"), "hi\n");
    assert!(copy.join(".git").is_dir(), "copied as a git repository");
}
