use super::*;
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};

/// Every entry under `dir` with its kind, mode and content or target, no
/// link followed: a tree to compare exactly.
fn tree(dir: &Path) -> BTreeMap<String, String> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in fs::read_dir(dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            let rel = path
                .strip_prefix(base)
                .expect("prefix")
                .display()
                .to_string();
            let meta = fs::symlink_metadata(&path).expect("lstat");
            let mode = meta.permissions().mode() & 0o777;
            if meta.file_type().is_symlink() {
                let target = fs::read_link(&path).expect("readlink");
                out.insert(rel, format!("link {}", target.display()));
            } else if meta.is_dir() {
                out.insert(rel, format!("dir {mode:o}"));
                walk(base, &path, out);
            } else {
                let content = fs::read(&path).expect("read");
                out.insert(
                    rel,
                    format!("file {mode:o} {}", String::from_utf8_lossy(&content)),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn setup() -> (tempfile::TempDir, tempfile::TempDir) {
    let ws = tempfile::tempdir().expect("ws");
    let data = tempfile::tempdir().expect("data");
    fs::create_dir_all(ws.path().join("src")).expect("mkdir");
    fs::write(ws.path().join("src/lib.rs"), "fn a() {}\n").expect("write");
    fs::write(ws.path().join("README"), "hello\n").expect("write");
    fs::set_permissions(ws.path().join("README"), fs::Permissions::from_mode(0o640))
        .expect("chmod");
    symlink("src/lib.rs", ws.path().join("lib")).expect("symlink");
    (ws, data)
}

fn open(ws: &Path, data: &Path, quota: u64) -> Checkpoints {
    Checkpoints::open(&data.join("checkpoints"), "s1", ws, quota).expect("open")
}

#[test]
fn a_rewind_restores_the_tree_exactly_and_can_be_undone() {
    let (ws, data) = setup();
    let before = tree(ws.path());
    let mut cp = open(ws.path(), data.path(), DEFAULT_QUOTA);
    cp.take("t1").expect("take");
    cp.seal().expect("seal");
    // What a turn does: edit, create in a new folder, delete, chmod,
    // retarget a link, turn a file into a folder.
    fs::write(ws.path().join("src/lib.rs"), "fn b() {}\n").expect("edit");
    fs::create_dir_all(ws.path().join("new/deep")).expect("mkdir");
    fs::write(ws.path().join("new/deep/x.txt"), "x").expect("create");
    fs::remove_file(ws.path().join("README")).expect("delete");
    fs::remove_file(ws.path().join("lib")).expect("unlink");
    symlink("/etc/passwd", ws.path().join("lib")).expect("symlink");
    let after = tree(ws.path());
    cp.seal().expect("seal");

    let restored = cp.rewind("t1", false).expect("rewind");
    assert_eq!(tree(ws.path()), before);
    assert_eq!(restored.diff.created, ["README"]);
    assert_eq!(restored.diff.changed, ["lib", "src/lib.rs"]);
    assert_eq!(restored.diff.deleted, ["new", "new/deep", "new/deep/x.txt"]);
    let undo = restored.undo.expect("undo checkpoint");

    let undone = cp.rewind(&undo, false).expect("undo");
    assert_eq!(tree(ws.path()), after);
    assert!(undone.undo.is_some());
}

#[test]
fn an_unchanged_tree_stores_nothing_new() {
    let (ws, data) = setup();
    let mut cp = open(ws.path(), data.path(), DEFAULT_QUOTA);
    let first = cp.take("t1").expect("take");
    assert!(first.bytes_new > 0);
    assert_eq!(first.files, 4);
    let used = cp.used().expect("used");
    let second = cp.take("t2").expect("take");
    assert_eq!(second.bytes_new, 0);
    // One record more, nothing else.
    assert!(cp.used().expect("used") - used < 200);
    assert_eq!(cp.list().expect("list"), ["t1", "t2"]);
    // The running count the quota is checked against is what the disk says.
    fs::write(ws.path().join("README"), "changed\n").expect("write");
    cp.take("t3").expect("take");
    let counted = cp.used_now().expect("counted");
    assert_eq!(counted, cp.used().expect("measured"));
}

#[test]
fn excluded_folders_and_special_files_are_named_and_left_alone() {
    let (ws, data) = setup();
    fs::create_dir_all(ws.path().join(".git")).expect("git");
    fs::write(ws.path().join(".git/HEAD"), "ref").expect("head");
    fs::create_dir_all(ws.path().join("web/node_modules/pkg")).expect("nm");
    fs::write(ws.path().join("web/node_modules/pkg/i.js"), "1").expect("js");
    let fifo = ws.path().join("pipe");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("cstr");
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let mut cp = open(ws.path(), data.path(), DEFAULT_QUOTA);
    let taken = cp.take("t1").expect("take");
    assert_eq!(taken.excluded, ["web/node_modules"]);
    assert_eq!(taken.skipped.len(), 1, "{:?}", taken.skipped);
    assert!(taken.skipped[0].starts_with("pipe: "));
    cp.seal().expect("seal");
    fs::write(ws.path().join("web/node_modules/pkg/i.js"), "2").expect("js");
    fs::write(ws.path().join(".git/HEAD"), "changed").expect("head");
    fs::write(ws.path().join("README"), "changed").expect("readme");
    cp.seal().expect("seal");
    cp.rewind("t1", false).expect("rewind");
    assert_eq!(
        fs::read_to_string(ws.path().join("README")).expect("r"),
        "hello\n"
    );
    // The excluded and protected trees are as the turn left them.
    assert_eq!(
        fs::read_to_string(ws.path().join("web/node_modules/pkg/i.js")).expect("r"),
        "2"
    );
    assert_eq!(
        fs::read_to_string(ws.path().join(".git/HEAD")).expect("r"),
        "changed"
    );
    assert!(ws.path().join("pipe").exists());
}

#[test]
fn a_folder_replaced_by_a_link_to_outside_is_never_written_through() {
    let (ws, data) = setup();
    let outside = tempfile::tempdir().expect("outside");
    fs::write(outside.path().join("keep.txt"), "outside").expect("write");
    let outside_before = tree(outside.path());
    let before = tree(ws.path());
    let mut cp = open(ws.path(), data.path(), DEFAULT_QUOTA);
    cp.take("t1").expect("take");
    cp.seal().expect("seal");
    // The model swaps `src` for a link to a folder outside the workspace.
    fs::remove_dir_all(ws.path().join("src")).expect("rm");
    symlink(outside.path(), ws.path().join("src")).expect("plant");
    cp.seal().expect("seal");
    cp.rewind("t1", false).expect("rewind");
    assert_eq!(
        tree(outside.path()),
        outside_before,
        "nothing written outside"
    );
    assert_eq!(tree(ws.path()), before);
}

#[test]
fn a_link_planted_between_the_walk_and_the_write_is_removed_not_followed() {
    // The same check at the lowest level: the restore's own parent walk
    // meets a link where the checkpoint has a folder.
    let (ws, data) = setup();
    let outside = tempfile::tempdir().expect("outside");
    let mut cp = open(ws.path(), data.path(), DEFAULT_QUOTA);
    cp.take("t1").expect("take");
    let record = cp.store.read_record("t1").expect("read").expect("record");
    let target = cp.manifest(&record).expect("manifest");
    fs::remove_dir_all(ws.path().join("src")).expect("rm");
    symlink(outside.path(), ws.path().join("src")).expect("plant");
    // A diff computed before the link was planted: only the file.
    let diff = cortex_protocol::RewindDiff {
        created: vec!["src/lib.rs".into()],
        ..Default::default()
    };
    restore::apply(ws.path(), &cp.store, &target, &diff).expect("apply");
    assert_eq!(fs::read_dir(outside.path()).expect("ls").count(), 0);
    assert!(ws.path().join("src").is_dir());
    assert!(
        !fs::symlink_metadata(ws.path().join("src"))
            .expect("lstat")
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        fs::read_to_string(ws.path().join("src/lib.rs")).expect("read"),
        "fn a() {}\n"
    );
}

#[test]
fn files_changed_outside_the_session_are_listed_and_kept_without_force() {
    let (ws, data) = setup();
    let mut cp = open(ws.path(), data.path(), DEFAULT_QUOTA);
    cp.take("t1").expect("take");
    // The turn changes one file; the session seals at its end.
    fs::write(ws.path().join("src/lib.rs"), "fn turn() {}\n").expect("turn");
    cp.seal().expect("seal");
    // Then the user edits another and adds one.
    fs::write(ws.path().join("README"), "mine\n").expect("user");
    fs::write(ws.path().join("notes.txt"), "mine").expect("user");
    // The preview says all of it and changes nothing, the store included.
    let (tree_before, used_before) = (tree(ws.path()), cp.used().expect("used"));
    let objects_before = tree(&data.path().join("checkpoints/s1/objects"));
    let preview = cp.preview("t1").expect("preview");
    assert_eq!(preview.changed_outside, ["README", "notes.txt"]);
    assert_eq!(preview.diff.changed, ["README", "src/lib.rs"]);
    assert_eq!(preview.diff.deleted, ["notes.txt"]);
    assert_eq!(tree(ws.path()), tree_before);
    assert_eq!(cp.used().expect("used"), used_before);
    assert_eq!(
        tree(&data.path().join("checkpoints/s1/objects")),
        objects_before,
        "a preview stores no content"
    );
    assert!(matches!(
        cp.preview("t0"),
        Err(CheckpointError::NotFound(_))
    ));
    let Err(CheckpointError::Conflict(paths)) = cp.rewind("t1", false) else {
        panic!("a conflict");
    };
    assert_eq!(paths, ["README", "notes.txt"]);
    assert_eq!(
        fs::read_to_string(ws.path().join("README")).expect("r"),
        "mine\n"
    );
    assert_eq!(
        fs::read_to_string(ws.path().join("src/lib.rs")).expect("r"),
        "fn turn() {}\n"
    );
    let forced = cp.rewind("t1", true).expect("forced");
    assert_eq!(forced.forced, ["README", "notes.txt"]);
    assert_eq!(
        fs::read_to_string(ws.path().join("README")).expect("r"),
        "hello\n"
    );
    assert!(!ws.path().join("notes.txt").exists());
    // Even forced, the user's files are in the undo checkpoint.
    cp.rewind(&forced.undo.expect("undo"), false).expect("undo");
    assert_eq!(
        fs::read_to_string(ws.path().join("README")).expect("r"),
        "mine\n"
    );
}

#[test]
fn past_the_quota_the_oldest_checkpoints_are_pruned() {
    let (ws, data) = setup();
    // Room for about two 4 KiB versions of the file with their records.
    let mut cp = open(ws.path(), data.path(), 12 * 1024);
    let mut pruned = Vec::new();
    for (i, fill) in ["a", "b", "c", "d"].iter().enumerate() {
        fs::write(ws.path().join("big"), fill.repeat(4096)).expect("write");
        let taken = cp.take(&format!("t{i}")).expect("take");
        assert_eq!(
            cp.used_now().expect("counted"),
            cp.used().expect("measured")
        );
        if let Some(p) = taken.pruned {
            assert!(p.used <= p.quota);
            pruned.extend(p.checkpoints);
        }
    }
    assert!(!pruned.is_empty());
    assert_eq!(pruned[0], "t0", "oldest first");
    let kept = cp.list().expect("list");
    assert!(kept.contains(&"t3".to_owned()));
    assert!(cp.used().expect("used") <= 12 * 1024);
    assert!(matches!(
        cp.rewind("t0", false),
        Err(CheckpointError::NotFound(_))
    ));
    // What is kept still restores.
    let last_kept = kept[0].clone();
    cp.seal().expect("seal");
    cp.rewind(&last_kept, false).expect("rewind");
}

#[test]
fn a_tree_over_the_quota_alone_is_not_kept() {
    let (ws, data) = setup();
    fs::write(ws.path().join("big"), "x".repeat(64 * 1024)).expect("write");
    let mut cp = open(ws.path(), data.path(), 8 * 1024);
    assert!(matches!(
        cp.take("t1"),
        Err(CheckpointError::OverQuota { .. })
    ));
    assert!(cp.list().expect("list").is_empty());
    assert!(cp.used().expect("used") < 8 * 1024, "nothing left behind");
}

#[test]
fn the_store_is_private_and_ids_cannot_name_paths() {
    let (ws, data) = setup();
    let mut cp = open(ws.path(), data.path(), DEFAULT_QUOTA);
    cp.take("t1").expect("take");
    let dir = data.path().join("checkpoints/s1");
    let mode = fs::metadata(&dir).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    let record = dir.join("records/t1.json");
    let mode = fs::metadata(&record).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    for bad in ["../t1", "a/b", "", ".."] {
        assert!(matches!(
            cp.rewind(bad, false),
            Err(CheckpointError::NotFound(_))
        ));
    }
    assert!(stored_bytes(&data.path().join("checkpoints"), "s1").is_some_and(|b| b > 0));
    assert_eq!(stored_bytes(&data.path().join("checkpoints"), "../x"), None);
}

#[test]
fn an_unreadable_file_or_folder_is_skipped_with_a_note_not_a_failure() {
    if unsafe { libc::geteuid() } == 0 {
        // Root reads a mode-000 file anyway; nothing to skip.
        return;
    }
    let (ws, data) = setup();
    fs::write(ws.path().join("secret"), "s").expect("write");
    fs::set_permissions(ws.path().join("secret"), fs::Permissions::from_mode(0o000))
        .expect("chmod");
    fs::create_dir(ws.path().join("closed")).expect("mkdir");
    fs::set_permissions(ws.path().join("closed"), fs::Permissions::from_mode(0o000))
        .expect("chmod");
    let mut cp = open(ws.path(), data.path(), DEFAULT_QUOTA);
    let taken = cp.take("t1").expect("take");
    assert_eq!(taken.skipped.len(), 2, "{:?}", taken.skipped);
    fs::set_permissions(ws.path().join("closed"), fs::Permissions::from_mode(0o700))
        .expect("chmod back");
}

#[test]
fn past_the_total_quota_the_oldest_of_any_session_go_first() {
    let data = tempfile::tempdir().expect("data");
    let root = data.path().join("checkpoints");
    let (a, b) = (
        tempfile::tempdir().expect("a"),
        tempfile::tempdir().expect("b"),
    );
    // Per session, room for all; in all, for about three 4 KiB versions.
    let session = |name: &str, ws: &Path| {
        let mut cp = Checkpoints::open(&root, name, ws, DEFAULT_QUOTA).expect("open");
        cp.set_total_quota(14 * 1024);
        cp
    };
    let mut first = session("a", a.path());
    for (i, fill) in ["a", "b"].iter().enumerate() {
        fs::write(a.path().join("big"), fill.repeat(4096)).expect("write");
        let taken = first.take(&format!("t{i}")).expect("take");
        assert!(taken.pruned_total.is_none());
    }
    // While session `a` is live its store is locked: `b` counts it but
    // prunes only its own.
    let mut second = session("b", b.path());
    fs::write(b.path().join("big"), "c".repeat(4096)).expect("write");
    second.take("u0").expect("take");
    fs::write(b.path().join("big"), "d".repeat(4096)).expect("write");
    let taken = second.take("u1").expect("take");
    let pruned = taken.pruned_total.expect("pruned for the total");
    assert_eq!(pruned.checkpoints, ["u0"], "a live session is not pruned");
    assert_eq!(first.list().expect("list"), ["t0", "t1"]);
    // Closed, `a`'s checkpoints are the oldest and go first.
    drop(first);
    fs::write(b.path().join("big"), "e".repeat(4096)).expect("write");
    let taken = second.take("u2").expect("take");
    let pruned = taken.pruned_total.expect("pruned for the total");
    assert_eq!(pruned.checkpoints[0], "a/t0", "oldest first, any session");
    assert!(pruned.used <= pruned.quota, "{pruned:?}");
    assert_eq!(pruned.quota, 14 * 1024);
    assert!(second.list().expect("list").contains(&"u2".to_owned()));
    // What `a` keeps still restores.
    let mut first = session("a", a.path());
    let kept = first.list().expect("list");
    assert!(!kept.contains(&"t0".to_owned()));
    if let Some(id) = kept.first() {
        first.rewind(id, true).expect("rewind");
    }
}
