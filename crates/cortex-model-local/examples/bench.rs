//! Measure the local provider on one model:
//! `cargo run --release -p cortex-model-local --example bench -- MODEL [THREADS [PROMPT_THREADS]]`
//! where MODEL is a short name (`smollm2-135m`, `qwen2.5-coder-0.5b`,
//! `qwen2.5-coder-1.5b`) or a GGUF path. Prints load time, prompt and
//! generation speed, a first and a second round (KV prefix reuse), a
//! grammar-constrained tool call, and peak RSS.

use cortex_model::{ModelEvent, ModelProvider, ModelRequest};
use cortex_model_local::{LocalOptions, LocalProvider, resolve_model};
use cortex_protocol::{Message, Mode, ToolName};
use futures::StreamExt;
use std::time::Instant;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "smollm2-135m".into());
    let mut options = LocalOptions {
        max_output_tokens: 128,
        ..LocalOptions::default()
    };
    if let Some(t) = args.next() {
        options.threads = t.parse()?;
    }
    if let Some(t) = args.next() {
        options.prompt_threads = t.parse()?;
    }
    let path = resolve_model(&name)?;
    let t = Instant::now();
    let p = LocalProvider::load(&path, options.clone())?;
    println!(
        "model {} threads {} prompt threads {} load {:.2}s",
        p.describe(),
        options.threads,
        options.prompt_threads,
        t.elapsed().as_secs_f64()
    );

    let system = format!(
        "You are Cortex, a coding agent working in a repository. Use the tools to look at files; do not guess. To call a tool, reply with only a JSON object {{\"name\": <tool name>, \"arguments\": <arguments object>}}.\n\nRepository notes:\n{}",
        "- The project is a Rust workspace with crates for the protocol, the tools, the guest, the runtime, the model providers, the core loop, the store and the CLI.\n".repeat(6)
    );
    let tools: Vec<_> = Mode::Agent.tools().iter().map(|t| t.spec()).collect();
    let mut messages = vec![Message::user(
        "Explain in three sentences what a Rust workspace is.",
    )];
    let r1 = round(&p, &system, &messages, &[]).await;
    messages.push(Message::assistant(r1.clone(), Vec::new()));
    messages.push(Message::user(
        "Now give one example of a workspace Cargo.toml line.",
    ));
    round(&p, &system, &messages, &[]).await;
    let call_msgs = vec![Message::user("Read the file src/main.rs.")];
    round(&p, &system, &call_msgs, &tools).await;
    let _ = ToolName::ReadFile;
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let hwm = status
        .lines()
        .find(|l| l.starts_with("VmHWM"))
        .unwrap_or("VmHWM: ?");
    println!("peak RSS {}", hwm.trim_start_matches("VmHWM:").trim());
    Ok(())
}

async fn round(
    p: &LocalProvider,
    system: &str,
    messages: &[Message],
    tools: &[cortex_protocol::ToolSpec],
) -> String {
    let t = Instant::now();
    let mut stream = p.stream(ModelRequest {
        model: "local".into(),
        system: system.into(),
        messages: messages.to_vec(),
        tools: tools.to_vec(),
        tool_choice: Default::default(),
        hints: Default::default(),
    });
    let mut text = String::new();
    let mut first_event = None;
    let mut calls = Vec::new();
    while let Some(ev) = stream.next().await {
        first_event.get_or_insert_with(|| t.elapsed());
        match ev {
            Ok(ModelEvent::TextDelta(d)) => text.push_str(&d),
            Ok(ModelEvent::ToolCallStart { name, .. }) => calls.push(name),
            Ok(ModelEvent::ToolCallDelta { arguments, .. }) => calls.push(arguments),
            Ok(_) => {}
            Err(e) => {
                println!("error: {e}");
                break;
            }
        }
    }
    let total = t.elapsed();
    if let Some(s) = p.last_stats() {
        let pt = s.evaluated_tokens as f64 / (s.prompt_ms.max(1) as f64 / 1000.0);
        let gt = s.generated_tokens as f64 / (s.generation_ms.max(1) as f64 / 1000.0);
        println!(
            "round: {:.2}s total, first event {:.2}s | prompt {} tok ({} reused, {} evaluated) in {} ms = {:.1} tok/s | generated {} tok in {} ms = {:.1} tok/s | grammar {} | calls {:?}",
            total.as_secs_f64(),
            first_event.unwrap_or_default().as_secs_f64(),
            s.prompt_tokens,
            s.reused_tokens,
            s.evaluated_tokens,
            s.prompt_ms,
            pt,
            s.generated_tokens,
            s.generation_ms,
            gt,
            s.grammar,
            calls
        );
    }
    text
}
