//! Tools that act on session state held by the harness rather than on the
//! workspace: the todo list and the plan.

use crate::answer::Answer;
use crate::{CoreError, Session};
use cortex_protocol::{EventKind, PlanArgs, TodoWriteArgs, TurnId};
use cortex_tools::{render_todos, validate_plan};

impl Session {
    pub(crate) async fn todo_write(
        &mut self,
        turn: &TurnId,
        args: TodoWriteArgs,
    ) -> Result<Answer, CoreError> {
        let todos = args.todos;
        self.record(Some(turn), EventKind::TodoUpdated { todos })
            .await?;
        Ok(Answer::ok(render_todos(&self.state.todos)))
    }

    pub(crate) async fn plan(
        &mut self,
        turn: &TurnId,
        args: PlanArgs,
    ) -> Result<Answer, CoreError> {
        if let Err(problem) = validate_plan(&args.markdown) {
            return Ok(Answer::error(problem.to_string()));
        }
        let version = self.next_plan_version();
        self.record_plan(
            Some(turn),
            EventKind::PlanProposed {
                version,
                title: args.title,
                markdown: args.markdown,
            },
        )
        .await?;
        Ok(Answer::ok(format!(
            "Plan v{version} recorded; the user will review it. Do not start implementing; end your turn with a one-line summary."
        )))
    }
}
