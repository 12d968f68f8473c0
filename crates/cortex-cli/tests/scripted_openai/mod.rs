//! A scripted model served over HTTP on 127.0.0.1 in the OpenAI Chat
//! Completions wire format: each `POST …/chat/completions` is answered,
//! in order, with the next reply of the script, streamed as
//! `chat.completion.chunk` server-sent events. `cortex --model openai:NAME`
//! with `OPENAI_BASE_URL` pointing here talks to it as to any compatible
//! server.
#![allow(dead_code)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

pub enum Reply {
    Text(String),
    /// `(tool name, arguments)`, all in one response.
    Calls(Vec<(String, Value)>),
}

pub fn text(t: &str) -> Reply {
    Reply::Text(t.to_owned())
}

pub fn call(name: &str, arguments: Value) -> Reply {
    Reply::Calls(vec![(name.to_owned(), arguments)])
}

pub struct Server {
    pub port: u16,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl Server {
    /// Serve `replies` in order; past the last one, every request gets a
    /// plain "script exhausted" text.
    pub fn start(replies: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = requests.clone();
        let replies = Arc::new(Mutex::new(std::collections::VecDeque::from(replies)));
        std::thread::spawn(move || {
            for (n, socket) in listener.incoming().enumerate() {
                let Ok(socket) = socket else { break };
                let round = n + 1;
                let (recorded, replies) = (recorded.clone(), replies.clone());
                std::thread::spawn(move || serve(socket, round, &recorded, &replies));
            }
        });
        Server { port, requests }
    }

    /// `OPENAI_BASE_URL` for it.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// The request bodies received so far.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().expect("lock").clone()
    }
}

fn serve(
    socket: TcpStream,
    round: usize,
    recorded: &Mutex<Vec<Value>>,
    replies: &Mutex<std::collections::VecDeque<Reply>>,
) {
    let mut reader = BufReader::new(socket);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    recorded
        .lock()
        .expect("lock")
        .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
    let reply = replies
        .lock()
        .expect("lock")
        .pop_front()
        .unwrap_or_else(|| Reply::Text("script exhausted".into()));
    let mut socket = reader.into_inner();
    let _ = socket.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n",
    );
    for event in events(&reply, round) {
        let _ = socket.write_all(format!("data: {event}\n\n").as_bytes());
        let _ = socket.flush();
    }
    let _ = socket.write_all(b"data: [DONE]\n\n");
    let _ = socket.flush();
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 1_730_901_234,
        "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    })
}

fn events(reply: &Reply, round: usize) -> Vec<Value> {
    let mut out = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    let finish = match reply {
        Reply::Text(text) => {
            // A few words a chunk, as a real stream arrives.
            let words: Vec<&str> = text.split_inclusive(' ').collect();
            for piece in words.chunks(3) {
                out.push(chunk(json!({"content": piece.concat()}), None));
            }
            "stop"
        }
        Reply::Calls(calls) => {
            for (i, (name, arguments)) in calls.iter().enumerate() {
                out.push(chunk(
                    json!({"tool_calls": [{"index": i, "id": format!("call_{round}_{i}"),
                        "type": "function", "function": {"name": name, "arguments": ""}}]}),
                    None,
                ));
                out.push(chunk(
                    json!({"tool_calls": [{"index": i,
                        "function": {"arguments": arguments.to_string()}}]}),
                    None,
                ));
            }
            "tool_calls"
        }
    };
    out.push(chunk(json!({}), Some(finish)));
    out.push(json!({
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 1_730_901_234,
        "model": "scripted",
        "choices": [],
        "usage": {"prompt_tokens": 1000 * round, "completion_tokens": 20, "total_tokens": 1000 * round + 20},
    }));
    out
}
