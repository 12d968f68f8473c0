//! `web_fetch` under the session's network policy, and what a guest tool's
//! images become for the session's model.
//!
//! Where a fetch runs: with the network on, in the guest (`GuestOp::WebFetch`),
//! from its own network namespace, which re-checks every hop; with the
//! network off, the guest's namespace has only its own loopback, so a host on
//! the user's allow-list (`[network] allow`) is fetched here, by the harness,
//! with the same plain client (no cookies, no credentials, no proxy
//! variables, every hop re-checked and held to the allow-list), and any other
//! host is refused before anything runs. The tool is offered only where it
//! can reach something: the network on, or an allow-list.

use crate::Session;
use crate::answer::Answer;
use cortex_protocol::{Attachment, NetworkPolicy, ToolArgs, ToolOutcome, WebFetchArgs};
use cortex_runtime::CallHandle;
use cortex_tools::web::{AllowList, BadAllowEntry, FetchPolicy, SearchApi, Target};
use tokio_util::sync::CancellationToken;

/// What the user's configuration lets `web_fetch` reach besides what the
/// network policy does.
#[derive(Debug, Clone, Default)]
pub struct WebAccess {
    allow: AllowList,
    search: Option<SearchApi>,
}

impl WebAccess {
    /// The `[network] allow` entries (`docs.rs`, `*.rust-lang.org`,
    /// `127.0.0.1:8080`); an entry that is not a host is the error.
    pub fn new<S: AsRef<str>>(allow: &[S]) -> Result<WebAccess, BadAllowEntry> {
        Ok(WebAccess {
            allow: AllowList::parse(allow)?,
            search: None,
        })
    }

    /// Whether `web_search` has an API.
    pub fn has_search(&self) -> bool {
        self.search.is_some()
    }

    /// The same, with `web_search` through `api`.
    pub fn with_search(mut self, api: SearchApi) -> WebAccess {
        self.search = Some(api);
        self
    }
}

impl Session {
    /// Set what `web_fetch` may reach besides the network policy (the
    /// user's allow-list); from the next model request on.
    pub fn set_web_access(&mut self, access: WebAccess) {
        self.web = access;
    }

    /// Whether `web_fetch` can reach anything in this session: the network
    /// is on, or the user allow-listed hosts.
    pub(crate) fn web_offered(&self) -> bool {
        self.sandbox.network == NetworkPolicy::On || !self.web.allow.is_empty()
    }

    /// Whether `web_search` is offered: a search API is configured.
    pub(crate) fn search_offered(&self) -> bool {
        self.web.search.is_some()
    }

    /// Why a `web_fetch` call is refused before it runs: a URL that is no
    /// http(s) URL, or a host off the allow-list while the network is off.
    pub(crate) fn web_refusal(&self, args: &ToolArgs) -> Option<String> {
        let args = match args {
            ToolArgs::WebFetch(args) => args,
            ToolArgs::WebSearch(_) if !self.search_offered() => {
                return Some(
                    "web_search is not available: no search API is configured ([web_search] \
                     url in config.toml); do not retry it"
                        .to_owned(),
                );
            }
            _ => return None,
        };
        let target = match Target::parse(&args.url) {
            Ok(target) => target,
            Err(e) => return Some(e.to_string()),
        };
        if self.sandbox.network == NetworkPolicy::On
            || self.web.allow.allows(&target.host, target.port)
        {
            return None;
        }
        Some(format!(
            "web_fetch is refused: the network is off for this session and {} is not on the \
             allow-list ([network] allow in config.toml); do not retry it, work from what the \
             workspace has",
            target.host
        ))
    }

    /// Whether a `web_fetch` runs here rather than in the guest: the
    /// network is off, so the guest's namespace reaches nothing outside it.
    pub(crate) fn fetches_here(&self) -> bool {
        self.sandbox.network == NetworkPolicy::Off
    }

    /// The allow-list as the guest is sent it.
    pub(crate) fn allow_entries(&self) -> Vec<String> {
        self.web.allow.entries().to_vec()
    }

    /// Start a guest call (a `web_fetch` with the allow-list); a fetch that
    /// runs here, or a guest that is not there or fails, is answered
    /// instead.
    pub(crate) async fn start_call(
        &self,
        args: ToolArgs,
        cancel: &CancellationToken,
    ) -> Result<CallHandle, Answer> {
        match &args {
            ToolArgs::WebFetch(a) if self.fetches_here() => {
                return Err(self.fetch_here(a.clone(), cancel).await);
            }
            ToolArgs::WebSearch(a) => return Err(self.search_here(&a.query, cancel).await),
            _ => {}
        }
        let Some(guest) = &self.guest else {
            return Err(Answer::error("the guest is not attached"));
        };
        let called = match args {
            ToolArgs::WebFetch(a) => guest.web_fetch(a, self.allow_entries()).await,
            args => guest.call(args).await,
        };
        called.map_err(|e| Answer::error(format!("the guest failed: {e}")))
    }

    /// A `web_fetch` that passed the gates, run here ([`Session::fetches_here`]):
    /// allow-listed hosts only, at every hop. Stop cancels it.
    pub(crate) async fn fetch_here(
        &self,
        args: WebFetchArgs,
        cancel: &CancellationToken,
    ) -> Answer {
        let policy = FetchPolicy {
            allow: self.web.allow.clone(),
            only_allowed: true,
        };
        let fetched = tokio::select! {
            fetched = cortex_tools::web::fetch(&args, &policy) => fetched,
            () = cancel.cancelled() => return Answer::stopped(),
        };
        match fetched {
            Ok(page) if page.is_success() => Answer::ok(page.render(args.max_bytes)),
            Ok(page) => Answer::error(page.render(args.max_bytes)),
            Err(e) => Answer::error(e.to_string()),
        }
    }

    /// A `web_search` through the configured API. Stop cancels it.
    async fn search_here(&self, query: &str, cancel: &CancellationToken) -> Answer {
        let Some(api) = &self.web.search else {
            return Answer::error("no search API is configured");
        };
        tokio::select! {
            found = api.search(query) => match found {
                Ok(results) => Answer::ok(results),
                Err(e) => Answer::error(e.to_string()),
            },
            () = cancel.cancelled() => Answer::stopped(),
        }
    }

    /// The answer of a guest tool's outcome: its image goes to a model
    /// that takes images, and a model that does not is told so instead.
    pub(crate) fn answer_of(&self, outcome: ToolOutcome) -> Answer {
        let mut answer = Answer::with_status(outcome.status.into(), outcome.output);
        answer.diff = outcome.diff;
        let images = outcome
            .attachments
            .into_iter()
            .filter(|a| matches!(a, Attachment::Image { .. }));
        answer.attachments = images.collect();
        if !answer.attachments.is_empty() {
            if self.model.takes_images() {
                answer.output.push_str("; it is attached as an image");
            } else {
                answer.attachments.clear();
                answer
                    .output
                    .push_str("; this model does not take images, so only this is said of it");
            }
        }
        answer
    }
}
