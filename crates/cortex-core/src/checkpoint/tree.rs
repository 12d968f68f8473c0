//! A checkpoint's tree: one object per folder.
//!
//! A folder's object lists its entries by name: each entry's node (a
//! folder's mode, a file's mode, content object and size, a link's target),
//! its stat key, and for a folder the object of that folder. Objects are
//! content-addressed like file contents, so a folder that did not change
//! keeps its object, and a checkpoint after a turn that changed ten files
//! writes only the objects of the folders holding them and of the folders
//! on the way up to the root.
//!
//! In memory the session keeps the tree as it last saw it ([`Tree`]: folder
//! path → [`Folder`]); a folder's object is `None` once something in it or
//! under it changed, and then so is every folder's above it, so storing
//! the tree visits only what changed.

use super::store::Store;
use super::{CheckpointError, Manifest, Node, StatKey};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};

/// One entry of a folder: what a checkpoint restores, and the stat key that
/// tells it changed without reading it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) node: Node,
    pub(crate) key: StatKey,
}

/// One folder as the session last saw it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Folder {
    /// Its device and inode: a folder replaced by another of the same name
    /// and mode is walked again (a watch is on the inode, not the name).
    pub(crate) id: (u64, u64),
    pub(crate) entries: BTreeMap<String, Entry>,
    /// Its stored object while nothing in it or under it changed.
    pub(crate) object: Option<String>,
    /// Folders in it left out by rule, and entries that could not be read
    /// (`path: why`), for the `checkpoint.taken` event.
    pub(crate) excluded: Vec<String>,
    pub(crate) skipped: Vec<String>,
    /// It holds a file with more than one link: a write through a link
    /// elsewhere is reported to that folder's watch, not this one's, so
    /// this folder is read at every checkpoint.
    pub(crate) linked: bool,
}

/// Folder path (relative, `/`-separated, `""` for the root) → folder.
pub(crate) type Tree = HashMap<String, Folder>;

/// An entry as a folder object stores it: one JSON array, `[kind, name,
/// mode, text, size, mtime, mtime_ns, ctime, ctime_ns, ino, dev]`, where
/// `kind` is `d`, `f` or `l`, `mode` the stat key's (the node's is its
/// permission bits), and `text` a folder's object, a file's content object
/// or a link's target. About 150 bytes a file, half what named fields take:
/// a folder's object is written again whenever one of its entries changes.
#[derive(Serialize)]
struct RowOut<'a>(
    &'a str,
    &'a str,
    u32,
    &'a str,
    u64,
    i64,
    u64,
    i64,
    u64,
    u64,
    u64,
);

#[derive(Deserialize)]
struct Row(
    String,
    String,
    u32,
    String,
    u64,
    i64,
    u64,
    i64,
    u64,
    u64,
    u64,
);

/// A stored entry: its node, its stat key, and a folder's object.
struct EntryIn {
    node: Node,
    key: StatKey,
    tree: Option<String>,
}

fn row_out<'a>(name: &'a str, entry: &'a Entry, tree: Option<&'a str>) -> RowOut<'a> {
    let (kind, text) = match &entry.node {
        Node::Dir { .. } => ("d", tree.unwrap_or_default()),
        Node::File { object, .. } => ("f", object.as_str()),
        Node::Link { target } => ("l", target.as_str()),
    };
    let k = &entry.key;
    RowOut(
        kind, name, k.mode, text, k.size, k.mtime, k.mtime_ns, k.ctime, k.ctime_ns, k.ino, k.dev,
    )
}

fn row_in(row: Row) -> Result<(String, EntryIn), CheckpointError> {
    let Row(kind, name, mode, text, size, mtime, mtime_ns, ctime, ctime_ns, ino, dev) = row;
    let (kind, node, tree) = match kind.as_str() {
        "d" => ('d', Node::Dir { mode: mode & 0o777 }, Some(text)),
        "f" => {
            let node = Node::File {
                mode: mode & 0o777,
                object: text,
                size,
            };
            ('f', node, None)
        }
        "l" => ('l', Node::Link { target: text }, None),
        other => {
            return Err(CheckpointError::Corrupt(format!(
                "`{name}`: unknown kind `{other}`"
            )));
        }
    };
    let key = StatKey {
        kind,
        mode,
        size,
        mtime,
        mtime_ns,
        ctime,
        ctime_ns,
        ino,
        dev,
    };
    Ok((name, EntryIn { node, key, tree }))
}

/// The path of `name` in folder `folder`.
pub(crate) fn child(folder: &str, name: &str) -> String {
    if folder.is_empty() {
        name.to_owned()
    } else {
        format!("{folder}/{name}")
    }
}

/// The folder holding `path` (`None` for the root).
pub(crate) fn parent(path: &str) -> Option<&str> {
    if path.is_empty() {
        return None;
    }
    Some(path.rsplit_once('/').map_or("", |(head, _)| head))
}

/// Store every folder of `tree` whose object is not known; the root's
/// object and the bytes the new objects take.
pub(crate) fn store(tree: &mut Tree, store: &Store) -> Result<(String, u64), CheckpointError> {
    let mut bytes = 0;
    let root = store_folder(tree, store, "", &mut bytes)?;
    Ok((root, bytes))
}

fn store_folder(
    tree: &mut Tree,
    store: &Store,
    path: &str,
    bytes: &mut u64,
) -> Result<String, CheckpointError> {
    let folder = tree
        .get(path)
        .ok_or_else(|| CheckpointError::Corrupt(format!("`{path}` is not in the tree")))?;
    if let Some(object) = &folder.object {
        return Ok(object.clone());
    }
    let dirs: Vec<String> = folder
        .entries
        .iter()
        .filter(|(_, e)| matches!(e.node, Node::Dir { .. }))
        .map(|(name, _)| name.clone())
        .collect();
    let mut objects = HashMap::new();
    for name in dirs {
        let object = store_folder(tree, store, &child(path, &name), bytes)?;
        objects.insert(name, object);
    }
    let folder = tree
        .get(path)
        .ok_or_else(|| CheckpointError::Corrupt(format!("`{path}` is not in the tree")))?;
    let out: Vec<RowOut<'_>> = folder
        .entries
        .iter()
        .map(|(name, e)| row_out(name, e, objects.get(name).map(String::as_str)))
        .collect();
    let json = serde_json::to_vec(&out).map_err(|e| CheckpointError::Corrupt(e.to_string()))?;
    let (object, new) = store.put_bytes(&json)?;
    *bytes += new;
    if let Some(folder) = tree.get_mut(path) {
        folder.object = Some(object.clone());
    }
    Ok(object)
}

/// One stored folder's entries, their names checked to be plain names.
fn read(store: &Store, object: &str) -> Result<BTreeMap<String, EntryIn>, CheckpointError> {
    let bytes = store.read_object(object)?;
    let rows: Vec<Row> =
        serde_json::from_slice(&bytes).map_err(|e| CheckpointError::Corrupt(e.to_string()))?;
    let mut entries = BTreeMap::new();
    for row in rows {
        let (name, entry) = row_in(row)?;
        if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
            return Err(CheckpointError::Corrupt(format!("bad entry name `{name}`")));
        }
        entries.insert(name, entry);
    }
    Ok(entries)
}

/// The stored tree `root` as a [`Tree`] (every folder's object known): the
/// stat index of a session's first walk.
pub(crate) fn load(store: &Store, root: &str) -> Result<Tree, CheckpointError> {
    let mut tree = Tree::new();
    load_folder(store, root, String::new(), 0, &mut tree)?;
    Ok(tree)
}

fn load_folder(
    store: &Store,
    object: &str,
    path: String,
    depth: usize,
    tree: &mut Tree,
) -> Result<(), CheckpointError> {
    if depth > crate::copy::MAX_DEPTH {
        return Err(CheckpointError::Corrupt(format!("`{path}`: too deep")));
    }
    let mut folder = Folder {
        object: Some(object.to_owned()),
        ..Folder::default()
    };
    for (name, entry) in read(store, object)? {
        if let Some(sub) = &entry.tree {
            load_folder(store, sub, child(&path, &name), depth + 1, tree)?;
        }
        folder.entries.insert(
            name,
            Entry {
                node: entry.node,
                key: entry.key,
            },
        );
    }
    tree.insert(path, folder);
    Ok(())
}

/// Every entry of the stored tree `root` by path, with its stat key.
pub(crate) fn flatten_stored(
    store: &Store,
    root: &str,
) -> Result<(Manifest, HashMap<String, StatKey>), CheckpointError> {
    let mut out = (Manifest::new(), HashMap::new());
    flatten_folder(store, root, "", 0, &mut out)?;
    Ok(out)
}

fn flatten_folder(
    store: &Store,
    object: &str,
    path: &str,
    depth: usize,
    out: &mut (Manifest, HashMap<String, StatKey>),
) -> Result<(), CheckpointError> {
    if depth > crate::copy::MAX_DEPTH {
        return Err(CheckpointError::Corrupt(format!("`{path}`: too deep")));
    }
    for (name, entry) in read(store, object)? {
        let at = child(path, &name);
        if let Some(sub) = &entry.tree {
            flatten_folder(store, sub, &at, depth + 1, out)?;
        }
        out.1.insert(at.clone(), entry.key);
        out.0.insert(at, entry.node);
    }
    Ok(())
}

/// Every entry of the tree in memory by path, with its stat key.
pub(crate) fn flatten(tree: &Tree) -> (Manifest, HashMap<String, StatKey>) {
    let mut out = (Manifest::new(), HashMap::new());
    for (path, folder) in tree {
        for (name, entry) in &folder.entries {
            let at = child(path, name);
            out.1.insert(at.clone(), entry.key);
            out.0.insert(at, entry.node.clone());
        }
    }
    out
}

/// Add to `keep` every object the stored tree `root` holds (folders and
/// contents); a folder already in `keep` is not read again.
pub(crate) fn reachable(
    store: &Store,
    root: &str,
    keep: &mut HashSet<String>,
) -> Result<(), CheckpointError> {
    let mut pending = vec![root.to_owned()];
    while let Some(object) = pending.pop() {
        if !keep.insert(object.clone()) {
            continue;
        }
        for entry in read(store, &object)?.into_values() {
            if let Some(sub) = entry.tree {
                pending.push(sub);
            }
            if let Node::File { object, .. } = entry.node {
                keep.insert(object);
            }
        }
    }
    Ok(())
}

/// Forget in `tree` every object in `removed` (collected from the store):
/// the entries naming one and the objects of their folders and of every
/// folder above. Whether anything was forgotten (the tree is then only a
/// stat index: the next walk is a full one).
pub(crate) fn forget_objects(tree: &mut Tree, removed: &HashSet<String>) -> bool {
    let mut touched = Vec::new();
    for (path, folder) in tree.iter_mut() {
        let before = folder.entries.len();
        folder.entries.retain(|_, e| match &e.node {
            Node::File { object, .. } => !removed.contains(object),
            _ => true,
        });
        let gone = folder.object.as_ref().is_some_and(|o| removed.contains(o));
        if gone || folder.entries.len() != before {
            folder.object = None;
            touched.push(path.clone());
        }
    }
    for path in &touched {
        let mut at = parent(path);
        while let Some(up) = at {
            if let Some(folder) = tree.get_mut(up) {
                folder.object = None;
            }
            at = parent(up);
        }
    }
    !touched.is_empty()
}
