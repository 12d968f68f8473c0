//! Where a Python traceback says the error is: its innermost frame in a
//! file of the workspace.
//!
//! Told "python3 run.py fails with ModuleNotFoundError. Fix the import in
//! report.py", the 1.5B edited run.py, the file the task says to run; the
//! refusal let it make the call again if run.py itself was wrong, and it
//! did, though the traceback the harness had run ended in report.py. A
//! person reads the last frame first.

/// The innermost frame of a traceback that lies in the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ErrorSite {
    /// The file, as the workspace's listing names it.
    pub(crate) file: String,
    pub(crate) line: u32,
    /// The frame's line of code as the traceback quotes it, when it does.
    pub(crate) code: Option<String>,
}

/// The innermost frame of the traceback in `output` whose file is one of
/// `listed` (paths relative to the workspace; a frame names its file by an
/// absolute path that ends with one of them). `None` without such a frame.
pub(crate) fn error_site(output: &str, listed: &[String]) -> Option<ErrorSite> {
    let lines: Vec<&str> = output.lines().collect();
    lines.iter().enumerate().rev().find_map(|(i, line)| {
        let (path, number) = frame(line)?;
        let file = listed
            .iter()
            .filter(|l| path == l.as_str() || path.ends_with(&format!("/{l}")))
            .max_by_key(|l| l.len())?;
        let code = lines
            .get(i + 1)
            .filter(|next| next.starts_with("    ") && frame(next).is_none())
            .map(|next| next.trim().to_owned())
            .filter(|code| !code.is_empty());
        Some(ErrorSite {
            file: file.clone(),
            line: number,
            code,
        })
    })
}

/// The file and line of a traceback's frame line (`  File "/w/a.py",
/// line 3, in f`, or without `in …` for a syntax error).
fn frame(line: &str) -> Option<(&str, u32)> {
    let rest = line.trim_start().strip_prefix("File \"")?;
    let (path, rest) = rest.split_once("\", line ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((path, digits.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(files: &[&str]) -> Vec<String> {
        files.iter().map(|f| (*f).to_owned()).collect()
    }

    #[test]
    fn the_innermost_frame_in_the_workspace_is_the_site() {
        let output = "Traceback (most recent call last):\n  File \"/w/run.py\", line 1, in \
                      <module>\n    from report import summary\n  File \"/w/report.py\", line 1, \
                      in <module>\n    from mathutils import mean\nModuleNotFoundError: No \
                      module named 'mathutils'\n[exit code 1]";
        let files = listed(&["report.py", "run.py", "stats/mathutils.py"]);
        assert_eq!(
            error_site(output, &files),
            Some(ErrorSite {
                file: "report.py".into(),
                line: 1,
                code: Some("from mathutils import mean".into()),
            })
        );
        // A frame outside the workspace (the standard library) is passed
        // over for the workspace's own.
        let output = "Traceback (most recent call last):\n  File \"/w/app/load.py\", line 7, in \
                      load\n    return json.loads(text)\n  File \
                      \"/usr/lib/python3.11/json/__init__.py\", line 346, in loads\n    return \
                      _default_decoder.decode(s)\njson.decoder.JSONDecodeError: Expecting value";
        let files = listed(&["load.py", "app/load.py"]);
        let site = error_site(output, &files).expect("a site");
        assert_eq!((site.file.as_str(), site.line), ("app/load.py", 7));
        // A syntax error's frame has no function; its code line may be
        // followed by a caret line.
        let output = "  File \"/w/t.py\", line 4\n    print(x)print(y)\n            \
                      ^^^^^\nSyntaxError: invalid syntax";
        let site = error_site(output, &listed(&["t.py"])).expect("a site");
        assert_eq!(site.code.as_deref(), Some("print(x)print(y)"));
        assert_eq!(error_site("ok\n[exit code 0]", &files), None);
        assert_eq!(
            error_site("  File \"/elsewhere/x.py\", line 2, in f", &files),
            None
        );
    }
}
