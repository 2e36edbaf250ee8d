//! Watch jobs on other hosts: this machine's records of them and the per-turn step that
//! brings their results in (`pending`), their place in the local views (`jobs`), and what
//! runs on the host when another machine asks (`served`, hidden `tmuxmate remote ...`).

pub mod jobs;
pub mod pending;
pub mod served;
