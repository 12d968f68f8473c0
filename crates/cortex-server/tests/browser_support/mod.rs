//! What the browser tests share: Debian's `chromium` driven headless over
//! WebDriver (`chromedriver` on a loopback port, spoken to with reqwest),
//! and a server that can be killed and started again on the same port and
//! store, as a restarted `cortex serve` would be.

#![allow(dead_code)]

use cortex_model::scripted::ScriptedProvider;
use cortex_runtime::InProcessProvider;
use cortex_server::{AppState, ModelChoice, Providers, ServerConfig, Tokens};
use cortex_store::{SqliteStore, Store};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const DRIVER: &str = "/usr/bin/chromedriver";
pub const TOKEN: &str = "token-alice";

/// The browser is there, or the calling test records a skip and returns.
pub fn browser_or_skip() -> bool {
    for path in [CHROMIUM, DRIVER] {
        if !Path::new(path).exists() {
            cortex_testkit::skip_current(
                "chromium",
                &format!("{path} is missing (apt-get install chromium chromium-driver)"),
            );
            return false;
        }
    }
    true
}

/// A server on its own runtime, so killing it (dropping the runtime) cuts
/// every connection at once, open event streams included.
pub struct Backend {
    runtime: Option<tokio::runtime::Runtime>,
    pub addr: std::net::SocketAddr,
    pub db: PathBuf,
    pub repo: PathBuf,
}

fn factory()
-> impl Fn(ModelChoice<'_>) -> Result<Providers, cortex_server::ProviderError> + Send + Sync + 'static
{
    move |choice| {
        let model = match choice {
            ModelChoice::New(Some(spec)) => {
                let path = spec.strip_prefix("scripted:").ok_or("scripted:PATH only")?;
                ScriptedProvider::from_file(Path::new(path)).map_err(|e| e.to_string())?
            }
            ModelChoice::New(None) | ModelChoice::Resume(_) => {
                ScriptedProvider::from_json(r#"{"responses":[{"text":"resumed and done"}]}"#)
                    .map_err(|e| e.to_string())?
            }
        };
        Ok(Providers {
            model: Arc::new(model),
            guests: Arc::new(InProcessProvider),
            guest_env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
        })
    }
}

impl Backend {
    /// Serve `db` (a SQLite file) on `addr` (port 0: any free one).
    pub fn start(db: &Path, repo: &Path, addr: std::net::SocketAddr) -> Backend {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let db_path = db.to_path_buf();
        let bound = runtime.block_on(async move {
            let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&db_path).expect("store"));
            let tokens = Tokens::new().with(TOKEN, "alice");
            let config = ServerConfig {
                heartbeat: Duration::from_millis(500),
                ..ServerConfig::default()
            };
            let state = AppState::new(store, tokens, Arc::new(factory()), config);
            state.recover_interrupted().await.expect("recover");
            let socket = tokio::net::TcpSocket::new_v4().expect("socket");
            socket.set_reuseaddr(true).expect("reuseaddr");
            socket.bind(addr).expect("bind");
            let listener = socket.listen(64).expect("listen");
            let bound = listener.local_addr().expect("addr");
            tokio::spawn(cortex_server::serve_tcp(
                listener,
                state,
                std::future::pending(),
            ));
            bound
        });
        Backend {
            runtime: Some(runtime),
            addr: bound,
            db: db.to_path_buf(),
            repo: repo.to_path_buf(),
        }
    }

    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Kill it: every task and connection ends now, as with a killed
    /// process; the store keeps what was written.
    pub fn kill(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }

    /// Kill it and serve the same store on the same port again.
    pub fn restart(&mut self) {
        self.kill();
        *self = Backend::start(&self.db.clone(), &self.repo.clone(), self.addr);
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A blocking HTTP client for the API and the driver (the tests run on
/// plain threads; the server has its own runtime).
pub struct Http {
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
}

impl Http {
    pub fn new() -> Http {
        Http {
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime"),
            // No kept connections: a restarted server must not be sent a
            // request on a connection of the one that was killed.
            client: reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .build()
                .expect("client"),
        }
    }

    pub fn call(
        &self,
        method: &str,
        url: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (u16, Value) {
        self.runtime.block_on(async {
            let method: reqwest::Method = method.parse().expect("method");
            let mut request = self.client.request(method, url);
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            if let Some(body) = body {
                request = request.json(&body);
            }
            let response = request.send().await.expect("send");
            let status = response.status().as_u16();
            let text = response.text().await.expect("body");
            let json = serde_json::from_str(&text).unwrap_or(Value::Null);
            (status, json)
        })
    }
}

/// A scripted model's spec for `script`, written under `dir`.
pub fn script(dir: &Path, name: &str, script: Value) -> String {
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, script.to_string()).expect("script");
    format!("scripted:{}", path.display())
}

/// Chromium under chromedriver; one WebDriver session.
pub struct Browser {
    driver: Child,
    url: String,
    http: Http,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Headless Chromium at `width`×`height`.
    pub fn launch(width: u32, height: u32) -> Browser {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .expect("port")
            .local_addr()
            .expect("addr")
            .port();
        let driver = Command::new(DRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver");
        let base = format!("http://127.0.0.1:{port}");
        let http = Http::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ready = http.runtime.block_on(async {
                http.client
                    .get(format!("{base}/status"))
                    .send()
                    .await
                    .is_ok()
            });
            if ready {
                break;
            }
            assert!(Instant::now() < deadline, "chromedriver did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        let profile = tempfile::tempdir().expect("profile");
        let mut args = vec![
            "--headless=new".to_owned(),
            "--disable-gpu".to_owned(),
            "--disable-dev-shm-usage".to_owned(),
            "--no-first-run".to_owned(),
            "--disable-extensions".to_owned(),
            "--hide-scrollbars".to_owned(),
            format!("--window-size={width},{height}"),
            format!("--user-data-dir={}", profile.path().display()),
        ];
        // Chromium's own sandbox refuses to start as root.
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            args.push("--no-sandbox".to_owned());
        }
        let (status, body) = http.call(
            "POST",
            &format!("{base}/session"),
            None,
            Some(json!({"capabilities": {"alwaysMatch": {
                "browserName": "chrome",
                "unhandledPromptBehavior": "ignore",
                "goog:chromeOptions": {"binary": CHROMIUM, "args": args},
            }}})),
        );
        assert_eq!(status, 200, "new WebDriver session: {body}");
        let id = body["value"]["sessionId"].as_str().expect("session id");
        Browser {
            driver,
            url: format!("{base}/session/{id}"),
            http,
            _profile: profile,
        }
    }

    fn command(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let (status, answer) = self
            .http
            .call(method, &format!("{}{path}", self.url), None, body);
        assert_eq!(status, 200, "{method} {path}: {answer}");
        answer["value"].clone()
    }

    pub fn goto(&self, url: &str) {
        self.command("POST", "/url", Some(json!({ "url": url })));
    }

    /// Run `script` (a function body; `arguments` are `args`) in the page.
    pub fn run(&self, script: &str, args: Value) -> Value {
        self.command(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": args})),
        )
    }

    /// Run an async `script`: it calls `arguments[arguments.length - 1]`
    /// with its answer.
    pub fn run_async(&self, script: &str, args: Value) -> Value {
        self.command(
            "POST",
            "/execute/async",
            Some(json!({"script": script, "args": args})),
        )
    }

    /// Wait (up to 30 s) until `script` returns something truthy; that.
    pub fn wait_for(&self, what: &str, script: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let value = self.run(script, json!([]));
            if !(value.is_null()
                || value == json!(false)
                || value == json!("")
                || value == json!(0))
            {
                return value;
            }
            if Instant::now() > deadline {
                let body = self.run("return document.body.innerText", json!([]));
                panic!(
                    "timed out waiting for {what}; the page shows:\n{}",
                    body.as_str().unwrap_or("")
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A real click on the element `css` selects (after it shows).
    pub fn click(&self, css: &str) {
        self.wait_for(
            css,
            &format!("return document.querySelector({css:?}) !== null"),
        );
        // In the middle of the viewport, clear of the sticky bar and composer.
        self.run(
            "document.querySelector(arguments[0]).scrollIntoView({block: 'center'})",
            json!([css]),
        );
        let found = self.command(
            "POST",
            "/element",
            Some(json!({"using": "css selector", "value": css})),
        );
        let id = found
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .expect("element id")
            .to_owned();
        self.command("POST", &format!("/element/{id}/click"), Some(json!({})));
    }

    /// Type `text` into the element `css` selects.
    pub fn type_into(&self, css: &str, text: &str) {
        self.wait_for(
            css,
            &format!("return document.querySelector({css:?}) !== null"),
        );
        let found = self.command(
            "POST",
            "/element",
            Some(json!({"using": "css selector", "value": css})),
        );
        let id = found
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .expect("element id")
            .to_owned();
        self.command(
            "POST",
            &format!("/element/{id}/value"),
            Some(json!({ "text": text })),
        );
    }

    /// The window's size.
    pub fn resize(&self, width: u32, height: u32) {
        self.command(
            "POST",
            "/window/rect",
            Some(json!({"width": width, "height": height})),
        );
    }

    /// With `CORTEX_SCREENSHOTS=DIR`, `DIR/NAME-desktop.png` (1280×900)
    /// and `DIR/NAME-phone.png` (390×844) of the page as it is.
    pub fn screenshots(&self, name: &str) {
        let Some(dir) = std::env::var_os("CORTEX_SCREENSHOTS") else {
            return;
        };
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir).expect("screenshot folder");
        for (width, height, kind) in [(390, 844, "phone"), (1280, 900, "desktop")] {
            self.resize(width, height);
            self.run("window.scrollTo(0, document.body.scrollHeight)", json!([]));
            std::thread::sleep(Duration::from_millis(300));
            self.screenshot(&dir.join(format!("{name}-{kind}.png")));
        }
    }

    /// With `CORTEX_WEB_TIMINGS=1`, print the page's first contentful
    /// paint and the bytes it fetched (what docs/BENCHMARKS.md reports;
    /// never asserted: tests assert no time).
    pub fn print_timings(&self, what: &str) {
        if std::env::var_os("CORTEX_WEB_TIMINGS").is_none() {
            return;
        }
        let timings = self.run(
            "const paint = performance.getEntriesByName('first-contentful-paint')[0];
             const nav = performance.getEntriesByType('navigation')[0];
             const res = performance.getEntriesByType('resource');
             return {fcp_ms: paint ? paint.startTime : null,
                     dom_content_loaded_ms: nav.domContentLoadedEventEnd,
                     resources: res.length,
                     bytes: nav.encodedBodySize + res.reduce((n, r) => n + r.encodedBodySize, 0)};",
            json!([]),
        );
        println!("TIMINGS {what}: {timings}");
    }

    /// A PNG of the viewport, written to `path`.
    pub fn screenshot(&self, path: &Path) {
        use base64::Engine;
        let png = self.command("GET", "/screenshot", None);
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(png.as_str().expect("base64"))
            .expect("png");
        std::fs::write(path, bytes).expect("write screenshot");
    }

    /// No open alert and no payload ran: the page's globals are clean.
    pub fn assert_no_script_ran(&self) {
        let (status, alert) =
            self.http
                .call("GET", &format!("{}/alert/text", self.url), None, None);
        assert_ne!(status, 200, "an alert opened: {alert}");
        let ran = self.run(
            "return window.xssRan === undefined ? null : String(window.xssRan)",
            json!([]),
        );
        assert!(ran.is_null(), "an XSS payload ran: window.xssRan = {ran}");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.http.call("DELETE", &self.url, None, None);
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
