//! Rendering the turn's task list for the model to read back.

use cortex_protocol::{Todo, TodoStatus};

/// The todo list as the model reads it back.
pub fn render_todos(todos: &[Todo]) -> String {
    if todos.is_empty() {
        return "The todo list is empty.".to_owned();
    }
    let lines: Vec<String> = todos
        .iter()
        .map(|todo| {
            let mark = match todo.status {
                TodoStatus::Completed => "[x]",
                TodoStatus::InProgress => "[~]",
                TodoStatus::Pending => "[ ]",
            };
            format!("{mark} {}", todo.content)
        })
        .collect();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn todo(content: &str, status: TodoStatus) -> Todo {
        Todo {
            content: content.to_owned(),
            status,
        }
    }

    #[test]
    fn renders_a_checklist() {
        let todos = [
            todo("done item", TodoStatus::Completed),
            todo("in progress", TodoStatus::InProgress),
            todo("pending", TodoStatus::Pending),
        ];
        assert_eq!(
            render_todos(&todos),
            "[x] done item\n[~] in progress\n[ ] pending"
        );
    }

    #[test]
    fn empty_list_says_so() {
        assert_eq!(render_todos(&[]), "The todo list is empty.");
    }
}
