use super::*;
use crate::Assembler;
use cortex_protocol::Message;
use futures::StreamExt;

fn request(text: &str) -> ModelRequest {
    ModelRequest {
        model: "scripted".into(),
        system: "sys".into(),
        messages: vec![Message::user(text)],
        tools: vec![],
        tool_choice: Default::default(),
        hints: Default::default(),
    }
}

async fn collect(provider: &ScriptedProvider, text: &str) -> Vec<Result<ModelEvent, ModelError>> {
    provider.stream(request(text)).collect().await
}

fn ok_events(items: Vec<Result<ModelEvent, ModelError>>) -> Vec<ModelEvent> {
    items
        .into_iter()
        .map(|item| item.expect("no error"))
        .collect()
}

fn assemble(events: &[ModelEvent]) -> crate::Assembled {
    let mut assembler = Assembler::default();
    for event in events {
        assembler.push(event);
    }
    assembler.finish()
}

const EXAMPLE: &str = r#"{"responses": [
  {"text": "Reading it.", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.rs"}}]},
  {"tool_calls": [{"name": "bash", "arguments": "{not json"}]},
  {"error": {"status": 500, "body": "boom"}},
  {"text": "Done."}
]}"#;

#[tokio::test]
async fn plays_the_documented_example_in_order() {
    let provider = ScriptedProvider::from_json(EXAMPLE).expect("valid script");

    let first = ok_events(collect(&provider, "one").await);
    let text_deltas = first
        .iter()
        .filter(|e| matches!(e, ModelEvent::TextDelta(_)))
        .count();
    assert_eq!(text_deltas, 2, "text is streamed in pieces: {first:?}");
    let arg_deltas = first
        .iter()
        .filter(|e| matches!(e, ModelEvent::ToolCallDelta { .. }))
        .count();
    assert!(
        arg_deltas >= 2,
        "arguments are streamed in pieces: {first:?}"
    );
    assert!(matches!(
        &first[2],
        ModelEvent::ToolCallStart { index: 0, id, name } if id == "call_1_0" && name == "read_file"
    ));
    assert!(matches!(first[first.len() - 2], ModelEvent::Usage { .. }));
    let out = assemble(&first);
    assert_eq!(out.text, "Reading it.");
    assert_eq!(out.tool_calls.len(), 1);
    assert_eq!(out.tool_calls[0].id.as_str(), "call_1_0");
    assert_eq!(out.tool_calls[0].arguments, r#"{"path":"a.rs"}"#);
    assert_eq!(out.finish, Some(FinishReason::ToolCalls));
    assert!(out.input_tokens > 0 && out.output_tokens > 0);

    let second = assemble(&ok_events(collect(&provider, "two").await));
    assert_eq!(second.text, "");
    assert_eq!(second.tool_calls[0].id.as_str(), "call_2_0");
    assert_eq!(second.tool_calls[0].arguments, "{not json");

    let third = collect(&provider, "three").await;
    assert_eq!(
        third,
        [Err(ModelError::Http {
            status: 500,
            body: "boom".into()
        })]
    );

    let fourth = assemble(&ok_events(collect(&provider, "four").await));
    assert_eq!(fourth.text, "Done.");
    assert_eq!(fourth.finish, Some(FinishReason::Stop));

    assert_eq!(
        collect(&provider, "five").await,
        [Err(ModelError::Script(
            "script exhausted after 4 responses".into()
        ))]
    );

    let seen: Vec<String> = provider
        .requests()
        .iter()
        .map(|r| r.messages[0].content.clone())
        .collect();
    assert_eq!(seen, ["one", "two", "three", "four", "five"]);
}

#[tokio::test]
async fn usage_is_deterministic() {
    let script = r#"{"responses": [{"text": "same"}, {"text": "same"}]}"#;
    let provider = ScriptedProvider::from_json(script).expect("valid script");
    let a = ok_events(collect(&provider, "hello").await);
    let b = ok_events(collect(&provider, "hello").await);
    assert_eq!(a, b);
}

#[tokio::test]
async fn explicit_ids_and_missing_arguments() {
    let script = r#"{"responses": [{"tool_calls": [
        {"id": "mine", "name": "todo_read"},
        {"name": "glob", "arguments": {"pattern": "*.rs"}}
    ]}]}"#;
    let provider = ScriptedProvider::from_json(script).expect("valid script");
    let out = assemble(&ok_events(collect(&provider, "x").await));
    let calls: Vec<(&str, &str)> = out
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        calls,
        [("mine", "{}"), ("call_1_1", r#"{"pattern":"*.rs"}"#)]
    );
}

#[tokio::test]
async fn cut_after_fails_mid_stream() {
    let script = r#"{"responses": [{"text": "one two three", "cut_after": 2}, {"text": "x", "cut_after": 99}]}"#;
    let provider = ScriptedProvider::from_json(script).expect("valid script");
    let items = collect(&provider, "x").await;
    assert_eq!(items.len(), 3);
    assert_eq!(items[0], Ok(ModelEvent::TextDelta("one ".into())));
    assert_eq!(items[1], Ok(ModelEvent::TextDelta("two ".into())));
    assert!(matches!(items[2], Err(ModelError::Stream(_))));
    // A cut stream never carries its Finish.
    let items = collect(&provider, "x").await;
    assert!(matches!(items.last(), Some(Err(ModelError::Stream(_)))));
    assert!(!items.iter().any(|i| matches!(i, Ok(ModelEvent::Finish(_)))));
}

#[tokio::test]
async fn hang_sends_text_then_never_ends() {
    let script = r#"{"responses": [{"text": "working on it", "hang": true}, {"text": "next"}]}"#;
    let provider = ScriptedProvider::from_json(script).expect("valid script");
    let mut stream = provider.stream(request("x"));
    let mut text = String::new();
    for _ in 0..3 {
        match stream.next().await {
            Some(Ok(ModelEvent::TextDelta(t))) => text.push_str(&t),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(text, "working on it");
    let next = tokio::time::timeout(Duration::from_millis(50), stream.next()).await;
    assert!(next.is_err(), "a hanging response never yields again");
    drop(stream);
    // Dropping it moves on to the next response.
    let out = assemble(&ok_events(collect(&provider, "y").await));
    assert_eq!(out.text, "next");
}

#[tokio::test]
async fn delays_are_applied() {
    let script = r#"{"responses": [{"text": "a b c", "delay_ms": 30, "chunk_delay_ms": 10}]}"#;
    let provider = ScriptedProvider::from_json(script).expect("valid script");
    let started = std::time::Instant::now();
    let items = collect(&provider, "x").await;
    assert!(items.iter().all(Result::is_ok));
    assert!(started.elapsed() >= Duration::from_millis(30 + 4 * 10));
}

#[test]
fn bad_scripts_are_clear_errors() {
    let cases = [
        ("not json", "bad script"),
        (r#"{"responses": [{"txt": "typo"}]}"#, "unknown field `txt`"),
        (r#"{"response": []}"#, "unknown field `response`"),
        (
            r#"{"responses": [{"text": "a"}, {"error": {"status": 500}, "text": "x"}]}"#,
            "response 2",
        ),
        (
            r#"{"responses": [{"tool_calls": [{"name": "f", "arguments": 3}]}]}"#,
            "must be an object or a string",
        ),
        (
            r#"{"responses": [{"hang": true, "cut_after": 1}]}"#,
            "cannot be combined",
        ),
    ];
    for (script, expected) in cases {
        match ScriptedProvider::from_json(script) {
            Err(ModelError::Script(message)) => {
                assert!(message.contains(expected), "{message:?} lacks {expected:?}");
            }
            Err(other) => panic!("wrong error for {script}: {other:?}"),
            Ok(_) => panic!("accepted {script}"),
        }
    }
}

#[test]
fn from_file_reads_and_names_the_file() {
    let dir = std::env::temp_dir().join(format!("cortex-model-script-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let good = dir.join("good.json");
    std::fs::write(&good, EXAMPLE).expect("write");
    assert!(ScriptedProvider::from_file(&good).is_ok());
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{").expect("write");
    match ScriptedProvider::from_file(&bad) {
        Err(ModelError::Script(message)) => assert!(message.contains("bad.json")),
        _ => panic!("expected a script error"),
    }
    assert!(matches!(
        ScriptedProvider::from_file(&dir.join("missing.json")),
        Err(ModelError::Script(_))
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn halves_split_on_char_boundaries() {
    assert_eq!(halves("{}").collect::<Vec<_>>(), ["{", "}"]);
    assert_eq!(halves("é€").collect::<Vec<_>>(), ["é", "€"]);
    assert_eq!(halves("x").collect::<Vec<_>>(), ["x"]);
    assert_eq!(halves("").count(), 0);
}
