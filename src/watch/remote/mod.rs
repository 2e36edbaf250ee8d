//! Watch jobs on other hosts: this machine's records of them and the per-turn step that
//! brings their results in (`pending`), their place in the local views (`jobs`), starting
//! one there (`on_host`), and what runs on the host when another machine asks (`served`:
//! `tmuxmate call` and the hidden `tmuxmate remote ...`).

pub mod jobs;
pub mod on_host;
pub mod pending;
pub mod served;
