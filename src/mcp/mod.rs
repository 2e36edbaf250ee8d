//! `tmuxmate mcp`: a resident MCP server on stdio (newline-delimited JSON-RPC 2.0).
//!
//! Owns: the framing (one message per line on stdin/stdout; logs go to stderr only), the
//! lifecycle of both protocol eras (`initialize` for 2024-11-05 .. 2025-11-25 clients such
//! as Claude Code and Codex; `server/discover` of 2026-07-28, where every request carries
//! its version in `_meta` and no handshake is needed), method dispatch, and the JSON-RPC
//! error codes. Tools live in `tools` (the table: names, schemas, hints, routes), their
//! handlers in `handlers` and the host route in `on_host`; resources and their update
//! notifications in `resources`.
//!
//! Invariants:
//! - No tool logic here or in `tools`: every tool calls the same domain function as its
//!   CLI command (`control::*`, `watch::start`, `bridge::ask`, `side`), so refusals,
//!   limits and safety rules are the CLI's, word for word.
//! - Only protocol messages reach stdout, each written whole under one lock (tool calls
//!   run on their own threads and may finish in any order).
//! - Tool calls and resource reads run on a bounded pool (`pool`): at most
//!   `pool::WORKERS` at once, the rest queued in order; a call that does not fit is
//!   answered at once with `SERVER_BUSY`. A message is bounded while it is read, before
//!   it is held (`MAX_LINE`); one going out is at most `MAX_MESSAGE` (a bigger answer is
//!   replaced by an error that says so).
//! - `notifications/cancelled` ends the call it names (a run's pane is removed, a typed
//!   command interrupted) and that call is not answered. At stdin EOF running calls get
//!   `DRAIN` to answer; then they are cancelled the same way and the process exits.
//! - Unknown method: -32601; unknown tool or arguments that do not
//!   fit the input schema: -32602; a refusal: a tool result with `isError: true`.
//! - No async runtime: a hand-written loop over std threads. Why not rmcp (measured
//!   2026-12-01, release builds): this whole server, tools and resources included, adds
//!   0.31 MB to the binary (5.18 -> 5.49 MB) and answers tools/list 8-9 ms after spawn;
//!   an empty rmcp stdio server alone is 1.63 MB and needs tokio, and tmux-mcp-rs (rmcp)
//!   is 10.2 MB and answers after 13.4 ms (docs/mcp.md#why-no-sdk). The per-turn call shares
//!   this binary, so it must not carry a runtime.

mod board;
mod ctx;
mod handlers;
mod on_host;
mod pool;
mod resources;
mod tools;

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::error::Error;
use crate::sys::state;
use crate::tmux::Tmux;

/// Versions of the `initialize` era we speak, newest first.
const LEGACY_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// The handshake-free era (`server/discover`, version in `_meta`).
const MODERN_VERSION: &str = "2026-07-28";
/// Bound on one incoming message.
const MAX_LINE: usize = 32 << 20;
/// Bound on one outgoing message, newline included. Claude Code reads a server's stdout
/// through a buffer that refuses more than 10 MiB (10,485,760 bytes) and then closes the
/// connection: the call ends as "Connection closed" and the server is started again
/// (docs/mcp.md#answer-size). A capture is cut to fit (newest kept); anything else over it
/// is answered with an error that says so.
pub const MAX_MESSAGE: usize = 10_000_000;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INTERNAL_ERROR: i64 = -32603;
pub const INVALID_PARAMS: i64 = -32602;
pub const RESOURCE_NOT_FOUND: i64 = -32002;
/// Every worker busy and the queue full.
pub const SERVER_BUSY: i64 = -32000;

/// A JSON-RPC error answer.
#[derive(Debug)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
        }
    }
}

/// stdout, one whole line per message. Written through its own handle on fd 1, not
/// `std::io::Stdout`: that one is line-buffered, and looks for the last newline in every
/// write (all of a megabyte capture, for the one newline at its end).
#[derive(Clone)]
pub struct Out(Arc<Mutex<Option<std::fs::File>>>);

/// The pipe buffer asked for stdout: the most an unprivileged process may set by default
/// (`/proc/sys/fs/pipe-max-size`).
const PIPE_BYTES: i32 = 1 << 20;

/// Give a stdout pipe room for a megabyte: with the default 64 KiB, a multi-megabyte
/// answer is handed over 64 KiB at a time, each one a wake-up of the client and a wait of
/// ours. The pages are taken only as the pipe fills. Not a pipe, or refused: left as it is.
fn widen_pipe(f: &std::fs::File) {
    use nix::fcntl::{FcntlArg, fcntl};
    use std::os::fd::AsRawFd;
    let is_pipe = f
        .metadata()
        .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_fifo(&m.file_type()));
    if is_pipe && let Err(e) = fcntl(f.as_raw_fd(), FcntlArg::F_SETPIPE_SZ(PIPE_BYTES)) {
        state::log(&format!("mcp: stdout pipe kept at its size ({e})"));
    }
}

/// A message up to this size is gathered and written at once (one write, the usual
/// case); a bigger one is written piece by piece, without a copy.
const GATHER: usize = 64 << 10;

impl Out {
    fn stdout() -> Out {
        use std::os::fd::AsFd;
        let f = std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .map(std::fs::File::from)
            .ok();
        if f.is_none() {
            state::log("mcp: stdout could not be opened for writing; answers are lost");
        }
        if let Some(f) = &f {
            widen_pipe(f);
        }
        Out(Arc::new(Mutex::new(f)))
    }

    pub fn send(&self, v: &Value) {
        let mut line = serde_json::to_string(v).unwrap_or_default();
        line.push('\n');
        if line.len() > MAX_MESSAGE {
            return self.instead_of_too_big(
                v.get("id"),
                v.pointer("/result/content").is_some(),
                line.len(),
            );
        }
        self.write_line(&line);
    }
    /// In place of an answer of `n` bytes to request `id`, over `MAX_MESSAGE`: a tool
    /// error when it was a tool's result (the model reads it), else an error answer; a
    /// notification is dropped. Written here, not through `send`: an id that is itself
    /// megabytes (a string id has no bound but the line's) is answered as `null`, so the
    /// replacement is always small.
    fn instead_of_too_big(&self, id: Option<&Value>, tool: bool, n: usize) {
        let Some(id) = id else {
            too_big(n);
            return;
        };
        let id = match serde_json::to_string(id) {
            Ok(j) if j.len() <= 1024 => id.clone(),
            _ => Value::Null,
        };
        let why = too_big(n);
        let r = if tool {
            Ok(tool_error(&why))
        } else {
            Err(RpcError::new(INTERNAL_ERROR, why))
        };
        let mut line = serde_json::to_string(&answer(&id, r)).unwrap_or_default();
        line.push('\n');
        self.write_line(&line);
    }
    /// The answer to a tool call; a pre-serialized result goes out as `done` would build
    /// it (same keys, same order): its text for the model and, unless it is a text block
    /// alone, its JSON text as the structured content, without a value tree.
    fn reply_call(&self, id: &Value, r: Result<ctx::Answer, RpcError>) {
        // The text block as a JSON string: its own string, or (`None`) the range `at`
        // of the structured content it stands in.
        let (own, at, sc) = match r {
            Ok(ctx::Answer::Texted { text, sc }) => {
                let json = serde_json::to_string(&text).unwrap_or_default();
                (Some(json), None, Some(sc))
            }
            Ok(ctx::Answer::Escaped { sc, at, text_json }) => {
                let at = text_json.is_none().then_some(at);
                (text_json, at, Some(sc))
            }
            Ok(ctx::Answer::Plain { json, at }) => (Some(json), Some(at), None),
            Ok(ctx::Answer::Value(v)) => return self.reply(id, Ok(v)),
            Err(e) => return self.reply(id, Err(e)),
        };
        let whole = own.as_deref().or(sc.as_deref()).unwrap_or_default();
        let text = match at {
            Some(at) => whole.get(at).unwrap_or("\"\""),
            None => whole,
        };
        let id_json = serde_json::to_string(id).unwrap_or_default();
        // Written in its pieces under one lock: a whole-history capture's text is
        // megabytes, and a line built first would be a copy of it twice over.
        let sc_parts = match &sc {
            Some(sc) => [r#"}],"structuredContent":"#, sc.as_str()],
            None => [r#"}]"#, ""],
        };
        let parts = [
            r#"{"jsonrpc":"2.0","id":"#,
            &id_json,
            r#","result":{"content":[{"type":"text","text":"#,
            text,
            sc_parts[0],
            sc_parts[1],
            r#","isError":false}}"#,
            "\n",
        ];
        let total: usize = parts.iter().map(|p| p.len()).sum();
        if total > MAX_MESSAGE {
            return self.instead_of_too_big(Some(id), true, total);
        }
        self.write_parts(&parts);
    }
    fn write_line(&self, line: &str) {
        self.write_parts(&[line]);
    }
    /// One message from its pieces, whole before any other (the lock is held for all).
    fn write_parts(&self, parts: &[&str]) {
        if let Ok(mut o) = self.0.lock()
            && let Some(o) = o.as_mut()
        {
            // A closed stdout means the client is gone; stdin EOF ends us next.
            let total: usize = parts.iter().map(|p| p.len()).sum();
            let _ = if total <= GATHER {
                o.write_all(parts.concat().as_bytes())
            } else {
                parts.iter().try_for_each(|p| o.write_all(p.as_bytes()))
            };
        }
    }
    fn reply(&self, id: &Value, r: Result<Value, RpcError>) {
        self.send(&answer(id, r));
    }
    pub fn notify(&self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }
}

/// The answer to request `id`: its result or its error.
fn answer(id: &Value, r: Result<Value, RpcError>) -> Value {
    match r {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(e) => json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": e.code, "message": e.message}}),
    }
}

/// Why a message of `n` bytes is not sent (logged too).
fn too_big(n: usize) -> String {
    let why = format!(
        "the answer is {n} bytes, more than the {MAX_MESSAGE} one MCP message may carry (Claude \
         Code closes the connection above 10 MiB); ask for less (a smaller maxBytes, fewer \
         lines), or read it in a shell (a stored snapshot: `tmuxmate snapshots show ID`)"
    );
    state::log(&format!("mcp: {why}"));
    why
}

/// A tool result that is an error the model reads.
fn tool_error(why: &str) -> Value {
    json!({"content": [{"type": "text", "text": why}], "isError": true})
}

/// What one server process keeps between calls.
pub struct Session {
    pub tmux: Tmux,
    pub out: Out,
    pub resources: resources::Watched,
    /// Tool calls and resource reads: running, queued, and their cancel flags.
    pool: Arc<pool::Pool>,
    /// One client per host a tool named (`host`), kept so its version gate and ssh
    /// master are set up once per server process.
    remotes: Mutex<std::collections::HashMap<String, Tmux>>,
}

/// The server a tool's `hostSocket` names on its host: a `-S` path when it holds a `/`,
/// else a `-L` name; none: the default server there.
pub fn host_socket(socket: Option<&str>) -> crate::tmux::Socket {
    match socket {
        Some(p) if p.contains('/') => {
            crate::tmux::Socket::resolve_remote(None, Some(std::path::Path::new(p)))
        }
        Some(n) => crate::tmux::Socket::resolve_remote(Some(n), None),
        None => crate::tmux::Socket::resolve_remote(None, None),
    }
}

/// How long EOF waits for running tool calls to answer before it cancels them.
const DRAIN: Duration = Duration::from_secs(10);
/// How long cancelled calls get to end what they started before the process exits.
const CANCEL_GRACE: Duration = Duration::from_secs(5);

impl Session {
    /// The client for a tmux server on `host` (`socket`: a `-L` name, or a `-S` path
    /// when it holds a `/`; none: the default server there), made once per server.
    pub fn remote(&self, host: &str, socket: Option<&str>) -> Result<Tmux, crate::error::Error> {
        let key = format!("{host}\n{}", socket.unwrap_or(""));
        if let Some(t) = self.remotes.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(t);
        }
        let r =
            crate::tmux::transport::ssh::Remote::new(host).map_err(crate::error::Error::usage)?;
        let t = Tmux::remote(host_socket(socket), r);
        if let Ok(mut m) = self.remotes.lock() {
            m.insert(key, t.clone());
        }
        Ok(t)
    }

    /// At EOF: answers for what ends within `DRAIN`, then the rest is cancelled.
    fn drain(&self) {
        if self.pool.wait_idle(DRAIN) {
            return;
        }
        state::log("mcp: stdin closed with calls running; cancelling them");
        self.pool.close();
        if !self.pool.wait_idle(CANCEL_GRACE) {
            state::log("mcp: a cancelled call did not end in time");
        }
    }
}

fn server_info() -> Value {
    json!({"name": "tmuxmate", "version": env!("CARGO_PKG_VERSION")})
}

fn capabilities() -> Value {
    json!({"tools": {}, "resources": {"subscribe": true}})
}

const INSTRUCTIONS: &str = "tmux panes as tools. Targets are pane ids (%N) or session:window.pane \
from tmux_list; commands refuse rather than guess (no implicit current pane, no typing into busy \
panes or modes, kills need confirm:true and approval).";

fn initialize(params: &Value) -> Value {
    let asked = params.get("protocolVersion").and_then(Value::as_str);
    let version = asked
        .filter(|v| LEGACY_VERSIONS.contains(v))
        .unwrap_or(LEGACY_VERSIONS[0]);
    json!({
        "protocolVersion": version,
        "capabilities": capabilities(),
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS,
    })
}

fn discover() -> Value {
    let mut versions = vec![MODERN_VERSION];
    versions.extend_from_slice(LEGACY_VERSIONS);
    json!({
        "resultType": "complete",
        "supportedVersions": versions,
        "capabilities": capabilities(),
        "instructions": INSTRUCTIONS,
        "_meta": {"io.modelcontextprotocol/serverInfo": server_info()},
    })
}

/// Serve until stdin ends.
pub fn serve(tmux: &Tmux) -> Result<(), Error> {
    // Resident: `/proc` handles are worth keeping between listings.
    crate::sys::procfs::keep_handles();
    let session = Arc::new(Session {
        tmux: tmux.clone(),
        out: Out::stdout(),
        resources: resources::Watched::default(),
        pool: Arc::default(),
        remotes: Mutex::default(),
    });
    state::log("mcp: serving on stdio");
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut line = Vec::new();
    loop {
        match read_line(&mut input, &mut line, MAX_LINE) {
            Ok(Line::Eof) => break,
            Ok(Line::Read) => {}
            Ok(Line::TooLong) => {
                session.out.reply(
                    &Value::Null,
                    Err(RpcError::new(
                        INVALID_REQUEST,
                        "message larger than 32 MiB: it was skipped; send smaller messages (paste long text in parts)",
                    )),
                );
                continue;
            }
            Err(e) => {
                eprintln!("tmuxmate mcp: cannot read stdin: {e}");
                break;
            }
        }
        let text = line.trim_ascii();
        if text.is_empty() {
            continue;
        }
        handle(&session, text);
    }
    // A client that wrote its last request and closed stdin still gets the answers.
    session.drain();
    state::log("mcp: stdin closed, exiting");
    Ok(())
}

enum Line {
    Eof,
    Read,
    /// Longer than the bound: skipped to its newline, never held whole.
    TooLong,
}

/// One message line into `buf` (newline included), holding at most `max` + 1 bytes of
/// it: a longer line is read on to its end and dropped.
fn read_line(input: &mut impl BufRead, buf: &mut Vec<u8>, max: usize) -> std::io::Result<Line> {
    buf.clear();
    let mut too_long = false;
    loop {
        let avail = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok(match (too_long, buf.is_empty()) {
                (true, _) => Line::TooLong,
                (false, true) => Line::Eof,
                (false, false) => Line::Read,
            });
        }
        let (n, end) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (avail.len(), false),
        };
        if !too_long {
            if buf.len() + n > max + 1 {
                too_long = true;
                *buf = Vec::new();
            } else {
                buf.extend_from_slice(&avail[..n]);
            }
        }
        input.consume(n);
        if end {
            return Ok(if too_long { Line::TooLong } else { Line::Read });
        }
    }
}

/// A request read from one message line: its id, method and params; `None` when the
/// line was answered already (an error) or needs no answer (a notification, a response).
fn request(session: &Session, text: &[u8]) -> Option<(Value, String, Value)> {
    let out = &session.out;
    let msg: Value = match serde_json::from_slice(text) {
        Ok(v) => v,
        Err(e) => {
            out.reply(
                &Value::Null,
                Err(RpcError::new(PARSE_ERROR, format!("parse error: {e}"))),
            );
            return None;
        }
    };
    let Some(obj) = msg.as_object() else {
        let why = if msg.is_array() {
            "batches are not supported: send one message per line"
        } else {
            "a message is a JSON object"
        };
        out.reply(&Value::Null, Err(RpcError::new(INVALID_REQUEST, why)));
        return None;
    };
    let id = obj.get("id").cloned();
    let Some(method) = obj.get("method").and_then(Value::as_str) else {
        // A response to us (we send no requests) or junk without a method.
        if let Some(id) = id
            && !obj.contains_key("result")
            && !obj.contains_key("error")
        {
            out.reply(&id, Err(RpcError::new(INVALID_REQUEST, "no method")));
        }
        return None;
    };
    let params = obj.get("params").cloned().unwrap_or(Value::Null);
    let Some(id) = id else {
        notified(session, method, &params);
        return None;
    };
    if !(id.is_string() || id.is_i64() || id.is_u64()) {
        out.reply(
            &Value::Null,
            Err(RpcError::new(
                INVALID_REQUEST,
                "the id must be a string or an integer",
            )),
        );
        return None;
    }
    if !(params.is_object() || params.is_null()) {
        out.reply(
            &id,
            Err(RpcError::new(INVALID_PARAMS, "params must be an object")),
        );
        return None;
    }
    Some((id, method.to_string(), params))
}

/// Notifications need no answer; a cancel ends the call it names.
fn notified(session: &Session, method: &str, params: &Value) {
    if method == "notifications/cancelled"
        && let Some(rid) = params.get("requestId")
    {
        let key = serde_json::to_string(rid).unwrap_or_default();
        if session.pool.cancel(&key) {
            state::log(&format!("mcp: call {key} cancelled by the client"));
        }
    }
}

fn handle(session: &Arc<Session>, text: &[u8]) {
    let Some((id, method, params)) = request(session, text) else {
        return;
    };
    let r = match method.as_str() {
        "initialize" => Ok(initialize(&params)),
        "server/discover" => Ok(discover()),
        "ping" => Ok(json!({})),
        "tools/list" => Ok(tools::list().clone()),
        // Calls may block (run, ask; a read that asks another host): on the pool,
        // answered when done, in any order.
        "tools/call" | "resources/read" => {
            match pooled(session, &id, &method, params, text.len()) {
                Ok(()) => return,
                Err(e) => Err(e),
            }
        }
        "resources/list" => Ok(resources::list()),
        "resources/templates/list" => Ok(resources::templates()),
        "resources/subscribe" => resources::subscribe(session, &params, true),
        "resources/unsubscribe" => resources::subscribe(session, &params, false),
        other => Err(RpcError::new(
            METHOD_NOT_FOUND,
            format!("method not found: {other}"),
        )),
    };
    session.out.reply(&id, r);
}

/// A tool call or resource read, queued on the pool and answered when it is done; the
/// refusal when it does not fit.
fn pooled(
    session: &Arc<Session>,
    id: &Value,
    method: &str,
    params: Value,
    size: usize,
) -> Result<(), RpcError> {
    let s = Arc::clone(session);
    let tool = method == "tools/call";
    let key = serde_json::to_string(id).unwrap_or_default();
    let cid = id.clone();
    let queued = session.pool.submit(&key, size, |flag| {
        let (key, id) = (key.clone(), cid);
        Box::new(move || {
            let r = if tool {
                Ok(tools::call(&s, &params, &flag))
            } else {
                Err(resources::read(&s, &params))
            };
            // A cancelled call is not answered (its client said it stopped waiting).
            if s.pool.finish(&key, &flag) {
                return;
            }
            match r {
                Ok(r) => s.out.reply_call(&id, r),
                Err(r) => s.out.reply(&id, r),
            }
        })
    });
    match queued {
        Ok(()) => Ok(()),
        Err(pool::Refused::Full { running, queued }) => Err(RpcError::new(
            SERVER_BUSY,
            format!(
                "server busy: {running} calls are running and {queued} are waiting; retry when one of them has answered"
            ),
        )),
        Err(pool::Refused::Closed) => Err(RpcError::new(
            SERVER_BUSY,
            "the server is shutting down (its input ended)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stdout_pipe_gets_room_for_a_megabyte_and_a_file_is_left_alone() {
        use nix::fcntl::{FcntlArg, fcntl};
        use std::os::fd::AsRawFd;
        let max: i32 = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(PIPE_BYTES);
        let (_r, w) = nix::unistd::pipe().unwrap();
        let w = std::fs::File::from(w);
        let before = fcntl(w.as_raw_fd(), FcntlArg::F_GETPIPE_SZ).unwrap();
        widen_pipe(&w);
        let after = fcntl(w.as_raw_fd(), FcntlArg::F_GETPIPE_SZ).unwrap();
        if max >= PIPE_BYTES || nix::unistd::geteuid().is_root() {
            assert!(after >= PIPE_BYTES, "{before} -> {after}");
        } else {
            assert_eq!(
                after, before,
                "a refused widening leaves the pipe as it was"
            );
        }
        let f = std::env::temp_dir().join(format!("tmuxmate-pipe-{}", std::process::id()));
        let file = std::fs::File::create(&f).unwrap();
        widen_pipe(&file);
        drop(file);
        assert_eq!(std::fs::read(&f).unwrap(), b"");
        let _ = std::fs::remove_file(&f);
    }

    #[test]
    fn a_line_past_the_bound_is_skipped_to_its_end_and_never_held() {
        let mut input = std::io::BufReader::with_capacity(
            64,
            &b"short\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nnext\ntail"[..],
        );
        let mut buf = Vec::new();
        assert!(matches!(
            read_line(&mut input, &mut buf, 10),
            Ok(Line::Read)
        ));
        assert_eq!(buf, b"short\n");
        assert!(matches!(
            read_line(&mut input, &mut buf, 10),
            Ok(Line::TooLong)
        ));
        assert!(buf.capacity() <= 64, "held {}", buf.capacity());
        assert!(matches!(
            read_line(&mut input, &mut buf, 10),
            Ok(Line::Read)
        ));
        assert_eq!(buf, b"next\n");
        assert!(matches!(
            read_line(&mut input, &mut buf, 10),
            Ok(Line::Read)
        ));
        assert_eq!(buf, b"tail");
        assert!(matches!(read_line(&mut input, &mut buf, 10), Ok(Line::Eof)));
        // Exactly at the bound (newline not counted) is a message.
        let mut input = &b"0123456789\n"[..];
        assert!(matches!(
            read_line(&mut input, &mut buf, 10),
            Ok(Line::Read)
        ));
    }
}
