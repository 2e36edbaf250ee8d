//! `install`, `uninstall`, `doctor`, `completions` and `man`: thin handlers over
//! `crate::install::run` (which owns every file decision) and clap's generators.

use clap::CommandFactory;

use crate::cli::{CompletionShell, InstallArgs, InstallTarget};
use crate::error::{CliResult, Error};
use crate::install::{Which, run};
use crate::tmux::Tmux;

/// The one target named, or `None` for all.
fn one(t: InstallTarget) -> Option<Which> {
    match t {
        InstallTarget::Claude => Some(Which::Claude),
        InstallTarget::Codex => Some(Which::Codex),
        InstallTarget::Gemini => Some(Which::Gemini),
        InstallTarget::Tmux => Some(Which::Tmux),
        InstallTarget::All => None,
    }
}

pub fn install(a: InstallArgs) -> CliResult {
    super::out(&run::install(a.project, one(a.target), a.dry_run)?);
    Ok(())
}

pub fn uninstall(a: InstallArgs) -> CliResult {
    super::out(&run::uninstall(a.project, one(a.target), a.dry_run)?);
    Ok(())
}

pub fn doctor(tmux: &Tmux, json: bool) -> CliResult {
    let d = run::diagnose(tmux)?;
    let problems = d.problems;
    if json {
        super::out_json(
            &serde_json::json!({"ok": problems == 0, "problems": problems, "checks": d.checks}),
        );
    } else {
        super::out(&d.text());
    }
    if problems > 0 {
        let e = Error::new(format!("doctor found {problems} problem(s)"));
        // With --json the report is the one document (its `ok` and `problems` say it);
        // a second, error document after it would break every parser.
        return Err(if json { e.printed() } else { e });
    }
    Ok(())
}

pub fn completions(shell: CompletionShell) -> CliResult {
    // Internal verbs (`watch poll`, `agent _exec`, ...) are hidden from help, and clap's
    // generators would still offer them: completion gets the visible tree only.
    // Built first: derive adds nested subcommands (and global flags) only on build.
    let mut full = crate::cli::Cli::command();
    full.build();
    let mut cmd = visible(&full, true);
    let mut buf = Vec::new();
    let sh = match shell {
        CompletionShell::Bash => clap_complete::Shell::Bash,
        CompletionShell::Zsh => clap_complete::Shell::Zsh,
        CompletionShell::Fish => clap_complete::Shell::Fish,
    };
    clap_complete::generate(sh, &mut cmd, "tmuxmate", &mut buf);
    super::out(&String::from_utf8_lossy(&buf));
    Ok(())
}

/// A built `cmd` with its arguments and only its visible subcommands, recursively
/// (global flags are declared at the root only: clap propagates them again).
fn visible(cmd: &clap::Command, root: bool) -> clap::Command {
    let mut c = clap::Command::new(cmd.get_name().to_string())
        .disable_help_subcommand(true)
        .disable_help_flag(true)
        .disable_version_flag(true)
        .args(
            cmd.get_arguments()
                .filter(|a| !a.is_hide_set() && (root || !a.is_global_set()))
                .cloned(),
        )
        .subcommands(
            cmd.get_subcommands()
                .filter(|s| !s.is_hide_set())
                .map(|s| visible(s, false)),
        );
    if let Some(about) = cmd.get_about() {
        c = c.about(about.clone());
    }
    if let Some(v) = cmd.get_version() {
        c = c.version(v.to_string());
    }
    if let Some(v) = cmd.get_long_version() {
        c = c.long_version(v.to_string());
    }
    c
}

/// One page: the main command, then each visible command with its summary (their own
/// options: `tmuxmate COMMAND --help`). clap's own subcommand section would point to
/// `tmuxmate-where(1)` and others, pages nobody installs.
pub fn man() -> CliResult {
    let cmd = crate::cli::Cli::command();
    let m = clap_mangen::Man::new(cmd.clone());
    let mut buf = Vec::new();
    m.render_title(&mut buf)?;
    m.render_name_section(&mut buf)?;
    m.render_synopsis_section(&mut buf)?;
    m.render_description_section(&mut buf)?;
    m.render_options_section(&mut buf)?;
    buf.extend_from_slice(b".SH COMMANDS\n");
    for s in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let about = s.get_about().map(|a| a.to_string()).unwrap_or_default();
        buf.extend_from_slice(
            format!(
                ".TP\n\\fBtmuxmate {}\\fR\n{}\n",
                roff_escape(s.get_name()),
                roff_escape(&about)
            )
            .as_bytes(),
        );
    }
    buf.extend_from_slice(
        b".PP\nEach command's options and examples: \\fBtmuxmate COMMAND \\-\\-help\\fR.\n",
    );
    m.render_version_section(&mut buf)?;
    super::out(&String::from_utf8_lossy(&buf));
    Ok(())
}

/// Text for roff: backslashes and hyphens escaped, no line starting with a control dot.
fn roff_escape(s: &str) -> String {
    let t = s.replace('\\', "\\e").replace('-', "\\-");
    if t.starts_with('.') || t.starts_with('\'') {
        format!("\\&{t}")
    } else {
        t
    }
}
