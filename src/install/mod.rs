//! `tmuxmate install` / `uninstall`: write (and take back) what each harness needs (the
//! per-turn hook, the MCP server, the skill) and the tmux snippet with its `source-file`.
//!
//! Owns the engine: every target file is planned first (parsed, merged in memory), then
//! written; a plan that fails anywhere writes nothing. Invariants: idempotent (a file
//! already as wanted is not written: a second run changes no byte); merge, never clobber
//! (`jsonedit`, `tomledit`, `tmuxconf` touch only our entries, found by `marker`); a
//! backup before the first change and atomic writes (`manifest`, `fsio`); uninstall
//! restores the pre-install bytes when nothing else changed the file, else removes only
//! our entries; a file only install created is removed, with the directories it made.
//! Per-harness facts live in `claude.rs`, `codex.rs`, `gemini.rs`, `tmux.rs`.

pub mod bindings;
pub mod claude;
pub mod codex;
pub mod diff;
pub mod doctor;
pub mod fsio;
pub mod gemini;
pub mod jsonedit;
pub mod manifest;
pub mod marker;
pub mod paths;
pub mod run;
pub mod snippet;
pub mod tmux;
pub mod tmuxconf;
pub mod tomledit;

use std::path::PathBuf;

use serde_json::Value;

use jsonedit::HookSpec;
use manifest::Manifest;
use paths::Paths;

/// Whether install registers the MCP server (`tmuxmate mcp`) and doctor asks for it. It
/// is in this build; the switch stays so a build without it never registers a command
/// that fails (it would show as a broken server in every agent CLI). Uninstall removes an
/// entry either way.
pub const MCP_SERVER: bool = true;

/// The Agent Skills file install puts where each CLI finds skills.
pub const SKILL: &str = include_str!("../../skills/tmuxmate/SKILL.md");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    Claude,
    Codex,
    Gemini,
    Tmux,
}

impl Which {
    pub const ALL: [Which; 4] = [Which::Claude, Which::Codex, Which::Gemini, Which::Tmux];
    pub fn name(self) -> &'static str {
        match self {
            Which::Claude => "claude",
            Which::Codex => "codex",
            Which::Gemini => "gemini",
            Which::Tmux => "tmux",
        }
    }
    /// For `all`: is this CLI here (on PATH, or its config directory exists)?
    pub fn detected(self, p: &Paths) -> bool {
        match self {
            Which::Claude => paths::which("claude").is_some() || p.claude_dir().is_dir(),
            Which::Codex => paths::which("codex").is_some() || p.codex_dir().is_dir(),
            Which::Gemini => paths::which("gemini").is_some() || p.gemini_dir().is_dir(),
            Which::Tmux => paths::which("tmux").is_some(),
        }
    }
}

pub struct Ctx {
    pub paths: Paths,
    /// This binary, absolute: what every hook and server entry runs.
    pub bin: String,
}

impl Ctx {
    pub fn new(project: Option<PathBuf>) -> Result<Ctx, String> {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .ok_or("HOME is not set: install needs it to find the harness configs")?;
        let project = match project {
            Some(p) => Some(std::fs::canonicalize(&p).map_err(|e| {
                format!("--project {}: {e}; give an existing directory", p.display())
            })?),
            None => None,
        };
        let bin = std::env::current_exe()
            .and_then(std::fs::canonicalize)
            .map_err(|e| format!("cannot find this binary's path: {e}"))?;
        Ok(Ctx {
            paths: Paths { home, project },
            bin: bin.to_string_lossy().into_owned(),
        })
    }

    /// `<bin> hook <harness>`, quoted for the shell the harness runs it with.
    pub fn hook_command(&self, harness: &str) -> String {
        format!("{} hook {harness}", crate::sys::shell::readable(&self.bin))
    }
}

/// How a target file is edited.
pub enum Kind {
    /// A JSON config: our hook groups and/or our `mcpServers.tmuxmate`.
    Json {
        hooks: Option<Vec<HookSpec>>,
        mcp: Option<Value>,
    },
    /// Codex config.toml: our MCP server (and no hooks of ours: they go to hooks.json).
    CodexToml { bin: String },
    /// tmux.conf: one marked `source-file` line.
    TmuxConf { snippet: PathBuf },
    /// A file that is all ours (snippet, skill); `marker` identifies it.
    Whole {
        content: String,
        marker: &'static str,
    },
}

pub struct Target {
    pub which: Which,
    pub path: PathBuf,
    pub what: &'static str,
    pub kind: Kind,
}

/// What uninstall does with one file.
enum Undo {
    Keep,
    Write(String, bool),
    Delete,
}

impl Target {
    fn label(&self, p: &Paths) -> String {
        p.label(&self.path)
    }

    /// The new text, or None when the file is already as wanted.
    fn install(&self, p: &Paths, cur: Option<&str>) -> Result<Option<String>, String> {
        let label = self.label(p);
        match &self.kind {
            Kind::Json { hooks, mcp } => {
                let mut v = jsonedit::parse(&label, cur)?;
                let mut changed = false;
                if let Some(specs) = hooks {
                    changed |= jsonedit::set_hooks(&mut v, &label, specs)?;
                }
                if let Some(entry) = mcp.as_ref().filter(|_| MCP_SERVER) {
                    changed |= jsonedit::set_mcp(&mut v, &label, entry.clone())?;
                }
                Ok(changed.then(|| jsonedit::render(&v, cur)))
            }
            Kind::CodexToml { bin } => {
                let mut doc = tomledit::parse(&label, cur)?;
                let mut changed = MCP_SERVER && tomledit::set_mcp(&mut doc, &label, bin)?;
                changed |= tomledit::remove_hooks(&mut doc);
                Ok(changed.then(|| doc.to_string()))
            }
            Kind::TmuxConf { snippet } => Ok(tmuxconf::install(cur, snippet)),
            Kind::Whole { content, .. } => {
                Ok((cur != Some(content.as_str())).then(|| content.clone()))
            }
        }
    }

    /// Our entries taken out of `cur` (Write's bool: nothing but an empty document is left).
    fn uninstall(&self, p: &Paths, cur: &str) -> Result<Undo, String> {
        let label = self.label(p);
        match &self.kind {
            Kind::Json { hooks, mcp } => {
                let mut v = jsonedit::parse(&label, Some(cur))?;
                let mut changed = false;
                if hooks.is_some() {
                    changed |= jsonedit::remove_hooks(&mut v);
                }
                if mcp.is_some() {
                    changed |= jsonedit::remove_mcp(&mut v);
                }
                Ok(if changed {
                    Undo::Write(jsonedit::render(&v, Some(cur)), jsonedit::is_empty(&v))
                } else {
                    Undo::Keep
                })
            }
            Kind::CodexToml { .. } => {
                let mut doc = tomledit::parse(&label, Some(cur))?;
                let changed = tomledit::remove_mcp(&mut doc) | tomledit::remove_hooks(&mut doc);
                let text = doc.to_string();
                let empty = text.trim().is_empty();
                Ok(if changed {
                    Undo::Write(text, empty)
                } else {
                    Undo::Keep
                })
            }
            Kind::TmuxConf { .. } => {
                let (text, found) = tmuxconf::remove(cur);
                let empty = text.trim().is_empty();
                Ok(if found {
                    Undo::Write(text, empty)
                } else {
                    Undo::Keep
                })
            }
            Kind::Whole { marker, .. } => Ok(if cur.contains(marker) {
                Undo::Delete
            } else {
                Undo::Keep
            }),
        }
    }
}

/// Every file for these harnesses.
pub fn targets(ctx: &Ctx, which: &[Which]) -> Vec<Target> {
    let mut out = Vec::new();
    for w in which {
        out.extend(match w {
            Which::Claude => claude::targets(ctx),
            Which::Codex => codex::targets(ctx),
            Which::Gemini => gemini::targets(ctx),
            Which::Tmux => tmux::targets(ctx),
        });
    }
    out
}

/// One planned file change.
pub struct Change {
    pub which: Which,
    pub path: PathBuf,
    pub label: String,
    pub what: &'static str,
    pub before: Option<String>,
    pub after: Option<String>,
}

impl Change {
    pub fn verb(&self) -> &'static str {
        match (&self.before, &self.after) {
            (None, Some(_)) => "create",
            (Some(_), None) => "remove",
            _ => "update",
        }
    }
    pub fn diff(&self) -> String {
        diff::unified(&self.label, self.before.as_deref(), self.after.as_deref())
    }
}

pub fn plan_install(ctx: &Ctx, which: &[Which]) -> Result<(Vec<Change>, Vec<String>), String> {
    let mut changes = Vec::new();
    let mut unchanged = Vec::new();
    for t in targets(ctx, which) {
        let before = fsio::read_text(&t.path)?;
        let label = t.label(&ctx.paths);
        match t.install(&ctx.paths, before.as_deref())? {
            Some(after) => changes.push(Change {
                which: t.which,
                path: t.path,
                label,
                what: t.what,
                before,
                after: Some(after),
            }),
            None => unchanged.push(label),
        }
    }
    Ok((changes, unchanged))
}

pub fn plan_uninstall(ctx: &Ctx, which: &[Which]) -> Result<Vec<Change>, String> {
    let m = Manifest::load()?;
    let mut changes = Vec::new();
    for t in targets(ctx, which) {
        let Some(cur) = fsio::read_text(&t.path)? else {
            continue;
        };
        let after = match m.restore_for(&t.path, &cur) {
            Some(restored) => restored,
            None => match t.uninstall(&ctx.paths, &cur)? {
                Undo::Keep => continue,
                Undo::Delete => None,
                // Emptied by us and not there before install (or unknown): remove it.
                Undo::Write(_, true) if m.existed(&t.path) != Some(true) => None,
                Undo::Write(text, _) => Some(text),
            },
        };
        if after.as_deref() == Some(cur.as_str()) {
            continue;
        }
        changes.push(Change {
            which: t.which,
            label: t.label(&ctx.paths),
            path: t.path,
            what: t.what,
            before: Some(cur),
            after,
        });
    }
    Ok(changes)
}

/// Write the planned changes (install: with backups; uninstall: forgetting them).
pub fn apply(changes: &[Change], install: bool) -> Result<(), String> {
    // A file its owner made read-only is one they protect: refused before anything is
    // written (a rename would replace it whatever its mode).
    for c in changes {
        if let Some(mode) = fsio::read_only_mode(&c.path) {
            return Err(format!(
                "{} is read-only (mode {mode:04o}): tmuxmate does not replace a file you protected; \
                 make it writable (chmod u+w {}) and rerun, or add the entries yourself \
                 (`--dry-run` shows them). Nothing was written",
                c.label,
                c.path.display()
            ));
        }
    }
    let _lock = Manifest::lock()?;
    let mut m = Manifest::load()?;
    let mut dirs = Vec::new();
    for c in changes {
        // Someone (a running harness) wrote the file since we read it: do not clobber.
        if fsio::read_text(&c.path)? != c.before {
            return Err(format!(
                "{} changed while tmuxmate was editing it; rerun the command",
                c.label
            ));
        }
        if install {
            m.before_write(&c.path, c.before.as_deref())?;
        }
        match &c.after {
            Some(text) => {
                let mode = if c.path.file_name() == Some(".claude.json".as_ref()) {
                    0o600
                } else {
                    0o644
                };
                fsio::write_atomic(&c.path, text.as_bytes(), mode)?;
                if install {
                    m.after_write(&c.path, text)?;
                } else {
                    m.forget(&c.path)?;
                }
            }
            None => {
                fsio::remove(&c.path)?;
                dirs.extend(m.forget(&c.path)?);
                // A whole file of ours sits in a directory of ours (skills/tmuxmate/).
                if let Some(parent) = c.path.parent()
                    && parent.file_name() == Some("tmuxmate".as_ref())
                {
                    dirs.push(parent.to_path_buf());
                }
            }
        }
    }
    // Directories our first writes created, innermost first, each only if now empty.
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    dirs.dedup();
    for d in dirs {
        let _ = std::fs::remove_dir(d);
    }
    Ok(())
}

/// The hook entry each harness gets (same shape in Claude, Codex and Gemini files).
pub fn hook_specs(
    ctx: &Ctx,
    harness: &str,
    turn_event: &'static str,
    reset: (&'static str, Option<&'static str>),
    timeout: u64,
) -> Vec<HookSpec> {
    let command = ctx.hook_command(harness);
    let mut v = vec![
        HookSpec {
            event: turn_event,
            matcher: None,
            command: command.clone(),
            timeout,
        },
        HookSpec {
            event: reset.0,
            matcher: reset.1,
            command: command.clone(),
            timeout,
        },
    ];
    // The events that move the agent's state (`tmuxmate agents`, the status line).
    let h = match harness {
        "codex" => Some(crate::harness::Harness::Codex),
        "gemini" => Some(crate::harness::Harness::Gemini),
        "claude" => Some(crate::harness::Harness::Claude),
        _ => None,
    };
    for ev in h.map(crate::state::signal::events).unwrap_or(&[]) {
        v.push(HookSpec {
            event: ev,
            matcher: None,
            command: command.clone(),
            timeout,
        });
    }
    v
}

/// The skill file, for a harness's skill path.
pub fn skill_target(which: Which, path: PathBuf) -> Target {
    Target {
        which,
        path,
        what: "skill tmuxmate",
        kind: Kind::Whole {
            content: SKILL.to_string(),
            marker: "name: tmuxmate",
        },
    }
}
