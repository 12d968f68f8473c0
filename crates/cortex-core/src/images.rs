//! Images a user attaches to a turn's message.
//!
//! A client hands over bytes; what they are is read from their first bytes
//! (PNG, JPEG, GIF, WebP), never taken from a file name or a claimed type.
//! Each is stored once in the store under its sha256 (`Store::put_blob`,
//! within the store's quota) and the timeline names them (`turn.images`
//! right after `turn.started`), so a resumed session, or another replica,
//! reads the same bytes back and no event carries them. The history holds
//! [`Attachment::Stored`]; [`Images::resolve`] puts the bytes in before a
//! request, so providers only ever see [`Attachment::Image`].
//!
//! A model whose provider takes no images (the embedded one) is refused a
//! turn with images before anything is recorded: [`Session::check_images`].

use crate::{CoreError, Session};
use base64::Engine;
use cortex_protocol::{Attachment, EventKind, ImageRef, Message, TurnId};
use cortex_store::Blob;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Arc;

/// The largest image taken, in bytes (Anthropic's limit per image).
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;
/// The most images one message takes.
pub const MAX_IMAGES: usize = 8;
/// The most image bytes one message takes in all.
pub const MAX_IMAGES_TOTAL_BYTES: usize = 20 * 1024 * 1024;

/// A turn's message and the images attached to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserTurn {
    /// The message.
    pub message: String,
    /// Each image's bytes, in order.
    pub images: Vec<Vec<u8>>,
    /// The workspace files a custom command includes (`@path`), read in the
    /// guest once attached and given with the message (`includes.rs`).
    pub includes: Vec<String>,
}

impl UserTurn {
    /// A message without images.
    pub fn text(message: impl Into<String>) -> UserTurn {
        UserTurn {
            message: message.into(),
            images: Vec::new(),
            includes: Vec::new(),
        }
    }
}

/// Why a turn's images are refused (before anything is recorded).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    /// More than [`MAX_IMAGES`].
    #[error("{count} images attached; a message takes at most {MAX_IMAGES}")]
    TooMany {
        /// How many were attached.
        count: usize,
    },
    /// Together over [`MAX_IMAGES_TOTAL_BYTES`].
    #[error("the images are {bytes} bytes in all; a message takes at most {} MiB", MAX_IMAGES_TOTAL_BYTES / (1024 * 1024))]
    TooMuch {
        /// Their size in all.
        bytes: usize,
    },
    /// One is over [`MAX_IMAGE_BYTES`].
    #[error("image {index} is {bytes} bytes; the limit is {} MiB", MAX_IMAGE_BYTES / (1024 * 1024))]
    TooLarge {
        /// Its place, from 1.
        index: usize,
        /// Its size.
        bytes: usize,
    },
    /// One is not a PNG, JPEG, GIF or WebP image.
    #[error("attachment {index} is not a PNG, JPEG, GIF or WebP image")]
    NotAnImage {
        /// Its place, from 1.
        index: usize,
    },
    /// The session's model takes no images.
    #[error("the model {model} takes no images; use a provider that does (OpenAI, Anthropic)")]
    ModelTakesNone {
        /// `provider:model`.
        model: String,
    },
}

/// The image type of `bytes`, from its signature.
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Each image's type, checked against the limits.
fn checked(images: &[Vec<u8>]) -> Result<Vec<&'static str>, ImageError> {
    if images.len() > MAX_IMAGES {
        return Err(ImageError::TooMany {
            count: images.len(),
        });
    }
    let total: usize = images.iter().map(Vec::len).sum();
    if total > MAX_IMAGES_TOTAL_BYTES {
        return Err(ImageError::TooMuch { bytes: total });
    }
    images
        .iter()
        .enumerate()
        .map(|(i, bytes)| {
            let index = i + 1;
            if bytes.len() > MAX_IMAGE_BYTES {
                return Err(ImageError::TooLarge {
                    index,
                    bytes: bytes.len(),
                });
            }
            sniff(bytes).ok_or(ImageError::NotAnImage { index })
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of the images the session has seen, by sha256 (base64, shared
/// with every request that sends them).
#[derive(Debug, Default)]
pub(crate) struct Images {
    bytes: HashMap<String, Arc<str>>,
}

impl Images {
    /// `messages` with every stored image's bytes put in; one whose bytes
    /// cannot be found is said in the text instead (never a request that
    /// silently lacks it).
    pub(crate) fn resolve(&self, messages: &mut [Message]) {
        for message in messages {
            let mut missing = 0;
            for attachment in &mut message.attachments {
                let Attachment::Stored { mime_type, sha256 } = attachment else {
                    continue;
                };
                match self.bytes.get(sha256.as_str()) {
                    Some(data) => {
                        *attachment = Attachment::Image {
                            mime_type: std::mem::take(mime_type),
                            data: data.to_string(),
                        };
                    }
                    None => missing += 1,
                }
            }
            if missing > 0 {
                message
                    .attachments
                    .retain(|a| !matches!(a, Attachment::Stored { .. }));
                message.content.push_str(&format!(
                    "\n[{missing} attached image(s) could not be read back from the store]"
                ));
            }
        }
    }

    /// The stored images of `messages` whose bytes are not here yet.
    fn missing<'a>(&self, messages: &'a [Message]) -> Vec<&'a str> {
        let mut keys: Vec<&str> = messages
            .iter()
            .flat_map(|m| &m.attachments)
            .filter_map(|a| match a {
                Attachment::Stored { sha256, .. } if !self.bytes.contains_key(sha256.as_str()) => {
                    Some(sha256.as_str())
                }
                _ => None,
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }
}

impl Session {
    /// Whether a turn with `images` may start: the model takes images, and
    /// each is an image within the limits.
    pub fn check_images(&self, images: &[Vec<u8>]) -> Result<(), ImageError> {
        if images.is_empty() {
            return Ok(());
        }
        if !self.model.takes_images() {
            return Err(ImageError::ModelTakesNone {
                model: self.model.describe(),
            });
        }
        checked(images).map(drop)
    }

    /// Store the turn's images and record `turn.images`. Checked again
    /// here: a caller that skipped [`Session::check_images`] gets its
    /// refusal as the turn's error rather than a request with them.
    pub(crate) async fn attach_images(
        &mut self,
        turn: &TurnId,
        images: Vec<Vec<u8>>,
    ) -> Result<Result<(), ImageError>, CoreError> {
        if images.is_empty() {
            return Ok(Ok(()));
        }
        if let Err(e) = self.check_images(&images) {
            return Ok(Err(e));
        }
        let types = match checked(&images) {
            Ok(types) => types,
            Err(e) => return Ok(Err(e)),
        };
        let mut refs = Vec::with_capacity(images.len());
        for (bytes, mime_type) in images.iter().zip(types) {
            let sha256 = hex(&Sha256::digest(bytes));
            let data = base64::engine::general_purpose::STANDARD.encode(bytes);
            let blob = Blob {
                sha256: sha256.clone(),
                mime_type: mime_type.to_owned(),
                data,
            };
            self.timeline.store().put_blob(&blob).await?;
            self.images
                .bytes
                .insert(sha256.clone(), Arc::from(blob.data));
            refs.push(ImageRef {
                mime_type: mime_type.to_owned(),
                sha256,
                bytes: bytes.len() as u64,
            });
        }
        self.record(Some(turn), EventKind::TurnImages { images: refs })
            .await?;
        Ok(Ok(()))
    }

    /// Read back from the store the images of the history whose bytes this
    /// process has not got (a resumed session's), before a request needs
    /// them.
    pub(crate) async fn load_images(&mut self) -> Result<(), CoreError> {
        let missing: Vec<String> = self
            .images
            .missing(&self.state.messages)
            .into_iter()
            .map(str::to_owned)
            .collect();
        for sha256 in missing {
            if let Some(blob) = self.timeline.store().blob(&sha256).await? {
                self.images.bytes.insert(sha256, Arc::from(blob.data));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_come_from_the_bytes() {
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n...."), Some("image/png"));
        assert_eq!(sniff(&[0xff, 0xd8, 0xff, 0xe0]), Some("image/jpeg"));
        assert_eq!(sniff(b"GIF89a..."), Some("image/gif"));
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(sniff(b"<svg xmlns="), None);
        assert_eq!(sniff(b""), None);
    }

    #[test]
    fn limits_are_checked_in_order() {
        let png = b"\x89PNG\r\n\x1a\n".to_vec();
        assert_eq!(checked(std::slice::from_ref(&png)), Ok(vec!["image/png"]));
        assert_eq!(
            checked(&vec![png.clone(); MAX_IMAGES + 1]),
            Err(ImageError::TooMany {
                count: MAX_IMAGES + 1
            })
        );
        assert_eq!(
            checked(&[png.clone(), b"text".to_vec()]),
            Err(ImageError::NotAnImage { index: 2 })
        );
        let mut big = png;
        big.resize(MAX_IMAGE_BYTES + 1, 0);
        assert!(matches!(
            checked(&[big]),
            Err(ImageError::TooLarge { index: 1, .. })
        ));
    }

    #[test]
    fn stored_images_are_resolved_or_said_missing() {
        let mut images = Images::default();
        images.bytes.insert("aa".into(), Arc::from("aGk="));
        let mut message = Message::user("look");
        message.attachments = vec![
            Attachment::Stored {
                mime_type: "image/png".into(),
                sha256: "aa".into(),
            },
            Attachment::Stored {
                mime_type: "image/png".into(),
                sha256: "bb".into(),
            },
        ];
        let mut messages = vec![message];
        assert_eq!(images.missing(&messages), vec!["bb"]);
        images.resolve(&mut messages);
        assert_eq!(
            messages[0].attachments,
            vec![Attachment::Image {
                mime_type: "image/png".into(),
                data: "aGk=".into()
            }]
        );
        assert!(
            messages[0]
                .content
                .contains("1 attached image(s) could not be read")
        );
    }
}
