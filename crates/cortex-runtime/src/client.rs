use crate::RuntimeError;
use cortex_protocol::{GuestReply, ToolName};

/// A connected guest.
pub struct Guest {
    _private: (),
}

/// Replies to one call: zero or more `Delta`, then one `Result`. `None`
/// before a `Result` means the guest died mid-call.
pub struct CallHandle {
    rx: tokio::sync::mpsc::UnboundedReceiver<GuestReply>,
}

impl CallHandle {
    pub async fn next(&mut self) -> Option<GuestReply> {
        self.rx.recv().await
    }
}

impl Guest {
    /// Wrap a connection to an agent. `process` is the child to kill on close
    /// (None for in-process or remote agents).
    pub fn connect<R, W>(reader: R, writer: W, process: Option<tokio::process::Child>) -> Guest
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let _ = (reader, writer, process);
        unimplemented!()
    }

    pub async fn call(
        &self,
        name: ToolName,
        args: serde_json::Value,
    ) -> Result<CallHandle, RuntimeError> {
        let _ = (name, args);
        unimplemented!()
    }

    pub async fn set_capabilities(&self, writable: bool, bash: bool) -> Result<(), RuntimeError> {
        let _ = (writable, bash);
        unimplemented!()
    }

    /// Kill every running command's process group.
    pub async fn stop(&self) -> Result<(), RuntimeError> {
        unimplemented!()
    }

    pub async fn ping(&self) -> Result<(), RuntimeError> {
        unimplemented!()
    }

    /// False once the connection is closed or the process exited.
    pub fn is_alive(&self) -> bool {
        unimplemented!()
    }

    /// Stop everything, close the connection, reap the process.
    pub async fn close(self) {
        unimplemented!()
    }
}
