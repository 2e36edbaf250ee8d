//! What sees a tmux call's stdout while it arrives ([`super::Tmux::run_tapped`]).
//!
//! Owns: the one interface between a transport that reads a server's answer and a caller
//! that works on it as it comes (a capture storing its snapshot). Invariant: `sent` comes
//! at most once per attempt and before any `chunk`; `restart` drops what came before.

pub trait Tap {
    /// The command is on its way to the server (the direct socket path only): what the
    /// tap will need may be readied while the server works on it.
    fn sent(&mut self) {}
    /// The next bytes of stdout.
    fn chunk(&mut self, b: &[u8]);
    /// The output is read again from its start: forget what came before.
    fn restart(&mut self);
}

/// The tap of a call whose output is only wanted whole.
pub struct Untapped;

impl Tap for Untapped {
    fn chunk(&mut self, _: &[u8]) {}
    fn restart(&mut self) {}
}
