//! A chorus-tools client in Rust, standard library only (a minimal JSON reader and writer
//! are at the end; a real client would use serde_json).
//!
//!     cargo run --manifest-path examples/rust/Cargo.toml -- WORKSPACE [SERVER COMMAND...]
//!
//! The server command defaults to `chorus-tools`. The client writes a file, reads it,
//! patches it with the version it read (expected_version), recovers from a find_not_found
//! using the hint, and cancels a search it no longer needs.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// Newline-delimited JSON-RPC over the server's pipes. Responses may arrive in any order:
/// those read while waiting for another id are kept until asked for.
struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: i64,
    early: HashMap<i64, Value>,
}

/// A JSON-RPC error response: its code and data (data.error names the error).
struct RpcError {
    code: i64,
    data: Value,
}

impl Client {
    fn spawn(command: &[String], workspace: &str) -> Client {
        let mut child = Command::new(&command[0])
            .args(&command[1..])
            .args(["--workspace", workspace])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("cannot start the server");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Client { child, stdin, stdout, next_id: 1, early: HashMap::new() }
    }

    /// A request message and its id, not yet sent.
    fn request(&mut self, method: &str, params: Value) -> (i64, Value) {
        let id = self.next_id;
        self.next_id += 1;
        let message = obj(vec![
            ("jsonrpc", Value::Str("2.0".into())),
            ("id", Value::Num(id as f64)),
            ("method", Value::Str(method.into())),
            ("params", params),
        ]);
        (id, message)
    }

    fn send(&mut self, messages: &[Value]) {
        let text: String = messages.iter().map(|m| m.to_json() + "\n").collect();
        self.stdin.write_all(text.as_bytes()).expect("the server closed its input");
    }

    fn response(&mut self, id: i64) -> Result<Value, RpcError> {
        let message = loop {
            if let Some(message) = self.early.remove(&id) {
                break message;
            }
            let mut line = String::new();
            if self.stdout.read_line(&mut line).expect("read failed") == 0 {
                panic!("the server exited before answering request {id}");
            }
            let message = parse(&line);
            match message.get("id").as_i64() {
                Some(got) if got == id => break message,
                Some(other) => {
                    self.early.insert(other, message);
                }
                None => {} // a notification
            }
        };
        let error = message.get("error");
        if let Value::Obj(_) = error {
            return Err(RpcError { code: error.get("code").as_i64().unwrap(), data: error.get("data").clone() });
        }
        Ok(message.get("result").clone())
    }

    fn call(&mut self, method: &str, params: Value) -> Result<Value, RpcError> {
        let (id, message) = self.request(method, params);
        self.send(&[message]);
        self.response(id)
    }

    /// End of input: the server finishes what is in flight and exits 0.
    fn close(mut self) -> i32 {
        drop(self.stdin);
        self.child.wait().expect("wait failed").code().unwrap_or(-1)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        eprintln!("usage: chorus-tools-client WORKSPACE [SERVER COMMAND...]");
        std::process::exit(2);
    }
    let command = if args.len() > 1 { args[1..].to_vec() } else { vec!["chorus-tools".to_string()] };
    let mut client = Client::spawn(&command, &args[0]);
    let ok = |r: Result<Value, RpcError>| r.unwrap_or_else(|e| panic!("error {}: {}", e.code, e.data.to_json()));

    ok(client.call("file.write", obj(vec![
        ("path", s("hello.py")),
        ("content", s("def greet(name):\n    return \"hello, \" + name\n")),
    ])));

    let read = ok(client.call("file.read", obj(vec![("path", s("hello.py"))])));
    println!("read hello.py: {} lines", read.get("total_lines").as_i64().unwrap());

    let patched = ok(client.call("file.patch", obj(vec![
        ("path", s("hello.py")),
        ("expected_version", read.get("version").clone()),
        ("patches", Value::Arr(vec![obj(vec![("find", s("\"hello, \"")), ("replace", s("\"Hello, \""))])])),
    ])));
    println!("patched with expected_version: {} replacement", patched.get("replacements").as_i64().unwrap());

    let typo = "return \"Hello \" + name"; // the file says "Hello, "
    let attempt = client.call("file.patch", obj(vec![
        ("path", s("hello.py")),
        ("patches", Value::Arr(vec![obj(vec![("find", s(typo)), ("replace", s("unused"))])])),
    ]));
    match attempt {
        Err(e) if e.data.get("error").as_str() == Some("find_not_found") => {
            let hint = e.data.get("hint");
            let text = hint.get("text").as_str().expect("no region is similar").to_string();
            println!(
                "find_not_found: closest region lines {}-{}: {}",
                hint.get("start_line").as_i64().unwrap(),
                hint.get("end_line").as_i64().unwrap(),
                text.trim()
            );
            let patched = ok(client.call("file.patch", obj(vec![
                ("path", s("hello.py")),
                ("patches", Value::Arr(vec![obj(vec![("find", s(&text)), ("replace", s("    return f\"Hello, {name}!\""))])])),
            ])));
            println!("patched from the hint: {} replacement", patched.get("replacements").as_i64().unwrap());
        }
        other => panic!("expected find_not_found, got {}", other.is_ok()),
    }

    let (id, search) = client.request("file.search", obj(vec![("pattern", s("greet"))]));
    let cancel = obj(vec![
        ("jsonrpc", s("2.0")),
        ("method", s("$/cancelRequest")),
        ("params", obj(vec![("id", Value::Num(id as f64))])),
    ]);
    client.send(&[search, cancel]); // one write: the cancel arrives before the search can run
    match client.response(id) {
        Ok(found) => println!("search finished before the cancel: {} matches", found.get("matches").len()),
        Err(e) => println!("search cancelled: {} {}", e.code, e.data.get("error").as_str().unwrap_or("?")),
    }

    let last = ok(client.call("file.read", obj(vec![("path", s("hello.py")), ("raw", Value::Bool(true))])));
    print!("final hello.py:\n{}", last.get("content").as_str().unwrap());
    println!("server exited {}", client.close());
}

// --- a minimal JSON value: enough for this client ------------------------------------

#[derive(Clone, Debug)]
enum Value {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Value>),
    Obj(Vec<(String, Value)>),
}

const NULL: Value = Value::Null;

fn s(text: &str) -> Value {
    Value::Str(text.to_string())
}

fn obj(members: Vec<(&str, Value)>) -> Value {
    Value::Obj(members.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

impl Value {
    /// A member of an object, or null.
    fn get(&self, key: &str) -> &Value {
        match self {
            Value::Obj(members) => members.iter().find(|(k, _)| k == key).map_or(&NULL, |(_, v)| v),
            _ => &NULL,
        }
    }

    fn as_str(&self) -> Option<&str> {
        if let Value::Str(text) = self { Some(text) } else { None }
    }

    fn as_i64(&self) -> Option<i64> {
        if let Value::Num(n) = self { Some(*n as i64) } else { None }
    }

    fn len(&self) -> usize {
        if let Value::Arr(items) = self { items.len() } else { 0 }
    }

    fn to_json(&self) -> String {
        match self {
            Value::Null => "null".into(),
            Value::Bool(b) => b.to_string(),
            Value::Num(n) => n.to_string(),
            Value::Str(text) => quote(text),
            Value::Arr(items) => format!("[{}]", items.iter().map(Value::to_json).collect::<Vec<_>>().join(",")),
            Value::Obj(members) => format!(
                "{{{}}}",
                members.iter().map(|(k, v)| format!("{}:{}", quote(k), v.to_json())).collect::<Vec<_>>().join(",")
            ),
        }
    }
}

fn quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn parse(text: &str) -> Value {
    let chars: Vec<char> = text.chars().collect();
    let mut pos = 0;
    parse_value(&chars, &mut pos)
}

fn skip_space(chars: &[char], pos: &mut usize) {
    while *pos < chars.len() && chars[*pos].is_whitespace() {
        *pos += 1;
    }
}

fn parse_value(chars: &[char], pos: &mut usize) -> Value {
    skip_space(chars, pos);
    match chars[*pos] {
        '{' => {
            *pos += 1;
            let mut members = Vec::new();
            loop {
                skip_space(chars, pos);
                if chars[*pos] == '}' {
                    *pos += 1;
                    return Value::Obj(members);
                }
                let key = match parse_value(chars, pos) {
                    Value::Str(key) => key,
                    other => panic!("object key {other:?}"),
                };
                skip_space(chars, pos);
                *pos += 1; // ':'
                members.push((key, parse_value(chars, pos)));
                skip_space(chars, pos);
                if chars[*pos] == ',' {
                    *pos += 1;
                }
            }
        }
        '[' => {
            *pos += 1;
            let mut items = Vec::new();
            loop {
                skip_space(chars, pos);
                if chars[*pos] == ']' {
                    *pos += 1;
                    return Value::Arr(items);
                }
                items.push(parse_value(chars, pos));
                skip_space(chars, pos);
                if chars[*pos] == ',' {
                    *pos += 1;
                }
            }
        }
        '"' => Value::Str(parse_string(chars, pos)),
        't' => literal(pos, 4, Value::Bool(true)),
        'f' => literal(pos, 5, Value::Bool(false)),
        'n' => literal(pos, 4, Value::Null),
        _ => {
            let start = *pos;
            while *pos < chars.len() && "+-0123456789.eE".contains(chars[*pos]) {
                *pos += 1;
            }
            Value::Num(chars[start..*pos].iter().collect::<String>().parse().expect("a number"))
        }
    }
}

fn literal(pos: &mut usize, width: usize, value: Value) -> Value {
    *pos += width;
    value
}

fn parse_string(chars: &[char], pos: &mut usize) -> String {
    *pos += 1; // the opening quote
    let mut out = String::new();
    let mut pending_high: Option<u32> = None; // the first half of a surrogate pair
    loop {
        let c = chars[*pos];
        *pos += 1;
        match c {
            '"' => return out,
            '\\' => {
                let e = chars[*pos];
                *pos += 1;
                match e {
                    'n' => out.push('\n'),
                    'r' => out.push('\r'),
                    't' => out.push('\t'),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'u' => {
                        let hex: String = chars[*pos..*pos + 4].iter().collect();
                        *pos += 4;
                        let unit = u32::from_str_radix(&hex, 16).expect("a \\u escape");
                        match (pending_high.take(), unit) {
                            (None, 0xD800..=0xDBFF) => pending_high = Some(unit),
                            (Some(high), 0xDC00..=0xDFFF) => {
                                let code = 0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00);
                                out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                            }
                            (_, unit) => out.push(char::from_u32(unit).unwrap_or('\u{fffd}')),
                        }
                    }
                    other => out.push(other), // \" \\ \/
                }
            }
            c => out.push(c),
        }
    }
}
