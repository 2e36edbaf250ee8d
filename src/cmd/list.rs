//! `tmuxmate list`: prints the listing of `control::list` as JSON or as an indented tree.

use crate::control::list;
use crate::error::CliResult;
use crate::tmux::Tmux;

pub fn run(tmux: &Tmux, json: bool) -> CliResult {
    let l = list::list(tmux, json)?;
    if json {
        super::out_json(&l);
        return Ok(());
    }
    let mut text = String::new();
    for s in &l.sessions {
        text.push_str(&format!(
            "session {} {:?}{}\n",
            s.session_id,
            s.name,
            if s.attached { " (attached)" } else { "" }
        ));
        for w in l.windows.iter().filter(|w| w.session_id == s.session_id) {
            text.push_str(&format!(
                "  window {} {} {:?}{} layout {}\n",
                w.window_id,
                w.index,
                w.name,
                if w.active { " (active)" } else { "" },
                w.layout
            ));
            for p in l
                .panes
                .iter()
                .filter(|p| p.window_id == w.window_id && p.session_id == s.session_id)
            {
                let mut flags = Vec::new();
                if p.active {
                    flags.push("active");
                }
                if p.dead {
                    flags.push("dead");
                }
                if p.in_mode {
                    flags.push(p.mode.as_str());
                }
                if p.created_by_us {
                    flags.push("ours");
                }
                // The option stays after a job ends (it records the outcome): a pane is
                // "watched" only while its job runs.
                match &p.watch {
                    Some(w) if w.status == crate::control::watch::job::JobStatus::Running => {
                        flags.push("watched")
                    }
                    None if p.watch_unreadable => flags.push("watch unreadable"),
                    _ => {}
                }
                text.push_str(&format!(
                    "    pane {} {}x{} {:?} ({}){}{}\n",
                    p.pane_id,
                    p.width,
                    p.height,
                    p.current_command,
                    p.executable.as_deref().unwrap_or("?"),
                    if flags.is_empty() {
                        String::new()
                    } else {
                        format!(" [{}]", flags.join(", "))
                    },
                    p.agent
                        .as_deref()
                        .map(|a| format!(" agent {a:?}"))
                        .unwrap_or_default()
                ));
            }
        }
    }
    super::out(&text);
    Ok(())
}
