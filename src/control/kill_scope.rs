//! What `kill` kills: the scope the CLI's positional argument and MCP's `scope` name.
//!
//! Owns the [`KillScope`] enum (its clap derive gives the CLI its values and help, as the
//! `Harness` enum does, and the MCP tool's `scope` is read by the same names). Invariant:
//! `Server` takes no target; the others name the pane, window or session holding the
//! pane a target resolves to.

use clap::ValueEnum;
use serde::de::{Deserialize, Deserializer, Error};

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum KillScope {
    /// The pane -t names.
    Pane,
    /// The window holding the pane -t names.
    Window,
    /// The session holding the pane -t names.
    Session,
    /// The whole tmux server -L/-S select (takes no -t).
    Server,
}

impl<'de> Deserialize<'de> for KillScope {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<KillScope, D::Error> {
        let s = String::deserialize(d)?;
        KillScope::from_str(&s, false).map_err(|_| {
            let names: Vec<String> = KillScope::value_variants()
                .iter()
                .filter_map(|v| v.to_possible_value())
                .map(|v| v.get_name().to_string())
                .collect();
            D::Error::custom(format!("scope {s:?} is not one of {}", names.join(", ")))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::KillScope;

    #[test]
    fn the_mcp_scope_is_read_by_the_cli_names() {
        let read = |v: &str| serde_json::from_value::<KillScope>(serde_json::json!(v));
        assert_eq!(read("window").unwrap(), KillScope::Window);
        assert_eq!(
            read("planet").unwrap_err().to_string(),
            r#"scope "planet" is not one of pane, window, session, server"#
        );
        assert!(read("Pane").is_err(), "exact names only");
    }
}
