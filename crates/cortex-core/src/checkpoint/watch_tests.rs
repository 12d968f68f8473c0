//! The incremental walk (`watch.rs`, `Scan::relist`): after every change
//! below, the tree the session keeps and the checkpoint it stores must be
//! exactly what a full walk of the disk finds, and the walk must have been
//! the one expected (incremental, or a full one when events were lost).

use super::*;
use std::fs;
use std::os::unix::fs::symlink;

/// The workspace as a full walk from nothing finds it (nothing stored).
fn on_disk(cp: &Checkpoints) -> (Manifest, HashMap<String, StatKey>) {
    let mut scan = Scan {
        store: &cp.store,
        dry: true,
        budget: u64::MAX,
        watcher: None,
        watch_failed: false,
        bytes_new: 0,
        folders: 0,
        new_links: Vec::new(),
    };
    let walked = scan.full(&cp.workspace, &mut Tree::new()).expect("walk");
    tree::flatten(&walked)
}

/// Take checkpoint `id` and check it and the kept tree against the disk.
fn take_exact(cp: &mut Checkpoints, id: &str) -> Taken {
    let taken = cp.take(id).expect("take");
    let disk = on_disk(cp);
    assert_eq!(tree::flatten(&cp.tree), disk, "the kept tree after {id}");
    let record = cp.record(id).expect("record");
    assert_eq!(cp.manifest(&record).expect("manifest"), disk.0, "{id}");
    taken
}

fn setup() -> (tempfile::TempDir, tempfile::TempDir, Checkpoints) {
    let ws = tempfile::tempdir().expect("ws");
    let data = tempfile::tempdir().expect("data");
    for dir in ["a/b/c/d/e", "src", "docs"] {
        fs::create_dir_all(ws.path().join(dir)).expect("mkdir");
    }
    fs::write(ws.path().join("a/b/c/d/e/deep.txt"), "deep\n").expect("write");
    fs::write(ws.path().join("src/lib.rs"), "fn a() {}\n").expect("write");
    fs::write(ws.path().join("docs/x.md"), "x\n").expect("write");
    fs::write(ws.path().join("README"), "hello\n").expect("write");
    let cp = Checkpoints::open(
        &data.path().join("checkpoints"),
        "s1",
        ws.path(),
        DEFAULT_QUOTA,
    )
    .expect("open");
    (ws, data, cp)
}

#[test]
fn an_unchanged_tree_reads_no_folder_and_writes_only_a_record() {
    let (_ws, data, mut cp) = setup();
    take_exact(&mut cp, "t1");
    assert_eq!(cp.walks().0, 1, "the first walk is a full one");
    let objects = tree_size(&data.path().join("checkpoints/s1/objects"));
    let before = cp.walks();
    let taken = take_exact(&mut cp, "t2");
    assert_eq!(taken.bytes_new, 0);
    assert_eq!(cp.walks().0, before.0, "no full walk");
    assert_eq!(cp.walks().2, before.2, "no folder read");
    assert_eq!(
        tree_size(&data.path().join("checkpoints/s1/objects")),
        objects,
        "no object written"
    );
}

/// How many files are under `dir`.
fn tree_size(dir: &Path) -> usize {
    let mut n = 0;
    for entry in fs::read_dir(dir).expect("read_dir") {
        let entry = entry.expect("entry");
        if entry.file_type().expect("type").is_dir() {
            n += tree_size(&entry.path());
        } else {
            n += 1;
        }
    }
    n
}

#[test]
fn a_change_in_a_deep_folder_reads_that_folder_and_writes_the_path_to_the_root() {
    let (ws, data, mut cp) = setup();
    take_exact(&mut cp, "t1");
    let objects = tree_size(&data.path().join("checkpoints/s1/objects"));
    let before = cp.walks();
    fs::write(ws.path().join("a/b/c/d/e/deep.txt"), "changed\n").expect("write");
    take_exact(&mut cp, "t2");
    assert_eq!(cp.walks().0, before.0, "no full walk");
    assert_eq!(cp.walks().2 - before.2, 1, "only a/b/c/d/e was read");
    // The new content, a/b/c/d/e, a/b/c/d, a/b/c, a/b, a and the root.
    assert_eq!(
        tree_size(&data.path().join("checkpoints/s1/objects")) - objects,
        7
    );
    cp.seal().expect("seal");
    cp.rewind("t1", false).expect("rewind");
    assert_eq!(
        fs::read_to_string(ws.path().join("a/b/c/d/e/deep.txt")).expect("read"),
        "deep\n"
    );
}

#[test]
fn a_rename_between_folders_is_followed_and_the_moved_folder_stays_watched() {
    let (ws, _data, mut cp) = setup();
    fs::create_dir_all(ws.path().join("src/sub/inner")).expect("mkdir");
    fs::write(ws.path().join("src/sub/inner/f.txt"), "f").expect("write");
    take_exact(&mut cp, "t1");
    fs::rename(ws.path().join("src/lib.rs"), ws.path().join("docs/lib.rs")).expect("mv file");
    fs::rename(ws.path().join("src/sub"), ws.path().join("docs/sub")).expect("mv folder");
    take_exact(&mut cp, "t2");
    // Changes in the moved folder, at its new place, are seen.
    fs::write(ws.path().join("docs/sub/inner/f.txt"), "g").expect("write");
    fs::write(ws.path().join("docs/sub/new.txt"), "n").expect("write");
    take_exact(&mut cp, "t3");
    // And moved back, the other way round.
    fs::rename(ws.path().join("docs/sub"), ws.path().join("src/sub")).expect("mv back");
    fs::write(ws.path().join("src/sub/inner/f.txt"), "h").expect("write");
    take_exact(&mut cp, "t4");
    assert_eq!(cp.walks().0, 1, "all incremental");
}

#[test]
fn a_change_made_by_another_process_is_caught() {
    let (ws, _data, mut cp) = setup();
    take_exact(&mut cp, "t1");
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(
            "echo other > a/b/c/d/e/deep.txt && mkdir -p new/dir && echo n > new/dir/n.txt \
             && chmod 600 docs/x.md && rm README && ln -s src/lib.rs lib",
        )
        .current_dir(ws.path())
        .status()
        .expect("sh");
    assert!(status.success());
    take_exact(&mut cp, "t2");
    assert_eq!(cp.walks().0, 1, "caught by the watches, not a full walk");
    // And the new folder is watched from then on.
    fs::write(ws.path().join("new/dir/n.txt"), "m").expect("write");
    take_exact(&mut cp, "t3");
    assert_eq!(cp.walks().0, 1);
}

#[test]
fn a_folder_replaced_by_a_symlink_is_recorded_as_a_link_and_not_followed() {
    let (ws, _data, mut cp) = setup();
    let outside = tempfile::tempdir().expect("outside");
    take_exact(&mut cp, "t1");
    fs::remove_dir_all(ws.path().join("a")).expect("rm");
    symlink(outside.path(), ws.path().join("a")).expect("plant");
    take_exact(&mut cp, "t2");
    // What happens behind the link is not the workspace's.
    fs::write(outside.path().join("behind.txt"), "b").expect("write");
    let before = cp.walks();
    take_exact(&mut cp, "t3");
    assert_eq!(cp.walks().2, before.2, "nothing read");
    // A folder replaced by another folder of the same name is walked anew
    // and watched: a change in it is seen.
    fs::remove_dir_all(ws.path().join("src")).expect("rm");
    fs::create_dir(ws.path().join("src")).expect("mkdir");
    fs::write(ws.path().join("src/lib.rs"), "fn b() {}\n").expect("write");
    take_exact(&mut cp, "t4");
    fs::write(ws.path().join("src/lib.rs"), "fn c() {}\n").expect("write");
    take_exact(&mut cp, "t5");
    assert_eq!(cp.walks().0, 1);
    cp.seal().expect("seal");
    cp.rewind("t1", false).expect("rewind");
    assert!(ws.path().join("a/b/c/d/e/deep.txt").is_file());
    assert_eq!(fs::read_dir(outside.path()).expect("ls").count(), 1);
}

#[test]
fn a_write_through_a_hard_link_elsewhere_is_caught() {
    let (ws, _data, mut cp) = setup();
    let outside = tempfile::tempdir().expect("outside");
    fs::hard_link(ws.path().join("docs/x.md"), outside.path().join("x.md")).expect("link");
    take_exact(&mut cp, "t1");
    // The write goes through the other name: the watch on `docs` sees
    // nothing, the folder is read because its file has two links.
    fs::write(outside.path().join("x.md"), "through the link\n").expect("write");
    take_exact(&mut cp, "t2");
    assert_eq!(cp.walks().0, 1);
}

#[test]
fn a_hard_link_made_inside_the_workspace_makes_both_folders_read() {
    let (ws, _data, mut cp) = setup();
    take_exact(&mut cp, "t1");
    // Linked and written through the new name at once: `docs` has no
    // event, its file changed all the same.
    fs::hard_link(ws.path().join("docs/x.md"), ws.path().join("src/x.md")).expect("link");
    fs::write(ws.path().join("src/x.md"), "through src\n").expect("write");
    take_exact(&mut cp, "t2");
    // And again, now that both folders are known to hold it.
    fs::write(ws.path().join("src/x.md"), "again\n").expect("write");
    take_exact(&mut cp, "t3");
    assert_eq!(cp.walks().0, 1);
}

#[test]
fn lost_events_make_the_next_walk_a_full_one() {
    let (ws, _data, mut cp) = setup();
    take_exact(&mut cp, "t1");
    let max: usize = fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .expect("max_queued_events")
        .trim()
        .parse()
        .expect("number");
    // More events than the queue holds, alternating between two files so
    // the kernel cannot merge them...
    for i in 0..max + 100 {
        let name = if i % 2 == 0 { "docs/f0" } else { "docs/f1" };
        fs::write(ws.path().join(name), i.to_string()).expect("write");
    }
    // ...so this change's event is lost: only a full walk finds it.
    fs::write(ws.path().join("src/lib.rs"), "fn lost() {}\n").expect("write");
    take_exact(&mut cp, "t2");
    assert_eq!(cp.walks().0, 2, "events lost: a full walk");
    // And then it watches again.
    fs::write(ws.path().join("src/lib.rs"), "fn found() {}\n").expect("write");
    take_exact(&mut cp, "t3");
    assert_eq!(cp.walks().0, 2);
}

#[test]
fn a_reopened_store_walks_once_and_stores_nothing_for_an_unchanged_tree() {
    let (ws, data, mut cp) = setup();
    take_exact(&mut cp, "t1");
    cp.seal().expect("seal");
    drop(cp);
    let mut cp = Checkpoints::open(
        &data.path().join("checkpoints"),
        "s1",
        ws.path(),
        DEFAULT_QUOTA,
    )
    .expect("reopen");
    let objects = tree_size(&data.path().join("checkpoints/s1/objects"));
    let taken = take_exact(&mut cp, "t2");
    assert_eq!(taken.bytes_new, 0);
    assert_eq!(
        tree_size(&data.path().join("checkpoints/s1/objects")),
        objects,
        "the stored tree is reused whole"
    );
    assert_eq!(cp.walks().0, 1);
}

#[test]
fn the_seal_stores_the_turn_so_the_next_checkpoint_reads_nothing() {
    let (ws, _data, mut cp) = setup();
    take_exact(&mut cp, "t1");
    fs::write(ws.path().join("src/lib.rs"), "fn turn() {}\n").expect("write");
    cp.seal().expect("seal");
    let before = cp.walks();
    let taken = take_exact(&mut cp, "t2");
    assert_eq!(cp.walks().2, before.2, "nothing read");
    // The bytes the seal stored are reported with the checkpoint.
    assert_eq!(taken.bytes_new, "fn turn() {}\n".len() as u64);
}

#[test]
fn a_folder_deleted_and_made_again_is_watched_again() {
    let (ws, _data, mut cp) = setup();
    take_exact(&mut cp, "t0");
    // Made again, the folder often gets its inode number back (not its
    // watch): repeated, so that case comes up.
    for i in 0..20 {
        fs::remove_dir_all(ws.path().join("docs")).expect("rm");
        fs::create_dir(ws.path().join("docs")).expect("mkdir");
        fs::write(ws.path().join("docs/x.md"), format!("{i}a")).expect("write");
        take_exact(&mut cp, &format!("a{i}"));
        // Same size, so only the watch can tell.
        fs::write(ws.path().join("docs/x.md"), format!("{i}b")).expect("write");
        take_exact(&mut cp, &format!("b{i}"));
    }
}
