//! Tools that act on session state held by the harness rather than on the
//! workspace: the todo list and the plan; and the dispatch of every such
//! tool (`run_session_tool`).

use crate::answer::Answer;
use crate::{CoreError, Session};
use cortex_protocol::{EventKind, PlanArgs, TodoWriteArgs, ToolArgs, TurnId};
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

    /// Run a tool that acts on session state (todos, plan, spec, goal,
    /// background commands: `bash` with `background` too); any other tool
    /// is handed back.
    pub(crate) async fn run_session_tool(
        &mut self,
        turn: &TurnId,
        args: ToolArgs,
    ) -> Result<Result<Answer, ToolArgs>, CoreError> {
        Ok(Ok(match args {
            ToolArgs::TodoWrite(a) => self.todo_write(turn, a).await?,
            ToolArgs::Plan(a) => self.plan(turn, a).await?,
            ToolArgs::Spec(a) => self.spec_tool(turn, a).await?,
            ToolArgs::Goal(a) => self.goal_tool(turn, a).await?,
            ToolArgs::Skill(a) => self.skill_tool(a).await?,
            ToolArgs::Bash(a) if a.in_background() => self.start_background(turn, a).await?,
            ToolArgs::BashOutput(a) => self.bash_output(&a),
            ToolArgs::BashKill(a) => self.bash_kill(&a).await,
            args => return Ok(Err(args)),
        }))
    }
}
