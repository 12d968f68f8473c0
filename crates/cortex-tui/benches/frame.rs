//! Frame time and memory of the terminal UI (docs/BENCHMARKS.md, "Terminal
//! UI"). No terminal is involved: frames are drawn into ratatui's
//! `TestBackend`, which is what the crossterm backend draws from too (it
//! then writes only the cells that changed).
//!
//! `cargo bench -p cortex-tui --bench frame` prints:
//! - `stream`: a transcript of ≥ 10,000 rows, then 200 tokens/s streamed
//!   into a new answer at 60 frames/s (3–4 deltas a frame) for 20 s of
//!   simulated time: the time to apply a frame's deltas and draw it.
//! - `memory`: a long session (2,000 turns) applied turn by turn with a
//!   frame drawn after each: resident memory every 200 turns.

use cortex_protocol::ToolStatus;
use cortex_tui::app::App;
use cortex_tui::script::{Script, T0};
use cortex_tui::view::screen;
use cortex_tui::view::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use std::time::{Duration, Instant};

const ANSWER: &str = "Here is what changed, and why:\n\n\
1. `add` **subtracted** its arguments; it now adds them.\n\
2. The test covers negative numbers too.\n\n\
```rust\npub fn add(a: i64, b: i64) -> i64 {\n    a + b\n}\n```\n\n\
Run `cargo test` to check; every case passes now, including the edge \
cases around overflow that the old version never reached.\n";

const DIFF: &str = "--- a/src/calc.rs\n+++ b/src/calc.rs\n@@ -1,6 +1,6 @@\n /// Adds.\n pub fn add(a: i64, b: i64) -> i64 {\n-    a - b\n+    a + b\n }\n \n /// Subtracts.\n";

/// One turn of a typical session: ~40 rows at 120 columns.
fn turn(s: &mut Script, n: usize) {
    s.turn(&format!("fix bug number {n} in the calculator"))
        .request(1);
    s.call("r", "read_file", json!({"path": "src/calc.rs"}));
    s.result(
        "r",
        "read_file",
        ToolStatus::Ok,
        "1\tpub fn add\n2\t...\n",
        None,
    );
    s.call("b", "bash", json!({"command": "cargo test --quiet"}));
    let output = "running 6 tests\ntest a ... ok\ntest b ... FAILED\ntest c ... ok\nfailures: b\n[exit code 101]";
    s.output("b", output);
    s.result("b", "bash", ToolStatus::Error, output, None);
    s.call(
        "e",
        "edit_file",
        json!({"path": "src/calc.rs", "old_string": "a - b", "new_string": "a + b"}),
    );
    s.result("e", "edit_file", ToolStatus::Ok, "edited", Some(DIFF));
    s.request(2).usage(4000 + n as u64, 120);
    s.delta(ANSWER).done(ANSWER).completed(2);
}

fn draw(app: &mut App, terminal: &mut Terminal<TestBackend>) {
    terminal
        .draw(|frame| screen::draw(app, frame))
        .expect("draw");
}

/// This thread's CPU time: what a frame cost, without the time other
/// processes on a shared machine held the core.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn summary(name: &str, mut times: Vec<Duration>) -> String {
    times.sort();
    let mean = times.iter().sum::<Duration>() / times.len().max(1) as u32;
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    format!(
        "{name} mean {:.3} ms, p50 {:.3}, p95 {:.3}, p99 {:.3}, max {:.3}",
        ms(mean),
        ms(percentile(&times, 0.50)),
        ms(percentile(&times, 0.95)),
        ms(percentile(&times, 0.99)),
        ms(times.last().copied().unwrap_or_default()),
    )
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn stream(width: u16, height: u16) {
    let mut s = Script::new("openai:gpt-4o");
    let mut app = App::new(Theme::colored());
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    let mut turns = 0;
    let mut rows = 0;
    while rows < 10_000 {
        turn(&mut s, turns);
        turns += 1;
        for event in s.events.drain(..) {
            app.on_event(&event);
        }
        if turns % 25 == 0 {
            draw(&mut app, &mut terminal);
            rows = app.transcript.total_rows();
        }
    }
    draw(&mut app, &mut terminal);
    let rows = app.transcript.total_rows();
    s.turn("explain the whole module").request(1);
    for event in s.events.drain(..) {
        app.on_event(&event);
    }
    let start = Instant::now();
    draw(&mut app, &mut terminal);
    let first = start.elapsed();
    // 200 tokens/s at 60 frames/s; a token is a word, a few with newlines
    // and a code fence now and then.
    let words = [
        "the ",
        "parser ",
        "reads ",
        "`tokens` ",
        "and ",
        "**builds** ",
        "a ",
        "tree.\n",
    ];
    // The events of each frame, made before the clock starts.
    let mut token = 0usize;
    let mut batches = Vec::new();
    for frame in 0..1_200 {
        let due = (frame + 1) * 200 / 60;
        while token < due {
            let text = match token % 192 {
                47 | 95 | 143 => "end.\n\n",
                191 => "end.\n\n```rust\nlet x = parse(tokens)?;\n```\n\n",
                n => words[n % words.len()],
            };
            s.wait(5).delta(text);
            token += 1;
        }
        batches.push((std::mem::take(&mut s.events), s.at));
    }
    let mut frames = Vec::new();
    let mut cpu = Vec::new();
    for (events, at) in batches {
        let (start, cpu_start) = (Instant::now(), thread_cpu());
        for event in &events {
            app.on_event(event);
        }
        app.now = T0 + at;
        draw(&mut app, &mut terminal);
        frames.push(start.elapsed());
        cpu.push(thread_cpu().saturating_sub(cpu_start));
    }
    println!(
        "stream {width}x{height}: {rows} rows before, {token} tokens over {} frames; first frame {:.2} ms",
        frames.len(),
        first.as_secs_f64() * 1e3,
    );
    println!("  {}", summary("wall", frames));
    println!("  {}", summary("cpu ", cpu));
}

/// Resident set size in KiB.
fn rss_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4
}

fn memory() {
    let mut s = Script::new("openai:gpt-4o");
    let mut app = App::new(Theme::colored());
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    let mut text_bytes = 0usize;
    println!("memory: turns, rss KiB, timeline JSON KiB, transcript rows, rows cached");
    for n in 0..2_000 {
        turn(&mut s, n);
        for event in s.events.drain(..) {
            text_bytes += serde_json::to_vec(&event).map(|v| v.len()).unwrap_or(0);
            app.on_event(&event);
        }
        app.now = T0 + s.at;
        draw(&mut app, &mut terminal);
        if (n + 1) % 200 == 0 {
            println!(
                "memory: {}, {}, {}, {}, {}",
                n + 1,
                rss_kib(),
                text_bytes / 1024,
                app.transcript.total_rows(),
                app.transcript.cached_rows()
            );
        }
    }
    // No new events: a running turn's spinner redraws 20,000 times (33
    // minutes at 10 frames a second), scrolling up and down now and then.
    s.turn("one more").request(1);
    s.call("b", "bash", json!({"command": "sleep 2000"}));
    for event in s.events.drain(..) {
        app.on_event(&event);
    }
    let before = rss_kib();
    for frame in 0..20_000i64 {
        app.now = T0 + s.at + frame * 100;
        if frame % 500 == 250 {
            app.transcript.scroll_up(400);
        } else if frame % 500 == 0 {
            app.transcript.to_bottom();
        }
        draw(&mut app, &mut terminal);
    }
    println!(
        "memory: 20000 spinner frames on that transcript: rss {before} KiB before, {} KiB after, {} rows cached",
        rss_kib(),
        app.transcript.cached_rows()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let only = args.iter().skip(1).find(|a| !a.starts_with('-')).cloned();
    if only.as_deref().is_none_or(|o| o == "stream") {
        stream(120, 40);
        stream(40, 12);
    }
    if only.as_deref().is_none_or(|o| o == "memory") {
        memory();
    }
}
