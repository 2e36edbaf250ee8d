//! The live view: a terminal (ratatui over crossterm) showing the board, redrawn when a
//! file it is built from changes, when a key is pressed, and when a shown age would
//! change; and its popup on a client (the snippet's key).
//!
//! Invariants: no polling: the loop sleeps on one channel (the pokes of the processes that
//! write its files, through its wake socket: `feed`; the terminal; outcomes) until the
//! next moment a shown age changes (at most once a second while an age is counted in
//! seconds) or, with nothing at all happening, [`RELIST`], which catches a pane killed
//! without a word from its agent; a burst of file events is one refresh ([`SETTLE`] after
//! the first); actions run on their own threads, so the view keeps drawing; the terminal
//! is given back as it was (raw mode, alternate screen, mouse) whatever ends the loop.

pub mod act;
pub mod app;
pub mod draw;
pub mod feed;
pub mod fit;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use crossterm::event::Event;

use super::gather::Gatherer;
use super::request::Dashboard;
use crate::error::{CliResult, Error};
use crate::tmux::Tmux;
use act::{Outcome, Seat};
use app::{App, Effect};
use feed::Msg;
use fit::{Depth, Palette};

/// Events that come together (a hook writes its record, then the status line) are one
/// refresh.
const SETTLE: Duration = Duration::from_millis(15);
/// With nothing happening, the board is read again this often (a pane killed without a
/// word from its agent writes no file).
const RELIST: Duration = Duration::from_secs(30);
/// The shortest pause between two redraws for ages alone.
const AGE_EVERY: Duration = Duration::from_secs(1);

/// The colours the client's terminal shows (`NO_COLOR` wins).
fn palette(tmux: &Tmux, client: Option<&str>) -> Palette {
    let no_color = std::env::var("NO_COLOR").ok();
    let features = if std::env::var_os("TMUX").is_some() || client.is_some() {
        let mut args: Vec<crate::tmux::Arg> = crate::targs!["display-message", "-p"].into();
        if let Some(c) = client {
            args.extend(crate::targs!["-c", crate::tmux::Arg::literal(c)]);
        }
        args.push("#{client_termfeatures}".into());
        tmux.run(&args).unwrap_or_default()
    } else {
        // Outside tmux: what the terminal says of itself.
        match std::env::var("COLORTERM").as_deref() {
            Ok("truecolor") | Ok("24bit") => "RGB".into(),
            _ if std::env::var("TERM").is_ok_and(|t| t.contains("256")) => "256".into(),
            _ => String::new(),
        }
    };
    Palette {
        depth: Depth::choose(no_color.as_deref(), features.trim()),
    }
}

/// When the next shown age changes (ages are shown as 42s, 5m, 3h, 2d).
fn next_age_tick(app: &App, now_ms: u64) -> Duration {
    let page = app.shown.iter().skip(app.offset).take(app.page);
    let mut soonest = RELIST.as_millis() as u64;
    for &i in page {
        let Some(r) = app.board.agents.get(i) else {
            continue;
        };
        let age = now_ms.saturating_sub(r.since);
        let unit = match age / 1000 {
            0..=59 => 1000,
            60..=3599 => 60_000,
            3600..=86_399 => 3_600_000,
            _ => 86_400_000,
        };
        soonest = soonest.min(unit - age % unit);
    }
    Duration::from_millis(soonest.max(1))
}

/// `tmuxmate dashboard`: the live view in this terminal until `q`.
pub fn run(tmux: &Tmux, ask: &Dashboard, client: Option<&str>, chosen: bool) -> CliResult {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(Error::usage(
            "the live dashboard needs a terminal; for the rows once: tmuxmate dashboard --once [--json]",
        ));
    }
    let mut g = Gatherer::default();
    // A server that is not there is said at once, before the screen is taken.
    let first = g.board(tmux, chosen)?;
    let seat = Seat {
        client: client.map(str::to_string),
        pane: std::env::var_os("TMUX")
            .and_then(|_| crate::location::read(tmux).ok())
            .map(|r| r.pane_id),
    };
    let pal = palette(tmux, client);
    let (tx, rx) = mpsc::channel::<Msg>();
    // Without its socket the view still redraws on keys and every RELIST, and says so.
    let listener = feed::wake(tx.clone());
    let mut term = ratatui::init();
    let _ = crossterm::execute!(std::io::stdout(), crossterm::event::EnableMouseCapture);
    feed::terminal(tx.clone());
    let mut app = App::new(ask.filter.as_deref().unwrap_or(""));
    app.set_board(first);
    if let Err(e) = &listener {
        crate::sys::state::log(&format!("dashboard: no wake socket: {e}"));
        app.message = Some((
            format!(
                "no wake socket ({e}): changes show at a key or within {} s",
                RELIST.as_secs()
            ),
            false,
        ));
    }
    let r = looped(
        tmux,
        &mut term,
        &mut app,
        &mut g,
        &Loop {
            seat,
            pal,
            chosen,
            tx,
        },
        &rx,
    );
    let _ = crossterm::execute!(std::io::stdout(), crossterm::event::DisableMouseCapture);
    ratatui::restore();
    drop(listener);
    r
}

struct Loop {
    seat: Seat,
    pal: Palette,
    chosen: bool,
    tx: mpsc::Sender<Msg>,
}

fn looped(
    tmux: &Tmux,
    term: &mut ratatui::DefaultTerminal,
    app: &mut App,
    g: &mut Gatherer,
    l: &Loop,
    rx: &mpsc::Receiver<Msg>,
) -> CliResult {
    let stats = std::env::var_os("TMUXMATE_DASHBOARD_STATS").map(std::path::PathBuf::from);
    let mut last_read = Instant::now();
    // A message that came while a burst of file events settled.
    let mut held: Option<Msg> = None;
    loop {
        let now = crate::sys::time::now_ms();
        let t0 = Instant::now();
        term.draw(|f| draw::draw(f, app, &l.pal, now))?;
        if let Some(p) = &stats {
            stat(p, t0.elapsed(), app.board.agents.len());
        }
        // Ages change at each row's own moment: one redraw a second serves them all.
        let wait = next_age_tick(app, now)
            .max(AGE_EVERY.saturating_sub(t0.elapsed()))
            .min(RELIST.saturating_sub(last_read.elapsed()));
        let mut refresh = false;
        let next = match held.take() {
            Some(m) => Ok(m),
            None => rx.recv_timeout(wait),
        };
        match next {
            Ok(Msg::Files) => {
                // The rest of a burst; anything else that comes meanwhile is next.
                let mut n = 1;
                while let Ok(m) = rx.recv_timeout(SETTLE) {
                    if !matches!(m, Msg::Files) {
                        held = Some(m);
                        break;
                    }
                    n += 1;
                }
                if let Some(p) = &stats {
                    note(p, &format!("# files {n} at {}", crate::sys::time::now_ms()));
                }
                refresh = true;
            }
            Ok(Msg::Term(Event::Key(k))) => match app.key(k) {
                Effect::Quit => return Ok(()),
                Effect::None => {}
                e => act(tmux, e, l),
            },
            Ok(Msg::Term(Event::Mouse(m))) => app.mouse(m),
            Ok(Msg::Term(_)) => {}
            Ok(Msg::TermGone) => return Ok(()),
            Ok(Msg::Done(o)) => {
                if o.quit {
                    return Ok(());
                }
                if !o.text.is_empty() {
                    app.message = Some((o.text, o.good));
                }
                refresh = true;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => refresh = last_read.elapsed() >= RELIST,
            Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
        }
        if refresh {
            last_read = Instant::now();
            match g.board(tmux, l.chosen) {
                Ok(b) => app.set_board(b),
                Err(e) => app.message = Some((e.msg, false)),
            }
            if let Some(p) = &stats {
                note(p, &format!("# read {} us", last_read.elapsed().as_micros()));
            }
        }
    }
}

/// Carry out a key's effect on its own thread; its outcome comes back on the channel.
fn act(tmux: &Tmux, e: Effect, l: &Loop) {
    let (tmux, seat, tx) = (tmux.clone(), l.seat.clone(), l.tx.clone());
    std::thread::spawn(move || {
        let o: Outcome = match e {
            Effect::Jump(r) => act::jump(&tmux, &seat, &r),
            Effect::Ask(r, line) => act::ask(&tmux, &r, &line),
            Effect::Side(r) => act::side(&tmux, &seat, &r),
            Effect::Stop(r) => act::stop(&tmux, &r),
            Effect::None | Effect::Quit => return,
        };
        let _ = tx.send(Msg::Done(o));
    });
}

/// A line of the benchmark's file that is no drawing.
fn note(p: &std::path::Path, line: &str) {
    use std::io::Write;
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(p)
    {
        let _ = writeln!(f, "{line}");
    }
}

/// One line per drawing (`TMUXMATE_DASHBOARD_STATS`, for the benchmark): rows,
/// microseconds, and the wall clock (unix ms) when it was on the terminal.
fn stat(p: &std::path::Path, took: Duration, rows: usize) {
    use std::io::Write;
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(p)
    {
        let _ = writeln!(
            f,
            "{rows} {} {}",
            took.as_micros(),
            crate::sys::time::now_ms()
        );
    }
}

/// The snippet's key: the dashboard in a popup on `client` (blocks until it closes).
pub fn popup(tmux: &Tmux, client: &str, chosen: bool) -> Result<(), Error> {
    let bin = std::env::current_exe()?.to_string_lossy().into_owned();
    let mut argv = vec![bin];
    if chosen {
        argv.push("-S".into());
        argv.push(crate::state::socket_of(tmux).map_err(Error::new)?);
    }
    argv.extend(["dashboard".into(), "--client".into(), client.to_string()]);
    crate::tmux::popup::popup(tmux, client, " agents ", &argv).map_err(Error::from)
}
