//! Stop-rule presets. Code has none (the model stops or the user does); Chat
//! and Bot have budgets, kept here so one harness serves every product.

use cortex_protocol::StopRule;
use std::time::{Duration, Instant};

const CHAT_MAX_TOOL_ROUNDS: u32 = 8;
const BOT_DEADLINE: Duration = Duration::from_secs(15 * 60);
const BOT_MAX_IDENTICAL_CALLS: usize = 6;

/// Per-turn state of the session's stop rule.
#[derive(Debug)]
pub struct StopRuleState {
    rule: StopRule,
    started: Instant,
    tool_rounds: u32,
    /// The most recent call and how many times in a row it was made.
    last_call: Option<(String, String)>,
    repeats: usize,
}

impl StopRuleState {
    pub fn new(rule: StopRule) -> Self {
        Self::starting_at(rule, Instant::now())
    }

    pub fn starting_at(rule: StopRule, started: Instant) -> Self {
        StopRuleState {
            rule,
            started,
            tool_rounds: 0,
            last_call: None,
            repeats: 0,
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

    /// The stop-rule gate for one call. Returns why it is refused.
    pub fn check_call(&mut self, name: &str, arguments: &str) -> Option<String> {
        if self.rule != StopRule::Bot {
            return None;
        }
        let call = (name.to_owned(), arguments.trim().to_owned());
        if self.last_call.as_ref() == Some(&call) {
            self.repeats += 1;
        } else {
            self.last_call = Some(call);
            self.repeats = 1;
        }
        (self.repeats >= BOT_MAX_IDENTICAL_CALLS).then(|| {
            format!(
                "stop rule `bot`: {BOT_MAX_IDENTICAL_CALLS} identical consecutive calls to {name}"
            )
        })
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
            assert_eq!(s.check_call("bash", "{}"), None);
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
            assert_eq!(s.check_call("grep", r#"{"pattern":"x"}"#), None);
        }
        assert!(s.check_call("grep", r#"{"pattern":"x"}"#).is_some());
        let mut s = StopRuleState::new(StopRule::Bot);
        for i in 0..20 {
            assert_eq!(s.check_call("grep", &format!("{{\"n\":{}}}", i % 2)), None);
        }
        let long_ago = Instant::now().checked_sub(BOT_DEADLINE + Duration::from_secs(1));
        if let Some(start) = long_ago {
            let mut s = StopRuleState::starting_at(StopRule::Bot, start);
            assert!(s.on_tool_round().is_some());
        }
    }
}
