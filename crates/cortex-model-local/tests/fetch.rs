//! `fetch::download` against a loopback HTTP server that serves a small fake
//! GGUF file, honours `Range`, and can break a response off mid-way.

use cortex_model_local::fetch::{self, Check, Download, FetchError, FetchProgress, NoProgress};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const PATH: &str = "/Org/Fake-GGUF/resolve/main/fake.gguf";

#[derive(Clone)]
struct Behaviour {
    body: Vec<u8>,
    honour_range: bool,
    /// Close the first response after this many body bytes.
    cut_first_at: Option<usize>,
}

/// The `Range` header of each request (None when absent), in order.
type Seen = Arc<Mutex<Vec<Option<String>>>>;

async fn serve(behaviour: Behaviour) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let seen: Seen = Arc::default();
    let seen2 = Arc::clone(&seen);
    tokio::spawn(async move {
        let mut first = true;
        while let Ok((mut sock, _)) = listener.accept().await {
            let mut req = Vec::new();
            let mut buf = [0u8; 1024];
            while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                match sock.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => req.extend_from_slice(&buf[..n]),
                }
            }
            let text = String::from_utf8_lossy(&req).to_string();
            let path = text.split_whitespace().nth(1).unwrap_or("").to_owned();
            let range = text.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("range").then(|| v.trim().to_owned())
            });
            seen2.lock().expect("seen").push(range.clone());
            if path != PATH {
                let _ = sock
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                    )
                    .await;
                continue;
            }
            let body = &behaviour.body;
            let start = range.filter(|_| behaviour.honour_range).and_then(|r| {
                r.strip_prefix("bytes=")?
                    .strip_suffix('-')?
                    .parse::<usize>()
                    .ok()
            });
            let head = match start {
                Some(s) if s >= body.len() => {
                    let _ = sock
                        .write_all(b"HTTP/1.1 416 Range Not Satisfiable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                        .await;
                    continue;
                }
                Some(s) => format!(
                    "HTTP/1.1 206 Partial Content\r\ncontent-length: {}\r\ncontent-range: bytes {s}-{}/{}\r\nconnection: close\r\n\r\n",
                    body.len() - s,
                    body.len() - 1,
                    body.len()
                ),
                None => format!(
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                ),
            };
            let from = start.unwrap_or(0);
            let mut to = body.len();
            if first && let Some(cut) = behaviour.cut_first_at {
                to = cut.max(from);
            }
            first = false;
            let _ = sock.write_all(head.as_bytes()).await;
            let _ = sock.write_all(&body[from..to]).await;
            let _ = sock.shutdown().await;
        }
    });
    (format!("http://{addr}"), seen)
}

fn fake_gguf(len: usize) -> Vec<u8> {
    let mut body = b"GGUF".to_vec();
    body.extend((0..len - 4).map(|i| (i * 7 % 251) as u8));
    body
}

fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn job(base: &str, dir: &Path, check: Check) -> Download {
    Download {
        name: "fake-model".into(),
        url: format!("{base}{PATH}"),
        dest: dir.join("fake.gguf"),
        check,
    }
}

/// Records what the progress callbacks were told.
#[derive(Default)]
struct Recorded {
    begin: Option<(Option<u64>, u64)>,
    last: u64,
    ended: bool,
}

impl FetchProgress for Recorded {
    fn begin(&mut self, total: Option<u64>, done: u64) {
        self.begin = Some((total, done));
    }
    fn advance(&mut self, done: u64) {
        assert!(done >= self.last, "progress went backwards");
        self.last = done;
    }
    fn end(&mut self) {
        self.ended = true;
    }
}

#[tokio::test]
async fn downloads_checks_and_installs_the_file() {
    let body = fake_gguf(300_000);
    let (base, seen) = serve(Behaviour {
        body: body.clone(),
        honour_range: true,
        cut_first_at: None,
    })
    .await;
    let dir = tempfile::tempdir().expect("dir");
    let client = fetch::client().expect("client");
    let mut progress = Recorded::default();
    let job = job(&base, dir.path(), Check::Sha256(sha(&body).to_uppercase()));
    let got = fetch::download(&client, &job, &mut progress)
        .await
        .expect("download");
    assert_eq!(std::fs::read(&job.dest).expect("installed"), body);
    assert_eq!(got.sha256, sha(&body));
    assert_eq!((got.size, got.resumed_from), (body.len() as u64, 0));
    assert!(!fetch::part_path(&job.dest).exists());
    assert_eq!(progress.begin, Some((Some(body.len() as u64), 0)));
    assert_eq!(progress.last, body.len() as u64);
    assert!(progress.ended);
    assert_eq!(*seen.lock().expect("seen"), vec![None]);
    assert!(fetch::file_passes(&job.dest, &Check::Sha256(sha(&body))));
}

#[tokio::test]
async fn a_checksum_mismatch_installs_nothing_and_removes_the_part() {
    let body = fake_gguf(50_000);
    let (base, _) = serve(Behaviour {
        body: body.clone(),
        honour_range: true,
        cut_first_at: None,
    })
    .await;
    let dir = tempfile::tempdir().expect("dir");
    let wrong = sha(b"something else");
    let job = job(&base, dir.path(), Check::Sha256(wrong.clone()));
    let err = fetch::download(&fetch::client().expect("client"), &job, &mut NoProgress)
        .await
        .expect_err("mismatch");
    match &err {
        FetchError::ChecksumMismatch {
            expected, actual, ..
        } => {
            assert_eq!(expected, &wrong);
            assert_eq!(actual, &sha(&body));
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(err.to_string().contains("not installed"), "{err}");
    assert!(!job.dest.exists());
    assert!(!fetch::part_path(&job.dest).exists());
}

#[tokio::test]
async fn the_size_and_header_check_refuses_a_file_that_is_not_gguf() {
    let mut body = fake_gguf(10_000);
    body[..4].copy_from_slice(b"<htm");
    let (base, _) = serve(Behaviour {
        body: body.clone(),
        honour_range: true,
        cut_first_at: None,
    })
    .await;
    let dir = tempfile::tempdir().expect("dir");
    let client = fetch::client().expect("client");
    let job_bad = job(&base, dir.path(), Check::Gguf { size: 10_000 });
    let err = fetch::download(&client, &job_bad, &mut NoProgress)
        .await
        .expect_err("not gguf");
    assert!(matches!(err, FetchError::NotGguf { .. }), "{err:?}");
    let job_size = job(&base, dir.path(), Check::Gguf { size: 9_999 });
    let err = fetch::download(&client, &job_size, &mut NoProgress)
        .await
        .expect_err("size");
    assert!(
        matches!(
            err,
            FetchError::SizeMismatch {
                expected: 9_999,
                actual: 10_000,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(!job_size.dest.exists());
}

#[tokio::test]
async fn resumes_a_partial_file_with_a_range_request() {
    let body = fake_gguf(200_000);
    let (base, seen) = serve(Behaviour {
        body: body.clone(),
        honour_range: true,
        cut_first_at: None,
    })
    .await;
    let dir = tempfile::tempdir().expect("dir");
    let job = job(
        &base,
        dir.path(),
        Check::Gguf {
            size: body.len() as u64,
        },
    );
    std::fs::write(fetch::part_path(&job.dest), &body[..123_456]).expect("part");
    let mut progress = Recorded::default();
    let got = fetch::download(&fetch::client().expect("client"), &job, &mut progress)
        .await
        .expect("download");
    assert_eq!(
        *seen.lock().expect("seen"),
        vec![Some("bytes=123456-".to_owned())]
    );
    assert_eq!(got.resumed_from, 123_456);
    // The hash covers the whole file, the part read back included.
    assert_eq!(got.sha256, sha(&body));
    assert_eq!(progress.begin, Some((Some(body.len() as u64), 123_456)));
    assert_eq!(std::fs::read(&job.dest).expect("installed"), body);
}

#[tokio::test]
async fn an_interrupted_download_keeps_its_part_and_the_next_one_finishes_it() {
    let body = fake_gguf(150_000);
    let (base, seen) = serve(Behaviour {
        body: body.clone(),
        honour_range: true,
        cut_first_at: Some(70_000),
    })
    .await;
    let dir = tempfile::tempdir().expect("dir");
    let job = job(&base, dir.path(), Check::Sha256(sha(&body)));
    let client = fetch::client().expect("client");
    let err = fetch::download(&client, &job, &mut NoProgress)
        .await
        .expect_err("cut off");
    let FetchError::Interrupted { kept, .. } = err else {
        panic!("unexpected {err:?}");
    };
    assert_eq!(kept, 70_000);
    assert!(!job.dest.exists());
    let part = fetch::part_path(&job.dest);
    assert_eq!(std::fs::read(&part).expect("part"), &body[..70_000]);

    let got = fetch::download(&client, &job, &mut NoProgress)
        .await
        .expect("resumed");
    assert_eq!(got.resumed_from, 70_000);
    assert_eq!(std::fs::read(&job.dest).expect("installed"), body);
    assert_eq!(
        *seen.lock().expect("seen"),
        vec![None, Some("bytes=70000-".to_owned())]
    );
}

#[tokio::test]
async fn a_server_that_ignores_range_replaces_the_part() {
    let body = fake_gguf(40_000);
    let (base, _) = serve(Behaviour {
        body: body.clone(),
        honour_range: false,
        cut_first_at: None,
    })
    .await;
    let dir = tempfile::tempdir().expect("dir");
    let job = job(&base, dir.path(), Check::Sha256(sha(&body)));
    // A stale part that must not end up in front of the full body.
    std::fs::write(fetch::part_path(&job.dest), b"GGUFstale").expect("part");
    let got = fetch::download(&fetch::client().expect("client"), &job, &mut NoProgress)
        .await
        .expect("download");
    assert_eq!(got.resumed_from, 0);
    assert_eq!(std::fs::read(&job.dest).expect("installed"), body);
}

#[tokio::test]
async fn a_part_as_long_as_the_file_starts_over_after_416() {
    let body = fake_gguf(20_000);
    let (base, seen) = serve(Behaviour {
        body: body.clone(),
        honour_range: true,
        cut_first_at: None,
    })
    .await;
    let dir = tempfile::tempdir().expect("dir");
    let job = job(&base, dir.path(), Check::Sha256(sha(&body)));
    std::fs::write(fetch::part_path(&job.dest), vec![0u8; 25_000]).expect("part");
    fetch::download(&fetch::client().expect("client"), &job, &mut NoProgress)
        .await
        .expect("download");
    assert_eq!(std::fs::read(&job.dest).expect("installed"), body);
    assert_eq!(
        *seen.lock().expect("seen"),
        vec![Some("bytes=25000-".to_owned()), None]
    );
}

#[tokio::test]
async fn not_found_is_reported_with_the_status() {
    let (base, _) = serve(Behaviour {
        body: fake_gguf(100),
        honour_range: true,
        cut_first_at: None,
    })
    .await;
    let dir = tempfile::tempdir().expect("dir");
    let mut job = job(&base, dir.path(), Check::Gguf { size: 100 });
    job.url = format!("{base}/Org/Other/resolve/main/missing.gguf");
    let err = fetch::download(&fetch::client().expect("client"), &job, &mut NoProgress)
        .await
        .expect_err("404");
    assert!(
        matches!(err, FetchError::Status { status: 404, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("404"), "{err}");
    assert!(!job.dest.exists());
}

#[tokio::test]
async fn a_refused_connection_names_the_offline_alternative() {
    // A port that was just free: nothing listens there any more.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let dir = tempfile::tempdir().expect("dir");
    let job = job(
        &format!("http://127.0.0.1:{port}"),
        dir.path(),
        Check::Gguf { size: 100 },
    );
    let err = fetch::download(&fetch::client().expect("client"), &job, &mut NoProgress)
        .await
        .expect_err("refused");
    assert!(matches!(err, FetchError::Unreachable { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("scripts/fetch-default-model fake-model"),
        "{msg}"
    );
    assert!(!job.dest.exists());
}
