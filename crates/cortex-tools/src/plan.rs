/// A plan must contain a ```mermaid block whose first non-empty line declares
/// a diagram type (flowchart, graph, sequenceDiagram, …). The error says what
/// is missing, for the model to fix.
pub fn validate_plan(markdown: &str) -> Result<(), String> {
    let _ = markdown;
    unimplemented!()
}
