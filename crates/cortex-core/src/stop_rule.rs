//! Stop-rule presets. Code has none (the model stops or the user does); Chat
//! and Bot have budgets, kept here so one harness serves every product.

use cortex_protocol::{StopRule, ToolName};
use std::time::{Duration, Instant};

const CHAT_MAX_TOOL_ROUNDS: u32 = 8;
const BOT_DEADLINE: Duration = Duration::from_secs(15 * 60);
const BOT_MAX_IDENTICAL_CALLS: usize = 6;
/// Under every rule: the same call to a tool whose result cannot change
/// (nothing ran in between) is refused from this repetition on. Small models
/// otherwise loop on one `read_file` until Stop (the task set,
/// docs/BENCHMARKS.md).
const MAX_IDENTICAL_IDEMPOTENT_CALLS: usize = 3;
/// How the refusal of a repeated call starts; the tool's name follows.
/// Every [`CallCheck::Refuse`] is of a repeat: the dispatcher records that
/// the next reply may not call the tool (`CallSteer::Bars`).
const REPEAT_REFUSAL: &str = "not run: this is the same ";

/// What a call did, as the stop rule hears it ([`StopRuleState::on_result`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ran {
    /// It succeeded and changed a file.
    Changed,
    /// It succeeded and changed nothing.
    Succeeded,
    /// It failed, was refused or was stopped.
    Failed,
}

/// The stop-rule gate's verdict on one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallCheck {
    Run,
    /// Answer this call with the reason; the turn goes on.
    Refuse(String),
    /// Answer this call with the reason and end the turn.
    Stop(String),
}

/// Per-turn state of the session's stop rule.
#[derive(Debug)]
pub struct StopRuleState {
    rule: StopRule,
    started: Instant,
    tool_rounds: u32,
    /// The most recent call and how many times in a row it was made.
    last_call: Option<(String, String)>,
    repeats: usize,
    /// What the most recent call did when it ran
    /// ([`StopRuleState::on_result`]).
    last_ran: Ran,
    /// The most recent call gives the same result when repeated.
    last_idempotent: bool,
}

impl StopRuleState {
    /// The state of `rule` for a turn that starts now.
    pub fn new(rule: StopRule) -> Self {
        Self::starting_at(rule, Instant::now())
    }

    /// The state of `rule` for a turn that started at `started`.
    pub fn starting_at(rule: StopRule, started: Instant) -> Self {
        StopRuleState {
            rule,
            started,
            tool_rounds: 0,
            last_call: None,
            repeats: 0,
            last_ran: Ran::Failed,
            last_idempotent: false,
        }
    }

    /// Called when a round produced tool calls. Returns why the turn must stop
    /// instead of running them.
    pub fn on_tool_round(&mut self) -> Option<String> {
        self.tool_rounds += 1;
        match self.rule {
            StopRule::Chat if self.tool_rounds > CHAT_MAX_TOOL_ROUNDS => Some(format!(
                "stop rule `chat`: the budget of {CHAT_MAX_TOOL_ROUNDS} tool rounds is spent"
            )),
            StopRule::Bot if self.started.elapsed() >= BOT_DEADLINE => Some(format!(
                "stop rule `bot`: the {}-minute deadline passed",
                BOT_DEADLINE.as_secs() / 60
            )),
            _ => None,
        }
    }

    /// Called with each call's outcome once it ran (or was refused). Only
    /// the most recent call's is kept.
    pub fn on_result(&mut self, name: &str, arguments: &str, ran: Ran) {
        let call = (name.to_owned(), arguments.trim().to_owned());
        if self.last_call.as_ref() == Some(&call) {
            self.last_ran = ran;
        }
    }

    /// The call that failed or was refused and that
    /// [`StopRuleState::check_call`] would refuse if it came next (the most
    /// recent one, made again), as a request's [`cortex_model::RefusedCall`].
    /// A repeat of a call that succeeded is not named: refused, it tells the
    /// model to go on, while a reply drawn again in its place may undo the
    /// work (a version bumped, then written back).
    pub fn refused_next(&self) -> Option<cortex_model::RefusedCall> {
        let (name, arguments) = self.last_call.as_ref()?;
        let spent = self.last_idempotent && self.repeats + 1 >= MAX_IDENTICAL_IDEMPOTENT_CALLS;
        (spent && self.last_ran == Ran::Failed).then(|| cortex_model::RefusedCall {
            name: name.clone(),
            arguments: arguments.clone(),
            instead: None,
        })
    }

    /// The gate for one call. `idempotent`: the call gives the same result
    /// when repeated right away (reads, searches, an edit, a write).
    pub fn check_call(&mut self, name: &str, arguments: &str, idempotent: bool) -> CallCheck {
        let call = (name.to_owned(), arguments.trim().to_owned());
        if self.last_call.as_ref() == Some(&call) {
            self.repeats += 1;
        } else {
            self.last_call = Some(call);
            self.repeats = 1;
            self.last_ran = Ran::Failed;
        }
        self.last_idempotent = idempotent;
        if self.rule == StopRule::Bot && self.repeats >= BOT_MAX_IDENTICAL_CALLS {
            return CallCheck::Stop(format!(
                "stop rule `bot`: {BOT_MAX_IDENTICAL_CALLS} identical consecutive calls to {name}"
            ));
        }
        // An edit made again applies its change twice: an insertion's
        // quote is still there after it (a small model's new section went
        // in twice). A refused edit stays repeatable.
        if name == ToolName::EditFile.as_str() && self.repeats >= 2 && self.last_ran == Ran::Changed
        {
            return CallCheck::Refuse(format!(
                "{REPEAT_REFUSAL}{name} call as the previous one, which was made: made again it \
                 would apply its change a second time. The file has the change (its diff is \
                 above); go on with the task, or answer"
            ));
        }
        if idempotent && self.repeats >= MAX_IDENTICAL_IDEMPOTENT_CALLS {
            return CallCheck::Refuse(format!(
                "{REPEAT_REFUSAL}{name} call as the previous {} and its result \
                 (above) cannot have changed; use that result to answer, or do something else",
                self.repeats - 1
            ));
        }
        CallCheck::Run
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_never_stops() {
        let mut s = StopRuleState::new(StopRule::Code);
        for _ in 0..100 {
            assert_eq!(s.on_tool_round(), None);
            assert_eq!(s.check_call("bash", "{}", false), CallCheck::Run);
        }
    }

    #[test]
    fn a_third_identical_read_is_refused_under_every_rule() {
        for rule in [StopRule::Code, StopRule::Chat, StopRule::Bot] {
            let mut s = StopRuleState::new(rule);
            let read = r#"{"path":"a.py"}"#;
            assert_eq!(s.check_call("read_file", read, true), CallCheck::Run);
            assert_eq!(s.check_call("read_file", read, true), CallCheck::Run);
            assert!(matches!(
                s.check_call("read_file", read, true),
                CallCheck::Refuse(_)
            ));
            let CallCheck::Refuse(refusal) = s.check_call("read_file", read, true) else {
                panic!("a fourth identical read runs");
            };
            assert!(refusal.contains("read_file"), "{refusal}");
            // Something else in between starts the count again.
            assert_eq!(s.check_call("bash", "{}", false), CallCheck::Run);
            assert_eq!(s.check_call("read_file", read, true), CallCheck::Run);
        }
    }

    #[test]
    fn an_edit_made_is_not_made_again_and_a_refused_one_may_be() {
        let mut s = StopRuleState::new(StopRule::Code);
        let edit = r#"{"path":"README.md","old_string":"Install","new_string":"Install\n\nUsage"}"#;
        assert_eq!(s.check_call("edit_file", edit, true), CallCheck::Run);
        s.on_result("edit_file", edit, Ran::Changed);
        let CallCheck::Refuse(refusal) = s.check_call("edit_file", edit, true) else {
            panic!("an insertion made twice");
        };
        assert!(refusal.contains("edit_file"), "{refusal}");
        // Refused (or failed) before: the same call runs again.
        let mut s = StopRuleState::new(StopRule::Code);
        assert_eq!(s.check_call("edit_file", edit, true), CallCheck::Run);
        s.on_result("edit_file", edit, Ran::Failed);
        assert_eq!(s.check_call("edit_file", edit, true), CallCheck::Run);
        // Another call in between starts again.
        let mut s = StopRuleState::new(StopRule::Code);
        assert_eq!(s.check_call("edit_file", edit, true), CallCheck::Run);
        s.on_result("edit_file", edit, Ran::Changed);
        assert_eq!(s.check_call("bash", "{}", false), CallCheck::Run);
        assert_eq!(s.check_call("edit_file", edit, true), CallCheck::Run);
    }

    #[test]
    fn the_call_refused_next_is_the_failing_one_the_gate_refuses() {
        let edit = r#"{"path":"a.py","old_string":"x","new_string":"y"}"#;
        let mut s = StopRuleState::new(StopRule::Code);
        assert_eq!(s.refused_next(), None);
        // A made edit: its repeat is refused, but not named (it may go).
        assert_eq!(s.check_call("edit_file", edit, true), CallCheck::Run);
        s.on_result("edit_file", edit, Ran::Changed);
        assert_eq!(s.refused_next(), None);
        assert!(matches!(
            s.check_call("edit_file", edit, true),
            CallCheck::Refuse(_)
        ));
        // A read that succeeded twice: the third is refused, not named.
        let read = r#"{"path":"a.py"}"#;
        for _ in 0..2 {
            assert_eq!(s.check_call("read_file", read, true), CallCheck::Run);
            s.on_result("read_file", read, Ran::Succeeded);
        }
        assert_eq!(s.refused_next(), None);
        // A failed edit may come once more; the third is refused.
        let mut s = StopRuleState::new(StopRule::Code);
        assert_eq!(s.check_call("edit_file", edit, true), CallCheck::Run);
        s.on_result("edit_file", edit, Ran::Failed);
        assert_eq!(s.refused_next(), None);
        assert_eq!(s.check_call("edit_file", edit, true), CallCheck::Run);
        s.on_result("edit_file", edit, Ran::Failed);
        let next = s.refused_next().expect("a third failing edit is refused");
        assert!(next.matches("edit_file", edit));
        assert!(matches!(
            s.check_call("edit_file", edit, true),
            CallCheck::Refuse(_)
        ));
        // A command is never refused as a repeat.
        let mut s = StopRuleState::new(StopRule::Code);
        for _ in 0..4 {
            assert_eq!(s.check_call("bash", "{}", false), CallCheck::Run);
            assert_eq!(s.refused_next(), None);
        }
    }

    #[test]
    fn chat_allows_eight_tool_rounds() {
        let mut s = StopRuleState::new(StopRule::Chat);
        for _ in 0..8 {
            assert_eq!(s.on_tool_round(), None);
        }
        assert!(s.on_tool_round().is_some());
    }

    #[test]
    fn bot_stops_on_six_identical_calls_or_deadline() {
        let mut s = StopRuleState::new(StopRule::Bot);
        for _ in 0..5 {
            assert_eq!(
                s.check_call("bash", r#"{"command":"x"}"#, false),
                CallCheck::Run
            );
        }
        assert!(matches!(
            s.check_call("bash", r#"{"command":"x"}"#, false),
            CallCheck::Stop(_)
        ));
        let mut s = StopRuleState::new(StopRule::Bot);
        for i in 0..20 {
            let arguments = format!("{{\"n\":{}}}", i % 2);
            assert_eq!(s.check_call("grep", &arguments, true), CallCheck::Run);
        }
        let long_ago = Instant::now().checked_sub(BOT_DEADLINE + Duration::from_secs(1));
        if let Some(start) = long_ago {
            let mut s = StopRuleState::starting_at(StopRule::Bot, start);
            assert!(s.on_tool_round().is_some());
        }
    }
}
