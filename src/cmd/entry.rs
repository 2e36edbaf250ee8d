//! The process entry: signals, the interceptors that run before parsing, argument
//! parsing, dispatch, and how a failure is printed and which exit code it gets.
//!
//! Invariants: a `hook` invocation never fails loudly (a parse error is logged and the
//! exit is 0); with `--json` every failure, usage errors included, is one JSON object on
//! stdout; the state directory is closed (0700) before anything reads or writes it.

use clap::Parser;

/// Whether argv asks for JSON (a `--json` before any `--`: what follows `--` is a
/// command or text, not our flags). Known before parsing, so usage errors can honour it.
fn argv_has(args: &[std::ffi::OsString], flags: &[&str]) -> bool {
    args.iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| flags.iter().any(|f| a == f))
}

/// `tmuxmate --version` / `-V`: our version and the tmux found (clap's own flag would
/// print only ours). Only the bare forms, so every other parse stays clap's.
fn intercept_version() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    // Socket flags may come first (`tmuxmate -L work --version`); `-V` needs no server.
    let mut i = 0;
    while i + 1 < args.len()
        && ["-L", "-S", "--socket", "--socket-path"]
            .iter()
            .any(|f| args[i] == *f)
    {
        i += 2;
    }
    if args.len() != i + 1 || !(args[i] == "--version" || args[i] == "-V") {
        return;
    }
    let tmux = crate::tmux::Tmux::new(crate::tmux::Socket::Default);
    let t = crate::tmux::version::described(&tmux.program, tmux.timeout);
    let direct = match crate::tmux::version::found(&tmux.program, tmux.timeout) {
        Ok(_) => format!(", {}", tmux.describe_direct(false)),
        Err(_) => String::new(),
    };
    super::out(&format!(
        "tmuxmate {}\n{t}{direct}\n",
        env!("CARGO_PKG_VERSION")
    ));
    std::process::exit(0);
}

/// A clap usage error as our error: its first line is the message, the rest the hint.
fn usage_error(e: &clap::Error) -> crate::error::Error {
    let text = e.render().to_string();
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let msg = lines
        .next()
        .unwrap_or("bad arguments")
        .trim_start_matches("error: ")
        .to_string();
    let rest: Vec<&str> = lines
        .filter(|l| !l.starts_with("For more information"))
        .collect();
    let mut c = crate::error::Error::usage(msg);
    if !rest.is_empty() {
        c = c.with_hint(rest.join("; "));
    }
    c
}

/// Print a failure: one JSON object on stdout with `--json`, else one line on stderr; the
/// mechanics go to the log, and to stderr with `--verbose`.
fn report(e: &crate::error::Error, json: bool, verbose: bool) -> ! {
    if let Some(d) = &e.detail {
        crate::sys::state::log(&format!("error: {} [{d}]", e.human()));
    }
    if json && !e.printed {
        super::out_line(&serde_json::to_string(&e.to_json()).unwrap_or_default());
    } else {
        // An error another host reported is shown, not obeyed, as its answers are.
        eprintln!("tmuxmate: {}", super::shown(&e.human()));
    }
    if verbose && let Some(d) = &e.detail {
        eprintln!("tmuxmate: {d}");
    }
    std::process::exit(exit_code(e));
}

/// The exit code of a failure: 2 for a usage error (as clap's own), 1 for any other.
pub fn exit_code(e: &crate::error::Error) -> i32 {
    if e.kind == crate::error::Kind::Usage {
        2
    } else {
        1
    }
}

/// Exit status when that deadline ends the command (as coreutils `timeout` says it).
const PAST_DEADLINE: i32 = 124;

/// A caller over ssh gives up at its deadline, and sshd keeps the session of a command
/// that has not exited (one of `MaxSessions`, 10 by default): so we end at the caller's
/// deadline too, never holding a session nobody waits on.
fn within_callers_deadline() {
    let Some(ms) = std::env::var(crate::remote::call::WITHIN_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("deadline".into())
        .spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(ms));
            crate::sys::state::log(&format!(
                "the calling host's deadline ({ms} ms) passed: exiting so its ssh session ends"
            ));
            std::process::exit(PAST_DEADLINE);
        });
    if let Err(e) = spawned {
        crate::sys::state::log(&format!("cannot watch the caller's deadline: {e}"));
    }
}

pub fn main() {
    // A file-size limit (RLIMIT_FSIZE) must fail a write with EFBIG, which the ledger cuts
    // back, rather than kill us with SIGXFSZ halfway through a record.
    // SAFETY: setting a signal to SIG_IGN runs no handler code.
    let _ = unsafe {
        nix::sys::signal::signal(
            nix::sys::signal::Signal::SIGXFSZ,
            nix::sys::signal::SigHandler::SigIgn,
        )
    };
    intercept_version();
    crate::demo::standin::intercept();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let json = argv_has(&args, &["--json"]);
    let verbose = argv_has(&args, &["--verbose", "-v"]);
    let cli = match crate::cli::Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) if crate::harness::invocation::is_hook_invocation() => {
            // A harness must never break because of us: log, print nothing, exit 0.
            crate::sys::state::log(&crate::harness::invocation::bad_arguments(&e));
            std::process::exit(0);
        }
        // Help and version are answers, not errors.
        Err(e) if json && e.use_stderr() => report(&usage_error(&e), true, false),
        Err(e) => e.exit(),
    };
    // A state directory left readable by others is closed before anything is read or written.
    crate::sys::state::secure_existing();
    within_callers_deadline();
    if let Err(e) = super::dispatch(cli) {
        report(&e, json, verbose);
    }
}
