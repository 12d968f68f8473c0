//! `/goal`: set the session's goal (`/goal OBJECTIVE`), show it (`/goal`),
//! or `/goal pause|resume|clear`; and the chip the composer's border shows
//! for it (`Agent — Goal · 2/8`).

use crate::app::App;
use crate::app::command::{Command, GoalCommand};

/// Run `/goal ARGS`.
pub fn run(app: &mut App, args: &str) -> Vec<Command> {
    let command = match args {
        "" => {
            let shown = match &app.state.goal {
                Some(goal) => goal.summary(),
                None => "no goal · /goal OBJECTIVE sets one".to_owned(),
            };
            app.flash(&shown);
            return Vec::new();
        }
        "pause" => GoalCommand::Pause,
        "resume" => GoalCommand::Resume,
        "clear" => GoalCommand::Clear,
        objective => GoalCommand::Set(objective.to_owned()),
    };
    if !matches!(command, GoalCommand::Set(_)) && app.state.goal.is_none() {
        app.flash("no goal · /goal OBJECTIVE sets one");
        return Vec::new();
    }
    vec![Command::Goal(command)]
}

impl App {
    /// The chips after the mode on the composer's border: the goal's, then
    /// any others.
    pub fn chips_shown(&self) -> Vec<String> {
        let goal = self.state.goal.as_ref().map(|g| g.chip());
        goal.into_iter().chain(self.chips.iter().cloned()).collect()
    }
}
