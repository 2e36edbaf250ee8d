//! `tmuxmate doctor`: what works and what to fix, one check per line.
//!
//! Invariants: read-only (it writes nothing, starts nothing); every problem carries its
//! fix; `problem` fails the run (exit 1), `warning` names a hazard without failing it,
//! `skipped` means there is nothing to check (a CLI that is not installed).

use crate::watch::job::JobStatus;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde::Serialize;

use super::{Ctx, Which, codex, fsio, jsonedit, marker, tmuxconf, tomledit};
use crate::tmux::{Tmux, TmuxError, version};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warning,
    Problem,
    Skipped,
}

#[derive(Debug, Serialize)]
pub struct Check {
    pub area: String,
    pub status: Status,
    pub detail: String,
    pub fix: Option<String>,
}

struct Report(Vec<Check>);

impl Report {
    fn add(&mut self, area: &str, status: Status, detail: impl Into<String>, fix: Option<String>) {
        self.0.push(Check {
            area: area.into(),
            status,
            detail: detail.into(),
            fix,
        });
    }
    fn ok(&mut self, area: &str, detail: impl Into<String>) {
        self.add(area, Status::Ok, detail, None);
    }
    fn problem(&mut self, area: &str, detail: impl Into<String>, fix: impl Into<String>) {
        self.add(area, Status::Problem, detail, Some(fix.into()));
    }
}

pub fn run(ctx: &Ctx, tmux: &Tmux) -> Vec<Check> {
    let mut r = Report(Vec::new());
    r.ok(
        "binary",
        format!("{} (tmuxmate {})", ctx.bin, env!("CARGO_PKG_VERSION")),
    );
    check_tmux(ctx, tmux, &mut r);
    check_options(tmux, &mut r);
    check_agent_sources(tmux, &mut r);
    for w in [Which::Claude, Which::Codex, Which::Gemini] {
        check_harness(ctx, w, &mut r);
    }
    check_state_dir(&mut r);
    check_pollers(&mut r);
    check_log(&mut r);
    r.0
}

/// Which source each running agent's state comes from (hooks, and the CLI's own signal).
fn check_agent_sources(tmux: &Tmux, r: &mut Report) {
    let Ok(agents) = crate::state::list::sources(tmux) else {
        return;
    };
    for a in agents {
        match a.describe() {
            (true, d) => r.ok("agent state", d),
            (false, d) => r.add(
                "agent state",
                Status::Warning,
                d,
                Some(
                    "load the snippet (it sets @tmuxmate-bin), free the pane's pipe-pane, or restart the agent with its hooks installed (`tmuxmate install <cli>`)"
                        .into(),
                ),
            ),
        }
    }
}

/// Every number and flag option of the table that the server holds must parse: a typo
/// would otherwise show up only as a refusal of some later command.
fn check_options(tmux: &Tmux, r: &mut Report) {
    use crate::tmux::options::{ALL, Kind};
    if tmux.run(&["list-sessions", "-F", "x"]).is_err() {
        return;
    }
    let mut bad = Vec::new();
    for o in ALL {
        let raw = o.global(tmux);
        let verdict = match o.kind {
            Kind::Number { .. } => o.number(&raw).err(),
            Kind::Flag => o.flag(&raw).err(),
            Kind::Text | Kind::Ours => None,
        };
        bad.extend(verdict);
    }
    if bad.is_empty() {
        r.ok(
            "tmux options",
            "every @tmuxmate-* number and flag option parses",
        );
    } else {
        r.problem(
            "tmux options",
            bad.join("; "),
            "tmux set -g the option to a valid value, or tmux set -gu it for the default",
        );
    }
}

fn check_tmux(ctx: &Ctx, tmux: &Tmux, r: &mut Report) {
    if !check_tmux_binary(tmux, r) {
        return;
    }
    // Files: the snippet and the line that sources it.
    let user = super::paths::Paths {
        home: ctx.paths.home.clone(),
        project: None,
    };
    let config = TmuxConfig::read(&user);
    let by_tpm = config.check(&ctx.bin, r);
    // The running server.
    let reload = format!("tmux source-file {}", config.conf_label);
    check_tmux_server(ctx, tmux, by_tpm, &reload, r);
}

/// The tmux binary and its version; false when there is none to check further.
fn check_tmux_binary(tmux: &Tmux, r: &mut Report) -> bool {
    match version::found(&tmux.program, tmux.timeout) {
        Ok((path, text)) => match version::parse(&text) {
            Some(v) if v >= version::MINIMUM => r.ok(
                "tmux",
                format!(
                    "{text} ({}): {}",
                    path.display(),
                    tmux.describe_direct(true)
                ),
            ),
            _ => r.problem(
                "tmux",
                format!("{text} ({}) is older than 3.2", path.display()),
                "install tmux 3.2 or newer",
            ),
        },
        Err(e) => {
            r.problem(
                "tmux",
                e.to_string(),
                "install tmux 3.2 or newer (e.g. apt-get install tmux)",
            );
            return false;
        }
    }
    true
}

/// The user's tmux.conf and our snippet, as read from disk.
struct TmuxConfig {
    conf_label: String,
    conf_text: String,
    snippet_label: String,
    /// None: the snippet is not a file (an unreadable one reads as empty).
    snippet_text: Option<String>,
    /// The line of ours that sources the snippet.
    source_line: String,
}

impl TmuxConfig {
    fn read(user: &super::paths::Paths) -> TmuxConfig {
        let snippet = user.tmux_snippet();
        let conf = user.tmux_conf();
        let text = |p: &Path| fsio::read_text(p).ok().flatten().unwrap_or_default();
        TmuxConfig {
            conf_label: user.label(&conf),
            conf_text: text(&conf),
            snippet_label: user.label(&snippet),
            snippet_text: snippet.is_file().then(|| text(&snippet)),
            source_line: tmuxconf::source_line(&snippet),
        }
    }

    /// tmux.conf loads tmuxmate (through TPM, or by sourcing a snippet that runs `bin`).
    /// Returns whether TPM loads it.
    fn check(&self, bin: &str, r: &mut Report) -> bool {
        let area = "tmux config";
        let (conf, snippet) = (&self.conf_label, &self.snippet_label);
        let by_tpm = tmuxconf::loaded_by_tpm(&self.conf_text);
        let fix = "tmuxmate install tmux";
        if by_tpm {
            r.ok(area, format!("{conf} loads tmuxmate through TPM"));
        } else if self.snippet_text.is_none() {
            r.problem(area, format!("the snippet {snippet} does not exist"), fix);
        } else if !self.conf_text.contains(&self.source_line)
            && !self.conf_text.contains("tmuxmate.conf")
        {
            r.problem(area, format!("{conf} does not source {snippet}"), fix);
        } else if self
            .snippet_text
            .as_ref()
            .is_some_and(|t| t.contains(&crate::install::snippet::tmux_quote_inner(bin)))
        {
            r.ok(area, format!("{conf} sources {snippet}"));
        } else {
            r.problem(area, format!("{snippet} runs another tmuxmate binary"), fix);
        }
        by_tpm
    }
}

/// The running server: it loaded the snippet of this binary (and no hazardous
/// `window-size`).
fn check_tmux_server(ctx: &Ctx, tmux: &Tmux, by_tpm: bool, reload: &str, r: &mut Report) {
    let bin = match tmux.run(&["show-options", "-gqv", crate::tmux::options::BIN.name]) {
        Err(TmuxError::NoServer { .. }) => {
            let why = "no tmux server is running; the snippet is checked once one is";
            r.add("tmux server", Status::Skipped, why, None);
            return;
        }
        Err(e) => {
            r.problem(
                "tmux server",
                e.to_string(),
                "check that tmux runs, then rerun",
            );
            return;
        }
        Ok(bin) => bin,
    };
    let from = tmux
        .run(&["show-options", "-gqv", crate::tmux::options::SNIPPET.name])
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    server_snippet(bin.trim(), &from, &ctx.bin, by_tpm, reload, r);
    if tmux
        .run(&["show-options", "-gqv", "window-size"])
        .is_ok_and(|s| s.trim() == "manual")
    {
        r.add(
            "tmux server",
            Status::Warning,
            "window-size is manual: tmux 3.3a crashes creating a detached session with no client attached under it (tmuxmate's own creations guard against it; other scripts may not)",
            Some("set -g window-size latest (in tmux.conf) unless you need manual".into()),
        );
    }
}

/// The server's snippet: it runs `running` (empty: none loaded), loaded from `from`
/// (empty: an older snippet that did not say).
fn server_snippet(
    running: &str,
    from: &str,
    bin: &str,
    by_tpm: bool,
    reload: &str,
    r: &mut Report,
) {
    let from = if from.is_empty() {
        "an older snippet (path unknown)"
    } else {
        from
    };
    if running.is_empty() {
        r.problem(
            "tmux server",
            "the running server has not loaded the tmuxmate snippet",
            if by_tpm {
                "prefix + I (TPM install), or tmux source-file ~/.tmux.conf".into()
            } else {
                format!("tmuxmate install tmux, then {reload}")
            },
        );
    } else if running != bin {
        r.problem(
            "tmux server",
            format!("the server's snippet (loaded from {from}) runs {running}, not this binary"),
            format!("tmuxmate install tmux, then {reload}"),
        );
    } else {
        r.ok("tmux server", format!("snippet loaded from {from}"));
    }
}

/// Our hook commands in a harness file: each must run this binary with the right harness.
fn check_hooks(
    ctx: &Ctx,
    area: &str,
    label: &str,
    hooks: &[(String, String)],
    harness: &str,
    r: &mut Report,
) {
    let fix = format!("tmuxmate install {harness}");
    if hooks.is_empty() {
        r.problem(area, format!("no tmuxmate hooks in {label}"), fix);
        return;
    }
    let mut bad = false;
    for (ev, cmd) in hooks {
        let Some(o) = marker::ours_in_command(cmd, "hook") else {
            continue;
        };
        let prog = Path::new(&o.program);
        let exists = prog.is_absolute() && prog.is_file()
            || !prog.is_absolute() && super::paths::which(&o.program).is_some();
        let h = o.harness.as_deref().unwrap_or("");
        if !exists {
            bad = true;
            r.problem(
                area,
                format!(
                    "{label} {ev} runs {}, which does not exist (the hook fails silently)",
                    o.program
                ),
                fix.clone(),
            );
        } else if !["claude", "codex", "gemini"].contains(&h) {
            bad = true;
            r.problem(area, format!("{label} {ev}: unknown harness {h:?} in `{cmd}` (expected claude, codex or gemini)"), fix.clone());
        } else if std::fs::canonicalize(prog)
            .ok()
            .map(|p| p.to_string_lossy().into_owned())
            .as_deref()
            != Some(ctx.bin.as_str())
            && o.program != ctx.bin
        {
            bad = true;
            r.problem(
                area,
                format!(
                    "{label} {ev} runs {}, not this binary ({})",
                    o.program, ctx.bin
                ),
                fix.clone(),
            );
        } else if h != harness {
            r.add(
                area,
                Status::Warning,
                format!("{label} {ev} runs `hook {h}` (copied from another harness?)"),
                Some(fix.clone()),
            );
        }
    }
    if !bad {
        let evs: Vec<&str> = hooks.iter().map(|(e, _)| e.as_str()).collect();
        r.ok(area, format!("{label}: {} → this binary", evs.join(", ")));
    }
}

fn check_mcp(
    ctx: &Ctx,
    area: &str,
    label: &str,
    command: Option<String>,
    harness: &str,
    r: &mut Report,
) {
    match command {
        Some(c) if c == ctx.bin => r.ok(area, format!("MCP server tmuxmate in {label}")),
        Some(c) => r.problem(
            area,
            format!("{label}: MCP server tmuxmate runs {c}, not this binary"),
            format!("tmuxmate install {harness}"),
        ),
        None => r.problem(
            area,
            format!("no MCP server tmuxmate in {label}"),
            format!("tmuxmate install {harness}"),
        ),
    }
}

/// The id of an enabled tmuxmate plugin in Claude Code's settings (`enabledPlugins`,
/// `"tmuxmate@MARKETPLACE": true`).
fn claude_plugin_enabled(settings: &serde_json::Value) -> Option<String> {
    settings["enabledPlugins"]
        .as_object()?
        .iter()
        .find(|(id, on)| id.split('@').next() == Some("tmuxmate") && on.as_bool() == Some(true))
        .map(|(id, _)| id.clone())
}

/// A JSON config file, or `{}` when it is missing or unreadable.
fn read_json(path: &Path) -> serde_json::Value {
    fsio::read_text(path)
        .ok()
        .flatten()
        .and_then(|t| jsonedit::parse("", Some(&t)).ok())
        .unwrap_or_else(|| serde_json::json!({}))
}

/// A harness's hooks file, MCP config and skill (None for tmux, which has none).
fn harness_files(
    p: &super::paths::Paths,
    w: Which,
) -> Option<(std::path::PathBuf, std::path::PathBuf, std::path::PathBuf)> {
    match w {
        Which::Claude => Some((p.claude_settings(), p.claude_mcp(), p.claude_skill())),
        Which::Codex => Some((p.codex_hooks(), p.codex_config(), p.codex_skill())),
        Which::Gemini => Some((p.gemini_settings(), p.gemini_settings(), p.gemini_skill())),
        Which::Tmux => None,
    }
}

fn check_harness(ctx: &Ctx, w: Which, r: &mut Report) {
    let p = &ctx.paths;
    let name = w.name();
    let Some((hooks_file, mcp_file, skill)) = harness_files(p, w) else {
        return;
    };
    let hooks_json = read_json(&hooks_file);
    let mut hooks = jsonedit::our_hooks(&hooks_json);
    let toml = fsio::read_text(&p.codex_config())
        .ok()
        .flatten()
        .and_then(|t| tomledit::parse("", Some(&t)).ok())
        .unwrap_or_default();
    if w == Which::Codex {
        hooks.extend(tomledit::our_hooks(&toml));
    }
    // The Claude Code plugin (this repository as a marketplace) brings the hooks, the MCP
    // server and the skill itself: with it enabled, tmuxmate's own entries are not
    // expected, and having both runs the hook twice.
    if w == Which::Claude
        && let Some(id) = claude_plugin_enabled(&hooks_json)
    {
        check_plugin(name, &id, &p.label(&hooks_file), hooks.is_empty(), r);
        return;
    }
    if !w.detected(p) && hooks.is_empty() {
        r.add(
            name,
            Status::Skipped,
            format!("{name} is not installed (not on PATH, no config directory)"),
            None,
        );
        return;
    }
    check_hooks(ctx, name, &p.label(&hooks_file), &hooks, name, r);
    let mcp = match w {
        Which::Codex => tomledit::our_mcp_command(&toml),
        _ => jsonedit::our_mcp(&read_json(&mcp_file))
            .and_then(|e| e.get("command").and_then(|c| c.as_str()).map(String::from)),
    };
    if super::MCP_SERVER {
        check_mcp(ctx, name, &p.label(&mcp_file), mcp, name, r);
    }
    check_skill(name, &p.label(&skill), skill.is_file(), r);
    if w == Which::Codex {
        let trusted = codex::trusted_events(&toml, &p.codex_hooks());
        let json_hooks = !jsonedit::our_hooks(&hooks_json).is_empty();
        check_codex_trust(name, &trusted, json_hooks, r);
        if let Some(pid) = codex_daemon() {
            r.add(
                name,
                Status::Warning,
                format!("a shared Codex app-server daemon is running (pid {pid}): hooks it runs have no terminal, so they get no location"),
                Some("start Codex with `codex --no-daemon` in each pane".into()),
            );
        }
    }
}

/// The Claude Code plugin `id` is enabled in `settings`: fine alone, a problem beside our
/// own hooks (every hook would run twice).
fn check_plugin(name: &str, id: &str, settings: &str, no_hooks: bool, r: &mut Report) {
    if no_hooks {
        r.ok(
            name,
            format!(
                "the Claude Code plugin {id} is enabled in {settings} (its hooks, MCP server and skill run the tmuxmate on PATH)"
            ),
        );
    } else {
        r.problem(
            name,
            format!(
                "both the Claude Code plugin {id} and tmuxmate's own hooks in {settings} are wired: every hook runs twice"
            ),
            "keep one: `tmuxmate uninstall claude` (keeps the plugin), or `claude plugin uninstall tmuxmate@tmuxmate`",
        );
    }
}

fn check_skill(name: &str, skill: &str, exists: bool, r: &mut Report) {
    if exists {
        r.ok(name, format!("skill {skill}"));
    } else {
        r.problem(
            name,
            format!("no skill at {skill}"),
            format!("tmuxmate install {name}"),
        );
    }
}

/// Codex runs a hook only once it is trusted: `trusted` are the trusted events,
/// `json_hooks` whether hooks.json holds hooks of ours.
fn check_codex_trust(name: &str, trusted: &[String], json_hooks: bool, r: &mut Report) {
    if trusted.iter().any(|e| e == "user_prompt_submit") {
        r.ok(
            name,
            "the UserPromptSubmit hook is trusted (a later edit needs trusting again)",
        );
    } else if json_hooks {
        r.problem(
            name,
            "the tmuxmate hooks in hooks.json are not trusted yet: Codex skips them",
            "open /hooks in the Codex TUI and trust the tmuxmate entries",
        );
    }
}

/// A running `codex app-server … --managed-daemon` of this user, if any.
fn codex_daemon() -> Option<i32> {
    let me = nix::unistd::getuid().as_raw();
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        use std::os::unix::fs::MetadataExt;
        if e.metadata().map(|m| m.uid()).ok() != Some(me) {
            continue;
        }
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmd.split(|b| *b == 0).collect();
        let has = |w: &[u8]| args.contains(&w);
        if has(b"app-server") && has(b"--managed-daemon") {
            return Some(pid);
        }
    }
    None
}

fn check_state_dir(r: &mut Report) {
    let dir = crate::sys::state::state_dir();
    let label = dir.display().to_string();
    match std::fs::metadata(&dir) {
        Err(_) => r.add(
            "state dir",
            Status::Warning,
            format!("{label} does not exist yet"),
            Some(format!(
                "tmuxmate install (creates it private), or mkdir -m 700 -p {label}"
            )),
        ),
        Ok(m) => {
            let mode = m.permissions().mode() & 0o777;
            let probe = dir.join(format!(".doctor-{}", std::process::id()));
            let writable = std::fs::write(&probe, b"").is_ok();
            let _ = std::fs::remove_file(&probe);
            if !writable {
                r.problem(
                    "state dir",
                    format!("{label} is not writable"),
                    format!("chown/chmod it so that you can write to it: chmod u+rwx {label}"),
                );
            } else if mode & 0o077 != 0 {
                r.problem("state dir", format!("{label} is readable by others (mode {mode:o}): it holds agent ledgers and snapshots"), format!("chmod 700 {label}"));
            } else {
                r.ok("state dir", format!("{label} (mode {mode:o})"));
            }
        }
    }
}

fn check_pollers(r: &mut Report) {
    let jobs = crate::watch::job::active_jobs();
    let mut sockets: Vec<String> = jobs
        .iter()
        .filter(|j| j.status == JobStatus::Running)
        .map(|j| j.socket.clone())
        .collect();
    sockets.sort();
    sockets.dedup();
    if sockets.is_empty() {
        r.ok("watch", "no running watches");
    }
    for s in sockets {
        let n = jobs
            .iter()
            .filter(|j| j.socket == s && j.status == JobStatus::Running)
            .count();
        if crate::watch::poller::is_running(&s) {
            r.ok("watch", format!("poller alive for {s} ({n} running)"));
        } else {
            r.problem(
                "watch",
                format!("{n} running watch(es) on {s} but no poller"),
                "tmuxmate watch list (restarts a dead poller)",
            );
        }
    }
}

/// A log line that says something failed (not a reason for silence such as "no location").
/// Only unattended paths count: a command someone ran and saw fail (`error: ...`, the
/// log's copy of what it printed, with its tmux argv) says nothing about the install.
fn is_error(msg: &str) -> bool {
    if msg.starts_with("error: ")
        || msg.contains(": no location:")
        || msg.contains(" started for ")
        || msg.ends_with(" exiting")
        || msg.starts_with("approval:")
    {
        return false;
    }
    msg.starts_with("hook")
        || ["error", "cannot ", "could not", "invalid", "failed"]
            .iter()
            .any(|w| msg.contains(w))
}

fn fix_for(msg: &str) -> String {
    if msg.contains("unknown harness") || msg.contains("bad arguments") {
        "a hook command in your agent config is wrong: run `tmuxmate install` (or fix the command by hand)".into()
    } else if msg.contains("tmux") && msg.contains("older") {
        "install tmux 3.2 or newer".into()
    } else {
        "see the message; `tmuxmate where` in the agent's pane shows the location path".into()
    }
}

/// The last `max` bytes of the log, read without following a symlink and only from a
/// regular file (a FIFO there would hang doctor).
fn log_tail(path: &std::path::Path, max: u64) -> Option<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let m = f.metadata().ok()?;
    if !m.file_type().is_file() {
        return None;
    }
    f.seek(SeekFrom::Start(m.len().saturating_sub(max))).ok()?;
    let mut out = Vec::new();
    f.take(max).read_to_end(&mut out).ok()?;
    Some(out)
}

fn check_log(r: &mut Report) {
    let path = crate::sys::state::log_path();
    let Some(tail) = log_tail(&path, 256 * 1024) else {
        r.ok("log", "no log yet");
        return;
    };
    let text = String::from_utf8_lossy(&tail);
    let day_ago = crate::sys::time::now_ms().saturating_sub(24 * 3600 * 1000);
    let mut errors = Vec::new();
    let mut last_silence = None;
    for line in text.lines() {
        let mut parts = line.splitn(3, ' ');
        let (Some(ts), Some(_pid), Some(msg)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let Ok(ts) = ts.parse::<u64>() else { continue };
        if ts < day_ago {
            continue;
        }
        if is_error(msg) {
            errors.push(msg.to_string());
        } else if msg.contains(": no location:") {
            last_silence = Some(msg.to_string());
        }
    }
    if errors.is_empty() {
        r.ok(
            "log",
            format!("no errors in the last 24 h ({})", path.display()),
        );
    }
    let n = errors.len();
    for msg in errors.iter().skip(n.saturating_sub(5)) {
        r.problem("log", msg.clone(), fix_for(msg));
    }
    if let Some(s) = last_silence {
        r.add("log", Status::Ok, format!("last silent turn: {s}"), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> Report {
        Report(Vec::new())
    }

    fn statuses(r: &Report) -> Vec<(Status, &str)> {
        r.0.iter().map(|c| (c.status, c.detail.as_str())).collect()
    }

    fn config(conf_text: &str, snippet_text: Option<&str>) -> TmuxConfig {
        TmuxConfig {
            conf_label: "~/.tmux.conf".into(),
            conf_text: conf_text.into(),
            snippet_label: "~/.config/tmux/tmuxmate.conf".into(),
            snippet_text: snippet_text.map(String::from),
            source_line: "source-file \"/h/.config/tmux/tmuxmate.conf\"".into(),
        }
    }

    #[test]
    fn the_tmux_config_loads_this_binary_or_says_what_to_fix() {
        let sourced = "source-file \"/h/.config/tmux/tmuxmate.conf\"\n";
        let ours = "run-shell '/bin/tmuxmate hook tmux'";
        let cases = [
            (
                config("set -g @plugin 'x/tmuxmate'", None),
                Status::Ok,
                true,
            ),
            (config(sourced, None), Status::Problem, false),
            (config("", Some(ours)), Status::Problem, false),
            (config(sourced, Some(ours)), Status::Ok, false),
            (
                config(sourced, Some("run-shell '/other/tmuxmate'")),
                Status::Problem,
                false,
            ),
        ];
        let mut details = Vec::new();
        for (c, status, tpm) in cases {
            let mut r = report();
            assert_eq!(c.check("/bin/tmuxmate", &mut r), tpm);
            assert_eq!(r.0.len(), 1);
            assert_eq!(r.0[0].status, status, "{}", r.0[0].detail);
            assert_eq!(r.0[0].fix.is_some(), status == Status::Problem);
            details.push(r.0[0].detail.clone());
        }
        assert_eq!(
            details[1..],
            [
                "the snippet ~/.config/tmux/tmuxmate.conf does not exist",
                "~/.tmux.conf does not source ~/.config/tmux/tmuxmate.conf",
                "~/.tmux.conf sources ~/.config/tmux/tmuxmate.conf",
                "~/.config/tmux/tmuxmate.conf runs another tmuxmate binary",
            ]
        );
    }

    #[test]
    fn the_server_s_snippet_must_run_this_binary() {
        let reload = "tmux source-file ~/.tmux.conf";
        let mut r = report();
        server_snippet("/bin/tmuxmate", "", "/bin/tmuxmate", false, reload, &mut r);
        server_snippet(
            "/old/tmuxmate",
            "/s.conf",
            "/bin/tmuxmate",
            false,
            reload,
            &mut r,
        );
        server_snippet("", "", "/bin/tmuxmate", true, reload, &mut r);
        assert_eq!(
            statuses(&r),
            [
                (
                    Status::Ok,
                    "snippet loaded from an older snippet (path unknown)"
                ),
                (
                    Status::Problem,
                    "the server's snippet (loaded from /s.conf) runs /old/tmuxmate, not this binary"
                ),
                (
                    Status::Problem,
                    "the running server has not loaded the tmuxmate snippet"
                ),
            ]
        );
        assert_eq!(
            r.0[1].fix.as_deref(),
            Some("tmuxmate install tmux, then tmux source-file ~/.tmux.conf")
        );
        assert!(r.0[2].fix.as_deref().unwrap().starts_with("prefix + I"));
    }

    #[test]
    fn a_plugin_beside_our_own_hooks_is_a_problem() {
        let mut r = report();
        check_plugin(
            "claude",
            "tmuxmate@m",
            "~/.claude/settings.json",
            true,
            &mut r,
        );
        check_plugin(
            "claude",
            "tmuxmate@m",
            "~/.claude/settings.json",
            false,
            &mut r,
        );
        assert_eq!(r.0[0].status, Status::Ok);
        assert_eq!(r.0[1].status, Status::Problem);
        assert!(r.0[1].detail.contains("every hook runs twice"));
    }

    #[test]
    fn codex_hooks_must_be_trusted_and_skills_present() {
        let mut r = report();
        check_codex_trust("codex", &["user_prompt_submit".into()], true, &mut r);
        check_codex_trust("codex", &[], true, &mut r);
        // No hooks of ours in hooks.json: nothing to trust, nothing said.
        check_codex_trust("codex", &[], false, &mut r);
        check_skill("codex", "~/.codex/skills/tmuxmate", false, &mut r);
        let got: Vec<Status> = r.0.iter().map(|c| c.status).collect();
        assert_eq!(got, [Status::Ok, Status::Problem, Status::Problem]);
        assert_eq!(r.0[2].fix.as_deref(), Some("tmuxmate install codex"));
    }
}
