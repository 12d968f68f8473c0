//! The web client end to end in a real browser: Debian's Chromium, headless,
//! driven over WebDriver against a server with scripted models. Each test
//! starts its own server and browser; a lock runs them one at a time (two
//! Chromiums on a small machine slow each other more than they gain).
//!
//! `CORTEX_SCREENSHOTS=DIR` also writes screenshots of the main views at
//! phone and desktop widths into DIR (how docs/web/*.png were made).

mod browser_support;

use browser_support::{Backend, Browser, Http, TOKEN, browser_or_skip, script};
use serde_json::{Value, json};
use std::sync::Mutex;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

struct Fixture {
    _dir: tempfile::TempDir,
    dir: std::path::PathBuf,
    backend: Backend,
    http: Http,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().expect("dir");
        let root = dir.path().to_path_buf();
        let repo = root.join("repo");
        std::fs::create_dir(&repo).expect("repo");
        std::fs::write(repo.join("a.txt"), "alpha\n").expect("write");
        let backend = Backend::start(
            &root.join("cortex.db"),
            &repo,
            "127.0.0.1:0".parse().expect("addr"),
        );
        Fixture {
            _dir: dir,
            dir: root,
            backend,
            http: Http::new(),
        }
    }

    fn api(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        self.http.call(
            method,
            &format!("{}{path}", self.backend.base()),
            Some(TOKEN),
            body,
        )
    }

    /// A session of the token's principal, its model playing `responses`.
    fn session(&self, name: &str, extra: Value, responses: Value) -> String {
        let model = script(&self.dir, name, json!({ "responses": responses }));
        let mut body = json!({"repository": self.backend.repo, "model": model});
        if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
            body.extend(extra.clone());
        }
        let (status, view) = self.api("POST", "/v1/sessions", Some(body));
        assert_eq!(status, 201, "{view}");
        view["id"].as_str().expect("id").to_owned()
    }

    fn turn(&self, id: &str, message: &str) {
        let (status, body) = self.api(
            "POST",
            &format!("/v1/sessions/{id}/turns"),
            Some(json!({ "message": message })),
        );
        assert_eq!(status, 202, "{body}");
    }

    /// The browser on session `id`, logged in with the token (put where
    /// the log-in form puts it).
    fn open(&self, browser: &Browser, id: &str) {
        browser.goto(&format!("{}/", self.backend.base()));
        browser.run(
            "sessionStorage.setItem('cortex.token', arguments[0])",
            json!([TOKEN]),
        );
        browser.goto(&format!("{}/?#s/{id}", self.backend.base()));
        browser.wait_for(
            "the stream",
            "return document.body.dataset.stream === 'live'",
        );
    }

    fn last_seq(&self, id: &str) -> u64 {
        let (status, view) = self.api("GET", &format!("/v1/sessions/{id}"), None);
        assert_eq!(status, 200, "{view}");
        view["last_seq"].as_u64().expect("last_seq")
    }
}

fn text_of(browser: &Browser, css: &str) -> String {
    browser
        .run(
            "return [...document.querySelectorAll(arguments[0])].map(e => e.textContent).join('\\n')",
            json!([css]),
        )
        .as_str()
        .unwrap_or("")
        .to_owned()
}

fn count(browser: &Browser, css: &str) -> u64 {
    browser
        .run(
            "return document.querySelectorAll(arguments[0]).length",
            json!([css]),
        )
        .as_u64()
        .expect("count")
}

#[test]
fn log_in_send_a_turn_see_it_stream_as_markdown_and_stop_it() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !browser_or_skip() {
        return;
    }
    let fx = Fixture::new();
    let id = fx.session(
        "stream",
        json!({}),
        json!([{
            "text": "Hello **bold** world\n\n- one\n- two\n\n[docs](https://example.com/docs) and [bad](javascript:window.xssRan=1)\n\n```\nfn main() {}\n```\n\nstill working",
            "hang": true
        }]),
    );
    let browser = Browser::launch(1280, 900);
    browser.goto(&format!("{}/", fx.backend.base()));
    browser.type_into("input[name=token]", "wrong");
    browser.click("form.login button[type=submit]");
    browser.wait_for(
        "the refusal",
        "return document.querySelector('form.login .error')?.textContent.includes('not accepted')",
    );
    browser.run(
        "document.querySelector('input[name=token]').value = ''",
        json!([]),
    );
    browser.type_into("input[name=token]", TOKEN);
    browser.click("form.login button[type=submit]");
    browser.click(&format!("a.session[data-id='{id}']"));
    browser.wait_for(
        "the stream",
        "return document.body.dataset.stream === 'live'",
    );
    assert!(
        !browser
            .run("return location.href", json!([]))
            .to_string()
            .contains(TOKEN)
    );

    browser.type_into("textarea[name=message]", "say hello");
    browser.click("button.send");
    // The text shows while the turn still runs: rendered from the deltas.
    browser.wait_for(
        "the streamed text",
        "return document.querySelector('.row.assistant')?.textContent.includes('still working')",
    );
    assert_eq!(text_of(&browser, ".row.assistant strong"), "bold");
    assert_eq!(text_of(&browser, ".row.assistant li"), "one\ntwo");
    assert_eq!(text_of(&browser, ".row.assistant pre.code"), "fn main() {}");
    let links = browser.run(
        "return [...document.querySelectorAll('.row.assistant a')].map(a => [a.getAttribute('href'), a.rel, a.textContent])",
        json!([]),
    );
    assert_eq!(
        links,
        json!([["https://example.com/docs", "noopener noreferrer", "docs"]]),
        "only the http(s) link is a link"
    );
    assert!(
        text_of(&browser, ".row.assistant").contains("bad"),
        "the other stays text"
    );
    assert_eq!(count(&browser, ".row.mark.end"), 0, "the turn still runs");

    browser.click("button.stop");
    browser.wait_for(
        "the stop",
        "return document.querySelector('.row.mark.end.stopped') !== null",
    );
    browser.wait_for(
        "Stop to hide",
        "return document.querySelector('button.stop').hidden",
    );
    browser.assert_no_script_ran();
}

#[test]
fn a_diff_renders_and_allow_resumes_a_waiting_turn() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !browser_or_skip() {
        return;
    }
    let fx = Fixture::new();
    let id = fx.session(
        "allow",
        json!({"approval": "ask"}),
        json!([
            {"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi > allowed.txt"}}]},
            {"tool_calls": [{"name": "edit_file", "arguments": {"path": "a.txt", "old_string": "alpha", "new_string": "beta"}}]},
            {"text": "Edited."}
        ]),
    );
    let browser = Browser::launch(1280, 900);
    fx.open(&browser, &id);
    fx.turn(&id, "write it");
    browser.wait_for(
        "the approval",
        "return document.querySelector('.row.approval button.allow') !== null",
    );
    assert!(text_of(&browser, ".row.approval pre.summary").contains("echo hi > allowed.txt"));
    assert!(
        !fx.backend.repo.join("allowed.txt").exists(),
        "it waits for the answer"
    );
    browser.click(".row.approval button.allow");
    // An edit may ask too under `ask`: allow whatever else asks.
    let ended = "return document.querySelector('.row.mark.end') !== null";
    loop {
        let state = browser.wait_for(
            "the turn's end or another approval",
            "return document.querySelector('.row.mark.end') ? 'end' : (document.querySelector('.row.approval:not(.settled) button.allow') ? 'ask' : null)",
        );
        if state == json!("end") {
            break;
        }
        browser.click(".row.approval:not(.settled) button.allow");
    }
    assert!(browser.run(ended, json!([])).as_bool().expect("bool"));
    assert!(text_of(&browser, ".row.mark.end").contains("Turn complete"));
    assert!(
        fx.backend.repo.join("allowed.txt").exists(),
        "Allow ran the call"
    );
    assert!(text_of(&browser, ".row.approval .outcome").contains("allow"));
    assert_eq!(text_of(&browser, "pre.diff .d-del"), "-alpha");
    assert_eq!(text_of(&browser, "pre.diff .d-add"), "+beta");
    browser.run(
        "document.querySelectorAll('pre.diff').forEach(d => d.scrollIntoView())",
        json!([]),
    );
    browser.screenshots("diff");
    // Tool output is folded until opened.
    assert_eq!(count(&browser, ".row.tool details[open]"), 0);
    browser.click(".row.tool summary");
    assert_eq!(count(&browser, ".row.tool details[open]"), 1);
    browser.assert_no_script_ran();
}

#[test]
fn a_plan_draws_its_diagram_as_an_svg_and_accept_runs_it() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !browser_or_skip() {
        return;
    }
    let fx = Fixture::new();
    let plan = "# Plan\n1. Read a.txt\n2. Rewrite it\n\n```mermaid\nflowchart TD\n  A[\"<img src=x onerror=window.xssRan='mermaid'>\"] --> B[Rewrite]\n  click A call alert(1)\n```\n";
    let id = fx.session(
        "plan",
        json!({"mode": "plan"}),
        json!([
            {"tool_calls": [{"name": "plan", "arguments": {"title": "Rewrite a.txt", "markdown": plan}}]},
            {"text": "Proposed."},
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "done\n"}}]},
            {"text": "Implemented."}
        ]),
    );
    let browser = Browser::launch(1280, 900);
    fx.open(&browser, &id);
    assert_eq!(
        browser.run("return typeof window.mermaid", json!([])),
        json!("undefined"),
        "mermaid loads only when a diagram shows"
    );
    fx.turn(&id, "plan the rewrite");
    browser.wait_for(
        "the diagram",
        "return document.querySelector('.row.plan img.diagram-svg')?.complete",
    );
    let svg = browser.run_async(
        "const done = arguments[arguments.length - 1];
         const img = document.querySelector('.row.plan img.diagram-svg');
         const prefix = 'data:image/svg+xml;charset=utf-8,';
         const t = img.src.startsWith(prefix) ? decodeURIComponent(img.src.slice(prefix.length)) : '';
         done([img.src.slice(0, 5), img.naturalWidth > 0, t.slice(0, 4), t.includes('Rewrite')]);",
        json!([]),
    );
    assert_eq!(
        svg,
        json!(["data:", true, "<svg", true]),
        "an SVG image of the diagram"
    );
    assert!(text_of(&browser, ".row.plan li").contains("Read a.txt"));
    browser.wait_for(
        "the end of the turn",
        "return document.querySelector('.row.mark.end') !== null",
    );
    browser.click(".row.plan button.accept");
    browser.wait_for(
        "the accepted plan's turn",
        "return document.querySelectorAll('.row.mark.end').length === 2",
    );
    assert!(text_of(&browser, ".row.plan .outcome").contains("Accepted"));
    assert!(text_of(&browser, ".row.mark.mode").contains("plan → agent"));
    assert_eq!(
        std::fs::read_to_string(fx.backend.repo.join("a.txt")).expect("a.txt"),
        "done\n"
    );
    browser.assert_no_script_ran();
}

#[test]
fn a_reconnect_after_a_server_restart_misses_no_event() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !browser_or_skip() {
        return;
    }
    let mut fx = Fixture::new();
    let id = fx.session("first", json!({}), json!([{"text": "first answer"}]));
    let browser = Browser::launch(1280, 900);
    fx.open(&browser, &id);
    fx.turn(&id, "one");
    browser.wait_for(
        "the first turn",
        "return document.querySelectorAll('.row.mark.end').length === 1",
    );

    fx.backend.restart();
    // A turn while the page is cut off: the resumed session's model answers.
    fx.turn(&id, "two");
    browser.wait_for(
        "the second turn",
        "return document.querySelectorAll('.row.mark.end').length === 2",
    );
    browser.wait_for(
        "the stream",
        "return document.body.dataset.stream === 'live'",
    );
    let last = fx.last_seq(&id);
    let seen = browser.wait_for(
        "every event",
        &format!("const r = document.querySelector('.timeline'); return Number(r.dataset.last) === {last} && [Number(r.dataset.applied), Number(r.dataset.last)]"),
    );
    assert_eq!(seen, json!([last, last]), "each event once, none missed");
    assert_eq!(text_of(&browser, ".row.user .text"), "one\ntwo");
    assert!(text_of(&browser, ".row.assistant").contains("resumed and done"));
}

#[test]
fn a_share_link_shows_the_timeline_and_cannot_act() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !browser_or_skip() {
        return;
    }
    let fx = Fixture::new();
    let id = fx.session("shared", json!({}), json!([{"text": "shared answer"}]));
    fx.turn(&id, "hello reviewer");
    let (status, made) = fx.api(
        "POST",
        &format!("/v1/sessions/{id}/shares"),
        Some(json!({})),
    );
    assert_eq!(status, 201, "{made}");
    let token = made["token"].as_str().expect("token").to_owned();
    let link = made["link"].as_str().expect("link");

    let browser = Browser::launch(390, 844);
    browser.goto(&format!("{}{link}", fx.backend.base()));
    browser.wait_for(
        "the shared timeline",
        "return document.querySelector('.row.mark.end') !== null",
    );
    assert!(text_of(&browser, ".row.assistant").contains("shared answer"));
    let href = browser.run("return location.href", json!([]));
    assert!(
        !href.as_str().expect("href").contains(&token),
        "the token leaves the address bar: {href}"
    );
    assert_eq!(count(&browser, "form.composer"), 0, "no composer");
    browser.print_timings("a shared timeline, loaded cold");
    browser.screenshots("share");
    assert_eq!(
        count(&browser, "button"),
        1,
        "only Log out: {}",
        text_of(&browser, "button")
    );
    // Even by hand, with the stored token, the API refuses to act.
    let answer = browser.run_async(
        "const done = arguments[arguments.length - 1];
         const share = JSON.parse(sessionStorage.getItem('cortex.share'));
         fetch(`/v1/sessions/${share.session}/turns`, {method: 'POST',
           headers: {'Authorization': `Bearer ${share.token}`, 'Content-Type': 'application/json'},
           body: JSON.stringify({message: 'rm -rf /'})}).then(r => done(r.status));",
        json!([]),
    );
    assert_eq!(answer, json!(403));
    assert_eq!(
        fx.last_seq(&id),
        browser
            .run(
                "return Number(document.querySelector('.timeline').dataset.last)",
                json!([])
            )
            .as_u64()
            .expect("seq")
    );
}

#[test]
fn payloads_in_titles_model_text_tool_output_and_file_names_stay_text() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !browser_or_skip() {
        return;
    }
    let fx = Fixture::new();
    let name = "<img src=x onerror=window.xssRan='file'>.txt";
    let id = fx.session(
        "xss",
        json!({}),
        json!([
            {"text": "<script>window.xssRan='script'</script><img src=x onerror=\"window.xssRan='text'\"> [x](javascript:window.xssRan='link') <b onclick=alert(1)>b</b>",
             "tool_calls": [{"name": "write_file", "arguments": {"path": name, "content": "<svg onload=window.xssRan='content'></svg>\n"}}]},
            {"tool_calls": [{"name": "read_file", "arguments": {"path": name}}]},
            {"text": "# <iframe src=javascript:window.xssRan='heading'>\n\n| <img src=x onerror=alert(2)> |\n|---|\n| `<script>alert(3)</script>` |"}
        ]),
    );
    fx.turn(&id, "<img src=x onerror=window.xssRan='title'>");
    let browser = Browser::launch(1280, 900);
    browser.goto(&format!("{}/", fx.backend.base()));
    browser.run(
        "sessionStorage.setItem('cortex.token', arguments[0])",
        json!([TOKEN]),
    );
    browser.goto(&format!("{}/?#", fx.backend.base()));
    browser.wait_for(
        "the list",
        "return document.querySelector('a.session') !== null",
    );
    assert!(
        text_of(&browser, "a.session .s-title")
            .contains("<img src=x onerror=window.xssRan='title'>")
    );
    browser.click("a.session");
    browser.wait_for(
        "the turn's end",
        "return document.querySelector('.row.mark.end') !== null",
    );
    for row in browser
        .run(
            "return [...document.querySelectorAll('.row.tool summary')].map(s => s.textContent)",
            json!([]),
        )
        .as_array()
        .expect("rows")
    {
        assert!(row.as_str().expect("text").contains(name), "{row}");
    }
    browser.run(
        "document.querySelectorAll('.row.tool details').forEach(d => d.open = true)",
        json!([]),
    );
    let page = text_of(&browser, "main");
    for shown in [
        "<script>window.xssRan='script'</script>",
        "onerror=\"window.xssRan='text'\"",
        "<svg onload=window.xssRan='content'></svg>",
        "<iframe src=javascript:window.xssRan='heading'>",
        "<script>alert(3)</script>",
    ] {
        assert!(
            page.contains(shown),
            "{shown} is not shown as text in:\n{page}"
        );
    }
    assert!(text_of(&browser, "pre.diff").contains("<svg onload"));
    assert_eq!(
        count(
            &browser,
            "main img, main script, main iframe, main svg, main b, main a[href^='javascript']"
        ),
        0
    );
    browser.assert_no_script_ran();
}

#[test]
fn a_goal_shows_its_steps_a_reject_sends_feedback_and_the_mode_switches() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !browser_or_skip() {
        return;
    }
    let fx = Fixture::new();
    let steps = |done: [bool; 2]| json!([{"title": "read a.txt", "done": done[0]}, {"title": "plan the rewrite", "done": done[1]}]);
    let plan = |v: &str| {
        format!(
            "# Plan {v}\n1. Read a.txt\n\n```mermaid\nflowchart LR\n  R[Read] --> W[Write]\n```\n"
        )
    };
    let id = fx.session(
        "goal",
        json!({}),
        json!([
            {"tool_calls": [{"name": "goal", "arguments": {"steps": steps([true, false])}}]},
            {"text": "Two steps."},
            {"tool_calls": [{"name": "plan", "arguments": {"title": "First", "markdown": plan("v1")}}]},
            {"text": "Proposed v1."},
            {"tool_calls": [{"name": "plan", "arguments": {"title": "Second", "markdown": plan("v2")}}]},
            {"text": "Proposed v2."}
        ]),
    );
    let browser = Browser::launch(1280, 900);
    fx.open(&browser, &id);
    // A budget of one turn: the goal pauses after it, so no continuation
    // takes the plan's responses.
    let (status, body) = fx.api(
        "PUT",
        &format!("/v1/sessions/{id}/goal"),
        Some(json!({"objective": "rewrite a.txt", "budget": {"turns": 1}})),
    );
    assert_eq!(status, 200, "{body}");
    browser.wait_for(
        "the goal's steps",
        "return document.querySelectorAll('.goal li.step').length === 2",
    );
    assert_eq!(text_of(&browser, ".goal li.step.done"), "read a.txt");
    assert!(text_of(&browser, ".goal .goal-head").contains("rewrite a.txt"));
    browser.wait_for(
        "the goal's pause",
        "return document.querySelector('.goal .chip.paused') !== null",
    );
    browser.wait_for(
        "the end of the turn",
        "return document.querySelector('.row.mark.end') !== null",
    );

    // The mode switch, then a turn from the composer.
    browser.click("select[name=mode] option[value=plan]");
    browser.wait_for(
        "the mode change",
        "return document.querySelector('.row.mark.mode')?.textContent.includes('agent → plan')",
    );
    let (_, view) = fx.api("GET", &format!("/v1/sessions/{id}"), None);
    assert_eq!(view["mode"], "plan");
    browser.type_into("textarea[name=message]", "plan the rewrite");
    browser.click("button.send");
    browser.wait_for(
        "the plan",
        "return document.querySelector('.row.plan button.reject') !== null",
    );
    browser.wait_for(
        "the turn's end",
        "return document.querySelectorAll('.row.mark.end').length === 2",
    );

    // Reject without feedback asks for it; with it, the next turn answers.
    browser.click(".row.plan button.reject");
    assert_eq!(count(&browser, ".feedback.needed"), 1);
    browser.type_into(".row.plan .feedback", "also check the result");
    browser.click(".row.plan button.reject");
    browser.wait_for(
        "plan v2",
        "return document.querySelectorAll('.row.plan').length === 2",
    );
    assert!(text_of(&browser, ".row.plan .outcome").contains("Rejected: also check the result"));
    assert!(text_of(&browser, ".row.user .text").contains("also check the result"));
    browser.wait_for(
        "the second diagram",
        "return document.querySelectorAll('.row.plan img.diagram-svg').length === 2",
    );
    browser.screenshots("plan");

    browser.wait_for(
        "the third turn's end",
        "return document.querySelectorAll('.row.mark.end').length === 3",
    );

    browser.goto(&format!("{}/?#", fx.backend.base()));
    browser.wait_for(
        "the list",
        "return document.querySelector('a.session .chip.goal') !== null",
    );
    assert!(text_of(&browser, "a.session .chip.goal").contains("rewrite a.txt"));
    browser.type_into("input.search", "no-such-session");
    browser.wait_for(
        "the search",
        "return document.querySelectorAll('a.session').length === 0",
    );
    browser.run("const s = document.querySelector('input.search'); s.value = ''; s.dispatchEvent(new Event('input'))", json!([]));
    browser.screenshots("sessions");
    browser.assert_no_script_ran();
}
