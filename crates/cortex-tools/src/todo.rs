use cortex_protocol::Todo;

/// The todo list as the model reads it back.
pub fn render_todos(todos: &[Todo]) -> String {
    let _ = todos;
    unimplemented!()
}
