//! Codex `config.toml`: our `[mcp_servers.tmuxmate]` table and any hooks of ours in
//! `[[hooks.<Event>]]`, edited with `toml_edit` so every comment, blank line, key order and
//! quoting style of the user's file stays as it was.
//!
//! Invariant: only the `tmuxmate` server (when it runs a tmuxmate binary) and hook
//! handlers recognised by [`super::marker`] are touched; a table is pruned only when our
//! removal emptied it.

use toml_edit::{Array, DocumentMut, Item, Table, value};

use super::marker;

pub fn parse(label: &str, text: Option<&str>) -> Result<DocumentMut, String> {
    text.unwrap_or("").parse::<DocumentMut>().map_err(|e| {
        format!("{label} is not valid TOML ({e}); fix it and rerun: nothing was changed")
    })
}

fn server(doc: &DocumentMut) -> Option<&Table> {
    doc.get("mcp_servers")?
        .as_table()?
        .get("tmuxmate")?
        .as_table()
}

/// The command of `[mcp_servers.tmuxmate]` when that server is ours.
pub fn our_mcp_command(doc: &DocumentMut) -> Option<String> {
    let t = server(doc)?;
    let cmd = t.get("command")?.as_str()?.to_string();
    let is_ours = std::path::Path::new(&cmd)
        .file_name()
        .and_then(|n| n.to_str())
        == Some("tmuxmate");
    is_ours.then_some(cmd)
}

/// Make `[mcp_servers.tmuxmate]` run `bin mcp` with tmux's TMUX and TMUX_PANE passed
/// through; returns whether the document changed.
pub fn set_mcp(doc: &mut DocumentMut, label: &str, bin: &str) -> Result<bool, String> {
    if let Some(t) = server(doc) {
        if our_mcp_command(doc).is_none() {
            return Err(format!(
                "{label} already has [mcp_servers.tmuxmate] that does not run a tmuxmate binary; rename or remove it, then rerun"
            ));
        }
        let args_ok = t
            .get("args")
            .and_then(|a| a.as_array())
            .is_some_and(|a| a.len() == 1 && a.get(0).and_then(|v| v.as_str()) == Some("mcp"));
        let env_ok = t
            .get("env_vars")
            .and_then(|a| a.as_array())
            .is_some_and(|a| {
                a.iter().map(|v| v.as_str()).collect::<Vec<_>>()
                    == [Some("TMUX"), Some("TMUX_PANE")]
            });
        let parallel_set = t.contains_key(PARALLEL);
        if our_mcp_command(doc).as_deref() == Some(bin) && args_ok && env_ok && parallel_set {
            return Ok(false);
        }
    }
    let root = doc.as_table_mut();
    if !root.contains_key("mcp_servers") {
        let mut t = Table::new();
        // Implicit: only `[mcp_servers.tmuxmate]` shows, no empty `[mcp_servers]` header.
        t.set_implicit(true);
        root.insert("mcp_servers", Item::Table(t));
    }
    let servers = root["mcp_servers"]
        .as_table_mut()
        .ok_or_else(|| format!("{label}: mcp_servers is not a table; fix it and rerun"))?;
    if !servers.contains_key("tmuxmate") {
        servers.insert("tmuxmate", Item::Table(Table::new()));
    }
    let t = servers["tmuxmate"]
        .as_table_mut()
        .ok_or_else(|| format!("{label}: mcp_servers.tmuxmate is not a table; fix it and rerun"))?;
    t["command"] = value(bin);
    let mut args = Array::new();
    args.push("mcp");
    t["args"] = value(args);
    // Codex starts MCP servers with a minimal environment: without TMUX the server would
    // talk to the default socket, not the one Codex runs in, and without TMUX_PANE it
    // could not tell the caller's own pane (which kill refuses).
    let mut env = Array::new();
    env.push("TMUX");
    env.push("TMUX_PANE");
    t["env_vars"] = value(env);
    // Every tool is safe to run beside any other (the server runs calls on a bounded pool
    // and makes every id and file per call), so Codex need not send them one at a time;
    // a value the user set stays.
    if !t.contains_key(PARALLEL) {
        t[PARALLEL] = value(true);
    }
    Ok(true)
}

/// Codex's per-server switch for sending several tool calls at once.
const PARALLEL: &str = "supports_parallel_tool_calls";

pub fn remove_mcp(doc: &mut DocumentMut) -> bool {
    if our_mcp_command(doc).is_none() {
        return false;
    }
    let root = doc.as_table_mut();
    let Some(servers) = root.get_mut("mcp_servers").and_then(Item::as_table_mut) else {
        return false;
    };
    servers.remove("tmuxmate");
    if servers.is_empty() {
        root.remove("mcp_servers");
    }
    true
}

/// Our hook handlers in `[[hooks.<Event>]]` / `[[hooks.<Event>.hooks]]`: (event, command).
pub fn our_hooks(doc: &DocumentMut) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(hooks) = doc.get("hooks").and_then(Item::as_table) else {
        return out;
    };
    for (ev, groups) in hooks.iter() {
        let Some(groups) = groups.as_array_of_tables() else {
            continue;
        };
        for g in groups.iter() {
            let Some(hs) = g.get("hooks").and_then(Item::as_array_of_tables) else {
                continue;
            };
            for h in hs.iter() {
                if let Some(cmd) = h.get("command").and_then(|c| c.as_str())
                    && marker::ours_in_command(cmd, "hook").is_some()
                {
                    out.push((ev.to_string(), cmd.to_string()));
                }
            }
        }
    }
    out
}

/// Remove hook handlers of ours from config.toml (install writes hooks.json instead).
pub fn remove_hooks(doc: &mut DocumentMut) -> bool {
    let root = doc.as_table_mut();
    let Some(hooks) = root.get_mut("hooks").and_then(Item::as_table_mut) else {
        return false;
    };
    let mut changed = false;
    let mut emptied = Vec::new();
    for (ev, groups) in hooks.iter_mut() {
        let Some(groups) = groups.as_array_of_tables_mut() else {
            continue;
        };
        let mut touched = false;
        groups.retain(|g| {
            let Some(hs) = g.get("hooks").and_then(Item::as_array_of_tables) else {
                return true;
            };
            let ours = hs
                .iter()
                .filter(|h| {
                    h.get("command")
                        .and_then(|c| c.as_str())
                        .is_some_and(|c| marker::ours_in_command(c, "hook").is_some())
                })
                .count();
            if ours > 0 {
                touched = true;
            }
            // A group holding only our handlers goes; a mixed group is kept whole (rare,
            // and editing inside it could drop the user's formatting).
            !(ours > 0 && ours == hs.len())
        });
        if touched {
            changed = true;
            if groups.is_empty() {
                emptied.push(ev.to_string());
            }
        }
    }
    for ev in emptied {
        hooks.remove(&ev);
    }
    // `[hooks.state]` (trust records) stays: Codex owns it.
    if changed && hooks.is_empty() {
        root.remove("hooks");
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_and_removes_our_server_keeping_comments() {
        let text =
            "# my config\nmodel = \"gpt-5.5\" # inline\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let mut doc = parse("c", Some(text)).unwrap();
        assert!(set_mcp(&mut doc, "c", "/b/tmuxmate").unwrap());
        let out = doc.to_string();
        assert!(out.starts_with(text), "{out}");
        assert!(
            out.contains("[mcp_servers.tmuxmate]\ncommand = \"/b/tmuxmate\"\nargs = [\"mcp\"]"),
            "{out}"
        );
        let mut again = parse("c", Some(&out)).unwrap();
        assert!(!set_mcp(&mut again, "c", "/b/tmuxmate").unwrap());
        assert!(remove_mcp(&mut again));
        assert_eq!(again.to_string(), text);
    }

    #[test]
    fn parallel_calls_are_declared_once_and_a_users_choice_stays() {
        let mut doc = parse("c", Some("")).unwrap();
        set_mcp(&mut doc, "c", "/b/tmuxmate").unwrap();
        assert!(
            doc.to_string()
                .contains("supports_parallel_tool_calls = true"),
            "{doc}"
        );
        // An install from before the key gains it; a user's false is kept.
        let old = "[mcp_servers.tmuxmate]\ncommand = \"/b/tmuxmate\"\nargs = [\"mcp\"]\nenv_vars = [\"TMUX\", \"TMUX_PANE\"]\n";
        let mut doc = parse("c", Some(old)).unwrap();
        assert!(set_mcp(&mut doc, "c", "/b/tmuxmate").unwrap());
        let mut off = parse(
            "c",
            Some(&format!("{old}supports_parallel_tool_calls = false\n")),
        )
        .unwrap();
        assert!(!set_mcp(&mut off, "c", "/b/tmuxmate").unwrap());
        assert!(
            off.to_string()
                .contains("supports_parallel_tool_calls = false")
        );
    }
}
