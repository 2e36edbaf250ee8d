//! `install`, `uninstall`, `doctor`, `completions`, `man` and `--version`: thin handlers
//! over `crate::install` (which owns every file decision) and clap's generators.

use clap::CommandFactory;

use crate::cli::{CompletionShell, InstallArgs, InstallTarget};
use crate::error::{CliError, CliResult};
use crate::install::{self, Ctx, Which, doctor};
use crate::tmux::{Socket, Tmux, version};

fn chosen(ctx: &Ctx, t: InstallTarget, installing: bool) -> Vec<Which> {
    match t {
        InstallTarget::Claude => vec![Which::Claude],
        InstallTarget::Codex => vec![Which::Codex],
        InstallTarget::Gemini => vec![Which::Gemini],
        InstallTarget::Tmux => vec![Which::Tmux],
        // Uninstall looks everywhere: a CLI removed since install still has our entries.
        // tmux is user-level: a --project run never touches it.
        InstallTarget::All => Which::ALL
            .into_iter()
            .filter(|w| !installing || w.detected(&ctx.paths))
            .filter(|w| ctx.paths.project.is_none() || *w != Which::Tmux)
            .collect(),
    }
}

fn names(w: &[Which]) -> String {
    w.iter().map(|w| w.name()).collect::<Vec<_>>().join(", ")
}

pub fn install(a: InstallArgs) -> CliResult {
    let ctx = Ctx::new(a.project.clone())?;
    let which = chosen(&ctx, a.target, true);
    if which.is_empty() {
        return Err(CliError::new(
            "install all: found none of claude, codex, gemini or tmux (not on PATH, no config directory); name one: tmuxmate install claude|codex|gemini|tmux",
        ));
    }
    let (changes, unchanged) = install::plan_install(&ctx, &which)?;
    if a.dry_run {
        for c in &changes {
            super::out(&c.diff());
        }
        super::out_line(&format!(
            "dry run: {} file(s) would change, {} already as wanted; nothing was written",
            changes.len(),
            unchanged.len()
        ));
        return Ok(());
    }
    install::apply(&changes, true)?;
    ensure_private_state_dir();
    let mut out = format!("tmuxmate install: {}\n", names(&which));
    for c in &changes {
        out.push_str(&format!("  {:<7} {}  ({})\n", c.verb(), c.label, c.what));
    }
    for u in &unchanged {
        out.push_str(&format!("  {:<7} {u}\n", "ok"));
    }
    if !changes.is_empty() {
        out.push_str(&format!(
            "The files as they were are kept in {} until uninstall.\n",
            install::manifest::dir().display()
        ));
    }
    if which.contains(&Which::Codex) {
        out.push_str(install::codex::TRUST_NOTE);
        out.push('\n');
    }
    if which.contains(&Which::Tmux) {
        out.push_str(&format!(
            "Reload tmux: tmux source-file {}\n",
            ctx.paths.label(&ctx.paths.tmux_conf())
        ));
    }
    out.push_str("Check it: tmuxmate doctor\n");
    super::out(&out);
    Ok(())
}

/// The state dir holds ledgers and snapshots of other panes: keep it private.
fn ensure_private_state_dir() {
    use std::os::unix::fs::PermissionsExt;
    let d = crate::sys::state::state_dir();
    let _ = std::fs::create_dir_all(&d);
    let _ = std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700));
}

pub fn uninstall(a: InstallArgs) -> CliResult {
    let ctx = Ctx::new(a.project.clone())?;
    let which = chosen(&ctx, a.target, false);
    let changes = install::plan_uninstall(&ctx, &which)?;
    if a.dry_run {
        for c in &changes {
            super::out(&c.diff());
        }
        super::out_line(&format!(
            "dry run: {} file(s) would change; nothing was written",
            changes.len()
        ));
        return Ok(());
    }
    install::apply(&changes, false)?;
    let mut out = String::new();
    if changes.is_empty() {
        out.push_str("tmuxmate uninstall: nothing of tmuxmate's was found\n");
    }
    for c in &changes {
        let verb = if c.after.is_none() {
            "removed"
        } else {
            "cleaned"
        };
        out.push_str(&format!("  {verb:<7} {}  ({})\n", c.label, c.what));
    }
    if changes.iter().any(|c| c.which == Which::Tmux) {
        out.push_str("A running tmux keeps the snippet's bindings and hooks until it restarts.\n");
    }
    super::out(&out);
    Ok(())
}

pub fn doctor(tmux: &Tmux, json: bool) -> CliResult {
    let ctx = Ctx::new(None)?;
    let checks = doctor::run(&ctx, tmux);
    let problems = checks
        .iter()
        .filter(|c| c.status == doctor::Status::Problem)
        .count();
    if json {
        super::out_json(
            &serde_json::json!({"ok": problems == 0, "problems": problems, "checks": checks}),
        );
    } else {
        let mut out = String::new();
        for c in &checks {
            let tag = match c.status {
                doctor::Status::Ok => "ok  ",
                doctor::Status::Warning => "warn",
                doctor::Status::Problem => "FAIL",
                doctor::Status::Skipped => "skip",
            };
            out.push_str(&format!("{tag} {:<12} {}\n", c.area, c.detail));
            if let Some(f) = &c.fix {
                out.push_str(&format!("     {:<12} fix: {f}\n", ""));
            }
        }
        out.push_str(&if problems == 0 {
            "All is well.\n".to_string()
        } else {
            format!("{problems} problem(s); each has its fix above.\n")
        });
        super::out(&out);
    }
    if problems > 0 {
        let e = CliError::new(format!("doctor found {problems} problem(s)"));
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

/// `tmuxmate --version` / `-V`: our version and the tmux found (clap's own flag would
/// print only ours). Only the bare forms, so every other parse stays clap's.
pub fn intercept_version() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    // Socket flags may come first (`tmuxmate -L work --version`); `-V` needs no server.
    let mut i = 0;
    while i + 1 < args.len()
        && ["-L", "-S", "--socket", "--socket-path"]
            .iter()
            .any(|f| args[i] == *f)
    {
        i += 2;
    }
    if args.len() != i + 1 || !(args[i] == "--version" || args[i] == "-V") {
        return;
    }
    let tmux = Tmux::new(Socket::Default);
    let t = match version::found(&tmux) {
        Ok((path, text)) => format!("{text} ({})", path.display()),
        Err(e) => format!("tmux: {e}"),
    };
    super::out(&format!("tmuxmate {}\n{t}\n", env!("CARGO_PKG_VERSION")));
    std::process::exit(0);
}
