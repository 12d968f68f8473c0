//! `grep`: ripgrep semantics through `grep-regex` + `grep-searcher` over the
//! shared parallel walk.
//!
//! Each walker thread owns one `Searcher` and one matcher, reused for every
//! file (as ripgrep does). Results are collected per file and sorted by path
//! so that the output is deterministic; content is kept only up to what the
//! output can show, so memory stays bounded on a huge match set.

use crate::cap::{MAX_OUTPUT_BYTES, cap_middle, floor_char_boundary};
use crate::open::{Opened, open_no_block};
use crate::search::{collect_parallel, is_file};
use crate::{ToolError, Workspace};
use cortex_protocol::{GrepArgs, GrepMode};
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::WalkBuilder;
use ignore::overrides::OverrideBuilder;
use std::fmt::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Paths listed at most in files and count modes.
pub(crate) const MAX_GREP_FILES: usize = 200;
/// Matching lines shown at most in content mode.
pub(crate) const MAX_CONTENT_MATCHES: usize = 500;
/// Context lines at most on each side of a match.
const MAX_CONTEXT: u32 = 20;
/// Characters of one line shown before it is cut.
const MAX_LINE_CHARS: usize = 500;
/// Content kept in memory across all files before storing stops.
const MAX_STORED_BYTES: usize = 8 * 1024 * 1024;
/// Room kept at the end of the output for the closing note.
const NOTE_ROOM: usize = 256;

/// What one file contributed.
struct FileHit {
    path: PathBuf,
    /// Matching lines in the file.
    count: u64,
    /// Content mode: rendered lines (`path:line:text`, `path-line-text`, `--`).
    text: String,
    /// Content mode: end offset in `text` of each rendered line, and whether
    /// it is a matching line.
    lines: Vec<(usize, bool)>,
}

/// The extension a pattern written for file names asks for (`.*\.py$`,
/// `*.py`, `\.rs$`), `None` for a pattern of contents: small models grep
/// for names and read "No matches found" as none.
fn name_pattern(pattern: &str) -> Option<&str> {
    let rest = pattern.strip_suffix('$').unwrap_or(pattern);
    let (before, ext) = rest.rsplit_once('.')?;
    let named = before.ends_with('\\') && (before.starts_with(".*") || before == "\\")
        || before == "*"
        || before.ends_with('*');
    let short = (1..=4).contains(&ext.len()) && ext.chars().all(|c| c.is_ascii_alphanumeric());
    (named && short).then_some(ext)
}

impl Workspace {
    /// ripgrep semantics through grep-searcher / grep-regex + ignore.
    pub fn grep(&self, args: &GrepArgs) -> Result<String, ToolError> {
        let target = self.search_root(args.path.as_deref())?;
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(args.ignore_case.unwrap_or(false))
            .line_terminator(Some(b'\n'))
            .build(&args.pattern)
            .map_err(|e| ToolError::Invalid(format!("invalid regex `{}`: {e}", args.pattern)))?;
        let mode = args.mode.unwrap_or_default();
        let context = match mode {
            GrepMode::Content => args.context.unwrap_or(0).min(MAX_CONTEXT) as usize,
            _ => 0,
        };
        let mut searcher = SearcherBuilder::new();
        searcher
            .line_number(mode == GrepMode::Content)
            .binary_detection(BinaryDetection::quit(b'\x00'))
            .before_context(context)
            .after_context(context);
        let (mut walk, skipped) = self.walker(&target)?;
        only_matching(&mut walk, &target, args.glob.as_deref())?;
        let root = self.root();
        let stored = AtomicUsize::new(0);
        let mut hits = collect_parallel(&walk, || {
            let mut searcher = searcher.build();
            let matcher = matcher.clone();
            let stored = &stored;
            move |entry: ignore::DirEntry| {
                if !is_file(&entry) {
                    return None;
                }
                let path = entry.path();
                // Opened without blocking and checked again: a file swapped
                // for a FIFO since the walk saw it is skipped, not waited on.
                let Ok(Opened::File(file, _)) = open_no_block(path, false) else {
                    return None;
                };
                let (count, text, lines) = match mode {
                    GrepMode::Files => {
                        let mut sink = FirstMatch(false);
                        searcher.search_file(&matcher, &file, &mut sink).ok()?;
                        (u64::from(sink.0), String::new(), Vec::new())
                    }
                    GrepMode::Count => {
                        let mut sink = CountMatches(0);
                        searcher.search_file(&matcher, &file, &mut sink).ok()?;
                        (sink.0, String::new(), Vec::new())
                    }
                    GrepMode::Content => {
                        let mut sink = ContentSink::new(path, root, stored);
                        searcher.search_file(&matcher, &file, &mut sink).ok()?;
                        (sink.count, sink.text, sink.lines)
                    }
                };
                (count > 0).then(|| FileHit {
                    path: entry.into_path(),
                    count,
                    text,
                    lines,
                })
            }
        });
        let note = skipped.note(self);
        if hits.is_empty() {
            let none = match name_pattern(&args.pattern) {
                Some(ext) => format!(
                    "No matches found. grep searches the files' contents; to find files by name, \
                     call glob with the pattern `{}**/*.{ext}`",
                    args.path
                        .as_deref()
                        .map(|p| format!("{}/", p.trim_end_matches('/')))
                        .unwrap_or_default()
                ),
                None => "No matches found".to_owned(),
            };
            return Ok(note.map_or(none.clone(), |note| format!("{none}\n{note}")));
        }
        let out = self.render_hits(&mut hits, mode, context);
        let out = match note {
            Some(note) if out.ends_with('\n') => format!("{out}{note}"),
            Some(note) => format!("{out}\n{note}"),
            None => out,
        };
        Ok(cap_middle(&out, MAX_OUTPUT_BYTES))
    }

    /// The hits as the mode shows them: file names, counts per file, or
    /// the matching lines (with `context` lines around them).
    fn render_hits(&self, hits: &mut Vec<FileHit>, mode: GrepMode, context: usize) -> String {
        match mode {
            GrepMode::Files => {
                let total = hits.len();
                let hits = first_by_path(hits, MAX_GREP_FILES);
                let mut out: Vec<String> = hits.iter().map(|h| self.display(&h.path)).collect();
                if total > hits.len() {
                    out.push(format!("({} more files not shown)", total - hits.len()));
                }
                out.join("\n")
            }
            // In words, with the total: `main.py:4` read as "1" by the 1.5B.
            GrepMode::Count => {
                let total_files = hits.len();
                let total: u64 = hits.iter().map(|h| h.count).sum();
                let hits = first_by_path(hits, MAX_GREP_FILES);
                let mut out: Vec<String> = hits
                    .iter()
                    .map(|h| format!("{}: {}", self.display(&h.path), matching_lines(h.count)))
                    .collect();
                if total_files > hits.len() {
                    out.push(format!(
                        "({} more files not shown; {} in {total_files} files)",
                        total_files - hits.len(),
                        matching_lines(total)
                    ));
                } else if total_files > 1 {
                    out.push(format!(
                        "({} in {total_files} files)",
                        matching_lines(total)
                    ));
                }
                out.join("\n")
            }
            GrepMode::Content => render_content(hits, context > 0),
        }
    }
}

/// "1 matching line", "4 matching lines".
fn matching_lines(count: u64) -> String {
    let s = if count == 1 { "" } else { "s" };
    format!("{count} matching line{s}")
}

/// Narrows the walk to the files `glob` matches (none or a blank one: all).
fn only_matching(
    walk: &mut WalkBuilder,
    target: &Path,
    glob: Option<&str>,
) -> Result<(), ToolError> {
    let Some(glob) = glob.map(str::trim).filter(|g| !g.is_empty()) else {
        return Ok(());
    };
    let overrides = OverrideBuilder::new(target)
        .add(glob)
        .and_then(|b| b.build())
        .map_err(|e| ToolError::Invalid(format!("invalid glob `{glob}`: {e}")))?;
    walk.overrides(overrides);
    Ok(())
}

fn by_path(a: &FileHit, b: &FileHit) -> std::cmp::Ordering {
    a.path
        .as_os_str()
        .as_bytes()
        .cmp(b.path.as_os_str().as_bytes())
}

/// The first `n` hits in path order (selection, then a sort of only those).
fn first_by_path(hits: &mut Vec<FileHit>, n: usize) -> &[FileHit] {
    if hits.len() > n {
        hits.select_nth_unstable_by(n, by_path);
        hits.truncate(n);
    }
    hits.sort_unstable_by(by_path);
    hits
}

/// Content mode: files in path order, at most [`MAX_CONTENT_MATCHES`]
/// matching lines and [`MAX_OUTPUT_BYTES`], cut at line boundaries, with a
/// note of what was left out.
fn render_content(hits: &mut [FileHit], separate_files: bool) -> String {
    hits.sort_unstable_by(by_path);
    let total_matches: u64 = hits.iter().map(|h| h.count).sum();
    let budget = MAX_OUTPUT_BYTES - NOTE_ROOM;
    let mut out = String::new();
    let mut shown: u64 = 0;
    let mut files_shown = 0;
    'files: for hit in hits.iter() {
        if shown as usize >= MAX_CONTENT_MATCHES || out.len() >= budget {
            break;
        }
        if separate_files && !out.is_empty() {
            out.push_str("--\n");
        }
        files_shown += 1;
        let mut start = 0;
        for &(end, is_match) in &hit.lines {
            let line = &hit.text[start..end];
            if out.len() + line.len() > budget
                || (is_match && shown as usize >= MAX_CONTENT_MATCHES)
            {
                break 'files;
            }
            out.push_str(line);
            shown += u64::from(is_match);
            start = end;
        }
    }
    if shown < total_matches {
        let _ = write!(
            out,
            "(showing {shown} of {total_matches} matching lines in {} files; {} files not shown; narrow the pattern, path or glob to see the rest)",
            hits.len(),
            hits.len().saturating_sub(files_shown)
        );
    }
    out
}

/// Files mode: stop at the first match.
struct FirstMatch(bool);

impl Sink for FirstMatch {
    type Error = std::io::Error;
    fn matched(&mut self, _: &Searcher, _: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.0 = true;
        Ok(false)
    }
}

/// Count mode: count matching lines.
struct CountMatches(u64);

impl Sink for CountMatches {
    type Error = std::io::Error;
    fn matched(&mut self, _: &Searcher, _: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.0 += 1;
        Ok(true)
    }
}

/// Content mode: render matching and context lines as ripgrep does without
/// headings, keeping only what the output could show.
struct ContentSink<'a> {
    path: &'a Path,
    root: &'a Path,
    /// The displayed path, computed at the first line rendered.
    prefix: Option<String>,
    count: u64,
    stored_matches: usize,
    text: String,
    lines: Vec<(usize, bool)>,
    stored: &'a AtomicUsize,
}

impl<'a> ContentSink<'a> {
    fn new(path: &'a Path, root: &'a Path, stored: &'a AtomicUsize) -> Self {
        ContentSink {
            path,
            root,
            prefix: None,
            count: 0,
            stored_matches: 0,
            text: String::new(),
            lines: Vec::new(),
            stored,
        }
    }

    fn storing(&self) -> bool {
        self.stored_matches < MAX_CONTENT_MATCHES
            && self.stored.load(Ordering::Relaxed) < MAX_STORED_BYTES
    }

    fn push_line(&mut self, sep: char, number: Option<u64>, bytes: &[u8], is_match: bool) {
        let before = self.text.len();
        let prefix = self.prefix.get_or_insert_with(|| {
            let rel = self.path.strip_prefix(self.root).unwrap_or(self.path);
            crate::workspace::shown_path(rel)
        });
        self.text.push_str(prefix);
        self.text.push(sep);
        if let Some(n) = number {
            let _ = write!(self.text, "{n}{sep}");
        }
        let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        let line = String::from_utf8_lossy(bytes);
        if line.len() > MAX_LINE_CHARS * 4 || line.chars().nth(MAX_LINE_CHARS).is_some() {
            let end = line
                .char_indices()
                .nth(MAX_LINE_CHARS)
                .map_or(line.len(), |(i, _)| floor_char_boundary(&line, i));
            self.text.push_str(&line[..end]);
            self.text.push_str(" … [line cut]");
        } else {
            self.text.push_str(&line);
        }
        self.text.push('\n');
        self.lines.push((self.text.len(), is_match));
        self.stored
            .fetch_add(self.text.len() - before, Ordering::Relaxed);
    }
}

impl Sink for ContentSink<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.count += 1;
        if self.storing() {
            self.stored_matches += 1;
            self.push_line(':', mat.line_number(), mat.bytes(), true);
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        if self.storing() {
            self.push_line('-', ctx.line_number(), ctx.bytes(), false);
        }
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, Self::Error> {
        if self.storing() && !self.text.is_empty() {
            self.text.push_str("--\n");
            self.lines.push((self.text.len(), false));
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grep_for_file_names_that_finds_nothing_names_glob() {
        for (pattern, ext) in [
            (".*\\.py$", Some("py")),
            ("*.py", Some("py")),
            ("\\.rs$", Some("rs")),
        ] {
            assert_eq!(name_pattern(pattern), ext, "{pattern}");
        }
        for pattern in [
            "parse_config",
            "a.b",
            "import os",
            "x\\.y\\(",
            "version = \"1.0\"",
        ] {
            assert_eq!(name_pattern(pattern), None, "{pattern}");
        }
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("src")).expect("dir");
        std::fs::write(dir.path().join("src/a.py"), "x = 1\n").expect("write");
        let ws = Workspace::new(dir.path()).expect("workspace");
        let out = ws
            .grep(&GrepArgs {
                pattern: ".*\\.py$".into(),
                path: Some("src".into()),
                glob: None,
                mode: Some(GrepMode::Files),
                context: None,
                ignore_case: None,
            })
            .expect("grep");
        assert!(
            out.contains("call glob with the pattern `src/**/*.py`"),
            "{out}"
        );
    }
}
