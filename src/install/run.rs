//! `install`, `uninstall` and `doctor` as commands: which targets a run touches, the
//! planning and applying in order, and the report a person reads.
//!
//! Owns the choice of targets and the orchestration over the engine in `mod.rs`.
//! Invariants: `install all` touches only the CLIs found (not on PATH and no config
//! directory: left alone), `uninstall all` looks everywhere (a CLI removed since install
//! still has our entries); tmux is user-level, so a `--project` run never touches it; a
//! dry run writes nothing and shows every diff; the state dir is made private after an
//! install.

use std::path::PathBuf;

use crate::error::Error;
use crate::tmux::Tmux;

use super::{Ctx, Which, doctor};

/// The targets of a run: `one`, or all of them (`None`).
pub fn chosen(ctx: &Ctx, one: Option<Which>, installing: bool) -> Vec<Which> {
    match one {
        Some(w) => vec![w],
        // Uninstall looks everywhere: a CLI removed since install still has our entries.
        // tmux is user-level: a --project run never touches it.
        None => Which::ALL
            .into_iter()
            .filter(|w| !installing || w.detected(&ctx.paths))
            .filter(|w| ctx.paths.project.is_none() || *w != Which::Tmux)
            .collect(),
    }
}

fn names(w: &[Which]) -> String {
    w.iter().map(|w| w.name()).collect::<Vec<_>>().join(", ")
}

/// `tmuxmate install`: the report to print (with `dry_run`, the diffs and nothing written).
pub fn install(
    project: Option<PathBuf>,
    one: Option<Which>,
    dry_run: bool,
) -> Result<String, Error> {
    let ctx = Ctx::new(project)?;
    let which = chosen(&ctx, one, true);
    if which.is_empty() {
        return Err(Error::new(
            "install all: found none of claude, codex, gemini or tmux (not on PATH, no config directory); name one: tmuxmate install claude|codex|gemini|tmux",
        ));
    }
    let (changes, unchanged) = super::plan_install(&ctx, &which)?;
    if dry_run {
        let mut out = dry_run_diffs(&changes);
        out.push_str(&format!(
            "dry run: {} file(s) would change, {} already as wanted; nothing was written\n",
            changes.len(),
            unchanged.len()
        ));
        return Ok(out);
    }
    super::apply(&changes, true)?;
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
            super::manifest::dir().display()
        ));
    }
    if which.contains(&Which::Codex) {
        out.push_str(super::codex::TRUST_NOTE);
        out.push('\n');
    }
    if which.contains(&Which::Tmux) {
        out.push_str(&format!(
            "Reload tmux: tmux source-file {}\n",
            ctx.paths.label(&ctx.paths.tmux_conf())
        ));
    }
    out.push_str("Check it: tmuxmate doctor\n");
    Ok(out)
}

/// The state dir holds ledgers and snapshots of other panes: keep it private.
fn ensure_private_state_dir() {
    use std::os::unix::fs::PermissionsExt;
    let d = crate::sys::state::state_dir();
    let _ = std::fs::create_dir_all(&d);
    let _ = std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700));
}

/// The diffs of a dry run: edits of files that exist first (the user's configs, what a
/// reader checks), then new files; a new file with the same text as one shown already
/// (the skill, once per CLI) is one line naming it.
fn dry_run_diffs(changes: &[super::Change]) -> String {
    let mut order: Vec<&super::Change> = changes.iter().filter(|c| c.before.is_some()).collect();
    order.extend(changes.iter().filter(|c| c.before.is_none()));
    let mut shown: Vec<(&str, &str)> = Vec::new();
    let mut out = String::new();
    for c in order {
        if c.before.is_none()
            && let Some(after) = c.after.as_deref()
            && let Some((_, first)) = shown.iter().find(|(text, _)| *text == after)
        {
            out.push_str(&format!(
                "--- /dev/null\n+++ {}\n(new file: the same {} lines as {first} above)\n",
                c.label,
                after.lines().count()
            ));
            continue;
        }
        if let Some(after) = c.after.as_deref() {
            shown.push((after, &c.label));
        }
        out.push_str(&c.diff());
    }
    out
}

/// `tmuxmate uninstall`: the report to print (with `dry_run`, the diffs and nothing written).
pub fn uninstall(
    project: Option<PathBuf>,
    one: Option<Which>,
    dry_run: bool,
) -> Result<String, Error> {
    let ctx = Ctx::new(project)?;
    let which = chosen(&ctx, one, false);
    let changes = super::plan_uninstall(&ctx, &which)?;
    if dry_run {
        let mut out = dry_run_diffs(&changes);
        out.push_str(&format!(
            "dry run: {} file(s) would change; nothing was written\n",
            changes.len()
        ));
        return Ok(out);
    }
    super::apply(&changes, false)?;
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
    Ok(out)
}

/// What `doctor` found.
pub struct Diagnosis {
    pub checks: Vec<doctor::Check>,
    /// How many checks are problems (each fails the run).
    pub problems: usize,
}

impl Diagnosis {
    /// One line per check, its fix under it, then the verdict.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for c in &self.checks {
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
        out.push_str(&if self.problems == 0 {
            "All is well.\n".to_string()
        } else {
            format!("{} problem(s); each has its fix above.\n", self.problems)
        });
        out
    }
}

/// `tmuxmate doctor`: every check, read-only.
pub fn diagnose(tmux: &Tmux) -> Result<Diagnosis, Error> {
    let ctx = Ctx::new(None)?;
    let checks = doctor::run(&ctx, tmux);
    let problems = checks
        .iter()
        .filter(|c| c.status == doctor::Status::Problem)
        .count();
    Ok(Diagnosis { checks, problems })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(area: &str, status: doctor::Status, fix: Option<&str>) -> doctor::Check {
        doctor::Check {
            area: area.into(),
            status,
            detail: format!("{area} detail"),
            fix: fix.map(str::to_string),
        }
    }

    #[test]
    fn doctor_text_tags_each_check_and_puts_its_fix_under_it() {
        let d = Diagnosis {
            checks: vec![
                check("tmux", doctor::Status::Ok, None),
                check(
                    "claude",
                    doctor::Status::Problem,
                    Some("tmuxmate install claude"),
                ),
                check("gemini", doctor::Status::Skipped, None),
            ],
            problems: 1,
        };
        let fix_line = format!("{}fix: tmuxmate install claude\n", " ".repeat(18));
        assert_eq!(
            d.text(),
            format!(
                "ok   tmux         tmux detail\n\
                 FAIL claude       claude detail\n\
                 {fix_line}\
                 skip gemini       gemini detail\n\
                 1 problem(s); each has its fix above.\n"
            )
        );
        let well = Diagnosis {
            checks: vec![],
            problems: 0,
        };
        assert_eq!(well.text(), "All is well.\n");
    }
}
