//! What wakes the live view: a poke on its wake socket (`sys::wake`) when a file the board
//! is built from changed, and the terminal's keys, mouse and size, on one channel.
//!
//! Owns: turning pokes into [`Msg::Files`]. The writers poke after each write that the
//! board shows: the change marker (`state::changes::mark`, every state write), the
//! agents' ledgers (`location::ledger`: notes and watch results queued, delivered), the
//! hosts' snapshots (`state::hosts`), the digest glances (`side::digest::glance`) and the
//! watch jobs' records (`watch::job::Job::save_mirror`). Invariants: no timer and no
//! inotify here (inotify instances run out with many agents: each digest follower holds
//! one), so nothing is looked at until something says it changed; the loop decides when
//! a shown age needs a redraw.

use std::sync::mpsc::Sender;

use super::act::Outcome;
use crate::sys::wake;

pub enum Msg {
    /// A file the board is built from changed.
    Files,
    Term(crossterm::event::Event),
    /// The terminal is gone (read failed).
    TermGone,
    Done(Outcome),
}

/// Listen for pokes (keep the listener: dropping it removes the socket).
pub fn wake(tx: Sender<Msg>) -> std::io::Result<wake::Listener> {
    wake::listen(move || tx.send(Msg::Files).is_ok())
}

/// The terminal's events, read on their own thread.
pub fn terminal(tx: Sender<Msg>) {
    std::thread::spawn(move || {
        loop {
            match crossterm::event::read() {
                Ok(e) => {
                    if tx.send(Msg::Term(e)).is_err() {
                        return;
                    }
                }
                Err(_) => {
                    let _ = tx.send(Msg::TermGone);
                    return;
                }
            }
        }
    });
}
