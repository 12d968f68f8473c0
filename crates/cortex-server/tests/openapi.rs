//! The served OpenAPI document against the routes and `cortex-api`'s types:
//! every route is documented with the body types it really takes and gives,
//! each of those schemas describes what serde writes for the type, and
//! every route the document names is answered by the router.
//!
//! A new route adds a row to `ROUTES`; a route in the document without a
//! row (or a row without a route) fails here.

mod common;

use common::start;
use cortex_api::{
    AnswerApproval, ApprovalAnswered, ApprovalState, CompactAnswer, CreateSession, CreateTurn,
    ErrorBody, GoalAnswer, GoalSummary, GoalView, Health, RejectPlan, RuleList, SandboxRequest,
    SessionPage, SessionView, SetApproval, SetGoal, SetMode, StopAnswer, TurnCreated,
};
use cortex_protocol::{
    ApprovalDecision, ApprovalPolicy, CompactionKept, Goal, GoalBudget, GoalStatus, GoalStep, Mode,
    NetworkPolicy, PauseReason, Rule, RuleMatch, SandboxPolicy, SessionId, StopRule, TurnId,
    WorkspaceMode,
};
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use utoipa::ToSchema;

/// One documented operation: its request body's schema (if any), its
/// success status and that answer's JSON schema (if it has a JSON body).
struct Route {
    method: &'static str,
    path: &'static str,
    request: Option<fn() -> String>,
    success: &'static str,
    response: Option<fn() -> String>,
}

fn name<T: ToSchema>() -> String {
    T::name().into_owned()
}

const ROUTES: &[Route] = &[
    Route {
        method: "get",
        path: "/healthz",
        request: None,
        success: "200",
        response: Some(name::<Health>),
    },
    Route {
        method: "post",
        path: "/v1/sessions",
        request: Some(name::<CreateSession>),
        success: "201",
        response: Some(name::<SessionView>),
    },
    Route {
        method: "get",
        path: "/v1/sessions",
        request: None,
        success: "200",
        response: Some(name::<SessionPage>),
    },
    Route {
        method: "get",
        path: "/v1/sessions/{id}",
        request: None,
        success: "200",
        response: Some(name::<SessionView>),
    },
    Route {
        method: "delete",
        path: "/v1/sessions/{id}",
        request: None,
        success: "204",
        response: None,
    },
    Route {
        method: "post",
        path: "/v1/sessions/{id}/turns",
        request: Some(name::<CreateTurn>),
        success: "202",
        response: Some(name::<TurnCreated>),
    },
    Route {
        method: "post",
        path: "/v1/sessions/{id}/stop",
        request: None,
        success: "202",
        response: Some(name::<StopAnswer>),
    },
    Route {
        method: "get",
        path: "/v1/sessions/{id}/commands",
        request: None,
        success: "200",
        response: Some(name::<cortex_api::CommandList>),
    },
    Route {
        method: "post",
        path: "/v1/sessions/{id}/commands",
        request: Some(name::<cortex_api::RunCommand>),
        success: "202",
        response: Some(name::<TurnCreated>),
    },
    Route {
        method: "get",
        path: "/v1/sessions/{id}/hooks",
        request: None,
        success: "200",
        response: Some(name::<cortex_api::HookList>),
    },
    Route {
        method: "post",
        path: "/v1/sessions/{id}/hooks/trust",
        request: Some(name::<cortex_api::TrustHooks>),
        success: "200",
        response: Some(name::<cortex_api::HookList>),
    },
    Route {
        method: "get",
        path: "/v1/sessions/{id}/processes",
        request: None,
        success: "200",
        response: Some(name::<cortex_api::ProcessList>),
    },
    Route {
        method: "delete",
        path: "/v1/sessions/{id}/processes/{process}",
        request: None,
        success: "200",
        response: Some(name::<cortex_protocol::ProcessInfo>),
    },
    Route {
        method: "put",
        path: "/v1/sessions/{id}/mode",
        request: Some(name::<SetMode>),
        success: "200",
        response: Some(name::<SessionView>),
    },
    Route {
        method: "post",
        path: "/v1/sessions/{id}/mcp_servers",
        request: Some(name::<cortex_api::AddMcpServers>),
        success: "200",
        response: Some(name::<cortex_api::McpServersAdded>),
    },
    Route {
        method: "post",
        path: "/v1/sessions/{id}/compact",
        request: None,
        success: "200",
        response: Some(name::<CompactAnswer>),
    },
    Route {
        method: "post",
        path: "/v1/sessions/{id}/rewind",
        request: Some(name::<cortex_api::Rewind>),
        success: "200",
        response: Some(name::<cortex_api::RewindAnswer>),
    },
    Route {
        method: "post",
        path: "/v1/sessions/{id}/plan/accept",
        request: None,
        success: "202",
        response: Some(name::<TurnCreated>),
    },
    Route {
        method: "post",
        path: "/v1/sessions/{id}/plan/reject",
        request: Some(name::<RejectPlan>),
        success: "202",
        response: Some(name::<TurnCreated>),
    },
    Route {
        method: "post",
        path: "/v1/sessions/{id}/spec/accept",
        request: None,
        success: "202",
        response: Some(name::<TurnCreated>),
    },
    Route {
        method: "post",
        path: "/v1/sessions/{id}/spec/reject",
        request: Some(name::<RejectPlan>),
        success: "202",
        response: Some(name::<TurnCreated>),
    },
    Route {
        method: "put",
        path: "/v1/sessions/{id}/goal",
        request: Some(name::<SetGoal>),
        success: "200",
        response: Some(name::<GoalAnswer>),
    },
    Route {
        method: "get",
        path: "/v1/sessions/{id}/goal",
        request: None,
        success: "200",
        response: Some(name::<GoalView>),
    },
    Route {
        method: "delete",
        path: "/v1/sessions/{id}/goal",
        request: None,
        success: "204",
        response: None,
    },
    Route {
        method: "put",
        path: "/v1/sessions/{id}/approval",
        request: Some(name::<SetApproval>),
        success: "200",
        response: Some(name::<ApprovalState>),
    },
    Route {
        method: "post",
        path: "/v1/sessions/{id}/approvals/{call_id}",
        request: Some(name::<AnswerApproval>),
        success: "200",
        response: Some(name::<ApprovalAnswered>),
    },
    Route {
        method: "get",
        path: "/v1/rules",
        request: None,
        success: "200",
        response: Some(name::<RuleList>),
    },
    Route {
        method: "delete",
        path: "/v1/rules/{id}",
        request: None,
        success: "204",
        response: None,
    },
    Route {
        method: "post",
        path: "/v1/sessions/{id}/goal/pause",
        request: None,
        success: "200",
        response: Some(name::<GoalView>),
    },
    Route {
        method: "post",
        path: "/v1/sessions/{id}/goal/resume",
        request: None,
        success: "202",
        response: Some(name::<GoalAnswer>),
    },
    Route {
        method: "post",
        path: "/v1/sessions/{id}/shares",
        request: Some(name::<cortex_api::CreateShare>),
        success: "201",
        response: Some(name::<cortex_api::ShareCreated>),
    },
    Route {
        method: "get",
        path: "/v1/sessions/{id}/shares",
        request: None,
        success: "200",
        response: Some(name::<cortex_api::ShareList>),
    },
    Route {
        method: "delete",
        path: "/v1/sessions/{id}/shares/{share}",
        request: None,
        success: "204",
        response: None,
    },
    Route {
        method: "get",
        path: "/v1/sessions/{id}/events",
        request: None,
        success: "200",
        response: None,
    },
];

async fn served_document() -> Value {
    let server = start().await;
    let (status, doc) = server.send(Method::GET, "/openapi.json", None, None).await;
    assert_eq!(status, 200);
    doc
}

fn reference(schema: &Value) -> Option<&str> {
    schema["$ref"]
        .as_str()?
        .strip_prefix("#/components/schemas/")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_is_documented_with_its_body_types() {
    let doc = served_document().await;
    let documented: BTreeSet<(String, String)> = doc["paths"]
        .as_object()
        .expect("paths")
        .iter()
        .flat_map(|(path, item)| {
            let methods = item.as_object().expect("path item").keys();
            methods.map(move |m| (m.clone(), path.clone()))
        })
        .collect();
    let listed: BTreeSet<(String, String)> = ROUTES
        .iter()
        .map(|r| (r.method.to_owned(), r.path.to_owned()))
        .collect();
    assert_eq!(documented, listed);

    for route in ROUTES {
        let op = &doc["paths"][route.path][route.method];
        let at = format!("{} {}", route.method, route.path);
        let request = &op["requestBody"]["content"]["application/json"]["schema"];
        assert_eq!(
            reference(request).map(str::to_owned),
            route.request.map(|n| n()),
            "{at}: request body"
        );
        let responses = op["responses"].as_object().expect("responses");
        let success = &responses[route.success]["content"]["application/json"]["schema"];
        assert_eq!(
            reference(success).map(str::to_owned),
            route.response.map(|n| n()),
            "{at}: {} answer",
            route.success
        );
        for (status, answer) in responses {
            if status.starts_with('4') || status.starts_with('5') {
                let schema = &answer["content"]["application/json"]["schema"];
                assert_eq!(
                    reference(schema),
                    Some(name::<ErrorBody>().as_str()),
                    "{at}: {status}"
                );
            }
        }
        let all = [route.request, route.response];
        for schema in all.iter().flatten() {
            assert!(
                doc["components"]["schemas"][schema()].is_object(),
                "{at}: {} is not among the components",
                schema()
            );
        }
    }
    let events = &doc["paths"]["/v1/sessions/{id}/events"]["get"]["responses"]["200"];
    assert!(events["content"]["text/event-stream"].is_object());
}

/// What serde writes for each body type is what its schema describes:
/// the same property names, every required one present, enum values among
/// the documented names, nested types by reference.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_schema_describes_what_serde_writes() {
    let doc = served_document().await;
    let view = SessionView {
        id: SessionId::from("s1"),
        repository: "/r".into(),
        mode: Mode::Plan,
        model: "scripted:x".into(),
        stop_rule: StopRule::Chat,
        created_at: "2026-12-02T00:00:00Z".into(),
        title: Some("hello".into()),
        last_seq: 3,
        running_turn: Some(TurnId::from("t1")),
        goal: Some(GoalSummary {
            objective: "ship".into(),
            done: 2,
            total: 8,
            status: GoalStatus::Active,
        }),
        checkpoint_bytes: Some(4096),
        parent: Some(cortex_protocol::ParentLink {
            session: SessionId::from("s0"),
            call_id: "call_1_0".into(),
        }),
    };
    let mut goal = Goal::new(
        "ship".into(),
        GoalBudget {
            turns: Some(5),
            tokens: Some(1000),
            minutes: Some(30),
        },
    );
    goal.steps = vec![GoalStep {
        title: "build".into(),
        done: true,
    }];
    goal.status = GoalStatus::Paused;
    goal.paused = Some(PauseReason::Stalled);
    goal.evidence = Some("it runs".into());
    goal.spent.turns = 3;
    let examples: Vec<(String, Value)> = vec![
        (
            name::<Health>(),
            json!(Health {
                status: "ok".into()
            }),
        ),
        (
            name::<CreateSession>(),
            json!(CreateSession {
                repository: "/r".into(),
                mode: Some(Mode::Ask),
                model: Some("scripted:x".into()),
                sandbox: Some(SandboxRequest {
                    policy: Some(SandboxPolicy::ReadOnly),
                    network: Some(NetworkPolicy::On),
                    workspace: Some(WorkspaceMode::Copy),
                }),
                stop_rule: Some(StopRule::Bot),
                approval: Some(ApprovalPolicy::Ask),
                mcp_servers: vec![cortex_api::McpServerRequest {
                    name: "docs".into(),
                    command: "python3".into(),
                    args: vec!["-m".into(), "docs".into()],
                    env: [("INDEX".to_owned(), "/srv".to_owned())].into(),
                    ..Default::default()
                }],
            }),
        ),
        (
            name::<cortex_api::AddMcpServers>(),
            json!(cortex_api::AddMcpServers {
                mcp_servers: vec![cortex_api::McpServerRequest {
                    name: "tracker".into(),
                    url: Some("https://mcp.example.com/mcp".into()),
                    headers: [("Authorization".to_owned(), "Bearer t".to_owned())].into(),
                    ..Default::default()
                }],
            }),
        ),
        (
            name::<cortex_api::McpServersAdded>(),
            json!(cortex_api::McpServersAdded {
                added: vec!["tracker".into()],
            }),
        ),
        (name::<SessionView>(), json!(view.clone())),
        (
            name::<SessionPage>(),
            json!(SessionPage {
                sessions: vec![view],
                next_cursor: Some("s0".into()),
            }),
        ),
        (
            name::<CreateTurn>(),
            json!(CreateTurn {
                message: "hi".into(),
                attachments: vec![cortex_api::TurnAttachment {
                    mime_type: Some("image/png".into()),
                    data: "iVBORw0KGgo=".into(),
                }],
            }),
        ),
        (
            name::<TurnCreated>(),
            json!(TurnCreated {
                turn_id: TurnId::from("t1")
            }),
        ),
        (
            name::<StopAnswer>(),
            json!(StopAnswer {
                turn_id: TurnId::from("t1")
            }),
        ),
        (name::<SetMode>(), json!(SetMode { mode: Mode::Spec })),
        (
            name::<SetGoal>(),
            json!(SetGoal {
                objective: "ship".into(),
                budget: Some(goal.budget),
            }),
        ),
        (name::<GoalView>(), json!(GoalView::from(&goal))),
        (
            name::<GoalAnswer>(),
            json!(GoalAnswer {
                goal: GoalView::from(&goal),
                turn_id: Some(TurnId::from("t2")),
            }),
        ),
        (
            name::<SetApproval>(),
            json!(SetApproval {
                approval: ApprovalPolicy::Deny
            }),
        ),
        (
            name::<ApprovalState>(),
            json!(ApprovalState {
                approval: ApprovalPolicy::Ask,
                pending: vec!["call-1".into()],
            }),
        ),
        (
            name::<AnswerApproval>(),
            json!(AnswerApproval {
                decision: ApprovalDecision::Always
            }),
        ),
        (
            name::<ApprovalAnswered>(),
            json!(ApprovalAnswered {
                call_id: "call-1".into(),
                decision: ApprovalDecision::Deny,
            }),
        ),
        (
            name::<RuleList>(),
            json!(RuleList {
                rules: vec![
                    Rule {
                        id: "r1".into(),
                        repository: Some("/r".into()),
                        matches: RuleMatch::Bash {
                            prefix: vec!["git".into(), "status".into()],
                        },
                        created_at: "2026-01-01T00:00:00.000Z".into(),
                    },
                    Rule {
                        id: "r2".into(),
                        repository: None,
                        matches: RuleMatch::Write {
                            glob: "src/**".into(),
                        },
                        created_at: "2026-01-01T00:00:00.000Z".into(),
                    },
                ],
            }),
        ),
        (
            name::<CompactAnswer>(),
            json!(CompactAnswer {
                tokens_before: 10,
                tokens_after: 5,
                messages_before: 8,
                messages_after: 3,
                summarised: 5,
                kept: CompactionKept {
                    task: true,
                    todos: 2,
                    plan_version: Some(1),
                    open_files: vec!["a.txt".into()],
                    diffs: vec!["b.txt".into()],
                    recent_messages: 2,
                },
            }),
        ),
        (
            name::<cortex_api::Rewind>(),
            json!(cortex_api::Rewind {
                turn_id: Some("t1".into()),
                scope: cortex_protocol::RewindScope::Files,
                force: true,
                dry_run: true,
            }),
        ),
        (
            name::<cortex_api::RewindAnswer>(),
            json!(cortex_api::RewindAnswer {
                turn_id: "t1".into(),
                scope: cortex_protocol::RewindScope::Both,
                created: vec!["a.txt".into()],
                changed: vec!["b.txt".into()],
                deleted: vec!["c.txt".into()],
                undo: Some("undo-1".into()),
                forced: vec!["b.txt".into()],
                dry_run: true,
                changed_outside: vec!["b.txt".into()],
            }),
        ),
        (
            name::<cortex_api::CommandList>(),
            json!(cortex_api::CommandList {
                commands: vec![cortex_protocol::CommandInfo {
                    name: "git:commit".into(),
                    description: "Commit".into(),
                    argument_hint: Some("<message>".into()),
                    mode: Some("plan".into()),
                    model: None,
                    scope: cortex_protocol::ExtensionScope::Repository,
                    path: ".cortex/commands/git/commit.md".into(),
                }],
                rejected: vec![cortex_protocol::RejectedFile {
                    scope: cortex_protocol::ExtensionScope::User,
                    path: "~/.config/cortex/commands/x.md".into(),
                    reason: "the prompt is empty".into(),
                }],
            }),
        ),
        (
            name::<cortex_api::HookList>(),
            json!(cortex_api::HookList {
                files: vec![cortex_api::HookFile {
                    file: ".cortex/hooks.json".into(),
                    sha256: "ab".repeat(32),
                    trusted: false,
                    hooks: vec![cortex_api::HookEntry {
                        event: "PreToolUse".into(),
                        matcher: Some("Bash".into()),
                        command: "./guard.sh".into(),
                        timeout_ms: Some(5000),
                    }],
                    skipped: vec!["Notification: an event Cortex does not run yet".into()],
                }],
                rejected: vec![cortex_api::RejectedHookFile {
                    file: ".claude/settings.json".into(),
                    reason: "a symbolic link: not followed".into(),
                }],
            }),
        ),
        (
            name::<cortex_api::ProcessList>(),
            json!(cortex_api::ProcessList {
                processes: vec![cortex_protocol::ProcessInfo {
                    id: "bg1".into(),
                    command: "python3 -m http.server 8000".into(),
                    started_at: "2026-12-07T18:00:00.000Z".into(),
                    running_ms: 1500,
                    running: true,
                    output_bytes: 120,
                    exit_code: None,
                    ended: None,
                }],
            }),
        ),
        (
            name::<cortex_protocol::ProcessInfo>(),
            json!(cortex_protocol::ProcessInfo {
                id: "bg2".into(),
                command: "npm run dev".into(),
                started_at: "2026-12-07T18:00:00.000Z".into(),
                running_ms: 60000,
                running: false,
                output_bytes: 0,
                exit_code: Some(1),
                ended: Some("exited".into()),
            }),
        ),
        (
            name::<cortex_api::TrustHooks>(),
            json!(cortex_api::TrustHooks {
                file: ".cortex/hooks.json".into(),
                sha256: "ab".repeat(32),
            }),
        ),
        (
            name::<cortex_api::RunCommand>(),
            json!(cortex_api::RunCommand {
                name: "review".into(),
                arguments: "a.py".into(),
            }),
        ),
        (
            name::<ErrorBody>(),
            json!(ErrorBody {
                error: cortex_api::ErrorDetail {
                    code: "not_found".into(),
                    message: "no session".into(),
                    paths: vec!["a.txt".into()],
                },
            }),
        ),
    ];
    for (schema, value) in examples {
        let at = format!("#/components/schemas/{schema}");
        if let Err(why) = conforms(&doc, &json!({ "$ref": at }), &value, &schema) {
            panic!("{why}");
        }
    }
}

/// Whether `value` matches `schema` as far as this API's schemas go; the
/// first mismatch otherwise.
fn conforms(doc: &Value, schema: &Value, value: &Value, at: &str) -> Result<(), String> {
    macro_rules! check {
        ($cond:expr, $($why:tt)*) => {
            if !$cond {
                return Err(format!($($why)*));
            }
        };
    }
    if let Some(name) = reference(schema) {
        let target = &doc["components"]["schemas"][name];
        check!(target.is_object(), "{at}: no component {name}");
        return conforms(doc, target, value, &format!("{at}→{name}"));
    }
    if let Some(branches) = schema["oneOf"].as_array() {
        let matching = branches
            .iter()
            .filter(|b| conforms(doc, b, value, at).is_ok())
            .count();
        check!(
            matching == 1,
            "{at}: {value} matches {matching} of {schema}"
        );
        return Ok(());
    }
    if let Some(names) = schema["enum"].as_array() {
        check!(names.contains(value), "{at}: {value} not in {schema}");
        return Ok(());
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => return Err(format!("{at}: a schema without a type: {schema}")),
    };
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_u64() || n.is_i64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    check!(
        types.contains(&kind) || (kind == "integer" && types.contains(&"number")),
        "{at}: {value} is not {types:?}"
    );
    match value {
        Value::Object(fields) => {
            let properties = schema["properties"].as_object();
            for (key, field) in fields {
                // A map (`env`) documents its values, not its keys.
                let property = properties
                    .and_then(|p| p.get(key))
                    .or_else(|| schema.get("additionalProperties").filter(|a| a.is_object()));
                let Some(property) = property else {
                    return Err(format!("{at}: `{key}` is not documented"));
                };
                conforms(doc, property, field, &format!("{at}.{key}"))?;
            }
            for required in schema["required"].as_array().into_iter().flatten() {
                let key = required.as_str().unwrap_or_default();
                check!(fields.contains_key(key), "{at}: required `{key}` missing");
            }
        }
        Value::Array(items) => {
            for item in items {
                conforms(doc, &schema["items"], item, &format!("{at}[]"))?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Each documented route is one the router answers: without a token it is
/// a 401 (an unknown path would be a 404, a wrong method a 405).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_documented_route_is_served() {
    let server = start().await;
    for route in ROUTES {
        let method: Method = route.method.to_uppercase().parse().expect("method");
        let path = route
            .path
            .replace("{id}", "s-unknown")
            .replace("{call_id}", "c-unknown")
            .replace("{share}", "sh-unknown");
        let body = route.request.map(|_| json!({}));
        let (status, answer) = server.send(method, &path, None, body).await;
        let expected = if route.path == "/healthz" { 200 } else { 401 };
        assert_eq!(status, expected, "{} {path}: {answer}", route.method);
    }
}
