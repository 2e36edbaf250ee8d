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
    let mut cmd = crate::cli::Cli::command();
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

pub fn man() -> CliResult {
    let mut buf = Vec::new();
    clap_mangen::Man::new(crate::cli::Cli::command()).render(&mut buf)?;
    super::out(&String::from_utf8_lossy(&buf));
    Ok(())
}
