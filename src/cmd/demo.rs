//! `tmuxmate demo`: the main job, shown on a private tmux server.
//!
//! Owns: a throwaway server (`-S` socket in a fresh temp dir, `-f /dev/null`, `TMUX`
//! removed), a stand-in agent loop in a pane that calls the per-turn entry point once per
//! turn, and a script of moves/renames/splits/resizes around it. Invariant: it never
//! touches any other tmux server, and kills its own unless `--keep`.

use crate::targs;
use crate::tmux::Arg;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{CliError, CliResult};
use crate::tmux::{Socket, Tmux, version};

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
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn wait_file(p: &Path, deadline: Duration) -> Result<String, CliError> {
    let start = Instant::now();
    while start.elapsed() < deadline {
        if let Ok(s) = std::fs::read_to_string(p) {
            return Ok(s);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Err(CliError::new(format!(
        "demo: the stand-in agent did not answer within {} s ({} missing)",
        deadline.as_secs(),
        p.display()
    )))
}

/// Poll `f` every 50 ms for up to 20 s (the demo's own waits, with a deadline).
fn wait_for<T>(mut f: impl FnMut() -> Option<T>) -> Result<T, CliError> {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        if let Some(v) = f() {
            return Ok(v);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(CliError::new("demo: a step did not complete within 20 s"))
}

impl Demo {
    /// A tmux call of the demo's own: its arguments are literals and ids tmux printed.
    fn t(&self, args: &[&str]) -> Result<String, CliError> {
        let args: Vec<Arg> = args.iter().map(|a| Arg::ours(*a)).collect();
        Ok(self.tmux.run(&args)?)
    }

    /// Run tmuxmate itself against the demo server (as the agent would, from outside).
    fn me(&self, args: &[&str]) -> Result<String, CliError> {
        let sock = match &self.tmux.socket {
            Socket::Path(p) => p.display().to_string(),
            _ => String::new(),
        };
        #[allow(clippy::disallowed_methods)] // our own binary, not tmux
        let out = std::process::Command::new(&self.bin)
            .args(["-S", &sock])
            .args(args)
            .env("TMUXMATE_STATE_DIR", self.dir.join("state"))
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .output()?;
        if !out.status.success() {
            return Err(CliError::new(format!(
                "demo: tmuxmate {args:?} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// One agent turn: the stand-in runs `tmuxmate turn` from its pane.
    fn turn(&mut self, what: &str) -> CliResult {
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
        let req = self.dir.join(format!("req.{}", self.n));
        std::fs::write(&req, script)?;
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
        Ok(())
    }
}

pub fn run(keep: bool) -> CliResult {
    let dir = std::env::temp_dir().join(format!("tmuxmate-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let sock = dir.join("tmux.sock");
    let mut tmux = Tmux::new(Socket::Path(sock.clone()));
    tmux.isolate_env = true;
    version::check(&tmux)?;
    let bin = std::env::current_exe()?;
    std::fs::write(dir.join("agent.sh"), AGENT_LOOP)?;
    let mut d = Demo {
        tmux,
        dir: dir.clone(),
        bin,
        n: 0,
        keep,
    };
    let agent_cmd = format!(
        "sh '{}' '{}'",
        dir.join("agent.sh").display(),
        dir.display()
    );
    d.t(&[
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
    let agent = d
        .t(&["list-panes", "-t", "demo", "-F", "#{pane_id}"])?
        .trim()
        .to_string();
    println!("tmuxmate demo: private tmux server at {}", sock.display());
    println!(
        "stand-in agent in pane {agent}; each turn it runs `tmuxmate turn --agent demo-agent`\n"
    );

    d.turn("first turn: the agent learns where it is")?;
    d.turn("second turn, nothing changed")?;
    // A name is data: `#` and quotes arrive as typed.
    d.tmux.run(&targs![
        "rename-window",
        "-t",
        Arg::id(&agent),
        Arg::expanded("agent \"main\" #1 🚀")
    ])?;
    d.turn("after renaming the window")?;
    let build = d.t(&[
        "split-window",
        "-h",
        "-d",
        "-t",
        &agent,
        "-P",
        "-F",
        "#{pane_id}",
        "sh",
    ])?;
    let build = build.trim().to_string();
    d.turn(&format!("after splitting a build pane {build} beside it"))?;
    d.t(&["resize-window", "-t", &agent, "-x", "100", "-y", "28"])?;
    d.turn("after resizing the window (sizes are not part of the state)")?;
    d.t(&["select-pane", "-t", &build])?;
    d.turn("after moving focus to the build pane")?;
    d.t(&["break-pane", "-d", "-s", &agent])?;
    d.turn("after breaking the agent pane out into its own window")?;
    d.turn("and once more with nothing changed")?;

    println!("\n== control: the agent drives the build pane {build} and reads it back");
    let out = d.me(&[
        "send",
        "-t",
        &build,
        "--enter",
        "echo 'hello from the agent; $(not run)'",
    ])?;
    print!("{out}");
    let screen = wait_for(|| {
        let t = d.me(&["capture", "-t", &build, "--json"]).ok()?;
        let v: serde_json::Value = serde_json::from_str(&t).ok()?;
        let text = v["text"].as_str()?.to_string();
        text.contains("hello from the agent; $(not run)\n")
            .then_some(text)
    })?;
    for l in screen.lines().filter(|l| !l.trim().is_empty()) {
        println!("    | {l}");
    }

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
        l.contains("finished").then_some(())
    })?;
    d.turn("after the job finished: the result is delivered once")?;
    d.turn("and not again")?;

    if keep {
        println!(
            "\nThe demo server is still running. Attach with:\n  tmux -S '{}' attach\nStop it with:\n  tmux -S '{}' kill-server",
            sock.display(),
            sock.display()
        );
    }
    Ok(())
}
