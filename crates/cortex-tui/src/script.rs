//! Timelines written by hand, for tests and benchmarks: events with
//! increasing seqs and timestamps, shaped as the server writes them.

use cortex_protocol::{
    CallId, Event, EventKind, Mode, OutputStream, Sandbox, SessionId, StopRule, ToolStatus, TurnId,
};

/// 2026-11-30T12:00:00.000Z, the first event's time.
pub const T0: i64 = 1_796_040_000_000;

pub struct Script {
    seq: u64,
    /// Milliseconds after [`T0`].
    pub at: i64,
    session: SessionId,
    turn: Option<TurnId>,
    turns: u32,
    pub events: Vec<Event>,
}

impl Script {
    /// A session on `/work/calc` with `model`, in Agent mode.
    pub fn new(model: &str) -> Script {
        let mut script = Script {
            seq: 0,
            at: 0,
            session: "s1".into(),
            turn: None,
            turns: 0,
            events: Vec::new(),
        };
        script.push(EventKind::SessionCreated {
            repository: "/work/calc".into(),
            mode: Mode::Agent,
            model: model.into(),
            stop_rule: StopRule::Code,
            sandbox: Sandbox::default(),
            parent: None,
        });
        script
    }

    /// Time passes.
    pub fn wait(&mut self, ms: i64) -> &mut Script {
        self.at += ms;
        self
    }

    pub fn push(&mut self, kind: EventKind) -> &mut Script {
        self.seq += 1;
        self.events.push(Event {
            seq: self.seq,
            ts: cortex_protocol::calendar::format_rfc3339_ms(T0 + self.at),
            session_id: self.session.clone(),
            turn_id: self.turn.clone(),
            kind,
        });
        self
    }

    pub fn turn(&mut self, message: &str) -> &mut Script {
        self.turns += 1;
        self.turn = Some(format!("t{}", self.turns).into());
        self.push(EventKind::TurnStarted {
            message: message.into(),
            mode: Mode::Agent,
        })
    }

    pub fn request(&mut self, round: u32) -> &mut Script {
        self.push(EventKind::ModelRequest {
            round,
            model: "m".into(),
            messages: 1,
            tools: Vec::new(),
            bytes: 1000,
        })
    }

    pub fn delta(&mut self, text: &str) -> &mut Script {
        self.push(EventKind::MessageDelta { text: text.into() })
    }

    pub fn done(&mut self, text: &str) -> &mut Script {
        self.push(EventKind::MessageDone {
            text: text.into(),
            provider_items: Vec::new(),
        })
    }

    pub fn call(&mut self, id: &str, name: &str, arguments: serde_json::Value) -> &mut Script {
        self.push(EventKind::ToolCall {
            call_id: CallId(id.into()),
            name: name.into(),
            arguments: arguments.to_string(),
        })
    }

    pub fn output(&mut self, id: &str, text: &str) -> &mut Script {
        self.push(EventKind::ToolOutputDelta {
            call_id: CallId(id.into()),
            stream: OutputStream::Stdout,
            text: text.into(),
        })
    }

    pub fn result(
        &mut self,
        id: &str,
        name: &str,
        status: ToolStatus,
        output: &str,
        diff: Option<&str>,
    ) -> &mut Script {
        let ms = 1_200.0;
        self.push(EventKind::ToolResult {
            call_id: CallId(id.into()),
            name: name.into(),
            status,
            output: output.into(),
            ms,
            diff: diff.map(str::to_owned),
            attachments: Vec::new(),
            steer: None,
        })
    }

    pub fn refuse(&mut self, id: &str, name: &str, reason: &str) -> &mut Script {
        self.push(EventKind::ToolRefused {
            call_id: CallId(id.into()),
            name: name.into(),
            reason: reason.into(),
        });
        self.result(id, name, ToolStatus::Refused, reason, None)
    }

    pub fn usage(&mut self, input: u64, output: u64) -> &mut Script {
        self.push(EventKind::Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            cost_usd: None,
        })
    }

    pub fn completed(&mut self, rounds: u32) -> &mut Script {
        self.push(EventKind::TurnCompleted {
            rounds,
            finish: None,
            unverified: Vec::new(),
        });
        self.turn = None;
        self
    }

    pub fn stopped(&mut self) -> &mut Script {
        self.push(EventKind::TurnStopped {
            reason: "stopped by user".into(),
        });
        self.turn = None;
        self
    }
}
