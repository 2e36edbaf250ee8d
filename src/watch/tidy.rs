//! Closing the windows of finished watch jobs that nobody needs any more.
//!
//! A watch without `-t` runs in a window of ours that becomes a shell when the command
//! exits, so a person can read what it printed. An agent that starts thousands of
//! watches would leave thousands of windows; this keeps the newest
//! `@tmuxmate-watch-windows-kept` (default 10) and closes older ones.
//!
//! Invariants: only a window that is ours and holds nothing but its job's pane is ever
//! closed, and only when its job **finished** (the command exited: a timed-out, matched or
//! stopped job's command may still run), every addressee was told the result, the pane
//! is an idle shell at its prompt, and nobody is looking at it (the active window of an
//! attached session), scrolling in it (a mode), or typed into it (output after the job's
//! end). Any doubt keeps the window. Unattended: failures are logged, never raised.

use crate::sys::state;
use crate::targs;
use crate::tmux::{Arg, Tmux};
use crate::watch::job::{self, Job, JobStatus};

/// Output this long after the job's end is a person's (the prompt comes at once).
const TOUCH_GRACE_S: u64 = 5;

/// One finished watch window that may be closed.
struct Finished {
    pane_id: String,
    end_ms: u64,
    job: Job,
    /// Nobody looks at it, no mode, its window holds only this pane.
    quiet: bool,
}

/// Close what `@tmuxmate-watch-windows-kept` says is too much on this server.
pub fn tidy(tmux: &Tmux) {
    let o = crate::tmux::options::WATCH_WINDOWS_KEPT;
    let kept = o.number_or_default(&o.global(tmux)) as usize;
    let panes = match crate::tmux::panes::list_all(tmux) {
        Ok(p) => p,
        Err(e) => {
            state::log(&format!("watch tidy: cannot list panes: {e}"));
            return;
        }
    };
    let per_window = |w: &str| panes.iter().filter(|p| p.window_id == w).count();
    let mut finished: Vec<Finished> = panes
        .iter()
        .filter_map(|p| {
            let opt: Job = serde_json::from_str(&p.job).ok()?;
            if !opt.launched || opt.pane_id != p.pane_id || opt.status != JobStatus::Finished {
                return None;
            }
            // The record is the durable truth; the option is its copy on the pane.
            let job = job::load(&opt.id).unwrap_or(opt);
            Some(Finished {
                pane_id: p.pane_id.clone(),
                end_ms: job.end?,
                quiet: !(p.in_mode
                    || p.dead
                    || per_window(&p.window_id) != 1
                    || p.window_active && p.session_attached),
                job,
            })
        })
        .collect();
    if finished.len() <= kept {
        return;
    }
    finished.sort_by_key(|f| std::cmp::Reverse(f.end_ms));
    let shells = super::prompt::shells(tmux);
    let mut counter = super::status::Counter::default();
    for f in finished.into_iter().skip(kept) {
        if !f.quiet || f.job.status != JobStatus::Finished || !counter.told(&f.job) {
            continue;
        }
        if !untouched(tmux, &f, &shells) {
            continue;
        }
        match tmux.run(&targs!["kill-pane", "-t", Arg::id(&f.pane_id)]) {
            Ok(_) => state::log(&format!(
                "watch {}: closed its finished window (pane {}; @tmuxmate-watch-windows-kept {kept})",
                f.job.id, f.pane_id
            )),
            Err(e) => state::log(&format!(
                "watch {}: could not close pane {}: {e}",
                f.job.id, f.pane_id
            )),
        }
    }
}

/// The pane's shell sits at its prompt and nothing was printed there since the job's
/// end (beyond the prompt itself) nor since tidying first saw it: the first look only
/// notes the pane's activity time, scrollback size and cursor (`@tmuxmate-tidy-seen`),
/// a later one closes it if none changed, so a person's typing between two looks always
/// keeps it.
fn untouched(tmux: &Tmux, f: &Finished, shells: &[String]) -> bool {
    let seen = crate::tmux::options::TIDY_SEEN.name;
    let Ok(out) = tmux.run(&targs![
        "display-message",
        "-p",
        "-t",
        Arg::id(&f.pane_id),
        Arg::ours(format!(
            "#{{pane_id}}\t#{{window_activity}}\t#{{pane_pid}}\t#{{{seen}}}\t#{{history_size}}.#{{cursor_x}}.#{{cursor_y}}"
        ))
    ]) else {
        return false;
    };
    let mut it = out.trim_end_matches('\n').split('\t');
    if it.next() != Some(f.pane_id.as_str()) {
        return false;
    }
    let activity = it.next().unwrap_or("");
    let pid: i32 = it.next().and_then(|v| v.parse().ok()).unwrap_or(0);
    let before = it.next().unwrap_or("");
    let Ok(at) = activity.parse::<u64>() else {
        return false;
    };
    // The activity time has a one-second grain: with the scrollback's size and the
    // cursor, a line typed in the same second as the first look still shows.
    let now = format!("{activity}.{}", it.next().unwrap_or(""));
    if at > f.end_ms / 1000 + TOUCH_GRACE_S {
        return false;
    }
    if before.is_empty() {
        let noted = tmux.run(&targs![
            "set-option",
            "-p",
            "-t",
            Arg::id(&f.pane_id),
            seen,
            Arg::id(&now)
        ]);
        if let Err(e) = noted {
            state::log(&format!("watch tidy: cannot mark pane {}: {e}", f.pane_id));
        }
        return false;
    }
    if before != now {
        return false;
    }
    matches!(
        crate::sys::foreground::shell_at(pid, shells),
        Some((fg, true)) if !has_children(fg)
    )
}

/// Whether `pid` has child processes (a shell running something, or a job of it);
/// unknown counts as yes.
fn has_children(pid: i32) -> bool {
    crate::sys::procfs::children(pid).is_none_or(|c| !c.is_empty())
}
