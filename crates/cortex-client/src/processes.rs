//! The background-process routes (`/v1/sessions/{id}/processes`): list the
//! session's background commands, kill one.

use crate::{Client, ClientError, NO_BODY};
use cortex_api::ProcessList;
use cortex_protocol::{ProcessInfo, SessionId};
use http::Method;

impl Client {
    /// The session's background commands, running or ended.
    pub async fn processes(&self, id: &SessionId) -> Result<ProcessList, ClientError> {
        let path = format!("/v1/sessions/{id}/processes");
        self.call(Method::GET, &path, NO_BODY).await
    }

    /// Kill background command `process` (e.g. `bg1`) with its process
    /// group; answers how it stands then (a 404 for an unknown id).
    pub async fn kill_process(
        &self,
        id: &SessionId,
        process: &str,
    ) -> Result<ProcessInfo, ClientError> {
        let path = format!("/v1/sessions/{id}/processes/{process}");
        self.call(Method::DELETE, &path, NO_BODY).await
    }
}
