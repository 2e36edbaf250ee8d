//! Approval of risky operations (safety rule 3).
//!
//! Owns: the approval policy (the global option `@tmuxmate-approval`, space-separated
//! globs over operation names such as `kill-window` or `send:%3`), the glob matcher, and
//! asking for approval: by the user's approver program (`@tmuxmate-approve-command`) if
//! set, else by a tmux menu on a client attached to the affected session.
//!
//! Invariants:
//! - Fail closed. An operation that matches the policy runs only after an explicit "yes"
//!   (approver exit 0, or the menu's Yes item). A policy we cannot read counts as
//!   "needs approval"; no approver and no client to ask, a timeout, a closed menu, an
//!   approver that cannot start: all are refusals, and every refusal says which path
//!   decided and what would allow the operation.
//! - Text never reaches a parser. The description goes to the approver as a positional
//!   argument and an environment variable, never into the shell string; on the menu it is
//!   one line with `#` escaped for tmux's format expansion, passed as its own argv element
//!   after `--`. The menu item commands carry only our random nonce.
//! - Nothing is left behind: the answer option is unset, our own `wait-for` waiter is
//!   released, and a menu still open at the deadline is closed.
//!
//! Not a security boundary: it stops a cooperating agent from destroying work by mistake.
//! A hostile process of the same user can talk to the tmux server directly (and read the
//! nonce from the menu client's argv).
//!
//! How the menu is shown without blocking us (measured on tmux 3.3a): `display-menu`
//! from the CLI blocks its client until the menu closes (a choice, `q`/Escape, or
//! `display-popup -C`), and returns at once, rc 0, when it cannot be shown (another
//! menu or popup is open there). So it runs as its own tmux invocation on a thread, and
//! its exit is our "menu closed" signal; a chosen item sets `@tmuxmate-answer-<nonce>`
//! and signals `wait-for` channel `tmuxmate-answer-<nonce>`, which a second thread
//! waits on. `run-shell -b -C 'display-menu …'` also returns at once, but it loses the
//! "closed" signal and would put the description through tmux's command parser.

use std::io::Read;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::sys::process;
use crate::sys::state;
use crate::targs;
use crate::tmux::format::{parse_records, record_format};
use crate::tmux::{Arg, Text, Tmux, TmuxError};

/// The policy when `@tmuxmate-approval` is unset (an empty value approves nothing).
pub const DEFAULT_POLICY: &str = crate::tmux::options::APPROVAL.default_text();
/// Seconds to wait for an answer when `@tmuxmate-approval-timeout-s` is unset or invalid.
pub const DEFAULT_TIMEOUT_S: u64 = crate::tmux::options::APPROVAL_TIMEOUT_S.default_number();
/// Upper bound on the timeout, so a typo cannot park a caller for days.
const MAX_TIMEOUT_S: u64 = 3600;
pub const MENU_TITLE: &str = "tmuxmate: approve?";

const POLICY_OPT: &str = crate::tmux::options::APPROVAL.name;
const COMMAND_OPT: &str = crate::tmux::options::APPROVE_COMMAND.name;
const TIMEOUT_OPT: &str = crate::tmux::options::APPROVAL_TIMEOUT_S.name;

/// `*` matches any run of characters (also empty), `?` exactly one; all else literally.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    // Where the last `*` was, and the text position it is currently made to cover up to.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            // Let the last `*` swallow one more character and retry from there.
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// A global option's value; `None` when it is unset (which differs from set-but-empty).
/// Asked with `-q`: an unset option prints nothing at all and a set one its value and a
/// newline, on every release (without `-q`, tmux 3.3 and later fail on an unset user
/// option but 3.2 prints nothing and succeeds, which read as "set to empty" approved
/// everything; docs/tmux-versions.md).
fn global_option(tmux: &Tmux, name: &str) -> Result<Option<String>, TmuxError> {
    let v = tmux.run(&targs!["show-options", "-gqv", Arg::id(name)])?;
    Ok(v.strip_suffix('\n').map(str::to_string))
}

/// The policy's globs.
fn policy(tmux: &Tmux) -> Result<Vec<String>, TmuxError> {
    let v = global_option(tmux, POLICY_OPT)?.unwrap_or_else(|| DEFAULT_POLICY.to_string());
    Ok(v.split_whitespace().map(str::to_string).collect())
}

/// Ask for approval of `op` if the policy names it; `Ok` means it may run.
///
/// `affected_session_id` (`$N`) picks the client that sees the menu; `None` (a whole
/// server) lets any attached client answer. `description` is what the person or approver
/// is shown: what will happen, in a line.
pub fn approve(
    tmux: &Tmux,
    op: &str,
    affected_session_id: Option<&str>,
    description: &str,
) -> Result<(), Error> {
    authorize(tmux, op, affected_session_id, description).map(|_| ())
}

/// As `approve`, and say how it was decided: `None` when the policy does not name `op`,
/// else which path approved it (for the caller's output).
pub fn authorize(
    tmux: &Tmux,
    op: &str,
    affected_session_id: Option<&str>,
    description: &str,
) -> Result<Option<String>, Error> {
    let globs = match policy(tmux) {
        Ok(g) => g,
        Err(e) => {
            return Err(Error::refused(format!(
                "refused: {op} ({description}): could not read the approval policy {POLICY_OPT} ({e}), \
                 and an unreadable policy counts as \"needs approval\"; nothing was done. \
                 Fix the tmux connection and run the command again"
            )));
        }
    };
    let Some(glob) = globs.iter().find(|g| glob_match(g, op)) else {
        return Ok(None);
    };
    let ask = Ask {
        op,
        glob,
        session: affected_session_id,
        description,
        timeout: timeout(tmux),
    };
    let command = global_option(tmux, COMMAND_OPT)
        .map_err(|e| ask.refuse("tmuxmate", &format!("could not read {COMMAND_OPT}: {e}")))?
        .filter(|c| !c.trim().is_empty());
    let decided = match command {
        // A remote server's option is text from another machine: never run it here.
        Some(_) if !tmux.transport().may_run_its_commands() => Err(ask.refuse(
            COMMAND_OPT,
            "it is set on the tmux server on another host, and tmuxmate does not run a \
             command from a remote server on this machine; approve on that server's menu \
             (unset the option there) or run the operation on the host itself",
        )),
        Some(cmd) => ask.by_command(&cmd),
        None => ask.by_menu(tmux),
    };
    // The log is the audit trail of every decision, whoever made it.
    match &decided {
        Ok(how) => state::log(&format!("approval: {op} ({description}) {how}")),
        Err(e) => state::log(&format!("approval: {}", e.msg)),
    }
    decided.map(Some)
}

fn timeout(tmux: &Tmux) -> Duration {
    let secs = global_option(tmux, TIMEOUT_OPT)
        .ok()
        .flatten()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&s| s > 0)
        .unwrap_or(DEFAULT_TIMEOUT_S)
        .min(MAX_TIMEOUT_S);
    Duration::from_secs(secs)
}

/// One pending question and the wording of its answers.
struct Ask<'a> {
    op: &'a str,
    glob: &'a str,
    session: Option<&'a str>,
    description: &'a str,
    timeout: Duration,
}

impl Ask<'_> {
    fn refuse(&self, path: &str, why: &str) -> Error {
        Error::refused(format!(
            "refused: {} ({}) was not approved: {why} [decided by {path}]; nothing was done. \
             It runs once approved; or remove `{}` from {POLICY_OPT} \
             (`tmux set -g {POLICY_OPT} '...'`) to stop asking for it",
            self.op, self.description, self.glob
        ))
    }

    fn where_(&self) -> String {
        match self.session {
            Some(s) => format!("session {s}"),
            None => "this tmux server".to_string(),
        }
    }

    /// The user's approver: `sh -c CMD tmuxmate-approve OP DESCRIPTION`, exit 0 = yes.
    fn by_command(&self, cmd_line: &str) -> Result<String, Error> {
        let path = COMMAND_OPT;
        // A program the user named in their tmux config, run through sh by design, with
        // our data only in argv/env; in a group of its own so its children die with it.
        let mut cmd = process::command("/bin/sh");
        cmd.arg("-c")
            .arg(cmd_line)
            .arg("tmuxmate-approve")
            .arg(self.op)
            .arg(self.description)
            .env("TMUXMATE_OP", self.op)
            .env("TMUXMATE_DESCRIPTION", self.description)
            .env("TMUXMATE_SESSION", self.session.unwrap_or(""));
        let limits = process::Limits {
            timeout: self.timeout,
            group: true,
            stdout: false,
            max_stdout: 0,
        };
        let finished = match process::run_limited(cmd, None, limits) {
            Ok(f) => f,
            Err(process::Failure::TimedOut) => {
                return Err(self.refuse(
                    path,
                    &format!(
                        "the approver gave no answer within {} s and was killed (no answer counts as No; \
                         {TIMEOUT_OPT} sets the limit)",
                        self.timeout.as_secs()
                    ),
                ));
            }
            Err(e @ (process::Failure::NotFound | process::Failure::Spawn(_))) => {
                return Err(self.refuse(
                    path,
                    &format!("the approver could not be started ({e}); fix {COMMAND_OPT} or unset it to be asked on a tmux menu"),
                ));
            }
            Err(e) => {
                return Err(self.refuse(path, &format!("waiting for the approver failed ({e})")));
            }
        };
        let status = finished.status;
        let said = stderr_tail(&finished.stderr);
        let said = if said.is_empty() {
            String::new()
        } else {
            format!(" (it said: {said})")
        };
        match status.code() {
            Some(0) => Ok(format!("approved by {COMMAND_OPT} (exit 0)")),
            Some(c) => Err(self.refuse(path, &format!("the approver exited {c}{said}"))),
            None => Err(self.refuse(path, &format!("the approver was killed by a signal{said}"))),
        }
    }

    /// A menu on the most recently active client attached to the affected session.
    fn by_menu(&self, tmux: &Tmux) -> Result<String, Error> {
        let path = "the tmux approval menu";
        let clients = attached_clients(tmux)
            .map_err(|e| self.refuse(path, &format!("could not list the tmux clients ({e})")))?;
        let client = clients
            .into_iter()
            .filter(|c| self.session.is_none_or(|s| c.session_id == s))
            .max_by_key(|c| c.activity);
        let Some(client) = client else {
            return Err(self.refuse(
                "fail-closed (nobody to ask)",
                &format!(
                    "no tmux client is attached to {} to show the approval menu (read-only and \
                     control-mode clients cannot answer), and {COMMAND_OPT} is not set; attach a \
                     client to it and run the command again, or set {COMMAND_OPT} to an approver \
                     program (exit 0 = approve)",
                    self.where_()
                ),
            ));
        };
        let on = format!("client {} (session {})", client.name, client.session_name);
        match Menu::show(tmux, &client, self.description, self.timeout) {
            Answer::Yes => Ok(format!("approved on the tmux menu on {on}")),
            Answer::No => Err(self.refuse(path, &format!("No was chosen on the menu on {on}"))),
            Answer::Closed => Err(self.refuse(
                path,
                &format!(
                    "the menu on {on} closed without a choice (q or Escape, or it could not be shown: \
                     another menu or popup was open there, or the terminal is too small); \
                     closing counts as No"
                ),
            )),
            Answer::TimedOut => Err(self.refuse(
                path,
                &format!(
                    "no answer on the menu on {on} within {} s, so the menu was closed (no answer \
                     counts as No; {TIMEOUT_OPT} sets the limit)",
                    self.timeout.as_secs()
                ),
            )),
            Answer::Failed(e) => Err(self.refuse(path, &format!("the menu on {on} failed: {e}"))),
        }
    }
}

/// The end of what the approver said, on one line, at most 300 characters.
fn stderr_tail(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let text = one_line(text.trim());
    let n = text.chars().count();
    text.chars().skip(n.saturating_sub(300)).collect()
}

#[derive(Debug, Clone)]
struct Client {
    name: String,
    session_id: String,
    session_name: String,
    width: usize,
    activity: u64,
}

/// Clients that can answer a menu: attached to a terminal, not read-only.
fn attached_clients(tmux: &Tmux) -> Result<Vec<Client>, TmuxError> {
    const FIELDS: &[&str] = &[
        "client_name",
        "session_id",
        "client_session",
        "client_width",
        "client_control_mode",
        "client_readonly",
        "client_activity",
    ];
    let fmt = record_format(FIELDS);
    let args = targs!["list-clients", "-F", Arg::ours(&fmt)];
    let out = tmux.run_bytes(&args, None)?;
    let recs = parse_records(&out, FIELDS.len()).map_err(|detail| TmuxError::BadOutput {
        argv: tmux.argv(&args),
        detail,
    })?;
    Ok(recs
        .into_iter()
        .filter(|r| r[4] != "1" && r[5] != "1" && !r[0].is_empty() && !r[1].is_empty())
        .map(|r| Client {
            name: r[0].clone(),
            session_id: r[1].clone(),
            session_name: r[2].clone(),
            width: r[3].parse().unwrap_or(80),
            activity: r[6].parse().unwrap_or(0),
        })
        .collect())
}

/// Control characters become spaces, so the text is one line.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The description as a disabled menu line: one line, fitted to the client, `#` escaped
/// (menu text is format-expanded), led by `-` (tmux's "disabled item" marker).
fn menu_line(description: &str, client_width: usize) -> String {
    let max = client_width.saturating_sub(10).clamp(20, 100);
    let line = one_line(description);
    let line = if line.chars().count() > max {
        let mut cut: String = line.chars().take(max - 3).collect();
        cut.push_str("...");
        cut
    } else {
        line
    };
    // A leading '-' shows the item disabled: a line of text, not a choice.
    format!("-{line}")
}

/// A random nonce, so option and channel names cannot collide or be guessed.
fn nonce() -> String {
    let mut bytes = [0u8; 8];
    let random = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .is_ok();
    if !random {
        let t = crate::sys::time::now_ms() ^ ((std::process::id() as u64) << 32);
        bytes = t.to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Debug)]
enum Answer {
    Yes,
    No,
    /// The menu closed without running an item (q, Escape, or never shown).
    Closed,
    TimedOut,
    Failed(String),
}

enum Event {
    /// Our `wait-for` returned: an item ran (or it failed).
    Signalled(Result<(), TmuxError>),
    /// The `display-menu` client exited: the menu is gone.
    Closed(Result<(), TmuxError>),
}

/// What the two helper calls reported by the time the wait ended.
#[derive(Default)]
struct Heard {
    /// Our `wait-for` returned (an item ran, or the wait failed).
    signalled: Option<Result<(), TmuxError>>,
    /// The `display-menu` client exited, and when.
    closed: Option<(Result<(), TmuxError>, Instant)>,
}

impl Heard {
    fn note(&mut self, ev: Event) {
        match ev {
            Event::Signalled(r) => self.signalled = Some(r),
            Event::Closed(r) => self.closed = Some((r, Instant::now())),
        }
    }

    /// Until when the item's signal is waited for: the deadline, or [`Menu::GRACE`] after
    /// the menu closed if that is sooner.
    fn limit(&self, deadline: Instant) -> Instant {
        match &self.closed {
            Some((_, at)) => deadline.min(*at + Menu::GRACE),
            None => deadline,
        }
    }

    /// The answer, from what was heard and the answer option's value (read after the
    /// wait). Only a signalled "yes" approves.
    fn decide(self, answer: Result<String, TmuxError>) -> Answer {
        let timed_out = self.closed.is_none() && self.signalled.is_none();
        match (self.signalled, answer) {
            (Some(Ok(())), Ok(a)) if a == "yes" => Answer::Yes,
            (Some(Ok(())), Ok(a)) if a == "no" => Answer::No,
            (Some(Ok(())), Ok(a)) => Answer::Failed(format!("unexpected answer {a:?}")),
            (Some(Ok(())), Err(e)) => Answer::Failed(format!("could not read the answer ({e})")),
            (Some(Err(e)), _) => Answer::Failed(format!("waiting for the answer failed ({e})")),
            (None, _) if timed_out => Answer::TimedOut,
            (None, _) => match self.closed {
                Some((Err(e), _)) => Answer::Failed(format!("display-menu failed ({e})")),
                _ => Answer::Closed,
            },
        }
    }
}

/// Wait for the item's signal until [`Heard::limit`], then take what else has arrived.
fn hear(rx: &mpsc::Receiver<Event>, deadline: Instant) -> Heard {
    let mut heard = Heard::default();
    while heard.signalled.is_none() {
        let limit = heard.limit(deadline);
        let now = Instant::now();
        if now >= limit {
            break;
        }
        match rx.recv_timeout(limit - now) {
            Ok(ev) => heard.note(ev),
            Err(_) => break,
        }
    }
    while let Ok(ev) = rx.try_recv() {
        heard.note(ev);
    }
    heard
}

/// One menu's names: the answer option and the `wait-for` channel, both by our nonce.
struct Menu {
    option: String,
    channel: String,
}

impl Menu {
    /// How long after the menu closes we still wait for its item's signal: the chosen
    /// item runs on the attached client's queue, which may trail the menu client's exit.
    const GRACE: Duration = Duration::from_millis(1500);

    fn show(tmux: &Tmux, client: &Client, description: &str, timeout: Duration) -> Answer {
        let nonce = nonce();
        let menu = Menu {
            option: format!("{}{nonce}", crate::tmux::options::ANSWER_PREFIX),
            channel: format!("tmuxmate-answer-{nonce}"),
        };
        let (tx, rx) = mpsc::channel();
        // Both helper calls outlive the decision by a margin, so their own timeouts never
        // decide; we release them ourselves.
        let mut helper = tmux.clone();
        helper.timeout = timeout + Duration::from_secs(5);
        menu.wait_for_item(helper.clone(), tx.clone());
        menu.open(helper, client, description, tx);
        let heard = hear(&rx, Instant::now() + timeout);
        menu.release(tmux, client, &heard);
        let answer = tmux
            .run(&targs!["show-options", "-gqv", Arg::id(&menu.option)])
            .map(|v| v.trim().to_string());
        let _ = tmux.run(&targs!["set-option", "-gu", Arg::id(&menu.option)]);
        heard.decide(answer)
    }

    /// Our `wait-for` on the channel, on a thread: its return is [`Event::Signalled`].
    fn wait_for_item(&self, waiter: Tmux, tx: mpsc::Sender<Event>) {
        let channel = self.channel.clone();
        std::thread::spawn(move || {
            let r = waiter
                .run(&targs!["wait-for", Arg::id(&channel)])
                .map(|_| ());
            let _ = tx.send(Event::Signalled(r));
        });
    }

    /// The menu on `client`, on a thread (its client blocks until the menu closes): its
    /// exit is [`Event::Closed`]. The items' commands carry only our names.
    fn open(&self, helper: Tmux, client: &Client, description: &str, tx: mpsc::Sender<Event>) {
        // The description holds what the agent asked for: a menu item's name is a format.
        let line = Text::lossy(&menu_line(description, client.width));
        let no = format!("set -g {} no ; wait-for -S {}", self.option, self.channel);
        let yes = format!("set -g {} yes ; wait-for -S {}", self.option, self.channel);
        let client_name = client.name.clone();
        std::thread::spawn(move || {
            let r = helper
                .run(&targs![
                    "display-menu",
                    "-c",
                    Arg::id(&client_name),
                    "-T",
                    MENU_TITLE,
                    "-x",
                    "C",
                    "-y",
                    "C",
                    "--",
                    Arg::drawn(line.as_str()),
                    "",
                    "",
                    "No",
                    "n",
                    Arg::ours(&no),
                    "Yes",
                    "y",
                    Arg::ours(&yes),
                ])
                .map(|_| ());
            let _ = tx.send(Event::Closed(r));
        });
    }

    /// Leave nothing behind: a menu still open is closed, a waiter still waiting released.
    fn release(&self, tmux: &Tmux, client: &Client, heard: &Heard) {
        if heard.closed.is_none() {
            // Our display-menu client is still blocked, so the overlay on that client is
            // ours (tmux shows one at a time): closing it cannot hit someone else's.
            let _ = tmux.run(&targs!["display-popup", "-C", "-c", Arg::id(&client.name)]);
        }
        if heard.signalled.is_none() {
            // Release our own waiter, which would otherwise outlive this process.
            let _ = tmux.run(&targs!["wait-for", "-S", Arg::id(&self.channel)]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("send:*", "send:%3"));
        assert!(glob_match("kill-pane", "kill-pane"));
        assert!(!glob_match("kill-pane", "kill-panes"));
        assert!(!glob_match("kill-pane", "kill-pan"));
        assert!(glob_match("kill-*", "kill-window"));
        assert!(glob_match("*", ""));
        assert!(glob_match("send:%?", "send:%3"));
        assert!(!glob_match("send:%?", "send:%31"));
        assert!(glob_match("*:%3", "paste:%3"));
        assert!(!glob_match("*:%3", "paste:%31"));
        assert!(glob_match("a*b*c", "aXbYbZc"));
        assert!(!glob_match("a*b*c", "aXbYbZ"));
        assert!(glob_match("**x", "x"));
        assert!(!glob_match("", "x"));
        assert!(glob_match("", ""));
    }

    #[test]
    fn menu_text_is_one_escaped_disabled_line() {
        assert_eq!(
            Arg::drawn(&menu_line("kill #{pane_id}\nnow", 80)).as_str(),
            "-kill ##{pane_id} now"
        );
        let long = "x".repeat(500);
        let l = menu_line(&long, 80);
        assert_eq!(l.chars().count(), 1 + 70);
        assert!(l.ends_with("..."));
        // A tiny client still gets a readable minimum; tmux clips what does not fit.
        assert_eq!(menu_line(&long, 5).chars().count(), 21);
        // Escaping happens after the cut, so a `#` is never split from its twin.
        let hashes = "#".repeat(300);
        let shown = Arg::drawn(&menu_line(&hashes, 80));
        assert!(shown.as_str().trim_end_matches("...").len() % 2 == 1);
    }

    fn failed() -> TmuxError {
        TmuxError::TooOld { found: "x".into() }
    }

    #[test]
    fn only_a_signalled_yes_approves() {
        let signalled = || Heard {
            signalled: Some(Ok(())),
            closed: None,
        };
        assert!(matches!(signalled().decide(Ok("yes".into())), Answer::Yes));
        assert!(matches!(signalled().decide(Ok("no".into())), Answer::No));
        assert!(matches!(
            signalled().decide(Ok("".into())),
            Answer::Failed(_)
        ));
        assert!(matches!(
            signalled().decide(Err(failed())),
            Answer::Failed(_)
        ));
        let wait_failed = Heard {
            signalled: Some(Err(failed())),
            closed: None,
        };
        assert!(matches!(
            wait_failed.decide(Ok("yes".into())),
            Answer::Failed(_)
        ));
        // No signal: a "yes" someone else set does not count.
        let nothing = Heard::default();
        assert!(matches!(nothing.decide(Ok("yes".into())), Answer::TimedOut));
        let closed = Heard {
            signalled: None,
            closed: Some((Ok(()), Instant::now())),
        };
        assert!(matches!(closed.decide(Ok("yes".into())), Answer::Closed));
        let menu_failed = Heard {
            signalled: None,
            closed: Some((Err(failed()), Instant::now())),
        };
        assert!(matches!(
            menu_failed.decide(Ok("".into())),
            Answer::Failed(e) if e.starts_with("display-menu failed")
        ));
    }

    #[test]
    fn the_wait_ends_at_the_signal_or_the_deadline() {
        let (tx, rx) = mpsc::channel();
        tx.send(Event::Closed(Ok(()))).unwrap();
        tx.send(Event::Signalled(Ok(()))).unwrap();
        let far = Instant::now() + Duration::from_secs(60);
        let h = hear(&rx, far);
        assert!(h.signalled.is_some() && h.closed.is_some());
        let t = Instant::now();
        let h = hear(&rx, t + Duration::from_millis(30));
        assert!(h.signalled.is_none() && h.closed.is_none());
        assert!(t.elapsed() < Duration::from_secs(5));
        // A closed menu leaves the signal a grace period, not the whole deadline.
        let closed = Heard {
            signalled: None,
            closed: Some((Ok(()), t)),
        };
        assert_eq!(closed.limit(far), t + Menu::GRACE);
        assert_eq!(closed.limit(t), t);
    }

    #[test]
    fn nonces_differ() {
        let a = nonce();
        assert_eq!(a.len(), 16);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(a, nonce());
    }
}
