//! The image files a message names: `@path` with an image extension (the
//! composer completes `@` from the repository's files), or a file path
//! pasted whole (a terminal pastes a dropped file's path, quoted or with
//! its blanks escaped). They are read here, where the UI runs, and sent
//! with the turn; the server checks what they are.

use std::path::{Path, PathBuf};

const EXTENSIONS: [&str; 5] = ["png", "jpg", "jpeg", "gif", "webp"];

/// The image files `message` names that exist, relative paths taken from
/// `root`, in order and without repeats.
pub fn named_images(message: &str, root: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    for word in words(message) {
        let (named, word) = match word.strip_prefix('@') {
            Some(rest) => (true, rest.to_owned()),
            None => (false, word),
        };
        let word = word.trim_end_matches([',', '.', ';', ':', ')', '!', '?']);
        let path = Path::new(word);
        let is_image = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()));
        // A bare word is a pasted path only when absolute.
        if !is_image || (!named && !path.is_absolute()) {
            continue;
        }
        let full = if path.is_absolute() {
            path.to_path_buf()
        } else {
            root.join(path)
        };
        if full.is_file() && !found.contains(&full) {
            found.push(full);
        }
    }
    found
}

/// The message's words, a quoted run (`'/a b/c.png'`) or blanks escaped
/// with a backslash kept in one word.
fn words(message: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut chars = message.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') if word.is_empty() || word == "@" => quote = Some(c),
            (None, '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                }
            }
            (None, c) if c.is_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            (None, c) => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_and_pasted_images_are_found() {
        let dir = std::env::temp_dir().join(format!("cortex-tui-images-{}", std::process::id()));
        let root = dir.as_path();
        std::fs::create_dir_all(root.join("docs")).expect("mkdir");
        std::fs::write(root.join("docs/shot.png"), b"x").expect("write");
        std::fs::write(root.join("my shot.JPG"), b"x").expect("write");
        std::fs::write(root.join("notes.txt"), b"x").expect("write");
        let pasted = root.join("my shot.JPG");
        let message = format!(
            "Compare @docs/shot.png, @notes.txt and @missing.png with '{}' and docs/shot.png",
            pasted.display()
        );
        assert_eq!(
            named_images(&message, root),
            vec![root.join("docs/shot.png"), pasted.clone()]
        );
        let escaped = format!("see {}", pasted.display().to_string().replace(' ', "\\ "));
        assert_eq!(named_images(&escaped, root), vec![pasted]);
        assert!(named_images("no images here", root).is_empty());
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
