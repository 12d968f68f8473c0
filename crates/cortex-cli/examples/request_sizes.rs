//! Request bytes per wire format for the scripted 5-tool task of
//! `scripts/bench-exec` (glob, grep, read_file, edit_file, bash, then the
//! answer), with the real Agent system prompt and tool catalog.
//!
//! `cargo run -p cortex-cli --no-default-features --example request_sizes`

use cortex_model::ModelRequest;
use cortex_model::encode::{WireFormat, request_body};
use cortex_protocol::{CallId, Message, Mode, ToolCallRequest};

/// (tool, arguments, output) of each round, as the real tools answer.
const ROUNDS: [(&str, &str, &str); 5] = [
    (
        "glob",
        r#"{"pattern":"**/*.py"}"#,
        "src/calc.py\nsrc/test_calc.py",
    ),
    (
        "grep",
        r#"{"pattern":"def add","mode":"content"}"#,
        "src/calc.py:1:def add(a, b):",
    ),
    (
        "read_file",
        r#"{"path":"src/calc.py"}"#,
        "1\tdef add(a, b):\n2\t    return a - b",
    ),
    (
        "edit_file",
        r#"{"path":"src/calc.py","old_string":"a - b","new_string":"a + b"}"#,
        "Edited src/calc.py: 1 replacement.",
    ),
    (
        "bash",
        r#"{"command":"cd src && python3 -B test_calc.py && git --version >/dev/null; echo passed"}"#,
        "exit 0\npassed",
    ),
];

/// The request of round `round` (1-based): the prompt, then the calls and
/// results of the rounds before it.
fn request(model: &str, round: usize) -> ModelRequest {
    let mut messages = vec![Message::user("fix add")];
    for (i, (name, arguments, output)) in ROUNDS.iter().take(round - 1).enumerate() {
        let id = CallId(format!("call_{}_0", i + 1));
        messages.push(Message::assistant(
            "",
            vec![ToolCallRequest {
                id: id.clone(),
                name: (*name).to_owned(),
                arguments: (*arguments).to_owned(),
            }],
        ));
        messages.push(Message::tool(id, *output));
    }
    ModelRequest {
        model: model.to_owned(),
        system: cortex_core::system_prompt(Mode::Agent),
        messages,
        tools: Mode::Agent.tools().iter().map(|t| t.spec()).collect(),
        tool_choice: Default::default(),
        hints: Default::default(),
    }
}

fn main() -> Result<(), cortex_model::ModelError> {
    println!("| wire format | model | round 1 | round 5 | round 6 |");
    println!("| --- | --- | --- | --- | --- |");
    for format in WireFormat::ALL {
        let model = match format {
            WireFormat::OpenAiChat => "gpt-4.1",
            WireFormat::OpenAiResponses => "o4-mini",
            WireFormat::Anthropic => "claude-sonnet-4-20250514",
        };
        let size = |round| request_body(format, &request(model, round)).map(|body| body.len());
        println!(
            "| {} | {model} | {} | {} | {} |",
            format.name(),
            size(1)?,
            size(5)?,
            size(6)?
        );
    }
    Ok(())
}
