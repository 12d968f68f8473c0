//! `read_file` of an image: PNG, JPEG, GIF and WebP files, known by their
//! first bytes (not their name), are read whole (up to [`MAX_IMAGE_BYTES`])
//! and returned as base64 with their type and, where the header says it,
//! their size in pixels. The harness gives them to a model that takes images
//! and a description to one that does not.

use crate::error::ToolError;
use crate::open::{Opened, open_no_block};
use crate::workspace::Workspace;
use base64::Engine;
use std::io::Read;

/// The largest image a `read_file` returns: 5 MiB once in base64, what
/// Anthropic's API takes per image.
pub const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024 / 4 * 3;

/// An image file, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageFile {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub mime_type: &'static str,
    /// Width and height in pixels, when the header gives them.
    pub size: Option<(u32, u32)>,
    /// The file's size in bytes.
    pub bytes: u64,
    /// The bytes, base64 (standard, padded); `None` when the file is over
    /// [`MAX_IMAGE_BYTES`].
    pub data: Option<String>,
    /// What the model reads of it, e.g. ``"`logo.png` is a 640×480 PNG
    /// image (12 KB)"``.
    pub description: String,
}

/// The type an image's first bytes say it is.
pub fn image_type(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if head.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Width and height from an image's header (the first 64 KiB suffice for
/// any JPEG that does not bury its frame under metadata).
fn dimensions(mime_type: &str, bytes: &[u8]) -> Option<(u32, u32)> {
    let be16 = |at: usize| Some(u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?) as u32);
    let le16 = |at: usize| Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?) as u32);
    let be32 = |at: usize| Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    let le24 = |at: usize| {
        let b = bytes.get(at..at + 3)?;
        Some(b[0] as u32 | (b[1] as u32) << 8 | (b[2] as u32) << 16)
    };
    match mime_type {
        "image/png" => Some((be32(16)?, be32(20)?)),
        "image/gif" => Some((le16(6)?, le16(8)?)),
        "image/webp" => match bytes.get(12..16)? {
            b"VP8X" => Some((le24(24)? + 1, le24(27)? + 1)),
            b"VP8L" => {
                let b = bytes.get(21..25)?;
                let bits = u32::from_le_bytes(b.try_into().ok()?);
                Some(((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1))
            }
            b"VP8 " => Some((le16(26)? & 0x3fff, le16(28)? & 0x3fff)),
            _ => None,
        },
        "image/jpeg" => {
            // Walk the segments to the first start-of-frame marker.
            let mut at = 2;
            while at + 9 < bytes.len() {
                if bytes[at] != 0xff {
                    return None;
                }
                let marker = bytes[at + 1];
                let is_frame =
                    matches!(marker, 0xc0..=0xcf) && !matches!(marker, 0xc4 | 0xc8 | 0xcc);
                if is_frame {
                    return Some((be16(at + 7)?, be16(at + 5)?));
                }
                at += 2 + be16(at + 2)? as usize;
            }
            None
        }
        _ => None,
    }
}

impl Workspace {
    /// The image at `path`, when its first bytes say it is one; `None` for
    /// any other file (and for what is no file: `read_file` says why).
    pub fn read_image(&self, path: &str) -> Result<Option<ImageFile>, ToolError> {
        let resolved = self.resolve(path)?;
        let Ok(Opened::File(file, meta)) = open_no_block(&resolved, false) else {
            return Ok(None);
        };
        let io_err = |source| ToolError::Io {
            path: resolved.clone(),
            source,
        };
        let mut head = Vec::with_capacity(64 * 1024);
        let mut reader = file.take(MAX_IMAGE_BYTES + 1);
        (&mut reader)
            .take(16)
            .read_to_end(&mut head)
            .map_err(io_err)?;
        let Some(mime_type) = image_type(&head) else {
            return Ok(None);
        };
        let bytes = meta.len();
        let shown = self.display(&resolved);
        let kind = mime_type.trim_start_matches("image/").to_ascii_uppercase();
        if bytes > MAX_IMAGE_BYTES {
            (&mut reader)
                .take(64 * 1024)
                .read_to_end(&mut head)
                .map_err(io_err)?;
            let size = dimensions(mime_type, &head);
            return Ok(Some(ImageFile {
                mime_type,
                size,
                bytes,
                data: None,
                description: format!(
                    "{}; it is over the {MAX_IMAGE_BYTES} bytes an image read may send, so it is not attached",
                    describe(&shown, &kind, size, bytes)
                ),
            }));
        }
        reader.read_to_end(&mut head).map_err(io_err)?;
        let size = dimensions(mime_type, &head);
        Ok(Some(ImageFile {
            mime_type,
            size,
            bytes: head.len() as u64,
            data: Some(base64::engine::general_purpose::STANDARD.encode(&head)),
            description: describe(&shown, &kind, size, head.len() as u64),
        }))
    }
}

fn describe(shown: &str, kind: &str, size: Option<(u32, u32)>, bytes: u64) -> String {
    let kb = bytes.div_ceil(1024);
    match size {
        Some((w, h)) => format!("`{shown}` is a {w}×{h} {kind} image ({kb} KB)"),
        None => format!("`{shown}` is a {kind} image ({kb} KB)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 3×2 PNG's first bytes: signature, IHDR length and type, width, height.
    fn png_header() -> Vec<u8> {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        png.extend_from_slice(&3u32.to_be_bytes());
        png.extend_from_slice(&2u32.to_be_bytes());
        png.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
        png
    }

    #[test]
    fn images_are_known_by_their_bytes_not_their_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("pic.txt"), png_header()).expect("write");
        std::fs::write(dir.path().join("fake.png"), "not an image").expect("write");
        let mut gif = b"GIF89a".to_vec();
        gif.extend_from_slice(&[10, 0, 20, 0, 0, 0, 0]);
        std::fs::write(dir.path().join("a.gif"), &gif).expect("write");
        let mut jpeg = vec![0xff, 0xd8, 0xff, 0xe0, 0, 4, 0, 0];
        jpeg.extend_from_slice(&[0xff, 0xc0, 0, 11, 8, 0, 48, 0, 64, 3, 0]);
        std::fs::write(dir.path().join("b.jpg"), &jpeg).expect("write");
        let ws = Workspace::new(dir.path()).expect("workspace");
        let png = ws.read_image("pic.txt").expect("read").expect("a png");
        assert_eq!(png.mime_type, "image/png");
        assert_eq!(png.size, Some((3, 2)));
        assert_eq!(png.description, "`pic.txt` is a 3×2 PNG image (1 KB)");
        let data = png.data.expect("attached");
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(data)
            .expect("base64");
        assert_eq!(decoded, png_header());
        assert_eq!(ws.read_image("fake.png").expect("read"), None);
        assert_eq!(
            ws.read_image("a.gif").expect("gif").expect("gif").size,
            Some((10, 20))
        );
        assert_eq!(
            ws.read_image("b.jpg").expect("jpg").expect("jpg").size,
            Some((64, 48))
        );
        for not_here in ["missing.png", "../outside.png"] {
            assert!(
                !matches!(ws.read_image(not_here), Ok(Some(_))),
                "{not_here}"
            );
        }
    }

    #[test]
    fn an_image_over_the_cap_is_described_not_attached() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut big = png_header();
        big.resize(MAX_IMAGE_BYTES as usize + 10, 0);
        std::fs::write(dir.path().join("big.png"), &big).expect("write");
        let ws = Workspace::new(dir.path()).expect("workspace");
        let image = ws.read_image("big.png").expect("read").expect("an image");
        assert_eq!(image.data, None);
        assert_eq!(image.size, Some((3, 2)));
        assert!(
            image.description.contains("not attached"),
            "{}",
            image.description
        );
    }
}
