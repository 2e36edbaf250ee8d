//! Creating panes that tmuxmate owns.
//!
//! Owns: where new work goes (a new window in the caller's session, else in a session
//! named `tmuxmate`; a split only of a pane named explicitly), `history-limit` being in
//! force before the pane exists, and the `@tmuxmate-created` mark. Invariants: sessions
//! are found by exact name through their `$N` id, never by tmux's prefix matching; the
//! user's session-level `history-limit` is restored after creation; a command to run is
//! passed to tmux as one argv element (tmux hands it to `sh -c`), or for our own commands
//! (the run wrapper) as one argument per word (tmux execs them, no shell), never parsed
//! by tmux;
//! names and start directories are [`Text`] encoded for tmux's format expansion; no
//! creation runs with a global `window-size manual` in force (it crashes tmux 3.3a).

use crate::control::policy::CreatedMark;
use crate::control::preflight::Facts;
use crate::error::Error;
use crate::location::address::Caller;
use crate::targs;
use crate::tmux::panes;
use crate::tmux::{Arg, Text, Tmux};

pub const OWN_SESSION: &str = "tmuxmate";
/// [`OWN_SESSION`] as an exact tmux target (no prefix matching).
const OWN_SESSION_TARGET: &str = "=tmuxmate:";

#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Created {
    pub pane_id: String,
    pub target: String,
}

// The one quoter lives in `sys::shell`; these names stay until the handlers move.
pub use crate::sys::shell::{join_readable as sh_join, readable as sh_quote};

fn history_limit(tmux: &Tmux) -> u64 {
    let o = crate::tmux::options::HISTORY_LIMIT;
    o.number_or_default(&o.global(tmux))
}

/// Where the user's `window-size` is kept while a creation runs on a fresh server.
const SAVED_WINDOW_SIZE: &str = crate::tmux::options::SAVED_WINDOW_SIZE.name;

/// Run one creating command (`new-window`, `new-session`) so that a global
/// `window-size manual` cannot crash the server: tmux 3.3a to 3.6 segfault when they
/// create a window with that global value and no attached client (docs/tmux-versions.md#traps-on-every-release), and a
/// user's tmux.conf can set it. One command list sets the global to `latest`, creates,
/// and puts the user's value back. On a live server the value is asked first and the
/// list is used only when it is `manual` (setting the global resizes windows). When this
/// call starts the server, its config has not run yet: the list starts the server, saves
/// whatever the config set, and restores exactly that. A failed creation (tmux skips the
/// rest of the list) is followed by the restore on its own.
fn create_guarded(tmux: &Tmux, args: &[Arg]) -> Result<String, Error> {
    create_listed(tmux, &[], args, &[], &[])
}

/// `parts` joined into one command list (empty parts left out).
fn list_of<'a>(parts: &[&[Arg<'a>]]) -> Vec<Arg<'a>> {
    let mut list: Vec<Arg<'a>> = Vec::new();
    for p in parts.iter().filter(|p| !p.is_empty()) {
        if !list.is_empty() {
            list.push(Arg::SEP);
        }
        list.extend(p.iter().cloned());
    }
    list
}

/// [`create_guarded`] with commands of ours around the creation in the same command list
/// (one tmux round trip): `before` runs first, `after` once the creation succeeded; when
/// the list fails (tmux skips the rest of it), `undo` runs on its own to put back what
/// `before` changed.
fn create_listed(
    tmux: &Tmux,
    before: &[Arg],
    args: &[Arg],
    after: &[Arg],
    undo: &[Arg],
) -> Result<String, Error> {
    let window_size = tmux
        .run(&["show-options", "-gv", "window-size"])
        .map(|v| v.trim().to_string());
    create_listed_knowing(tmux, window_size, before, args, after, undo)
}

/// [`create_listed`] with the global `window-size` already asked (`Err`: no server, or
/// the question failed).
fn create_listed_knowing(
    tmux: &Tmux,
    window_size: Result<String, crate::tmux::TmuxError>,
    before: &[Arg],
    args: &[Arg],
    after: &[Arg],
    undo: &[Arg],
) -> Result<String, Error> {
    let fresh = match window_size {
        Ok(v) if v == "manual" => false,
        Err(e) if e.is_no_server() => true,
        _ => {
            let r = tmux.run(&list_of(&[before, args, after]));
            if r.is_err() && !undo.is_empty() {
                let _ = tmux.run(undo);
            }
            return Ok(r?);
        }
    };
    let mut head: Vec<Arg> = Vec::new();
    let restore: Vec<Arg> = if fresh {
        head.extend(targs![
            "start-server",
            Arg::SEP,
            "set-option",
            "-gF",
            SAVED_WINDOW_SIZE,
            "#{window-size}"
        ]);
        targs![
            "set-option",
            "-gF",
            "window-size",
            "#{@tmuxmate-saved-window-size}",
            Arg::SEP,
            "set-option",
            "-gu",
            SAVED_WINDOW_SIZE
        ]
        .into()
    } else {
        targs!["set-option", "-g", "window-size", "manual"].into()
    };
    let latest: Vec<Arg> = targs!["set-option", "-g", "window-size", "latest"].into();
    let list = list_of(&[&head, &latest, before, args, &restore, after]);
    let r = tmux.run(&list);
    if r.is_err() {
        let _ = tmux.run(&list_of(&[&restore, undo]));
    }
    Ok(r?)
}

/// The `$N` id of the session named exactly `name`, if any.
pub fn session_by_name(tmux: &Tmux, name: &str) -> Result<Option<String>, Error> {
    let fmt = crate::tmux::format::record_format(&["session_id", "session_name"]);
    let out = match tmux.run_bytes(&targs!["list-sessions", "-F", Arg::ours(&fmt)], None) {
        Ok(o) => o,
        Err(e) if e.is_no_server() => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let recs = crate::tmux::format::parse_records(&out, 2)
        .map_err(|d| Error::new(format!("unreadable list-sessions output: {d}")))?;
    Ok(recs
        .into_iter()
        .find(|r| r[1] == name)
        .map(|r| r[0].clone()))
}

/// The session new work goes into: the caller's, else `tmuxmate` (created if missing).
/// A freshly created `tmuxmate` session comes with a placeholder window, returned second,
/// that the caller removes once its own window exists.
pub fn work_session(tmux: &Tmux, caller: &Caller) -> Result<(String, Option<String>), Error> {
    if let Some(p) = &caller.pane_id {
        let rows = panes::list_all(tmux)?;
        if let Some(r) = rows.iter().find(|r| &r.pane_id == p) {
            return Ok((r.session_id.clone(), None));
        }
    }
    if let Some(id) = session_by_name(tmux, OWN_SESSION)? {
        return Ok((id, None));
    }
    let (sid, placeholder) = new_session(tmux, &Text::lossy(OWN_SESSION), None)?;
    Ok((sid, Some(placeholder)))
}

/// A detached session named exactly `name` with a placeholder window (`cat`): the caller
/// creates its own window with `history-limit` in force, then kills the placeholder.
/// Returns `($N, @placeholder)`. tmux replaces `.` and `:` in session names and escapes
/// `$` and `\`; a name that holds them is refused here rather than created under another
/// name.
pub fn new_session(
    tmux: &Tmux,
    name: &Text,
    cwd: Option<&Text>,
) -> Result<(String, String), Error> {
    if let Some(c) = name.as_str().chars().find(|c| matches!(c, '.' | ':')) {
        return Err(Error::usage(format!(
            "the session name {name:?} contains {c:?}, which tmux does not allow in session \
             names (it would become '_'): pick a name without '.' and ':'"
        )));
    }
    if let Some(c) = name.as_str().chars().find(|c| matches!(c, '$' | '\\')) {
        return Err(Error::usage(format!(
            "the session name {name:?} contains {c:?}, which tmux escapes in session names \
             (it would store another name): pick a name without '$' and '\\'"
        )));
    }
    let mut args: Vec<Arg> = targs!["new-session", "-d", "-s", name.expanded()].into();
    if let Some(c) = cwd {
        args.extend(targs!["-c", c.expanded()]);
    }
    // A session of ours runs detached by design: a user's `destroy-unattached on` would
    // destroy it at once, so the same command list turns it off. The new session is named
    // exactly: a command without `-t` after new-session targets the caller's session when
    // tmuxmate runs in a pane (tmux finds it from the $TMUX_PANE the client sends), which
    // would leave ours to die.
    // The name arrives unchanged (`.`, `:`, `$`, `\` refused above), so `=name:` is it.
    let own = format!("={}:", name.as_str());
    // Our `history-limit` is the session's own: its later windows have it whatever the
    // global value (tmux 3.7 applies a changed global to every pane of a session that
    // inherits it, so a set-and-restore of the global would shrink ours).
    let limit = history_limit(tmux).to_string();
    args.extend(targs![
        "-P",
        "-F",
        "#{session_id} #{window_id} #{session_name}",
        "cat",
        Arg::SEP,
        "set-option",
        "-t",
        Arg::literal(&own),
        "destroy-unattached",
        "off",
        Arg::SEP,
        "set-option",
        "-t",
        Arg::literal(&own),
        "history-limit",
        Arg::id(&limit)
    ]);
    let out = create_guarded(tmux, &args)?;
    let mut it = out.trim_end_matches('\n').splitn(3, ' ');
    let sid = it.next().unwrap_or_default().to_string();
    let placeholder = it.next().unwrap_or_default().to_string();
    let stored = it.next().unwrap_or_default();
    if !sid.starts_with('$') || !placeholder.starts_with('@') {
        return Err(Error::new(format!(
            "tmux created session {name} but did not report its ids (got {out:?})"
        )));
    }
    if stored != name.as_str() {
        // tmux rewrote the name (it escapes some characters): a session under another
        // name than the one we report would be found by nobody. Take it back.
        let _ = tmux.run(&targs!["kill-session", "-t", Arg::id(&sid)]);
        return Err(Error::usage(format!(
            "tmux would store the session name {name:?} as {stored:?}: pick a name without \
             '$', '\\', '.' or ':'; nothing was created"
        )));
    }
    Ok((sid, placeholder))
}

/// A new window for new work: in the caller's session, else in the `tmuxmate` session.
pub fn new_work_window(
    tmux: &Tmux,
    caller: &Caller,
    name: Option<&Text>,
    cwd: Option<&Text>,
    cmd: &[String],
) -> Result<Created, Error> {
    past_session_races(|_| {
        let (session, placeholder) = work_session(tmux, caller)?;
        let r = new_window(tmux, caller, &session, name, cwd, cmd);
        drop_placeholder(tmux, placeholder, r)
    })
}

/// Remove a fresh session's placeholder window once ours was created (or failed). A
/// user's `renumber-windows on` then moves ours down to the placeholder's index, so the
/// address is asked again in the same command list: the one reported is the pane's now.
fn drop_placeholder(
    tmux: &Tmux,
    placeholder: Option<String>,
    created: Result<Created, Error>,
) -> Result<Created, Error> {
    let Some(w) = placeholder else {
        return created;
    };
    let mut c = match created {
        Ok(c) => c,
        Err(e) => {
            let _ = tmux.run(&targs!["kill-window", "-t", Arg::id(&w)]);
            return Err(e);
        }
    };
    let ask: Vec<Arg> = targs![
        "display-message",
        "-p",
        "-t",
        Arg::id(&c.pane_id),
        "#{session_name}:#{window_index}.#{pane_index}"
    ]
    .into();
    let mut list: Vec<Arg> = targs!["kill-window", "-t", Arg::id(&w), Arg::SEP].into();
    list.extend(ask.iter().cloned());
    // A failed kill skips the question: asked on its own then. Without an answer the
    // address from the creation stands (the pane may have exited meanwhile).
    let now = tmux.run(&list).or_else(|_| tmux.run(&ask));
    if let Ok(t) = now
        && !t.trim().is_empty()
    {
        c.target = t.trim_end_matches('\n').to_string();
    }
    Ok(c)
}

/// The commands that raise the session's `history-limit` to ours and put the old value
/// back, to run in the same command list as a creation: `(set, restore)`. None where
/// tmux applies the option to existing panes: there the restore would shrink the new pane
/// back and the raise would grow every other pane of the user's session, so a window in a
/// user's session gets that session's own limit (ours keep theirs: [`new_session`]).
fn history_limit_cmds(tmux: &Tmux, session_id: &str) -> (Vec<Arg<'static>>, Vec<Arg<'static>>) {
    if tmux
        .version()
        .is_some_and(|v| v.history_limit_applies_to_existing_panes())
    {
        return (Vec::new(), Vec::new());
    }
    let sid = Arg::id(session_id).into_owned();
    let old = tmux
        .run(&targs!["show-options", "-qv", "-t", &sid, "history-limit"])
        .unwrap_or_default();
    let limit = history_limit(tmux).to_string();
    let set = vec![
        Arg::from("set-option"),
        Arg::from("-t"),
        sid.clone(),
        Arg::from("history-limit"),
        Arg::id(&limit).into_owned(),
    ];
    let old = old.trim();
    let restore = if old.is_empty() {
        vec![
            Arg::from("set-option"),
            Arg::from("-u"),
            Arg::from("-t"),
            sid,
            Arg::from("history-limit"),
        ]
    } else {
        vec![
            Arg::from("set-option"),
            Arg::from("-t"),
            sid,
            Arg::from("history-limit"),
            Arg::id(old).into_owned(),
        ]
    };
    (set, restore)
}

/// The first free window index of the session (tmux's own choice for `new-window -t $N:`),
/// so the creation and the commands after it can name the new window in one list. `None`
/// when it cannot be read.
fn free_window_index(tmux: &Tmux, session_id: &str) -> Option<u32> {
    let out = tmux
        .run(&targs![
            "list-windows",
            "-t",
            Arg::id(session_id),
            "-F",
            "#{base-index} #{window_index}"
        ])
        .ok()?;
    let mut base = None;
    let mut used = Vec::new();
    for l in out.lines() {
        let (b, i) = l.split_once(' ')?;
        base = Some(b.parse::<u32>().ok()?);
        used.push(i.parse::<u32>().ok()?);
    }
    let mut i = base?;
    while used.contains(&i) {
        i = i.checked_add(1)?;
    }
    Some(i)
}

fn finish(tmux: &Tmux, out: &str, caller: &Caller, marked: bool) -> Result<Created, Error> {
    let mut it = out.trim_end_matches('\n').splitn(2, ' ');
    let pane_id = it.next().unwrap_or("").to_string();
    let target = it.next().unwrap_or("").to_string();
    if !pane_id.starts_with('%') {
        return Err(Error::new(format!(
            "tmux created a pane but did not report its id (got {out:?})"
        )));
    }
    if !marked && let Err(e) = mark(tmux, &pane_id, caller) {
        // A command that exits at once takes its pane with it before we can mark it.
        let gone = tmux
            .run(&targs![
                "display-message",
                "-p",
                "-t",
                Arg::id(&pane_id),
                "#{pane_id}"
            ])
            .map(|o| o.trim() != pane_id)
            .unwrap_or(true);
        if gone {
            return Err(Error::new(format!(
                "the command in the new pane {pane_id} exited at once, and its pane closed; \
                 nothing is left. Check the command (run it in a shell to see its error)"
            )));
        }
        // The pane is there: the mark failed on the way (a remote connection that dropped
        // and was just re-established by the look above). Once more, then give up.
        mark(tmux, &pane_id, caller).map_err(|_| e)?;
    }
    Ok(Created { pane_id, target })
}

/// Mark a pane as ours (survives every tmuxmate and agent restart: it lives in tmux).
pub fn mark(tmux: &Tmux, pane_id: &str, caller: &Caller) -> Result<(), Error> {
    tmux.run(&mark_cmd(pane_id, caller))?;
    Ok(())
}

/// The command that marks the pane `target` names (an id, or `$N:I` for a new window's
/// only pane) as ours.
fn mark_cmd(target: &str, caller: &Caller) -> Vec<Arg<'static>> {
    let v = Text::lossy(&CreatedMark::new(&caller.agent).to_json());
    vec![
        Arg::from("set-option"),
        Arg::from("-p"),
        Arg::from("-t"),
        Arg::id(target).into_owned(),
        Arg::from("--"),
        Arg::from(crate::tmux::options::CREATED.name),
        v.literal().into_owned(),
    ]
}

const PRINT: &str = "#{pane_id} #{session_name}:#{window_index}.#{pane_index}";

/// A new window in `session_id`, running `cmd` (empty = the default shell).
pub fn new_window(
    tmux: &Tmux,
    caller: &Caller,
    session_id: &str,
    name: Option<&Text>,
    cwd: Option<&Text>,
    cmd: &[String],
) -> Result<Created, Error> {
    new_window_with(tmux, caller, session_id, name, cwd, cmd, false)
}

/// [`new_work_window`] for a command of ours that never exits at once (the run wrapper):
/// the `@tmuxmate-created` mark is set in the creation's own command list, so creating,
/// `history-limit` in force and marking are one tmux round trip. (A user's command that
/// exits at once must be reported as such, which needs the mark as a second call:
/// [`new_work_window`].)
/// `facts`, when given, were asked in this call's first round trip
/// (`super::preflight`): they spare the questions of creating the own session.
pub fn new_work_window_of_ours(
    tmux: &Tmux,
    caller: &Caller,
    name: Option<&Text>,
    cmd: &[String],
    facts: Option<&Facts>,
) -> Result<Created, Error> {
    // Parallel calls race for the one `tmuxmate` session; a retry looks afresh.
    past_session_races(|first| work_window_once(tmux, caller, name, cmd, facts.filter(|_| first)))
}

/// `make` again (`first` false) while it lost a race for the work session: another call
/// created it meanwhile (duplicate session), or its last window closed between the
/// lookup and the new-window (no such session). Neither failure created anything.
fn past_session_races(
    mut make: impl FnMut(bool) -> Result<Created, Error>,
) -> Result<Created, Error> {
    let mut tries = 0;
    loop {
        match make(tries == 0) {
            Err(e)
                if tries < 4
                    && (e.kind == crate::error::Kind::Tmux("target-not-found")
                        || e.human().contains("duplicate session")) =>
            {
                tries += 1
            }
            r => return r,
        }
    }
}

fn work_window_once(
    tmux: &Tmux,
    caller: &Caller,
    name: Option<&Text>,
    cmd: &[String],
    facts: Option<&Facts>,
) -> Result<Created, Error> {
    // Outside tmux with no `tmuxmate` session yet (a run from an MCP client, each time:
    // the session goes with its last window): the session is created around our window,
    // in one command list, with no placeholder window to start and kill.
    let no_own_session = match facts {
        Some(f) => f.session_by_name(OWN_SESSION).is_none(),
        None => session_by_name(tmux, OWN_SESSION)?.is_none(),
    };
    if caller.pane_id.is_none()
        && no_own_session
        && let Some(c) = new_own_session_with(tmux, caller, name, cmd, facts)?
    {
        return Ok(c);
    }
    let (session, placeholder) = work_session(tmux, caller)?;
    let r = new_window_with(tmux, caller, &session, name, None, cmd, true);
    drop_placeholder(tmux, placeholder, r)
}

fn new_window_with(
    tmux: &Tmux,
    caller: &Caller,
    session_id: &str,
    name: Option<&Text>,
    cwd: Option<&Text>,
    cmd: &[String],
    mark_in_list: bool,
) -> Result<Created, Error> {
    // The command line goes to `sh -c`, which tmux does not format-expand; only its
    // trailing `;` needs the parser's escape.
    let shell_cmd = sh_join(cmd);
    let (set, restore) = history_limit_cmds(tmux, session_id);
    // The mark names the new window by its index: the first free one, as tmux would pick.
    let index = if mark_in_list {
        free_window_index(tmux, session_id)
    } else {
        None
    };
    let create = |index: Option<u32>| {
        let target = match index {
            Some(i) => format!("{session_id}:{i}"),
            None => format!("{session_id}:"),
        };
        let mut args: Vec<Arg> = targs![
            "new-window",
            "-d",
            "-t",
            Arg::id(&target),
            "-P",
            "-F",
            PRINT
        ]
        .into();
        if let Some(n) = name {
            args.extend(targs!["-n", n.expanded()]);
        }
        if let Some(c) = cwd {
            args.extend(targs!["-c", c.expanded()]);
        }
        if mark_in_list {
            // Our own command (the run wrapper): each word its own argument, so tmux runs
            // it without the default-shell layer (one exec less in the new pane).
            args.extend(cmd.iter().map(|w| Arg::literal(w)));
        } else if !cmd.is_empty() {
            args.push(Arg::literal(&shell_cmd));
        }
        let mut after = match index {
            Some(_) => {
                let mut m = mark_cmd(&target, caller);
                m.push(Arg::SEP);
                m
            }
            None => Vec::new(),
        };
        after.extend(restore.iter().cloned());
        create_listed(tmux, &set, &args, &after, &restore)
    };
    let (out, marked) = match index {
        Some(i) => match create(Some(i)) {
            Ok(out) => (out, true),
            // Another client took the index meanwhile: tmux's own choice, marked after.
            Err(_) => (create(None)?, false),
        },
        None => (create(None)?, false),
    };
    finish(tmux, &out, caller, marked)
}

/// The `tmuxmate` session, created with our command as its first window (marked ours,
/// `history-limit` in force: the global value is raised for the creation and put back in
/// the same command list, which tmux runs without interleaving other clients' commands).
/// `None` when it was not made and nothing is left behind: no server yet, an unreadable
/// value, or another call created the session meanwhile; the caller then takes the usual
/// path. Any other failure of the list is the caller's error (the session may exist, and
/// running the command a second time elsewhere is not an option).
fn new_own_session_with(
    tmux: &Tmux,
    caller: &Caller,
    name: Option<&Text>,
    cmd: &[String],
    known: Option<&Facts>,
) -> Result<Option<Created>, Error> {
    let asked;
    let globals = match known {
        Some(f) => Globals {
            history_limit: f.history_limit.as_str(),
            window_size: f.window_size.as_str(),
            ours: f.option(crate::tmux::options::HISTORY_LIMIT.name),
        },
        None => {
            let Some(answer) = ask_globals(tmux) else {
                return Ok(None);
            };
            asked = answer;
            let Some(g) = Globals::parse(&asked) else {
                return Ok(None);
            };
            g
        }
    };
    let mark = Text::lossy(&CreatedMark::new(&caller.agent).to_json());
    let Some(plan) = OwnSession::plan(&globals, name, cmd, &mark) else {
        return Ok(None);
    };
    let window_size = Ok(globals.window_size.to_string());
    let (set, args, after, restore) = (&plan.set, &plan.args, &plan.after, &plan.restore);
    match create_listed_knowing(tmux, window_size, set, args, after, restore) {
        Ok(out) => own_session_created(&out).map(Some),
        Err(e) if e.human().contains("duplicate session") => Ok(None),
        Err(e) => Err(e),
    }
}

/// The global values creating the own session needs: `history-limit` (to put back),
/// `window-size` (see [`create_listed`]) and our `@tmuxmate-history-limit`.
#[derive(Debug, PartialEq)]
struct Globals<'a> {
    history_limit: &'a str,
    window_size: &'a str,
    ours: &'a str,
}

/// The three values in one round trip (a `-q` of an unset option prints no line, so
/// ours comes last). None: no server, or the question failed.
fn ask_globals(tmux: &Tmux) -> Option<String> {
    tmux.run(&targs![
        "show-options",
        "-gv",
        "history-limit",
        Arg::SEP,
        "show-options",
        "-gv",
        "window-size",
        Arg::SEP,
        "show-options",
        "-gqv",
        crate::tmux::options::HISTORY_LIMIT.name
    ])
    .ok()
}

impl Globals<'_> {
    /// [`ask_globals`]'s answer: two lines, or three with ours; anything else is unread.
    fn parse(answer: &str) -> Option<Globals<'_>> {
        let mut lines = answer.lines();
        let (Some(history_limit), Some(window_size)) = (lines.next(), lines.next()) else {
            return None;
        };
        let ours = lines.next().unwrap_or("");
        if lines.next().is_some() {
            return None;
        }
        Some(Globals {
            history_limit,
            window_size,
            ours,
        })
    }
}

/// The commands that create the own session around our command: `set` raises the global
/// `history-limit` to ours, `args` creates, `after` sets the session up and `restore`
/// puts the global back (also on its own when the list fails).
struct OwnSession {
    set: Vec<Arg<'static>>,
    args: Vec<Arg<'static>>,
    after: Vec<Arg<'static>>,
    restore: Vec<Arg<'static>>,
}

impl OwnSession {
    /// None when the global `history-limit` is not a number (it could not be put back).
    fn plan(g: &Globals, name: Option<&Text>, cmd: &[String], mark: &Text) -> Option<OwnSession> {
        let old = g.history_limit;
        if old.is_empty() || !old.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let o = crate::tmux::options::HISTORY_LIMIT;
        let limit = o.number_or_default(g.ours).to_string();
        let owned = |a: &[Arg]| a.iter().cloned().map(Arg::into_owned).collect::<Vec<_>>();
        let set = owned(&targs![
            "set-option",
            "-g",
            "history-limit",
            Arg::id(&limit)
        ]);
        let restore = owned(&targs!["set-option", "-g", "history-limit", Arg::id(old)]);
        let mut args: Vec<Arg<'static>> = targs![
            "new-session",
            "-d",
            "-s",
            OWN_SESSION,
            "-P",
            "-F",
            "#{pane_id} #{session_name}:#{window_index}.#{pane_index}"
        ]
        .into();
        if let Some(n) = name {
            args.extend(targs!["-n", n.expanded()]);
        }
        // Each word its own argument: tmux runs them without a shell (no default-shell
        // layer).
        args.extend(cmd.iter().map(|w| Arg::literal(w).into_owned()));
        let mut after = Self::setup(&limit, mark);
        after.extend(restore.iter().cloned());
        Some(OwnSession {
            set,
            args,
            after,
            restore,
        })
    }

    /// What the new session gets in the creation's own list: `destroy-unattached off`, our
    /// `history-limit` as its own, and the `@tmuxmate-created` mark on its pane.
    fn setup(limit: &str, mark: &Text) -> Vec<Arg<'static>> {
        // The new session and its only pane, named exactly: a command without `-t` would
        // target the session of a $TMUX_PANE in our environment (one inherited from
        // another terminal: not our pane, but tmux takes it), not the new one.
        let own = OWN_SESSION_TARGET;
        // The session keeps our limit as its own (see `new_session`) before the global
        // goes back.
        targs![
            "set-option",
            "-t",
            own,
            "destroy-unattached",
            "off",
            Arg::SEP,
            "set-option",
            "-t",
            own,
            "history-limit",
            Arg::id(limit),
            Arg::SEP,
            "set-option",
            "-p",
            "-t",
            own,
            "--",
            crate::tmux::options::CREATED.name,
            mark.literal(),
            Arg::SEP
        ]
        .into_iter()
        .map(Arg::into_owned)
        .collect()
    }
}

/// The own session's pane as its creation printed it.
fn own_session_created(out: &str) -> Result<Created, Error> {
    let mut it = out.trim_end_matches('\n').splitn(2, ' ');
    let pane_id = it.next().unwrap_or("").to_string();
    let target = it.next().unwrap_or("").to_string();
    if !pane_id.starts_with('%') || !target.starts_with(OWN_SESSION) {
        return Err(Error::new(format!(
            "tmux created the {OWN_SESSION} session but did not report its pane (got {out:?})"
        )));
    }
    Ok(Created { pane_id, target })
}

/// How a split is laid out.
pub struct Placement<'a> {
    pub horizontal: bool,
    pub size: Option<&'a str>,
    pub cwd: Option<&'a Text>,
}

/// Split the resolved pane `pane_id` of session `session_id`.
pub fn split(
    tmux: &Tmux,
    caller: &Caller,
    session_id: &str,
    pane_id: &str,
    place: &Placement,
    cmd: &[String],
) -> Result<Created, Error> {
    let (horizontal, size, cwd) = (place.horizontal, place.size, place.cwd);
    let shell_cmd = sh_join(cmd);
    let (set, restore) = history_limit_cmds(tmux, session_id);
    let out = {
        let mut args: Vec<Arg> = targs![
            "split-window",
            "-d",
            if horizontal { "-h" } else { "-v" },
            "-t",
            Arg::id(pane_id),
            "-P",
            "-F",
            PRINT,
        ]
        .into();
        if let Some(s) = size {
            // validated by the handler: digits and an optional '%'
            args.extend(targs!["-l", Arg::id(s)]);
        }
        if let Some(c) = cwd {
            args.extend(targs!["-c", c.expanded()]);
        }
        if !cmd.is_empty() {
            args.push(Arg::literal(&shell_cmd));
        }
        create_listed(tmux, &set, &args, &restore, &restore)?
    };
    finish(tmux, &out, caller, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(sh_quote("abc"), "abc");
        assert_eq!(sh_quote("a b"), "'a b'");
        assert_eq!(sh_quote("it's"), "'it'\\''s'");
        assert_eq!(sh_quote(""), "''");
        assert_eq!(sh_quote("$(x);"), "'$(x);'");
    }

    fn argv(a: &[Arg]) -> Vec<String> {
        a.iter().map(|a| a.as_str().to_string()).collect()
    }

    #[test]
    fn the_globals_are_two_lines_or_three() {
        let g = Globals::parse("2000\nlatest\n50000\n").unwrap();
        assert_eq!(
            (g.history_limit, g.window_size, g.ours),
            ("2000", "latest", "50000")
        );
        assert_eq!(Globals::parse("2000\nlatest\n").unwrap().ours, "");
        assert!(Globals::parse("2000\n").is_none());
        assert!(Globals::parse("1\n2\n3\n4\n").is_none());
    }

    #[test]
    fn the_own_session_raises_the_limit_around_its_creation_only() {
        let g = Globals {
            history_limit: "2000",
            window_size: "latest",
            ours: "50000",
        };
        let cmd = ["/bin/sh".to_string(), "-c".to_string(), "x;".to_string()];
        let mark = Text::lossy("{\"v\":1}");
        let p = OwnSession::plan(&g, Some(&Text::lossy("run #1")), &cmd, &mark).unwrap();
        assert_eq!(argv(&p.set), ["set-option", "-g", "history-limit", "50000"]);
        assert_eq!(
            argv(&p.restore),
            ["set-option", "-g", "history-limit", "2000"]
        );
        // The name is expanded text; each word is its own literal argument.
        assert_eq!(
            argv(&p.args)[7..],
            ["-n", "run ##1", "/bin/sh", "-c", "x\\;"]
        );
        // The session keeps our limit and the mark, then the global goes back, last.
        let after = argv(&p.after);
        assert!(after.windows(5).any(|w| w
            == [
                "set-option",
                "-t",
                OWN_SESSION_TARGET,
                "history-limit",
                "50000"
            ]));
        assert!(after.contains(&"{\"v\":1}".to_string()));
        assert!(after.ends_with(&argv(&p.restore)));
        // A global that is not a number could not be put back: no plan.
        let odd = Globals {
            history_limit: "lots",
            ..g
        };
        assert!(OwnSession::plan(&odd, None, &cmd, &mark).is_none());
    }

    #[test]
    fn the_own_session_s_pane_is_read_from_its_creation() {
        let c = own_session_created("%4 tmuxmate:0.0\n").unwrap();
        assert_eq!(
            (c.pane_id.as_str(), c.target.as_str()),
            ("%4", "tmuxmate:0.0")
        );
        assert!(own_session_created("%4 other:0.0\n").is_err());
        assert!(own_session_created("").is_err());
    }

    #[test]
    fn own_session_target_names_it_exactly() {
        assert_eq!(OWN_SESSION_TARGET, format!("={OWN_SESSION}:"));
    }
}
