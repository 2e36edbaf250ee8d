//! The demo: tmuxmate's main job, shown on a private tmux server (`tmuxmate demo`).
//!
//! Owns: a throwaway server (`-S` socket in a fresh temp dir, `-f /dev/null`, `TMUX`
//! removed), a stand-in agent loop in a pane that calls the per-turn entry point once per
//! turn, and a script of moves/renames/splits/resizes around it. Invariant: it never
//! touches any other tmux server, and kills its own unless `--keep`.

pub mod standin;

use crate::targs;
use crate::tmux::Arg;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::tmux::{Socket, Tmux};

/// The stand-in agent: runs `req.N` in order from its own pane, so every turn call has the
/// pane's tty as its controlling terminal, like a real agent's hook would (via ancestry).
const AGENT_LOOP: &str = r#"D="$1"; i=1
printf 'stand-in agent ready\n'
while :; do
  while [ ! -e "$D/req.$i" ]; do sleep 0.02; done
  sh "$D/req.$i" > "$D/out.$i.tmp" 2>&1
  mv "$D/out.$i.tmp" "$D/out.$i"
  i=$((i+1))
done
"#;

struct Demo {
    tmux: Tmux,
    dir: PathBuf,
    bin: PathBuf,
    n: u32,
    keep: bool,
}

impl Drop for Demo {
    fn drop(&mut self) {
        if !self.keep {
            let _ = self.tmux.run(&["kill-server"]);
            // The server's helpers (watch poller, digest follower, the stand-in peer) log
            // and tidy up as they exit: removing the directory before they are gone let
            // one recreate it (the demo's log left behind). Wait for them, by environment.
            let marker = format!("TMUXMATE_STATE_DIR={}", self.dir.join("state").display());
            let start = Instant::now();
            while helpers_alive(marker.as_bytes()) && start.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// True while a process of ours carries exactly this environment entry.
fn helpers_alive(entry: &[u8]) -> bool {
    let me = std::process::id().to_string();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return false;
    };
    rd.flatten().any(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        name.bytes().all(|b| b.is_ascii_digit())
            && name != me
            && std::fs::read(e.path().join("environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == entry))
    })
}

fn wait_file(p: &Path, deadline: Duration) -> Result<String, Error> {
    let start = Instant::now();
    while start.elapsed() < deadline {
        if let Ok(s) = std::fs::read_to_string(p) {
            return Ok(s);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Err(Error::new(format!(
        "demo: the stand-in agent did not answer within {} s ({} missing)",
        deadline.as_secs(),
        p.display()
    )))
}

/// Poll `f` every 50 ms for up to 20 s (the demo's own waits, with a deadline).
fn wait_for<T>(mut f: impl FnMut() -> Option<T>) -> Result<T, Error> {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        if let Some(v) = f() {
            return Ok(v);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(Error::new("demo: a step did not complete within 20 s"))
}

impl Demo {
    /// A tmux call of the demo's own: its arguments are literals and ids tmux printed.
    fn t(&self, args: &[&str]) -> Result<String, Error> {
        let args: Vec<Arg> = args.iter().map(|a| Arg::ours(*a)).collect();
        Ok(self.tmux.run(&args)?)
    }

    /// Run tmuxmate itself against the demo server (as the agent would, from outside).
    fn me(&self, args: &[&str]) -> Result<String, Error> {
        let sock = match &self.tmux.socket {
            Socket::Path(p) => p.display().to_string(),
            _ => String::new(),
        };
        let mut cmd = crate::sys::process::command(&self.bin);
        cmd.args(["-S", &sock])
            .args(args)
            .env("TMUXMATE_STATE_DIR", self.dir.join("state"))
            .env_remove("TMUX")
            .env_remove("TMUX_PANE");
        let out = crate::sys::process::run(cmd, None, std::time::Duration::from_secs(120))
            .map_err(|e| Error::new(format!("demo: tmuxmate {args:?}: {e}")))?;
        if !out.status.success() {
            return Err(Error::new(format!(
                "demo: tmuxmate {args:?} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// A turn that must deliver `needle` (a watch result, a side note): when it does not,
    /// the demo stops and says so with the end of tmuxmate's log (an unattended turn fails
    /// soft: its reasons are only there), instead of showing a delivery that did not happen.
    fn turn_bringing(&mut self, what: &str, needle: &str) -> Result<(), Error> {
        let out = self.turn(what)?;
        if out.contains(needle) {
            return Ok(());
        }
        let log = std::fs::read_to_string(self.dir.join("state").join("log")).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(15).collect();
        Err(Error::new(format!(
            "demo: turn {} did not deliver {needle:?}; the end of tmuxmate's log:\n{}",
            self.n,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        )))
    }

    /// One agent turn: the stand-in runs `tmuxmate turn` from its pane; what it injected.
    fn turn(&mut self, what: &str) -> Result<String, Error> {
        self.n += 1;
        let sock = match &self.tmux.socket {
            Socket::Path(p) => p.display().to_string(),
            _ => String::new(),
        };
        let script = format!(
            "TMUXMATE_STATE_DIR='{}' exec '{}' -S '{}' turn --agent demo-agent\n",
            self.dir.join("state").display(),
            self.bin.display(),
            sock
        );
        // Whole or not at all: the stand-in runs `req.N` as soon as the name exists.
        let req = self.dir.join(format!("req.{}", self.n));
        let tmp = self.dir.join(format!(".req.{}.tmp", self.n));
        std::fs::write(&tmp, script)?;
        std::fs::rename(&tmp, &req)?;
        let out = wait_file(
            &self.dir.join(format!("out.{}", self.n)),
            Duration::from_secs(20),
        )?;
        println!("--- turn {}: {what}", self.n);
        if out.trim().is_empty() {
            println!("    (nothing injected: nothing changed)");
        } else {
            for l in out.trim_end().lines() {
                println!("    | {l}");
            }
        }
        Ok(out)
    }
}

pub fn run(keep: bool) -> Result<(), Error> {
    let mut d = Demo::new(keep)?;
    let agent = d.start_agent()?;
    let build = layout_turns(&mut d, &agent)?;
    control(&d, &build)?;
    watch(&mut d)?;
    bridge_and_side(&mut d, &agent)?;
    if keep {
        let sock = d.dir.join("tmux.sock");
        println!(
            "\nThe demo server is still running. Attach with:\n  tmux -S '{}' attach\nStop it with:\n  tmux -S '{}' kill-server",
            sock.display(),
            sock.display()
        );
    }
    Ok(())
}

impl Demo {
    /// The demo's directory (its state, socket and stand-in loop) and its private server's
    /// client, not started yet.
    fn new(keep: bool) -> Result<Demo, Error> {
        let dir = std::env::temp_dir().join(format!("tmuxmate-demo-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        // This process's own state (the tmux version cache, the log) goes with the demo's
        // directory too, not into the user's state directory.
        crate::sys::state::use_dir_for_this_process(dir.join("state"));
        let mut tmux = Tmux::new(Socket::Path(dir.join("tmux.sock")));
        tmux.isolate_env = true;
        let bin = std::env::current_exe()?;
        std::fs::write(dir.join("agent.sh"), AGENT_LOOP)?;
        Ok(Demo {
            tmux,
            dir,
            bin,
            n: 0,
            keep,
        })
    }

    /// Start the private server with the stand-in agent in its first pane; that pane's id.
    fn start_agent(&self) -> Result<String, Error> {
        let agent_cmd = format!(
            "sh '{}' '{}'",
            self.dir.join("agent.sh").display(),
            self.dir.display()
        );
        self.t(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "demo",
            "-n",
            "agent",
            "-x",
            "120",
            "-y",
            "32",
            &agent_cmd,
        ])?;
        let agent = self
            .t(&["list-panes", "-t", "demo", "-F", "#{pane_id}"])?
            .trim()
            .to_string();
        println!(
            "tmuxmate demo: private tmux server at {}",
            self.dir.join("tmux.sock").display()
        );
        println!(
            "stand-in agent in pane {agent}; each turn it runs `tmuxmate turn --agent demo-agent`\n"
        );
        Ok(agent)
    }
}

/// Turns around renames, a split, a resize, a focus move and a break-pane; the build
/// pane's id.
fn layout_turns(d: &mut Demo, agent: &str) -> Result<String, Error> {
    d.turn("first turn: the agent learns where it is")?;
    d.turn("second turn, nothing changed")?;
    // A name is data: `#` and quotes arrive as typed.
    d.tmux.run(&targs![
        "rename-window",
        "-t",
        Arg::id(agent),
        Arg::expanded("agent \"main\" #1 🚀")
    ])?;
    d.turn("after renaming the window")?;
    let build = d.t(&[
        "split-window",
        "-h",
        "-d",
        "-t",
        agent,
        "-P",
        "-F",
        "#{pane_id}",
        "sh",
    ])?;
    let build = build.trim().to_string();
    d.turn(&format!("after splitting a build pane {build} beside it"))?;
    d.t(&["resize-window", "-t", agent, "-x", "100", "-y", "28"])?;
    d.turn("after resizing the window (sizes are not part of the state)")?;
    d.t(&["select-pane", "-t", &build])?;
    d.turn("after moving focus to the build pane")?;
    d.t(&["break-pane", "-d", "-s", agent])?;
    d.turn("after breaking the agent pane out into its own window")?;
    d.turn("and once more with nothing changed")?;
    Ok(build)
}

/// The agent types into the build pane and reads its screen back.
fn control(d: &Demo, build: &str) -> Result<(), Error> {
    println!("\n== control: the agent drives the build pane {build} and reads it back");
    let out = d.me(&[
        "send",
        "-t",
        build,
        "--enter",
        "echo 'hello from the agent; $(not run)'",
    ])?;
    print!("{out}");
    let screen = wait_for(|| {
        let t = d.me(&["capture", "-t", build, "--json"]).ok()?;
        let v: serde_json::Value = serde_json::from_str(&t).ok()?;
        let text = v["text"].as_str()?.to_string();
        text.contains("hello from the agent; $(not run)\n")
            .then_some(text)
    })?;
    for l in screen.lines().filter(|l| !l.trim().is_empty()) {
        println!("    | {l}");
    }
    Ok(())
}

/// A background job whose result is delivered at the next turn after it ends, once.
fn watch(d: &mut Demo) -> Result<(), Error> {
    println!("\n== watch: a background job whose result arrives at the agent's next turn");
    let started = d.me(&[
        "watch",
        "start",
        "--notify",
        "demo-agent",
        "--",
        "sleep 1; echo 'all 42 tests passed'",
    ])?;
    println!("    started {}", started.trim());
    d.turn("right after starting the watch (still running)")?;
    wait_for(|| {
        let l = d.me(&["watch", "list"]).ok()?;
        l.contains(" exit 0 ").then_some(())
    })?;
    d.turn_bringing(
        "after the job finished: the result is delivered once",
        "all 42 tests passed",
    )?;
    d.turn("and not again")?;
    Ok(())
}

/// The bridge (a stand-in peer agent asked through its own tmux session), the digest of a
/// transcript and the side chat's tools, whose note reaches the agent at its next turn.
fn bridge_and_side(d: &mut Demo, agent: &str) -> Result<(), Error> {
    let project = bridge(d)?;
    digest_and_side(d, agent, &project)
}

/// A stand-in peer started for a project and asked once; the project's directory.
fn bridge(d: &Demo) -> Result<String, Error> {
    println!("\n== bridge: ask another agent CLI, running in its own tmux session");
    let peer = d.dir.join(standin::NAME);
    if std::fs::hard_link(&d.bin, &peer).is_err() {
        std::fs::copy(&d.bin, &peer)?;
    }
    let project = d.dir.join("project");
    std::fs::create_dir_all(&project)?;
    let peer_s = peer.display().to_string();
    let project_s = project.display().to_string();
    let started = d.me(&[
        "agent",
        "start",
        "custom",
        "--cli",
        &peer_s,
        "--ready-regex",
        standin::READY_REGEX,
        "--project",
        &project_s,
        "--timeout",
        "10s",
        "--json",
    ])?;
    let v: serde_json::Value = serde_json::from_str(&started).map_err(|e| {
        Error::new(format!(
            "demo: agent start printed no JSON ({e}): {started}"
        ))
    })?;
    let name = v["name"].as_str().unwrap_or("").to_string();
    println!("    started the stand-in peer in session {name}");
    let reply = d.me(&[
        "agent",
        "ask",
        &name,
        "--project",
        &project_s,
        "--message",
        "is the change in src/install safe to ship?",
        "--timeout",
        "10s",
    ])?;
    println!(
        "    $ tmuxmate agent ask {name} --message 'is the change in src/install safe to ship?'"
    );
    for l in reply.trim_end().lines() {
        println!("    | {l}");
    }
    Ok(project_s)
}

/// A transcript attached to the agent's pane, its digest, and the side chat's read and
/// report, whose note the next turn brings.
fn digest_and_side(d: &mut Demo, agent: &str, project_s: &str) -> Result<(), Error> {
    println!("\n== digest and side chat: a person asks about the agent's session");
    let transcript = d.dir.join("transcript.jsonl");
    std::fs::write(&transcript, standin::transcript(project_s))?;
    let t = transcript.display().to_string();
    d.me(&[
        "digest",
        "attach",
        "-t",
        agent,
        "--transcript",
        &t,
        "--format",
        "claude",
    ])?;
    let digest = d.me(&["digest", "show", "-t", agent])?;
    println!("    $ tmuxmate digest show -t {agent}");
    for l in digest.trim_end().lines() {
        println!("    | {l}");
    }
    let status = d.me(&["side", "status", "-t", agent])?;
    println!("    $ tmuxmate side status -t {agent}   (what the read-only side agent reads)");
    for l in status.trim_end().lines().take(3) {
        println!("    | {l}");
    }
    d.me(&[
        "side",
        "report",
        "-t",
        agent,
        "the person asks: also mention --dry-run in the README",
    ])?;
    println!(
        "    $ tmuxmate side report -t {agent} 'the person asks: also mention --dry-run in the README'"
    );
    d.turn_bringing(
        "after the side chat's note: it arrives at the agent's next turn, never typed into its pane",
        "tmux side chat note",
    )?;
    Ok(())
}
