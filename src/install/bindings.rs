//! The snippet's key bindings and the popups they open.
//!
//! Owns: the table of bindable actions (their `@tmuxmate-*-key` options and defaults),
//! the strict key-name check, binding through the tmux wrapper (`tmuxmate init bind`,
//! which the snippet runs), and opening a popup on a named client. Invariants:
//! - a key name is data from an option: it is bound only when it matches `valid_key`,
//!   otherwise refused and logged; a default key never replaces a binding that is not
//!   ours (an explicit option does: the user asked for it);
//! - a binding is `run-shell -b` (which expands formats on every tmux, unlike
//!   `display-popup`'s command on 3.2 to 3.6), its format text carries only our own path
//!   (`#` doubled, shell-quoted) and tmux-generated ids (`#{pane_id}`, `#{client_name}`);
//! - the popup's command reaches tmux as separate argv words, so tmux execs it without a
//!   shell and expands nothing in it; flags newer than 3.2 (`-T`) are gated on the version.

use crate::error::Error;
use crate::sys::state;
use crate::targs;
use crate::tmux::Arg;
use crate::tmux::Tmux;

/// One action a key opens.
pub struct Action {
    pub name: &'static str,
    pub option: &'static str,
    /// Picked to clash with no tmux default and none of tmux-resurrect (C-s, C-r), tpm
    /// (I, U, M-u), tmux-sensible, tmux-yank, tmux-logging (P, M-p, M-P, M-c),
    /// tmux-copycat (/, C-f, C-g, C-u, C-d, M-h, M-i), tmux-sessionist, tmux-fzf (F),
    /// tmux-notify (m, M, M-m).
    pub default: &'static str,
    /// `bin` (already quoted for the shell, `#` doubled) -> the run-shell command.
    command: fn(&str) -> String,
    /// A substring of `command`'s text that marks the binding as ours in `list-keys`.
    mark: &'static str,
}

pub const ACTIONS: &[Action] = &[
    Action {
        name: "snapshots",
        option: crate::tmux::options::SNAPSHOTS_KEY.name,
        default: crate::tmux::options::SNAPSHOTS_KEY.default_text(),
        command: |bin| {
            format!("{bin} snapshots popup --client #{{q:client_name}} >/dev/null 2>&1; true")
        },
        mark: " snapshots popup --client ",
    },
    Action {
        name: "side",
        option: crate::tmux::options::SIDE_KEY.name,
        default: crate::tmux::options::SIDE_KEY.default_text(),
        command: |bin| {
            format!(
                "{bin} side open -t #{{pane_id}} --client #{{q:client_name}} >/dev/null 2>&1; true"
            )
        },
        mark: " side open -t ",
    },
    Action {
        name: "jump",
        option: crate::tmux::options::JUMP_KEY.name,
        default: crate::tmux::options::JUMP_KEY.default_text(),
        command: |bin| {
            format!("{bin} agents jump --client #{{q:client_name}} >/dev/null 2>&1; true")
        },
        mark: " agents jump --client ",
    },
    Action {
        name: "dashboard",
        option: crate::tmux::options::DASHBOARD_KEY.name,
        default: crate::tmux::options::DASHBOARD_KEY.default_text(),
        command: |bin| {
            format!("{bin} dashboard --popup --client #{{q:client_name}} >/dev/null 2>&1; true")
        },
        mark: " dashboard --popup --client ",
    },
];

/// Named keys tmux knows on every supported version (a subset: the useful ones).
const NAMED: &[&str] = &[
    "F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F10", "F11", "F12", "Up", "Down",
    "Left", "Right", "Home", "End", "PPage", "NPage", "PageUp", "PageDown", "IC", "DC", "Insert",
    "Delete", "BSpace", "Tab", "BTab", "Enter", "Escape", "Space",
];

/// A key name as tmux writes it: `C-`, `M-`, `S-` (each at most once) before one ASCII
/// letter, digit or punctuation mark, or before one of `NAMED`. Refused: `;` (tmux's
/// command separator), quotes, backslash, backtick, spaces, control bytes, anything longer.
pub fn valid_key(k: &str) -> bool {
    let mut rest = k;
    let mut seen = String::new();
    while rest.len() > 2 {
        let Some(m) = ["C-", "M-", "S-"].iter().find(|m| rest.starts_with(**m)) else {
            break;
        };
        if seen.contains(&m[..1]) {
            return false;
        }
        seen.push_str(&m[..1]);
        rest = &rest[2..];
    }
    if NAMED.contains(&rest) {
        return true;
    }
    let mut chars = rest.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => {
            c.is_ascii_alphanumeric() || (c.is_ascii_punctuation() && !";\"'\\`".contains(c))
        }
        _ => false,
    }
}

/// This binary's path for a `run-shell` text: shell-quoted, every `#` doubled.
fn bin_for_format() -> Result<String, Error> {
    let bin = std::env::current_exe()?;
    let bin = bin.to_string_lossy();
    if bin.chars().any(|c| c.is_control()) {
        return Err(Error::refused(format!(
            "refused: this binary's path {bin:?} has a control character; install tmuxmate under a plain path"
        )));
    }
    Ok(crate::sys::shell::readable(&bin).replace('#', "##"))
}

fn option(tmux: &Tmux, name: &str) -> Result<String, Error> {
    Ok(tmux
        .run(&targs!["show-options", "-gqv", Arg::id(name)])?
        .trim_end_matches('\n')
        .to_string())
}

/// The binding of `key` in a `list-keys -T prefix` listing, if any. The whole table is
/// read because `list-keys -T prefix KEY` on 3.2 drops the modifiers (M-s lists `s`).
fn binding_of(listing: &str, key: &str) -> Option<String> {
    listing
        .lines()
        .find(|l| {
            let mut w = l.split_whitespace().skip_while(|w| *w != "prefix").skip(1);
            // list-keys escapes some keys (`\#`, `\$`): compare unescaped.
            w.next()
                .is_some_and(|k| k == key || k.strip_prefix('\\') == Some(key))
        })
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Is `key` in the prefix table bound to something other than `action`? (Unbound: no.)
fn taken_by_other(tmux: &Tmux, key: &str, action: &Action) -> Result<Option<String>, Error> {
    let listing = tmux.run(&["list-keys", "-T", "prefix"])?;
    Ok(binding_of(&listing, key).filter(|l| !l.contains(action.mark.trim())))
}

/// Bindings an older snippet made with `display-popup` (which ran nothing on 3.3a):
/// removed first, so that an upgrade does not keep them, nor count M-s as someone else's.
const LEGACY: &[&str] = &["side run -t #{pane_id}", "snapshots --limit 50 |"];

fn remove_legacy(tmux: &Tmux) -> Result<Vec<String>, Error> {
    let listing = tmux.run(&["list-keys", "-T", "prefix"])?;
    let mut gone = Vec::new();
    for l in listing.lines() {
        if !(l.contains("display-popup") && LEGACY.iter().any(|m| l.contains(m))) {
            continue;
        }
        let key = l.split_whitespace().skip_while(|w| *w != "prefix").nth(1);
        if let Some(k) = key.filter(|k| valid_key(k)) {
            tmux.run(&targs!["unbind-key", "-T", "prefix", "--", Arg::literal(k)])?;
            gone.push(format!("removed the old tmuxmate binding of prefix {k}"));
        }
    }
    Ok(gone)
}

/// What `init bind` did, one line per action (also logged).
pub fn bind_all(tmux: &Tmux) -> Result<Vec<String>, Error> {
    let bin = bin_for_format()?;
    let mut report = remove_legacy(tmux)?;
    for l in &report {
        state::log(&format!("init bind: {l}"));
    }
    for a in ACTIONS {
        let line = bind_one(tmux, a, &bin)?;
        state::log(&format!("init bind: {line}"));
        report.push(line);
    }
    Ok(report)
}

fn bind_one(tmux: &Tmux, a: &Action, bin: &str) -> Result<String, Error> {
    let set = option(tmux, a.option)?;
    let (key, explicit) = if set.is_empty() {
        (a.default.to_string(), false)
    } else {
        (set, true)
    };
    let bound_opt = format!("{}{}-key", crate::tmux::options::BOUND_PREFIX, a.name);
    let previous = option(tmux, &bound_opt)?;
    let off = key == "none" || key == "off";
    if !off && !valid_key(&key) {
        // The other actions still get their keys; the earlier binding (if any) stays.
        return Ok(format!(
            "{}: refused: {} is {key:?}, not a tmux key name (e.g. M-s, C-y, F5; or none); nothing bound",
            a.name, a.option
        ));
    }
    // A key we bound earlier and no longer want goes, if it still runs our command.
    if !previous.is_empty()
        && previous != key
        && valid_key(&previous)
        && taken_by_other(tmux, &previous, a)?.is_none()
    {
        let _ = tmux.run(&targs![
            "unbind-key",
            "-T",
            "prefix",
            "--",
            Arg::literal(&previous)
        ]);
    }
    if off {
        tmux.run(&targs!["set-option", "-gu", Arg::id(&bound_opt)])?;
        return Ok(format!("{}: no key ({} is {key})", a.name, a.option));
    }
    if !explicit && let Some(other) = taken_by_other(tmux, &key, a)? {
        tmux.run(&targs!["set-option", "-gu", Arg::id(&bound_opt)])?;
        return Ok(format!(
            "{}: default key prefix {key} is already bound ({other}); left as it is. Set {} to another key",
            a.name, a.option
        ));
    }
    let cmd = (a.command)(bin);
    // The key passed `valid_key`; the command is ours: a quoted path and formats of ours.
    tmux.run(&targs![
        "bind-key",
        "-T",
        "prefix",
        "--",
        Arg::literal(&key),
        "run-shell",
        "-b",
        Arg::ours(&cmd),
    ])?;
    tmux.run(&targs![
        "set-option",
        "-g",
        Arg::id(&bound_opt),
        Arg::literal(&key)
    ])?;
    Ok(format!("{}: prefix {key}", a.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_names() {
        for k in [
            "M-s", "M-a", "C-y", "F5", "M-F5", "C-M-x", "S-Up", "#", "%", "~", "Space", "BTab",
        ] {
            assert!(valid_key(k), "{k}");
        }
        for k in [
            "",
            ";",
            "a;b",
            "M-;",
            "x y",
            "#{pane_id}",
            "\"",
            "'",
            "\\",
            "`",
            "M-M-s",
            "C-",
            "Enter\n",
            "ab",
            "M-ab",
            "é",
            "run-shell",
            "-T",
        ] {
            assert!(!valid_key(k), "{k:?}");
        }
    }

    #[test]
    fn finds_a_binding_in_a_listing() {
        let l = "bind-key    -T prefix s       choose-tree -Zs\nbind-key -r -T prefix M-a     display-message mine\nbind-key    -T prefix \\#       list-buffers\n";
        assert_eq!(
            binding_of(l, "s").unwrap(),
            "bind-key -T prefix s choose-tree -Zs"
        );
        assert!(binding_of(l, "M-s").is_none());
        assert!(
            binding_of(l, "M-a")
                .unwrap()
                .ends_with("display-message mine")
        );
        assert!(binding_of(l, "#").unwrap().ends_with("list-buffers"));
    }

    #[test]
    fn commands_carry_only_ids_and_our_path() {
        for a in ACTIONS {
            let c = (a.command)("'/opt/t##m'");
            assert!(c.contains(a.mark), "{c}");
            assert!(!c.ends_with(';'), "{c}");
            assert!(valid_key(a.default));
        }
    }
}
