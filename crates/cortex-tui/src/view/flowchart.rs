//! A mermaid `flowchart` (or `graph`) drawn as boxes and arrows, top-down,
//! for the plan and spec views.
//!
//! Only what can be drawn faithfully is drawn: nodes and edges of one
//! statement per line (`A[Label] --> B{Other}`, chains, `-->|label|`), laid
//! out in layers by their longest path from a source. Between two layers
//! the edges share one bus row, so it is drawn only when one side of them
//! is a single node (then the bus says exactly who goes where). A cycle,
//! an edge that skips a layer, a subgraph, `&`, an unknown statement, or a
//! layer wider than the screen gives `None`, and the caller shows the
//! folded source instead. Edge labels are left out (the source, one key
//! away, has them). `LR` charts are drawn top-down too.
//!
//! The source has been sanitised already (the fold cleans every string).

use crate::text;
use std::collections::HashMap;

/// At most this many nodes are drawn.
const MAX_NODES: usize = 24;
/// A label longer than this is cut with `…`.
const MAX_LABEL: usize = 24;
/// Columns between two boxes of a layer.
const GAP: usize = 2;

/// The chart's rows, each at most `width` cells; `None` when it cannot be
/// drawn faithfully in `width` (see the module doc).
pub fn draw(source: &str, width: usize) -> Option<Vec<String>> {
    let chart = parse(source)?;
    let layers = layers(&chart)?;
    render(&chart, &layers, width)
}

/// A parsed chart: node labels in order of first appearance, and edges.
#[derive(Debug, Default, PartialEq)]
struct Chart {
    ids: Vec<String>,
    labels: Vec<String>,
    edges: Vec<(usize, usize)>,
}

impl Chart {
    fn node(&mut self, id: &str, label: Option<String>) -> usize {
        let index = match self.ids.iter().position(|i| i == id) {
            Some(index) => index,
            None => {
                self.ids.push(id.to_owned());
                self.labels.push(id.to_owned());
                self.ids.len() - 1
            }
        };
        if let Some(label) = label {
            self.labels[index] = label;
        }
        index
    }
}

fn parse(source: &str) -> Option<Chart> {
    let mut lines = source
        .lines()
        .flat_map(|l| l.split(';'))
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("%%"));
    let header: Vec<&str> = lines.next()?.split_whitespace().collect();
    let directions = ["TD", "TB", "LR", "RL", "BT"];
    match header.as_slice() {
        [kind, dir] if matches!(*kind, "flowchart" | "graph") && directions.contains(dir) => {}
        _ => return None,
    }
    let mut chart = Chart::default();
    for line in lines {
        let first = line.split_whitespace().next().unwrap_or_default();
        if matches!(
            first,
            "classDef" | "class" | "style" | "linkStyle" | "click"
        ) {
            continue;
        }
        statement(line, &mut chart)?;
    }
    (!chart.ids.is_empty() && chart.ids.len() <= MAX_NODES).then_some(chart)
}

/// One statement: a node, then any number of `arrow node`.
fn statement(line: &str, chart: &mut Chart) -> Option<()> {
    let mut rest = line;
    let (id, label, after) = node(rest)?;
    let mut from = chart.node(id, label);
    rest = after.trim_start();
    while !rest.is_empty() {
        rest = arrow(rest)?.trim_start();
        let (id, label, after) = node(rest)?;
        let to = chart.node(id, label);
        chart.edges.push((from, to));
        from = to;
        rest = after.trim_start();
    }
    Some(())
}

/// `id` with an optional shaped label; the rest of the line after it.
fn node(text: &str) -> Option<(&str, Option<String>, &str)> {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    let (id, rest) = text.split_at(end);
    if id.is_empty() || matches!(id, "subgraph" | "end") {
        return None;
    }
    const SHAPES: [(&str, &str); 10] = [
        ("((", "))"),
        ("([", "])"),
        ("[[", "]]"),
        ("[(", ")]"),
        ("{{", "}}"),
        ("[", "]"),
        ("(", ")"),
        ("{", "}"),
        (">", "]"),
        ("", ""),
    ];
    for (open, close) in SHAPES {
        if open.is_empty() {
            return Some((id, None, rest));
        }
        if let Some(inner) = rest.strip_prefix(open) {
            let at = inner.find(close)?;
            let label = inner[..at].trim().trim_matches('"').trim();
            return Some((id, Some(label.to_owned()), &inner[at + close.len()..]));
        }
    }
    None
}

/// An edge (`-->`, `---`, `-.->`, `==>`, with an optional `|label|`); the
/// rest after it.
fn arrow(text: &str) -> Option<&str> {
    let end = text
        .find(|c: char| !matches!(c, '-' | '=' | '.' | '<' | '>'))
        .unwrap_or(text.len());
    let token = &text[..end];
    if token.len() < 2 || !token.contains(['-', '=']) {
        return None;
    }
    let rest = text[end..].trim_start();
    match rest.strip_prefix('|') {
        Some(label) => label.find('|').map(|at| &label[at + 1..]),
        None => Some(rest),
    }
}

/// Nodes by layer (longest path from a source); `None` on a cycle or an
/// edge that skips a layer.
fn layers(chart: &Chart) -> Option<Vec<Vec<usize>>> {
    let n = chart.ids.len();
    let mut incoming = vec![0usize; n];
    for &(_, to) in &chart.edges {
        incoming[to] += 1;
    }
    let mut rank = vec![0usize; n];
    let mut ready: Vec<usize> = (0..n).filter(|&i| incoming[i] == 0).collect();
    let mut done = 0;
    while let Some(node) = ready.pop() {
        done += 1;
        for &(from, to) in &chart.edges {
            if from == node {
                rank[to] = rank[to].max(rank[node] + 1);
                incoming[to] -= 1;
                if incoming[to] == 0 {
                    ready.push(to);
                }
            }
        }
    }
    if done < n || chart.edges.iter().any(|&(f, t)| rank[t] != rank[f] + 1) {
        return None;
    }
    let depth = rank.iter().max().copied().unwrap_or(0) + 1;
    let mut layers = vec![Vec::new(); depth];
    for (node, r) in rank.iter().enumerate() {
        layers[*r].push(node);
    }
    Some(layers)
}

/// Where each node's box sits: `(x, width)`, per layer centred on the
/// widest.
fn place(layers: &[Vec<usize>], labels: &[String]) -> HashMap<usize, (usize, usize)> {
    let box_width = |node: usize| text::width(&labels[node]) + 4;
    let layer_width = |layer: &Vec<usize>| {
        layer.iter().map(|&n| box_width(n)).sum::<usize>() + GAP * layer.len().saturating_sub(1)
    };
    let widest = layers.iter().map(layer_width).max().unwrap_or(0);
    let mut at = HashMap::new();
    for layer in layers {
        let mut x = (widest - layer_width(layer)) / 2;
        for &node in layer {
            at.insert(node, (x, box_width(node)));
            x += box_width(node) + GAP;
        }
    }
    at
}

fn render(chart: &Chart, layers: &[Vec<usize>], width: usize) -> Option<Vec<String>> {
    let labels: Vec<String> = chart
        .labels
        .iter()
        .map(|l| text::truncate(l, MAX_LABEL).into_owned())
        .collect();
    // The canvas holds one char per cell: wide or zero-width text falls
    // back to the source.
    if labels
        .iter()
        .any(|l| l.chars().any(|c| text::char_width(c) != 1))
    {
        return None;
    }
    let at = place(layers, &labels);
    let widest = at.values().map(|(x, w)| x + w).max().unwrap_or(0);
    if widest > width {
        return None;
    }
    let mut rows = Vec::new();
    for (i, layer) in layers.iter().enumerate() {
        let mut top = Canvas::new(widest);
        let mut middle = Canvas::new(widest);
        let mut bottom = Canvas::new(widest);
        for &node in layer {
            let (x, w) = at[&node];
            top.put(x, &format!("┌{}┐", "─".repeat(w - 2)));
            let pad = w - 4 - text::width(&labels[node]);
            middle.put(x, &format!("│ {}{} │", labels[node], " ".repeat(pad)));
            bottom.put(x, &format!("└{}┘", "─".repeat(w - 2)));
        }
        rows.extend([top.row(), middle.row(), bottom.row()]);
        if let Some(next) = layers.get(i + 1) {
            rows.extend(connector(chart, layer, next, &at, widest)?);
        }
    }
    Some(rows)
}

/// The three rows between two layers: a stem under each source, a bus,
/// an arrowhead over each target. `None` when the bus would be ambiguous.
fn connector(
    chart: &Chart,
    upper: &[usize],
    lower: &[usize],
    at: &HashMap<usize, (usize, usize)>,
    width: usize,
) -> Option<[String; 3]> {
    let centre = |node: usize| at[&node].0 + at[&node].1 / 2;
    let edges: Vec<(usize, usize)> = chart
        .edges
        .iter()
        .filter(|(f, t)| upper.contains(f) && lower.contains(t))
        .map(|&(f, t)| (centre(f), centre(t)))
        .collect();
    let mut sources: Vec<usize> = edges.iter().map(|e| e.0).collect();
    let mut targets: Vec<usize> = edges.iter().map(|e| e.1).collect();
    sources.sort_unstable();
    sources.dedup();
    targets.sort_unstable();
    targets.dedup();
    if sources.len() > 1 && targets.len() > 1 {
        return None;
    }
    let (mut stem, mut bus, mut head) =
        (Canvas::new(width), Canvas::new(width), Canvas::new(width));
    let all = sources.iter().chain(&targets);
    let (lo, hi) = (all.clone().min().copied()?, all.max().copied()?);
    for x in lo..=hi {
        let up = sources.contains(&x);
        let down = targets.contains(&x);
        let left = x > lo;
        let right = x < hi;
        let glyph = match (up, down, left || right) {
            (_, _, false) => "│",
            (true, true, _) => "┼",
            (true, false, _) if left && right => "┴",
            (true, false, _) if right => "└",
            (true, false, _) => "┘",
            (false, true, _) if left && right => "┬",
            (false, true, _) if right => "┌",
            (false, true, _) => "┐",
            (false, false, _) => "─",
        };
        bus.put(x, glyph);
    }
    for &x in &sources {
        stem.put(x, "│");
    }
    for &x in &targets {
        head.put(x, "▼");
    }
    Some([stem.row(), bus.row(), head.row()])
}

/// One row of cells, written at columns.
struct Canvas(Vec<String>);

impl Canvas {
    fn new(width: usize) -> Canvas {
        Canvas(vec![" ".to_owned(); width])
    }

    /// Write `s` from column `x`, one cell per char (the caller lets only
    /// single-width text through).
    fn put(&mut self, x: usize, s: &str) {
        for (i, c) in s.chars().enumerate() {
            if let Some(cell) = self.0.get_mut(x + i) {
                *cell = c.to_string();
            }
        }
    }

    fn row(&self) -> String {
        self.0.concat().trim_end().to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_with_shapes_draws_boxes_and_arrows() {
        let rows = draw(
            "flowchart TD\n  A[Read file] --> B{Valid?}\n  B -->|yes| C(Write)\n",
            40,
        )
        .expect("drawn");
        let want = [
            "┌───────────┐",
            "│ Read file │",
            "└───────────┘",
            "      │",
            "      │",
            "      ▼",
            " ┌────────┐",
            " │ Valid? │",
            " └────────┘",
            "      │",
            "      │",
            "      ▼",
            "  ┌───────┐",
            "  │ Write │",
            "  └───────┘",
        ];
        assert_eq!(rows, want);
    }

    #[test]
    fn a_fan_out_shares_one_bus() {
        let rows = draw("graph LR\nA-->B\nA-->C", 40).expect("drawn");
        assert_eq!(
            rows,
            [
                "   ┌───┐",
                "   │ A │",
                "   └───┘",
                "     │",
                "  ┌──┴───┐",
                "  ▼      ▼",
                "┌───┐  ┌───┐",
                "│ B │  │ C │",
                "└───┘  └───┘",
            ]
        );
    }

    #[test]
    fn what_cannot_be_drawn_faithfully_is_none() {
        for source in [
            "sequenceDiagram\nA->>B: hi",
            "flowchart TD\nA-->B\nB-->A",
            "flowchart TD\nA-->B-->C\nA-->C",
            "flowchart TD\nA-->C\nA-->D\nB-->C\nB-->D",
            "flowchart TD\nsubgraph x\nA-->B\nend",
            "flowchart TD\nA & B --> C",
            "flowchart TD\nA[unclosed --> B",
            "",
        ] {
            assert_eq!(draw(source, 80), None, "{source}");
        }
        assert!(draw("flowchart TD\nA[a long label here]-->B", 10).is_none());
        assert!(draw("flowchart TD\nA[a long label here]-->B", 30).is_some());
    }

    #[test]
    fn long_labels_are_cut() {
        let rows = draw(&format!("flowchart TD\nA[{}]", "x".repeat(100)), 80).expect("drawn");
        assert!(
            rows.iter().all(|r| text::width(r) <= MAX_LABEL + 4),
            "{rows:?}"
        );
        assert!(rows[1].contains('…'));
    }
}
