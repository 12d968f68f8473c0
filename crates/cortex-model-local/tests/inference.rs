//! Real inference on small GGUF models.
//!
//! Models come from `$CORTEX_TEST_MODEL` (SmolLM2-135M-class, for the engine
//! tests), `$CORTEX_TEST_TOOL_MODEL` (Qwen2.5-Coder-0.5B-class, for the tool
//! call tests), or the default models folder. A missing model is fetched with
//! `scripts/fetch-default-model`; these tests never skip silently.

use cortex_model::{FinishReason, ModelEvent, ModelProvider, ModelRequest, RefusedCall};
use cortex_model_local::{LocalOptions, LocalProvider, models_dir};
use cortex_protocol::{CallId, Message, Mode, ToolArgs, ToolCallRequest, ToolName};
use futures::StreamExt;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// One model run at a time: the machines have few cores.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn model_path(env: &str, name: &str, file: &str) -> PathBuf {
    if let Some(p) = std::env::var_os(env).filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        assert!(p.is_file(), "{env}={} is not a file", p.display());
        eprintln!("[model] {env}: {}", p.display());
        return p;
    }
    let path = models_dir().join(file);
    if path.is_file() {
        eprintln!("[model] using {}", path.display());
        return path;
    }
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/fetch-default-model");
    eprintln!(
        "[model] {} is missing; running {} {name}",
        path.display(),
        script.display()
    );
    let out = std::process::Command::new(&script)
        .arg(name)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    assert!(
        out.status.success(),
        "fetch-default-model {name} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    eprintln!("[model] fetched {printed}");
    PathBuf::from(printed)
}

/// The defaults, generating on one thread as before the default became
/// every core: the tests run beside each other and beside other test
/// binaries, and llama.cpp's threads spin-wait for each other on busy
/// cores.
fn test_options() -> LocalOptions {
    LocalOptions {
        threads: 1,
        ..LocalOptions::default()
    }
}

fn load(path: PathBuf) -> LocalProvider {
    let options = LocalOptions {
        context: 4096,
        max_output_tokens: 256,
        ..test_options()
    };
    let t = Instant::now();
    let p = LocalProvider::load(&path, options)
        .unwrap_or_else(|e| panic!("load {}: {e}", path.display()));
    eprintln!("[model] loaded {} in {:?}", p.describe(), t.elapsed());
    p
}

fn small() -> &'static LocalProvider {
    static P: OnceLock<LocalProvider> = OnceLock::new();
    P.get_or_init(|| {
        load(model_path(
            "CORTEX_TEST_MODEL",
            "smollm2-135m",
            "smollm2-135m-instruct-q4_1.gguf",
        ))
    })
}

fn tool_model() -> &'static LocalProvider {
    static P: OnceLock<LocalProvider> = OnceLock::new();
    P.get_or_init(|| {
        load(model_path(
            "CORTEX_TEST_TOOL_MODEL",
            "qwen2.5-coder-0.5b",
            "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        ))
    })
}

#[derive(Debug, Default)]
struct Reply {
    text: String,
    calls: Vec<(String, String, String)>,
    finish: Option<FinishReason>,
    usage: Option<(u64, u64)>,
}

async fn run(p: &LocalProvider, request: ModelRequest) -> Reply {
    let mut stream = p.stream(request);
    let mut r = Reply::default();
    while let Some(ev) = stream.next().await {
        match ev.unwrap_or_else(|e| panic!("stream error: {e}")) {
            ModelEvent::TextDelta(t) => r.text.push_str(&t),
            ModelEvent::ToolCallStart { id, name, .. } => r.calls.push((id, name, String::new())),
            ModelEvent::ToolCallDelta { arguments, .. } => {
                if let Some(c) = r.calls.last_mut() {
                    c.2.push_str(&arguments);
                }
            }
            ModelEvent::Usage {
                input_tokens,
                output_tokens,
            } => r.usage = Some((input_tokens, output_tokens)),
            ModelEvent::Finish(f) => r.finish = Some(f),
            _ => {}
        }
    }
    r
}

fn request(system: &str, messages: Vec<Message>, tools: &[ToolName]) -> ModelRequest {
    ModelRequest {
        model: "local".into(),
        system: system.into(),
        messages,
        tools: tools.iter().map(|t| t.spec()).collect(),
        tool_choice: Default::default(),
        hints: Default::default(),
    }
}

const AGENT_SYSTEM: &str = "You are Cortex, a coding agent working in a repository. Use the tools to look at files; do not guess their content. To call a tool, reply with only a JSON object {\"name\": <tool name>, \"arguments\": <arguments object>}.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_reads_a_file_through_a_tool_call() {
    let _serial = SERIAL.lock().await;
    let p = tool_model();
    let mut messages = vec![Message::user(
        "What is written in the file notes.txt? Read it with the read_file tool.",
    )];
    let first = run(
        p,
        request(AGENT_SYSTEM, messages.clone(), Mode::Ask.tools()),
    )
    .await;
    let stats1 = p.last_stats().expect("stats");
    eprintln!("round 1: {first:?}\n{stats1:?}");
    assert_eq!(first.finish, Some(FinishReason::ToolCalls), "{first:?}");
    let (id, name, args) = first.calls.first().cloned().expect("a call");
    assert_eq!(name, "read_file");
    let parsed = ToolArgs::parse(ToolName::ReadFile, &args).expect("arguments parse");
    let ToolArgs::ReadFile(read) = parsed else {
        panic!("not read_file: {parsed:?}")
    };
    assert!(read.path.contains("notes.txt"), "{read:?}");

    messages.push(Message::assistant(
        first.text.clone(),
        vec![ToolCallRequest {
            id: CallId::from(id.as_str()),
            name,
            arguments: args,
        }],
    ));
    messages.push(Message::tool(
        CallId::from(id.as_str()),
        "1\tThe launch code is 4242.",
    ));
    let second = run(p, request(AGENT_SYSTEM, messages, Mode::Ask.tools())).await;
    let stats2 = p.last_stats().expect("stats");
    eprintln!("round 2: {second:?}\n{stats2:?}");
    assert!(
        stats2.reused_tokens > stats1.prompt_tokens / 2,
        "round 2 reuses round 1's prompt: {stats2:?}"
    );
    assert!(
        second.text.contains("4242") || !second.calls.is_empty(),
        "the model answers from the file or calls again: {second:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grammar_constrained_calls_always_parse() {
    let _serial = SERIAL.lock().await;
    let p = tool_model();
    let prompts = [
        "List every Rust file in the repository using the glob tool.",
        "Search for the word TODO in all files using grep.",
        "Open src/main.rs.",
        "Find where the function parse_args is defined.",
    ];
    let mut constrained = 0;
    for prompt in prompts {
        let r = run(
            p,
            request(AGENT_SYSTEM, vec![Message::user(prompt)], Mode::Ask.tools()),
        )
        .await;
        let stats = p.last_stats().expect("stats");
        eprintln!("{prompt} -> {r:?} grammar={}", stats.grammar);
        if stats.grammar && r.finish != Some(FinishReason::Length) {
            constrained += 1;
            let (_, name, args) = r
                .calls
                .first()
                .cloned()
                .expect("constrained reply is a call");
            let tool: ToolName = name.parse().expect("an offered tool name");
            assert!(Mode::Ask.offers(tool), "{tool} is offered in Ask mode");
            ToolArgs::parse(tool, &args).unwrap_or_else(|e| panic!("{args}: {e}"));
        }
    }
    assert!(constrained > 0, "at least one reply started a call");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_stream_stops_generation_promptly() {
    let _serial = SERIAL.lock().await;
    let p = small();
    let long = request(
        "You are a storyteller.",
        vec![Message::user(
            "Write a very long story about a lighthouse keeper, at least 2000 words.",
        )],
        &[],
    );
    let mut stream = p.stream(long);
    let mut got = String::new();
    while got.len() < 20 {
        match stream.next().await {
            Some(Ok(ModelEvent::TextDelta(t))) => got.push_str(&t),
            Some(Ok(_)) => {}
            other => panic!("stream ended early: {other:?} after {got:?}"),
        }
    }
    drop(stream);
    // The engine records how far the dropped request got once it notices the
    // drop between two decode steps. The bound only keeps a broken engine
    // from hanging the suite.
    let deadline = Instant::now() + Duration::from_secs(60);
    let stats = loop {
        if let Some(stats) = p.last_stats().filter(|s| s.cancelled) {
            break stats;
        }
        assert!(
            Instant::now() < deadline,
            "the dropped request was never cancelled"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    eprintln!("cancelled after {stats:?}");
    assert!(
        stats.generated_tokens < 256,
        "generation stopped early, not at the output limit: {stats:?}"
    );
    // The engine is free again: the next request runs to the end.
    let next = run(p, request("Be brief.", vec![Message::user("Say hi.")], &[])).await;
    assert!(next.finish.is_some(), "{next:?}");
    assert!(!p.last_stats().is_some_and(|s| s.cancelled));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_round_reuses_the_kv_prefix() {
    let _serial = SERIAL.lock().await;
    let p = small();
    let system = "You are a concise assistant for a small coding project. The project is a command-line tool written in Rust that counts words in files. Answer in one or two sentences. Never invent files.";
    let mut messages = vec![Message::user("What language is the project written in?")];
    let t1 = Instant::now();
    let first = run(p, request(system, messages.clone(), &[])).await;
    let l1 = t1.elapsed();
    let s1 = p.last_stats().expect("stats");
    messages.push(Message::assistant(first.text.clone(), Vec::new()));
    messages.push(Message::user("And what does it count?"));
    let t2 = Instant::now();
    let second = run(p, request(system, messages, &[])).await;
    let l2 = t2.elapsed();
    let s2 = p.last_stats().expect("stats");
    eprintln!("round 1 {l1:?} {s1:?}\nround 2 {l2:?} {s2:?}\n{first:?}\n{second:?}");
    assert!(s2.reused_tokens > 0, "{s2:?}");
    assert!(
        s2.evaluated_tokens < s1.evaluated_tokens,
        "round 2 evaluates fewer tokens: {s1:?} vs {s2:?}"
    );
    assert_eq!(s2.reused_tokens + s2.evaluated_tokens, s2.prompt_tokens);
    assert_eq!(second.usage.map(|u| u.0), Some(s2.prompt_tokens as u64));
}

/// With `first_round_tool_call`, a turn's first round is a tool call even
/// when the model would rather answer in prose; later rounds are free.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_round_can_be_forced_to_call_a_tool() {
    let _serial = SERIAL.lock().await;
    let path = model_path(
        "CORTEX_TEST_TOOL_MODEL",
        "qwen2.5-coder-0.5b",
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    );
    let p = LocalProvider::load(
        &path,
        LocalOptions {
            context: 4096,
            max_output_tokens: 96,
            first_round_tool_call: true,
            ..test_options()
        },
    )
    .expect("load");
    let prose = "Say hello to me in one friendly sentence.";
    let r = run(
        &p,
        request(AGENT_SYSTEM, vec![Message::user(prose)], Mode::Ask.tools()),
    )
    .await;
    let stats = p.last_stats().expect("stats");
    eprintln!("{r:?}\n{stats:?}");
    assert!(stats.grammar && stats.forced_call, "{stats:?}");
    let (_, name, args) = r.calls.first().cloned().expect("a forced call");
    let tool = Mode::Ask
        .tools()
        .iter()
        .find(|t| t.spec().name == name)
        .copied()
        .unwrap_or_else(|| panic!("{name} is not an Ask tool"));
    ToolArgs::parse(tool, &args).expect("arguments parse");

    // Not the first round (the last message is a tool result): not forced.
    let (id, name, args) = r.calls[0].clone();
    let messages = vec![
        Message::user(prose),
        Message::assistant(
            String::new(),
            vec![ToolCallRequest {
                id: CallId::from(id.as_str()),
                name,
                arguments: args,
            }],
        ),
        Message::tool(CallId::from(id.as_str()), "(no output)"),
    ];
    run(&p, request(AGENT_SYSTEM, messages, Mode::Ask.tools())).await;
    let later = p.last_stats().expect("stats");
    assert!(!later.forced_call, "{later:?}");
}

/// A question whose greedy reply (the 0.5B's) is a `read_file` call.
fn notes_question() -> ModelRequest {
    request(
        AGENT_SYSTEM,
        vec![Message::user("What does the file notes.txt say?")],
        Mode::Ask.tools(),
    )
}

/// The greedy reply to [`notes_question`] and its call's name and
/// arguments.
async fn greedy_notes_call(p: &LocalProvider) -> (Reply, String, String) {
    let first = run(p, notes_question()).await;
    let (_, name, arguments) = first
        .calls
        .first()
        .cloned()
        .expect("the greedy reply calls");
    (first, name, arguments)
}

/// [`notes_question`], saying the harness refuses the call to `name` with
/// `arguments` (and handed over `instead`).
fn notes_refusing(name: &str, arguments: &str, instead: Option<&str>) -> ModelRequest {
    let mut request = notes_question();
    request
        .hints
        .insert(cortex_model::RefusedCalls(vec![RefusedCall {
            name: name.to_owned(),
            arguments: arguments.to_owned(),
            instead: instead.map(str::to_owned),
        }]));
    request
}

/// A reply that is a call the request says the harness refuses is drawn
/// again with some randomness; a reply that is not is drawn once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_that_is_a_refused_call_is_drawn_again() {
    let _serial = SERIAL.lock().await;
    let p = tool_model();
    let (first, name, arguments) = greedy_notes_call(p).await;
    assert_eq!(p.last_stats().expect("stats").redraws, 0);

    let again = run(p, notes_refusing(&name, &arguments, None)).await;
    let stats = p.last_stats().expect("stats");
    eprintln!("{first:?}\n{again:?}\n{stats:?}");
    assert!(stats.redraws >= 1, "{stats:?}");
    let same = again
        .calls
        .first()
        .is_some_and(|(_, n, a)| *n == name && *a == arguments);
    // Drawn until it is another reply, or as many times as allowed.
    assert!(!same || stats.redraws == 2, "{stats:?}");

    run(
        p,
        notes_refusing("grep", r#"{"pattern":"never asked"}"#, None),
    )
    .await;
    assert_eq!(p.last_stats().expect("stats").redraws, 0);
}

/// A refused call with another handed over in its place is drawn again
/// departing from it where the two differ: once is enough, and the reply
/// is another call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_call_with_one_handed_over_is_drawn_departing_from_it() {
    let _serial = SERIAL.lock().await;
    let p = tool_model();
    let (first, name, arguments) = greedy_notes_call(p).await;
    let instead = Some(r#"{"path":"README.md"}"#);
    let again = run(p, notes_refusing(&name, &arguments, instead)).await;
    let stats = p.last_stats().expect("stats");
    eprintln!("{first:?}\n{again:?}\n{stats:?}");
    assert_eq!(stats.redraws, 1, "{stats:?}");
    let same = again
        .calls
        .first()
        .is_some_and(|(_, n, a)| *n == name && cortex_model::same_arguments(a, &arguments));
    assert!(!same, "{again:?}");
}

/// A reply that must be the answer (`ToolChoice::Answer`) is words: no call
/// made, and none written out, where the same request otherwise calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_that_must_be_the_answer_is_words() {
    let _serial = SERIAL.lock().await;
    let p = tool_model();
    let ask = notes_question;
    let free = run(p, ask()).await;
    assert!(!free.calls.is_empty(), "the greedy reply calls: {free:?}");
    let mut answer = ask();
    answer.tool_choice = cortex_model::ToolChoice::Answer;
    let said = run(p, answer).await;
    eprintln!("{said:?}");
    assert!(said.calls.is_empty(), "{said:?}");
    let first = said.text.chars().next().expect("some text");
    assert!(
        !"{[<`\"' \t\r\n".contains(first),
        "begins like a call or blank: {said:?}"
    );
    assert_ne!(said.finish, Some(FinishReason::ToolCalls), "{said:?}");
}

/// A provider dropped and loaded again stands for two `cortex exec`
/// processes: the second one's first request loads the state the first one
/// saved and evaluates only what follows the shared prefix.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_provider_restores_the_kv_state_saved_by_the_last_one() {
    let _serial = SERIAL.lock().await;
    let path = model_path(
        "CORTEX_TEST_MODEL",
        "smollm2-135m",
        "smollm2-135m-instruct-q4_1.gguf",
    );
    let kv = tempfile::tempdir().expect("kv dir");
    let options = LocalOptions {
        context: 2048,
        max_output_tokens: 24,
        kv_dir: Some(kv.path().to_path_buf()),
        kv_keep: 2,
        ..test_options()
    };
    let system = "You are a concise assistant for a small coding project. The project is a command-line tool written in Rust that counts words in files; it reads each file given on the command line and prints the number of words, lines and bytes. Answer in one sentence. Never invent files.";
    let mut messages = vec![Message::user("What language is the project written in?")];

    let first = LocalProvider::load(&path, options.clone()).expect("load");
    let reply = run(&first, request(system, messages.clone(), &[])).await;
    let s1 = first.last_stats().expect("stats");
    assert_eq!(s1.restored_tokens, 0, "{s1:?}");
    drop(first);
    let saved: Vec<_> = walk(kv.path());
    assert!(
        saved
            .iter()
            .any(|p| p.extension().is_some_and(|e| e == "state")),
        "a state was saved: {saved:?}"
    );

    messages.push(Message::assistant(reply.text.clone(), Vec::new()));
    messages.push(Message::user("And what does it count?"));
    let second = LocalProvider::load(&path, options.clone()).expect("load");
    let r2 = run(&second, request(system, messages.clone(), &[])).await;
    let s2 = second.last_stats().expect("stats");
    eprintln!("first {s1:?}\nsecond {s2:?}\n{r2:?}");
    assert!(s2.restored_tokens >= s1.prompt_tokens, "{s2:?}");
    assert_eq!(s2.reused_tokens + s2.evaluated_tokens, s2.prompt_tokens);
    assert!(
        s2.evaluated_tokens < s2.prompt_tokens - s1.prompt_tokens + 8,
        "only the new turn is evaluated: {s1:?} {s2:?}"
    );
    drop(second);
    let states = walk(kv.path())
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "state"))
        .count();
    assert_eq!(states, 1, "the continued conversation replaced its state");

    // Without a saved state the same prompt is evaluated in full.
    let cold = LocalProvider::load(
        &path,
        LocalOptions {
            kv_dir: None,
            ..options
        },
    )
    .expect("load");
    run(&cold, request(system, messages, &[])).await;
    let s3 = cold.last_stats().expect("stats");
    assert_eq!(
        (s3.restored_tokens, s3.evaluated_tokens),
        (0, s3.prompt_tokens)
    );
}

fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_and_errors() {
    let _serial = SERIAL.lock().await;
    let p = small();
    assert!(p.describe().starts_with("local:"), "{}", p.describe());
    let missing = LocalProvider::load(
        std::path::Path::new("/nonexistent/model.gguf"),
        LocalOptions::default(),
    )
    .expect_err("missing file");
    assert!(
        missing.to_string().contains("fetch-default-model"),
        "{missing}"
    );
}

/// The `quoted` edit format: with the files' texts in the request, a forced
/// `edit_file` names one of them and quotes whole lines of it, whatever the
/// model would have written from memory (an unindented `"debug": true`
/// without its comma, say).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quoted_edit_names_a_known_file_and_quotes_whole_lines_of_it() {
    let _serial = SERIAL.lock().await;
    let p = tool_model();
    let config = "{\n  \"name\": \"demo\",\n  \"debug\": true,\n  \"port\": 8080\n}\n";
    let mut req = request(
        AGENT_SYSTEM,
        vec![Message::user(
            "In config.json, change debug from true to false with edit_file.",
        )],
        &[ToolName::ReadFile, ToolName::EditFile],
    );
    req.tool_choice = cortex_model::ToolChoice::Tool(ToolName::EditFile);
    req.hints.insert(cortex_model::QuotableFiles(vec![
        cortex_model::QuotableFile {
            path: "config.json".into(),
            text: Some(config.into()),
        },
        cortex_model::QuotableFile {
            path: "notes.txt".into(),
            text: None,
        },
    ]));
    let r = run(p, req).await;
    eprintln!("{r:?}");
    let (_, name, args) = r.calls.first().cloned().expect("a forced call");
    assert_eq!(name, "edit_file");
    let Ok(ToolArgs::EditFile(edit)) = ToolArgs::parse(ToolName::EditFile, &args) else {
        panic!("not an edit_file in the string shape: {args}")
    };
    assert!(
        ["config.json", "notes.txt"].contains(&edit.path.as_str()),
        "{edit:?}"
    );
    if edit.path == "config.json" {
        let lines: Vec<&str> = config.lines().collect();
        let whole = (0..lines.len()).any(|a| {
            (a..lines.len()).any(|b| {
                let run = lines[a..=b].join("\n");
                edit.old_string == run || edit.old_string == format!("{run}\n")
            })
        });
        assert!(whole, "old_string is whole lines of config.json: {edit:?}");
    }
}
