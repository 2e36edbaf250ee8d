//! `install`, `uninstall`, `doctor`, completions, man page and `--version`, in the test
//! server's temporary HOME, against pre-existing user configs.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::server;
use crate::util::{BIN, Server, ok};

/// Every file under `dir` with its bytes (symlinks and dirs by name).
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                out.insert(p.clone(), b"<dir>".to_vec());
                stack.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn bin_abs() -> String {
    std::fs::canonicalize(BIN)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

const CLAUDE_SETTINGS: &str = r#"{
    "permissions": {"allow": ["Bash"], "defaultMode": "default"},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "my-prompt-logger"}]}]
    },
    "zzz": true
}
"#;

const CLAUDE_JSON: &str = r#"{"numStartups": 3, "mcpServers": {"other": {"type": "stdio", "command": "other-server", "args": [], "env": {}}}, "projects": {}}"#;

const CODEX_CONFIG: &str = r#"# my Codex config, with comments
model = "gpt-5.5"   # the model I like

[mcp_servers.other]
command = "other-server"   # keep me
args = ["--flag"]

# trailing comment
"#;

const CODEX_HOOKS: &str = r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "codex-notify"}]}]}}
"#;

const GEMINI_SETTINGS: &str = r#"{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "mcpServers": {"other": {"command": "other-server"}}
}
"#;

const TMUX_CONF: &str = "set -g mouse on\n# my own comment\nbind r source-file ~/.tmux.conf";

fn user_configs(s: &Server) {
    write(&s.home.join(".claude/settings.json"), CLAUDE_SETTINGS);
    write(&s.home.join(".claude.json"), CLAUDE_JSON);
    write(&s.home.join(".codex/config.toml"), CODEX_CONFIG);
    write(&s.home.join(".codex/hooks.json"), CODEX_HOOKS);
    write(&s.home.join(".gemini/settings.json"), GEMINI_SETTINGS);
    write(&s.home.join(".tmux.conf"), TMUX_CONF);
}

#[test]
fn install_merges_into_user_configs_idempotent_and_uninstall_restores_bytes() {
    let s = server!();
    user_configs(&s);
    let before = tree(&s.home);
    let out = ok(s.run(&["install", "all"]));
    assert!(
        out.contains("trust") && out.contains("--no-daemon"),
        "{out}"
    );
    assert!(out.contains("tmux source-file"), "{out}");
    let bin = bin_abs();

    // Claude: the user's hooks and keys stay, in order; ours added with the absolute path.
    let settings = read(&s.home.join(".claude/settings.json"));
    let v: serde_json::Value = serde_json::from_str(&settings).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["permissions", "hooks", "zzz"], "{settings}");
    let ups = v["hooks"]["UserPromptSubmit"].as_array().unwrap();
    assert_eq!(ups.len(), 2, "{settings}");
    assert_eq!(ups[0]["hooks"][0]["command"], "my-prompt-logger");
    assert_eq!(ups[1]["hooks"][0]["command"], format!("{bin} hook claude"));
    assert_eq!(v["hooks"]["SessionStart"][0]["matcher"], "compact|clear");
    assert_eq!(
        v["hooks"]["Stop"][0]["hooks"][0]["command"],
        "notify-send done"
    );
    assert!(
        settings.contains("\n    \"hooks\""),
        "indent kept: {settings}"
    );
    let cj: serde_json::Value = serde_json::from_str(&read(&s.home.join(".claude.json"))).unwrap();
    assert_eq!(cj["numStartups"], 3);
    assert_eq!(cj["mcpServers"]["other"]["command"], "other-server");
    assert_eq!(cj["mcpServers"]["tmuxmate"]["command"], bin.as_str());
    assert_eq!(cj["mcpServers"]["tmuxmate"]["args"][0], "mcp");
    assert!(s.home.join(".claude/skills/tmuxmate/SKILL.md").is_file());

    // Codex: comments and the other server byte for byte, ours appended.
    let toml = read(&s.home.join(".codex/config.toml"));
    let mut rest = toml.as_str();
    for line in CODEX_CONFIG.lines() {
        let at = rest
            .find(line)
            .unwrap_or_else(|| panic!("lost {line:?}: {toml}"));
        rest = &rest[at + line.len()..];
    }
    assert!(
        toml.contains(&format!(
            "[mcp_servers.tmuxmate]\ncommand = \"{bin}\"\nargs = [\"mcp\"]\nenv_vars = [\"TMUX\", \"TMUX_PANE\"]\nsupports_parallel_tool_calls = true"
        )),
        "{toml}"
    );
    let hooks = read(&s.home.join(".codex/hooks.json"));
    assert!(
        hooks.contains("codex-notify") && hooks.contains(&format!("{bin} hook codex")),
        "{hooks}"
    );

    // Gemini: per-turn BeforeAgent, timeout in ms, MCP beside the user's server.
    let g: serde_json::Value =
        serde_json::from_str(&read(&s.home.join(".gemini/settings.json"))).unwrap();
    assert_eq!(
        g["hooks"]["BeforeAgent"][0]["hooks"][0]["command"],
        format!("{bin} hook gemini")
    );
    assert_eq!(g["hooks"]["BeforeAgent"][0]["hooks"][0]["timeout"], 5000);
    assert_eq!(g["mcpServers"]["other"]["command"], "other-server");
    assert_eq!(g["mcpServers"]["tmuxmate"]["command"], bin.as_str());
    assert_eq!(
        g["mcpServers"]["tmuxmate"]["args"],
        serde_json::json!(["mcp"])
    );
    assert_eq!(g["security"]["auth"]["selectedType"], "gemini-api-key");

    // tmux: the user's lines first (the missing final newline added), one marked line.
    let conf = read(&s.home.join(".tmux.conf"));
    assert!(conf.starts_with(&format!("{TMUX_CONF}\n")), "{conf}");
    assert_eq!(conf.matches("source-file \"").count(), 1, "{conf}");
    assert!(read(&s.home.join(".config/tmux/tmuxmate.conf")).contains(&bin));

    // A second run changes no byte.
    let installed = tree(&s.home);
    let again = ok(s.run(&["install", "all"]));
    assert!(
        !again.contains("update") && !again.contains("create"),
        "{again}"
    );
    assert_eq!(tree(&s.home), installed, "second install changed files");

    // Uninstall: every user file byte-identical, every file only install made gone.
    ok(s.run(&["uninstall"]));
    let after = tree(&s.home);
    for (p, b) in &before {
        assert_eq!(
            after.get(p),
            Some(b),
            "{} differs after uninstall",
            p.display()
        );
    }
    let extra: Vec<_> = after.keys().filter(|p| !before.contains_key(*p)).collect();
    assert!(extra.is_empty(), "left behind: {extra:?}");
    assert!(
        !s.state.join("install").exists(),
        "install state left behind"
    );
}

#[test]
fn dry_run_prints_the_diff_and_writes_nothing() {
    let s = server!();
    user_configs(&s);
    let before_home = tree(&s.home);
    let before_state = tree(&s.state);
    let out = ok(s.run(&["install", "all", "--dry-run"]));
    assert!(
        out.contains("--- ~/.claude/settings.json\n+++ ~/.claude/settings.json"),
        "{out}"
    );
    assert!(
        out.contains(&format!("+{}", "# tmuxmate: added by")),
        "{out}"
    );
    assert!(out.contains("nothing was written"), "{out}");
    // The skill's text once (three CLIs get it), and the user's own configs come first.
    assert_eq!(out.matches("name: tmuxmate").count(), 1, "{out}");
    assert_eq!(out.matches("(new file: the same ").count(), 2, "{out}");
    let first_new = out.find("--- /dev/null").unwrap_or(out.len());
    assert!(
        out.find("+++ ~/.claude/settings.json").unwrap() < first_new,
        "an existing config's diff comes before the new files: {out}"
    );
    assert_eq!(tree(&s.home), before_home);
    assert_eq!(tree(&s.state), before_state);
    // Uninstall's dry run too, after a real install.
    ok(s.run(&["install", "all"]));
    let installed = tree(&s.home);
    let out = ok(s.run(&["uninstall", "--dry-run"]));
    assert!(out.contains("-source-file"), "{out}");
    assert_eq!(tree(&s.home), installed);
}

#[test]
fn uninstall_after_user_edits_removes_only_our_entries() {
    let s = server!();
    user_configs(&s);
    ok(s.run(&["install", "claude"]));
    // The user (or Claude itself) edits the file after install, reformatting it.
    let p = s.home.join(".claude/settings.json");
    let mut v: serde_json::Value = serde_json::from_str(&read(&p)).unwrap();
    v["hooks"]["Stop"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"hooks": [{"type": "command", "command": "added-later"}]}));
    v["model"] = serde_json::json!("opus");
    std::fs::write(&p, serde_json::to_string(&v).unwrap()).unwrap();
    ok(s.run(&["uninstall", "claude"]));
    let v: serde_json::Value = serde_json::from_str(&read(&p)).unwrap();
    let text = v.to_string();
    assert!(!text.contains("tmuxmate"), "{text}");
    assert!(
        text.contains("added-later") && text.contains("my-prompt-logger"),
        "{text}"
    );
    assert_eq!(v["model"], "opus");
    assert_eq!(v["hooks"]["UserPromptSubmit"].as_array().unwrap().len(), 1);
    assert!(v["hooks"].get("SessionStart").is_none(), "{text}");
    // Codex was not installed, so not touched.
    assert_eq!(read(&s.home.join(".codex/config.toml")), CODEX_CONFIG);
}

#[test]
fn own_entries_are_found_by_marker_not_exact_text() {
    let s = server!();
    // Codex's import of a hand-wired Claude hook (other timeout, relative command).
    write(
        &s.home.join(".codex/hooks.json"),
        r#"{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "tmuxmate hook claude", "timeout": 30}]}]}}"#,
    );
    ok(s.run(&["install", "codex"]));
    let hooks = read(&s.home.join(".codex/hooks.json"));
    assert_eq!(
        hooks.matches("hook ").count(),
        // UserPromptSubmit, SessionStart and the five agent-state events.
        7,
        "one per event, no duplicate: {hooks}"
    );
    assert!(!hooks.contains("\"timeout\": 30"), "{hooks}");
}

#[test]
fn install_refuses_a_broken_config_and_writes_nothing() {
    let s = server!();
    write(
        &s.home.join(".claude/settings.json"),
        "{ \"hooks\": [ broken",
    );
    write(&s.home.join(".tmux.conf"), TMUX_CONF);
    let before = tree(&s.home);
    let out = s.run(&["install", "all"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("settings.json is not valid JSON") && err.contains("nothing was changed"),
        "{err}"
    );
    assert_eq!(
        tree(&s.home),
        before,
        "a failed install left changes behind"
    );
}

#[test]
fn project_install_writes_the_project_files() {
    let s = server!();
    let proj = s.dir.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    ok(s.run(&["install", "tmux"]));
    ok(s.run(&["install", "claude", "--project", proj.to_str().unwrap()]));
    assert!(read(&proj.join(".claude/settings.json")).contains("hook claude"));
    let mcp: serde_json::Value = serde_json::from_str(&read(&proj.join(".mcp.json"))).unwrap();
    assert_eq!(mcp["mcpServers"]["tmuxmate"]["command"], bin_abs().as_str());
    assert_eq!(
        mcp["mcpServers"]["tmuxmate"]["args"],
        serde_json::json!(["mcp"])
    );
    assert!(proj.join(".claude/skills/tmuxmate/SKILL.md").is_file());
    assert!(!s.home.join(".claude").exists());
    // `uninstall` (all) of a project never touches the user-level tmux install.
    ok(s.run(&["uninstall", "--project", proj.to_str().unwrap()]));
    assert!(read(&s.home.join(".tmux.conf")).contains("source-file"));
    assert_eq!(
        std::fs::read_dir(&proj).unwrap().count(),
        0,
        "project left dirty"
    );
}

fn doctor(s: &Server) -> (Output, String) {
    let out = s.run(&["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out, text)
}

#[test]
fn doctor_reports_a_broken_hook_path_and_a_missing_snippet_with_fixes() {
    let s = server!();
    write(&s.home.join(".tmux.conf"), TMUX_CONF);
    ok(s.run(&["install", "claude"]));
    // The binary "moved": the hook points at a path that no longer exists.
    let p = s.home.join(".claude/settings.json");
    let text = read(&p).replace(&bin_abs(), "/nonexistent/bin/tmuxmate");
    std::fs::write(&p, text).unwrap();
    let (out, text) = doctor(&s);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("/nonexistent/bin/tmuxmate, which does not exist"),
        "{text}"
    );
    assert!(text.contains("fix: tmuxmate install claude"), "{text}");
    assert!(
        text.contains("the snippet ~/.config/tmux/tmuxmate.conf does not exist"),
        "{text}"
    );
    assert!(
        text.contains("has not loaded the tmuxmate snippet"),
        "{text}"
    );
    assert!(text.contains("fix: tmuxmate install tmux"), "{text}");

    // Fixed as told: everything is well, and the server names the snippet's path.
    ok(s.run(&["install", "claude"]));
    ok(s.run(&["install", "tmux"]));
    let snippet = s.home.join(".config/tmux/tmuxmate.conf");
    s.tmux(&["source-file", snippet.to_str().unwrap()]);
    let (out, text) = doctor(&s);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains(&format!("snippet loaded from {}", snippet.display())),
        "{text}"
    );
    assert!(text.contains("All is well"), "{text}");
    assert!(text.contains("MCP server tmuxmate in"), "{text}");
    let json: crate::util::contract::DoctorJson =
        crate::util::contract::parse("doctor --json", &s.run(&["doctor", "--json"]).stdout);
    assert!(json.ok && json.problems == 0, "{json:?}");

    // Doctor asks for the MCP server: without its entry, a problem with the fix.
    let cj = s.home.join(".claude.json");
    let mut v: serde_json::Value = serde_json::from_str(&read(&cj)).unwrap();
    v["mcpServers"].as_object_mut().unwrap().remove("tmuxmate");
    std::fs::write(&cj, v.to_string()).unwrap();
    let (out, text) = doctor(&s);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("no MCP server tmuxmate in"), "{text}");
    assert!(text.contains("fix: tmuxmate install claude"), "{text}");
}

#[test]
fn doctor_flags_window_size_manual_and_a_public_state_dir() {
    let s = server!();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&s.state, std::fs::Permissions::from_mode(0o755)).unwrap();
    s.tmux(&["set-option", "-g", "window-size", "manual"]);
    let (out, text) = doctor(&s);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("window-size is manual"), "{text}");
    // A state dir open to others is closed by the first call that touches it (doctor
    // included), and the log says so: doctor then finds it private.
    assert!(text.contains("(mode 700)"), "{text}");
    let log = std::fs::read_to_string(s.state.join("log")).unwrap_or_default();
    assert!(log.contains("was readable by others"), "{log}");
    // With --json and a problem: exit 1 and the report as the one JSON document on stdout
    // (no error object after it).
    let out = s.run(&["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(json["ok"], false, "{json}");
    s.tmux(&["set-option", "-g", "window-size", "latest"]);
}

#[test]
fn a_mistyped_harness_is_logged_as_a_clear_error_and_doctor_shows_it() {
    let s = server!();
    let mut child = s
        .tmuxmate()
        .args(["hook", "cluade"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The hook may refuse the harness name and exit before it reads its input: a broken
    // pipe here is that, not a failure.
    let wrote = child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"hook_event_name":"UserPromptSubmit","session_id":"x"}"#);
    if let Err(e) = wrote {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "the hook must stay silent");
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    let log = read(&s.state.join("log"));
    assert!(
        log.contains("hook: error: unknown harness \"cluade\" (expected claude, codex or gemini)"),
        "{log}"
    );
    let (out, text) = doctor(&s);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("unknown harness \\\"cluade\\\"")
            || text.contains("unknown harness \"cluade\""),
        "{text}"
    );
    assert!(
        text.contains("fix: a hook command in your agent config is wrong"),
        "{text}"
    );
}

fn shell(s: &Server, program: &str, script: &str) -> Option<String> {
    let mut c = Command::new(program);
    s.env(&mut c);
    let Ok(out) = c.arg("-c").arg(script).output() else {
        eprintln!("SKIP: {program} is not installed");
        return None;
    };
    Some(ok(out))
}

#[test]
fn completions_load_in_bash_zsh_and_fish() {
    let s = server!();
    let bash = shell(
        &s,
        "bash",
        &format!("source <('{BIN}' completions bash) && complete -p tmuxmate"),
    );
    if let Some(o) = bash {
        assert!(
            o.contains("-F _tmuxmate") && o.ends_with(" tmuxmate\n"),
            "{o}"
        );
    }
    let zdir = s.dir.join("zsh");
    let zsh = shell(
        &s,
        "zsh",
        &format!(
            "autoload -Uz compinit && compinit -u -d '{}/zcompdump' && source <('{BIN}' completions zsh) && print -r -- $_comps[tmuxmate]",
            zdir.display()
        ),
    );
    if let Some(o) = zsh {
        assert_eq!(o.trim(), "_tmuxmate");
    }
    let fish = shell(
        &s,
        "fish",
        &format!("'{BIN}' completions fish | source; complete -C 'tmuxmate ins'"),
    );
    if let Some(o) = fish {
        assert!(o.lines().any(|l| l.starts_with("install")), "{o}");
    }
    // Internal verbs are not offered: `watch poll|record-exit|gate`, `agent _exec`.
    let fish = shell(
        &s,
        "fish",
        &format!(
            "'{BIN}' completions fish | source; complete -C 'tmuxmate watch '; complete -C 'tmuxmate agent '"
        ),
    );
    if let Some(o) = fish {
        assert!(o.lines().any(|l| l.starts_with("start")), "{o}");
        for hidden in ["poll", "record-exit", "gate", "_exec"] {
            assert!(
                !o.lines().any(|l| l.starts_with(hidden)),
                "{hidden} offered: {o}"
            );
        }
    }
    for sh in ["bash", "zsh", "fish"] {
        let script = ok(s.run(&["completions", sh]));
        for hidden in ["record-exit", "_exec", "watch-start"] {
            assert!(!script.contains(hidden), "{sh} completion offers {hidden}");
        }
    }
}

#[test]
fn man_page_renders_and_version_names_tmux() {
    let s = server!();
    let roff = ok(s.run(&["man"]));
    assert!(
        roff.starts_with(".ie") || roff.contains(".TH tmuxmate"),
        "{}",
        &roff[..200.min(roff.len())]
    );
    // One page: no pointers to per-command pages that are not installed.
    assert!(
        !roff.contains("tmuxmate\\-where(1)") && !roff.contains("(1)"),
        "{roff}"
    );
    assert!(roff.contains(".SH COMMANDS") && roff.contains("tmuxmate watch"));
    assert!(!roff.contains("_exec") && !roff.contains("record\\-exit"));
    let page = s.dir.join("tmuxmate.1");
    std::fs::write(&page, &roff).unwrap();
    if let Some(text) = shell(
        &s,
        "sh",
        &format!(
            "command -v man >/dev/null || exit 0; MANWIDTH=80 man -l '{}' | col -b",
            page.display()
        ),
    ) && !text.is_empty()
    {
        assert!(
            text.contains("tmuxmate") && text.contains("install"),
            "{text}"
        );
    }
    let v = ok(s.run(&["--version"]));
    let mut lines = v.lines();
    assert_eq!(
        lines.next(),
        Some(concat!("tmuxmate ", env!("CARGO_PKG_VERSION")))
    );
    assert!(
        lines.next().is_some_and(|l| l.starts_with("tmux 3.")),
        "{v}"
    );
}

#[test]
fn demo_shows_all_four_capabilities_and_leaves_nothing_behind() {
    let s = server!();
    let tmp = s.dir.join("demo-tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut c = Command::new(BIN);
    s.env(&mut c);
    let start = std::time::Instant::now();
    let out = c
        .arg("demo")
        .env("TMPDIR", &tmp)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let took = start.elapsed();
    let text = ok(out);
    for section in [
        "tmux location (turn 1)",
        "== control",
        "== watch",
        "== bridge",
        "Reviewed \"is the change",
        "todos (1/3 done)",
        "tmux side chat note",
    ] {
        assert!(text.contains(section), "missing {section:?}: {text}");
    }
    // Under 10 s on an idle machine; a loaded 2-core test run gets more room.
    assert!(
        took < std::time::Duration::from_secs(30),
        "demo took {took:?}"
    );
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "demo left behind: {left:?}");
    let written: Vec<_> = std::fs::read_dir(&s.state)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        written.is_empty(),
        "demo wrote to the user's state dir: {written:?}"
    );
}

#[test]
fn doctor_reports_running_watches_without_a_poller() {
    let s = server!();
    ok(s.run(&["watch", "start", "--", "sleep 60"]));
    let pollers = s.state.join("pollers");
    let pid = crate::util::wait_until(
        "the poller's heartbeat",
        std::time::Duration::from_secs(20),
        || {
            std::fs::read_dir(&pollers).ok()?.flatten().find_map(|e| {
                let v: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok()?;
                v["pid"].as_i64()
            })
        },
    );
    let (_, text) = doctor(&s);
    assert!(text.contains("poller alive for"), "{text}");
    // The poller dies (OOM killer, kill -9): doctor names it and the fix.
    ok(Command::new("kill")
        .args(["-9", &pid.to_string()])
        .output()
        .unwrap());
    let text = crate::util::wait_until(
        "doctor to see the dead poller",
        std::time::Duration::from_secs(20),
        || {
            let (out, text) = doctor(&s);
            (out.status.code() == Some(1) && text.contains("but no poller")).then_some(text)
        },
    );
    assert!(
        text.contains("fix: tmuxmate watch list (restarts a dead poller)"),
        "{text}"
    );
}

#[test]
fn harness_home_overrides_are_honoured() {
    let s = server!();
    let claude_dir = s.dir.join("claude-cfg");
    let codex_home = s.dir.join("codex-home");
    let gemini_home = s.dir.join("gemini-home");
    for d in [&claude_dir, &codex_home, &gemini_home] {
        std::fs::create_dir_all(d).unwrap();
    }
    let run = |args: &[&str]| {
        ok(s.tmuxmate()
            .env("CLAUDE_CONFIG_DIR", &claude_dir)
            .env("CODEX_HOME", &codex_home)
            .env("GEMINI_CLI_HOME", &gemini_home)
            .args(args)
            .output()
            .unwrap())
    };
    run(&["install", "claude"]);
    run(&["install", "codex"]);
    run(&["install", "gemini"]);
    assert!(read(&claude_dir.join("settings.json")).contains("hook claude"));
    let cj: serde_json::Value =
        serde_json::from_str(&read(&claude_dir.join(".claude.json"))).unwrap();
    assert_eq!(cj["mcpServers"]["tmuxmate"]["command"], bin_abs().as_str());
    assert_eq!(
        cj["mcpServers"]["tmuxmate"]["args"],
        serde_json::json!(["mcp"])
    );
    assert!(read(&codex_home.join("hooks.json")).contains("hook codex"));
    assert!(
        read(&codex_home.join("config.toml")).contains(&format!(
            "[mcp_servers.tmuxmate]\ncommand = \"{}\"\nargs = [\"mcp\"]",
            bin_abs()
        )),
        "codex config.toml"
    );
    assert!(read(&gemini_home.join(".gemini/settings.json")).contains("hook gemini"));
    assert!(!s.home.join(".claude").exists() && !s.home.join(".codex").exists());
    run(&["uninstall"]);
    for d in [&claude_dir, &codex_home, &gemini_home] {
        assert_eq!(
            std::fs::read_dir(d).unwrap().count(),
            0,
            "{} not clean",
            d.display()
        );
    }
}

#[test]
fn doctor_does_not_count_a_users_failed_commands_and_survives_a_fifo_log() {
    let s = server!();
    write(&s.home.join(".tmux.conf"), TMUX_CONF);
    ok(s.run(&["install", "claude"]));
    ok(s.run(&["install", "tmux"]));
    let snippet = s.home.join(".config/tmux/tmuxmate.conf");
    s.tmux(&["source-file", snippet.to_str().unwrap()]);
    // What a command someone ran and saw fail leaves in the log: the failure with its
    // tmux mechanics (cmd/entry.rs `report`), four times.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let line = format!(
        "{now} 4242 error: tmux failed (exit 1): unknown key: Nope [argv: tmux -u -L x send-keys -t %1 {}]\n",
        "Nope ".repeat(100)
    );
    std::fs::write(s.state.join("log"), line.repeat(4)).unwrap();
    let (out, text) = doctor(&s);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("All is well"), "{text}");
    // A FIFO in place of the log: doctor answers instead of hanging in open().
    std::fs::remove_file(s.state.join("log")).unwrap();
    nix::unistd::mkfifo(&s.state.join("log"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let mut c = s.tmuxmate();
    c.arg("doctor");
    let child = c.stdout(std::process::Stdio::piped()).spawn().unwrap();
    let out = crate::util::wait_until("doctor to answer", std::time::Duration::from_secs(20), {
        let mut child = Some(child);
        move || {
            let done = child.as_mut()?.try_wait().ok()??;
            let _ = done;
            child.take().map(|c| c.wait_with_output().unwrap())
        }
    });
    assert!(String::from_utf8_lossy(&out.stdout).contains("tmux"));
}

#[test]
fn concurrent_installs_keep_every_clis_entries_and_hostile_configs_are_refused() {
    let s = server!();
    // Three installs at once, one per CLI: each CLI's entries and each file's
    // original are in the manifest afterwards.
    std::fs::create_dir_all(s.home.join(".claude")).unwrap();
    std::fs::create_dir_all(s.home.join(".codex")).unwrap();
    std::fs::create_dir_all(s.home.join(".gemini")).unwrap();
    let kids: Vec<_> = ["claude", "codex", "gemini"]
        .iter()
        .map(|w| {
            s.tmuxmate()
                .args(["install", w])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut k in kids {
        assert!(k.wait().unwrap().success());
    }
    let manifest = read(&s.state.join("install/manifest.json"));
    for f in [
        ".claude/settings.json",
        ".codex/hooks.json",
        ".gemini/settings.json",
    ] {
        assert!(
            manifest.contains(f),
            "{f} missing from the manifest: {manifest}"
        );
    }
    // A damaged manifest stops uninstall with the fix, changing nothing.
    let before = read(&s.home.join(".claude/settings.json"));
    std::fs::write(s.state.join("install/manifest.json"), "{not json").unwrap();
    let out = s.run(&["uninstall", "claude"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("install manifest") && err.contains("damaged"),
        "{err}"
    );
    assert_eq!(read(&s.home.join(".claude/settings.json")), before);
    // A FIFO where settings.json belongs: refused at once, not waited on.
    let g = s.home.join(".gemini/settings.json");
    std::fs::remove_file(&g).unwrap();
    nix::unistd::mkfifo(&g, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let mut c = s.tmuxmate();
    c.args(["install", "gemini"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = Some(c.spawn().unwrap());
    let out = crate::util::wait_until(
        "install with a FIFO config",
        std::time::Duration::from_secs(15),
        || {
            child.as_mut()?.try_wait().ok()??;
            child.take().map(|c| c.wait_with_output().unwrap())
        },
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a regular file"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_tpm_entry_uses_the_tmuxmate_on_path_before_a_checkout_build() {
    let s = server!();
    // The plugin's folder, with a stale build of its own, and a tmuxmate on PATH.
    let plugin = s.dir.join("plugin");
    std::fs::create_dir_all(plugin.join("target/release")).unwrap();
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tmuxmate.tmux"),
        plugin.join("tmuxmate.tmux"),
    )
    .unwrap();
    let fake =
        |who: &str| format!("#!/bin/sh\n[ \"$1\" = init ] && echo 'set -g @tmuxmate-bin {who}'\n");
    crate::util::write_script(&plugin.join("target/release/tmuxmate"), &fake("stale"));
    let bin = s.dir.join("pathbin");
    std::fs::create_dir_all(&bin).unwrap();
    crate::util::write_script(&bin.join("tmuxmate"), &fake("on-path"));
    // tmux itself: the real one, on this test's server.
    let real = String::from_utf8(
        std::process::Command::new("sh")
            .args(["-c", "command -v tmux"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    crate::util::write_script(
        &bin.join("tmux"),
        &format!("#!/bin/sh\nexec '{}' -L {} \"$@\"\n", real.trim(), s.name),
    );
    let out = std::process::Command::new("bash")
        .arg(plugin.join("tmuxmate.tmux"))
        .env(
            "PATH",
            format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
        )
        .env("HOME", &s.home)
        .env("TMUX_TMPDIR", s.dir.join("tmp"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        read(&plugin.join("tmuxmate.generated.conf")).trim(),
        "set -g @tmuxmate-bin on-path"
    );
    assert_eq!(s.tmux(&["show", "-gv", "@tmuxmate-bin"]).trim(), "on-path");
}

#[test]
fn doctor_knows_the_claude_code_plugin_and_says_when_both_are_wired() {
    let s = server!();
    std::fs::create_dir_all(s.home.join(".claude")).unwrap();
    write(
        &s.home.join(".claude/settings.json"),
        r#"{"enabledPlugins":{"tmuxmate@tmuxmate":true}}"#,
    );
    let (_, text) = doctor(&s);
    assert!(
        text.contains("the Claude Code plugin tmuxmate@tmuxmate is enabled"),
        "{text}"
    );
    assert!(!text.contains("fix: tmuxmate install claude"), "{text}");
    // Both: a problem that says which to keep.
    ok(s.run(&["install", "claude"]));
    let (out, text) = doctor(&s);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("every hook runs twice"), "{text}");
    assert!(text.contains("tmuxmate uninstall claude"), "{text}");
}

#[test]
fn a_read_only_or_duplicate_keyed_config_is_refused_and_nothing_is_written() {
    use std::os::unix::fs::PermissionsExt;
    let s = server!();
    user_configs(&s);
    let settings = s.home.join(".claude/settings.json");
    std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = tree(&s.home);
    let state_before = tree(&s.state);
    let out = s.run(&["install", "claude"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("~/.claude/settings.json is read-only (mode 0444)")
            && err.contains("chmod u+w")
            && err.contains("Nothing was written"),
        "{err}"
    );
    assert_eq!(tree(&s.home), before, "a file changed");
    assert_eq!(
        std::fs::metadata(&settings).unwrap().permissions().mode() & 0o777,
        0o444
    );
    assert_eq!(tree(&s.state), state_before, "install state written");

    // Two equal keys: JSON readers keep one, a rewrite would drop the other.
    std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o644)).unwrap();
    let dup = "{\n  \"model\": \"opus\",\n  \"env\": {\"A\": \"1\"},\n  \"model\": \"sonnet\"\n}\n";
    std::fs::write(&settings, dup).unwrap();
    let before = tree(&s.home);
    let out = s.run(&["install", "claude"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the key \"model\" twice") && err.contains("nothing was changed"),
        "{err}"
    );
    assert_eq!(tree(&s.home), before);
}
