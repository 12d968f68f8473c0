//! Noticing that the terminal went away.
//!
//! A UI whose terminal is gone must end, but neither of the usual signs is
//! reliable: SIGHUP goes only to the terminal's session leader, which need
//! not pass it on (a shell with `trap '' HUP`, `nohup`, some multiplexers),
//! and crossterm's reader spins on a hung-up terminal (`read` returning 0
//! or `EIO`) instead of reporting it (crossterm-rs/crossterm#793). So a
//! thread of its own waits in `poll(2)` for hang-up on the terminal's
//! descriptors: with no events requested, `poll` sleeps without any CPU
//! until the kernel reports `POLLHUP`, `POLLERR` or `POLLNVAL`, which a
//! live terminal never does.

use std::os::fd::RawFd;
use tokio::sync::oneshot;

/// Watch stdin and stdout; the receiver completes once either hangs up.
///
/// The thread is detached: it ends after reporting, or with the process.
/// If it cannot be started, the receiver never completes (the UI then
/// relies on SIGHUP alone, as before).
pub fn watch() -> oneshot::Receiver<()> {
    let (tx, rx) = oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("cortex-tui-hangup".into())
        .spawn(move || {
            wait_for_hangup(&[libc::STDIN_FILENO, libc::STDOUT_FILENO]);
            let _ = tx.send(());
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot watch the terminal for hang-up: {e}");
    }
    rx
}

/// Block until one of `fds` reports hang-up, an error or is not open.
fn wait_for_hangup(fds: &[RawFd]) {
    let mut polled: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: 0,
            revents: 0,
        })
        .collect();
    loop {
        // SAFETY: `polled` is a valid, exclusively borrowed array of
        // `polled.len()` pollfd records for the duration of the call.
        let ready = unsafe { libc::poll(polled.as_mut_ptr(), polled.len() as libc::nfds_t, -1) };
        if ready < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            // Polling itself failed: treat it as losing the terminal rather
            // than leaving a UI that can no longer tell.
            return;
        }
        let gone = libc::POLLHUP | libc::POLLERR | libc::POLLNVAL;
        if polled.iter().any(|p| p.revents & gone != 0) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_closed_peer_is_a_hang_up() {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let (read, write) = (fds[0], fds[1]);
        let waiter = std::thread::spawn(move || wait_for_hangup(&[read]));
        // SAFETY: `write` is the pipe's write end, owned here and closed once.
        unsafe { libc::close(write) };
        waiter
            .join()
            .expect("the waiter returns once the writer is gone");
        // SAFETY: `read` is owned here and closed once.
        unsafe { libc::close(read) };
    }

    #[test]
    fn an_open_peer_is_not_a_hang_up() {
        let (reader, mut writer) = std::io::pipe().expect("pipe");
        let fd = reader.as_raw_fd();
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            wait_for_hangup(&[fd]);
            let _ = done_tx.send(());
        });
        // Readable data is not hang-up: the waiter must still be waiting.
        std::io::Write::write_all(&mut writer, b"x").expect("write");
        assert!(
            done_rx
                .recv_timeout(std::time::Duration::from_millis(300))
                .is_err(),
            "a live descriptor with data is not a hang-up"
        );
        drop(writer);
        done_rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("closing the writer is");
        drop(reader);
    }
}
