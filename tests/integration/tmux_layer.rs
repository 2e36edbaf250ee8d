//! The tmux layer: the direct socket path for read-only queries must answer exactly as the
//! tmux client does, errors included.

use crate::server;

#[test]
fn direct_socket_queries_match_the_tmux_client() {
    let s = server!();
    let a = s.agent_pane("w\tith \"odd\" #{names} 🚀");
    s.tmux(&["split-window", "-d", "-t", &a.pane, "sh"]);
    // TMUXMATE_TMUX names the program: tmuxmate then always runs the real client.
    let via_client = |args: &[&str]| {
        s.tmuxmate()
            .env("TMUXMATE_TMUX", "tmux")
            .args(args)
            .output()
            .unwrap()
    };
    let direct = |args: &[&str]| s.run(args);
    for args in [&["list", "--json"][..], &["list"][..]] {
        let (x, y) = (direct(args), via_client(args));
        assert!(x.status.success() && y.status.success());
        assert_eq!(
            String::from_utf8_lossy(&x.stdout),
            String::from_utf8_lossy(&y.stdout),
            "{args:?}"
        );
    }
    let (x, y) = (
        a.sh("\"$TM\" where --json"),
        a.sh("TMUXMATE_TMUX=tmux \"$TM\" where --json"),
    );
    assert_eq!(x.out, y.out);
    assert_eq!(x.rc, 0);
    // A target that does not exist: the same clear error either way.
    let (x, y) = (
        direct(&["capture", "-t", "%99"]),
        via_client(&["capture", "-t", "%99"]),
    );
    assert_eq!(x.status.code(), y.status.code());
    assert_eq!(
        String::from_utf8_lossy(&x.stderr),
        String::from_utf8_lossy(&y.stderr)
    );
}

#[test]
fn a_hung_server_is_a_timeout_error_not_a_hang() {
    let s = server!();
    let a = s.agent_pane("w");
    let pid: i32 = s.tmux(&["display", "-p", "#{pid}"]).trim().parse().unwrap();
    std::process::Command::new("kill")
        .args(["-STOP", &pid.to_string()])
        .status()
        .unwrap();
    let start = std::time::Instant::now();
    let o = s
        .tmuxmate()
        .env("TMUXMATE_TIMEOUT_MS", "300")
        .args(["list"])
        .output()
        .unwrap();
    let took = start.elapsed();
    // The hook path stays silent and exits 0 even then.
    let h = s
        .tmuxmate()
        .env("TMUXMATE_TIMEOUT_MS", "300")
        .args(["hook", "claude"])
        .stdin(std::fs::File::open(a.fixture("hook-claude-UserPromptSubmit.json")).unwrap())
        .output()
        .unwrap();
    std::process::Command::new("kill")
        .args(["-CONT", &pid.to_string()])
        .status()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("did not answer within 300 ms"), "{e}");
    assert!(took < std::time::Duration::from_secs(5), "took {took:?}");
    assert_eq!(h.status.code(), Some(0));
    assert!(h.stdout.is_empty());
}
