//! JSON configs (Claude and Gemini settings, Codex hooks.json, `.claude.json`, `.mcp.json`):
//! our hook groups and MCP server entry, added and removed inside the user's document.
//!
//! Invariants: keys keep their order (serde_json `preserve_order`); only our entries
//! (found by [`super::marker`]) are added, replaced or removed; containers are pruned only
//! when our removal emptied them; a document already as wanted is left untouched (the
//! caller then writes no byte); the output keeps the file's indent and final newline.

use serde_json::{Map, Value, json};

use super::marker;

/// One hook handler we install: `event` → group `{matcher?, hooks:[{type,command,timeout}]}`.
#[derive(Debug, Clone)]
pub struct HookSpec {
    pub event: &'static str,
    pub matcher: Option<&'static str>,
    pub command: String,
    pub timeout: u64,
}

impl HookSpec {
    fn group(&self) -> Value {
        let mut g = Map::new();
        if let Some(m) = self.matcher {
            g.insert("matcher".into(), json!(m));
        }
        g.insert(
            "hooks".into(),
            json!([{"type": "command", "command": self.command, "timeout": self.timeout}]),
        );
        Value::Object(g)
    }
}

/// Parse a config file; a missing or blank file is an empty object.
pub fn parse(label: &str, text: Option<&str>) -> Result<Value, String> {
    let Some(t) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok(Value::Object(Map::new()));
    };
    let v: Value = serde_json::from_str(t).map_err(|e| {
        format!("{label} is not valid JSON ({e}); fix it (or move it away) and rerun: nothing was changed")
    })?;
    if !v.is_object() {
        return Err(format!("{label} is not a JSON object; nothing was changed"));
    }
    // A parsed document keeps one of two equal keys: writing it back would drop the
    // other without a word.
    if let Err(e) = serde_json::from_str::<NoDuplicateKeys>(t) {
        return Err(format!(
            "{label} has {e}: a JSON reader keeps only one of them, and tmuxmate would write back only that one; \
             merge them into one and rerun: nothing was changed"
        ));
    }
    Ok(v)
}

/// Deserializes any JSON and fails on the first object that has a key twice.
struct NoDuplicateKeys;

impl<'de> serde::Deserialize<'de> for NoDuplicateKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DupVisitor)
    }
}

struct DupVisitor;

impl<'de> serde::de::Visitor<'de> for DupVisitor {
    type Value = NoDuplicateKeys;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        while a.next_element::<NoDuplicateKeys>()?.is_some() {}
        Ok(NoDuplicateKeys)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(k) = a.next_key::<String>()? {
            if !seen.insert(k.clone()) {
                return Err(serde::de::Error::custom(format!(
                    "the key {k:?} twice in one object"
                )));
            }
            a.next_value::<NoDuplicateKeys>()?;
        }
        Ok(NoDuplicateKeys)
    }
}

/// Render like the file was written: its indent unit, and a final newline if it had one.
pub fn render(v: &Value, like: Option<&str>) -> String {
    let indent = like
        .and_then(|t| {
            t.lines()
                .skip(1)
                .find(|l| l.starts_with(' ') || l.starts_with('\t'))
                .map(|l| {
                    l.chars()
                        .take_while(|c| *c == ' ' || *c == '\t')
                        .collect::<String>()
                })
        })
        .unwrap_or_else(|| "  ".into());
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    serde::Serialize::serialize(v, &mut ser).expect("serializing a Value cannot fail");
    let mut s = String::from_utf8(buf).expect("serde_json writes UTF-8");
    if like.map(|t| t.ends_with('\n')).unwrap_or(true) {
        s.push('\n');
    }
    s
}

fn handler_is_ours(h: &Value) -> bool {
    let Some(cmd) = h.get("command").and_then(Value::as_str) else {
        return false;
    };
    if marker::ours_in_command(cmd, "hook").is_some() {
        return true;
    }
    // Claude's `command` + `args` form (no shell).
    if let Some(args) = h.get("args").and_then(Value::as_array) {
        let mut argv = vec![cmd.to_string()];
        argv.extend(args.iter().filter_map(|a| a.as_str().map(String::from)));
        return marker::parse_argv(&argv).is_some_and(|o| o.sub == "hook");
    }
    false
}

/// Every handler of ours: (event, command).
pub fn our_hooks(root: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(hooks) = root.get("hooks").and_then(Value::as_object) else {
        return out;
    };
    for (ev, groups) in hooks {
        for g in groups.as_array().into_iter().flatten() {
            for h in g
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if handler_is_ours(h) {
                    let cmd = h.get("command").and_then(Value::as_str).unwrap_or("");
                    out.push((ev.clone(), cmd.to_string()));
                }
            }
        }
    }
    out
}

/// Remove our handlers; drop groups, event lists and `hooks` that this emptied.
pub fn remove_hooks(root: &mut Value) -> bool {
    let Some(obj) = root.as_object_mut() else {
        return false;
    };
    let Some(hooks) = obj.get_mut("hooks").and_then(Value::as_object_mut) else {
        return false;
    };
    let mut changed = false;
    let mut emptied_events = Vec::new();
    for (ev, groups) in hooks.iter_mut() {
        let Some(arr) = groups.as_array_mut() else {
            continue;
        };
        let before = arr.len();
        let mut touched = false;
        arr.retain_mut(|g| {
            let Some(hs) = g.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let n = hs.len();
            hs.retain(|h| !handler_is_ours(h));
            if hs.len() != n {
                touched = true;
                return !hs.is_empty();
            }
            true
        });
        if touched {
            changed = true;
            if arr.is_empty() && before > 0 {
                emptied_events.push(ev.clone());
            }
        }
    }
    for ev in emptied_events {
        hooks.shift_remove(&ev);
    }
    if changed && hooks.is_empty() {
        obj.shift_remove("hooks");
    }
    changed
}

/// True when exactly our specs are present, each as its own group.
fn hooks_as_wanted(root: &Value, specs: &[HookSpec]) -> bool {
    if our_hooks(root).len() != specs.len() {
        return false;
    }
    specs.iter().all(|s| {
        root.get("hooks")
            .and_then(|h| h.get(s.event))
            .and_then(Value::as_array)
            .is_some_and(|groups| groups.iter().any(|g| *g == s.group()))
    })
}

/// Make our hooks exactly `specs`; returns whether the document changed.
pub fn set_hooks(root: &mut Value, label: &str, specs: &[HookSpec]) -> Result<bool, String> {
    if hooks_as_wanted(root, specs) {
        return Ok(false);
    }
    if let Some(h) = root.get("hooks")
        && !h.is_object()
    {
        return Err(format!(
            "{label}: \"hooks\" is not an object; fix it and rerun"
        ));
    }
    for s in specs {
        if let Some(e) = root.get("hooks").and_then(|h| h.get(s.event))
            && !e.is_array()
        {
            return Err(format!(
                "{label}: hooks.{} is not a list; fix it and rerun",
                s.event
            ));
        }
    }
    remove_hooks(root);
    let obj = root.as_object_mut().expect("parse() returns objects");
    let hooks = obj
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .expect("checked above");
    for s in specs {
        hooks
            .entry(s.event)
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .expect("checked above")
            .push(s.group());
    }
    Ok(true)
}

/// `mcpServers.tmuxmate`, when it is ours (its command is a `tmuxmate` binary).
pub fn our_mcp(root: &Value) -> Option<&Value> {
    let e = root.get("mcpServers")?.get("tmuxmate")?;
    let cmd = e.get("command")?.as_str()?;
    let mut argv = vec![cmd.to_string()];
    argv.extend(
        e.get("args")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str().map(String::from)),
    );
    (marker::parse_argv(&argv).is_some() || marker::ours_in_command(cmd, "mcp").is_some())
        .then_some(e)
}

/// Make `mcpServers.tmuxmate` equal `entry`; a foreign server of that name is refused.
pub fn set_mcp(root: &mut Value, label: &str, entry: Value) -> Result<bool, String> {
    if let Some(cur) = root.get("mcpServers").and_then(|m| m.get("tmuxmate")) {
        if our_mcp(root).is_none() {
            return Err(format!(
                "{label} already has an MCP server named \"tmuxmate\" that does not run a tmuxmate binary ({cur}); rename or remove it, then rerun"
            ));
        }
        if *cur == entry {
            return Ok(false);
        }
    }
    if let Some(m) = root.get("mcpServers")
        && !m.is_object()
    {
        return Err(format!(
            "{label}: \"mcpServers\" is not an object; fix it and rerun"
        ));
    }
    let obj = root.as_object_mut().expect("parse() returns objects");
    let servers = obj
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .expect("checked above");
    // Replacing in place keeps its position among the user's servers.
    servers.insert("tmuxmate".into(), entry);
    Ok(true)
}

pub fn remove_mcp(root: &mut Value) -> bool {
    if our_mcp(root).is_none() {
        return false;
    }
    let obj = root.as_object_mut().expect("our_mcp found an object");
    let servers = obj
        .get_mut("mcpServers")
        .and_then(Value::as_object_mut)
        .expect("our_mcp found it");
    servers.shift_remove("tmuxmate");
    if servers.is_empty() {
        obj.shift_remove("mcpServers");
    }
    true
}

pub fn is_empty(v: &Value) -> bool {
    v.as_object().is_some_and(Map::is_empty)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_given_twice_is_refused_with_its_name() {
        let e = parse(
            "~/.claude/settings.json",
            Some(r#"{"hooks": {}, "model": "x", "hooks": {"Stop": []}}"#),
        )
        .unwrap_err();
        assert!(
            e.contains("\"hooks\" twice") && e.contains("nothing was changed"),
            "{e}"
        );
        let nested = parse("f", Some(r#"{"a": [{"b": 1, "b": 2}]}"#)).unwrap_err();
        assert!(nested.contains("\"b\" twice"), "{nested}");
        assert!(parse("f", Some(r#"{"a": {"b": 1}, "c": {"b": 2}}"#)).is_ok());
    }

    fn spec(cmd: &str) -> Vec<HookSpec> {
        vec![
            HookSpec {
                event: "UserPromptSubmit",
                matcher: None,
                command: cmd.into(),
                timeout: 5,
            },
            HookSpec {
                event: "SessionStart",
                matcher: Some("compact|clear"),
                command: cmd.into(),
                timeout: 5,
            },
        ]
    }

    #[test]
    fn merges_beside_other_hooks_and_is_idempotent() {
        let text = r#"{"z": 1, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}], "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "other"}]}]}, "a": 2}"#;
        let mut v = parse("f", Some(text)).unwrap();
        assert!(set_hooks(&mut v, "f", &spec("/b/tmuxmate hook claude")).unwrap());
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["z", "hooks", "a"]);
        assert_eq!(v["hooks"]["UserPromptSubmit"].as_array().unwrap().len(), 2);
        assert!(!set_hooks(&mut v, "f", &spec("/b/tmuxmate hook claude")).unwrap());
        // A moved binary replaces ours (found by marker), it does not add a second.
        assert!(set_hooks(&mut v, "f", &spec("/new/tmuxmate hook claude")).unwrap());
        assert_eq!(our_hooks(&v).len(), 2);
        assert!(remove_hooks(&mut v));
        assert_eq!(v, parse("f", Some(text)).unwrap());
    }

    #[test]
    fn keeps_indent_and_refuses_foreign_mcp() {
        let text =
            "{\n    \"mcpServers\": {\n        \"tmuxmate\": {\"command\": \"python3\"}\n    }\n}";
        let mut v = parse("f", Some(text)).unwrap();
        assert!(
            set_mcp(
                &mut v,
                "f",
                json!({"command": "/b/tmuxmate", "args": ["mcp"]})
            )
            .is_err()
        );
        let out = render(&v, Some(text));
        assert!(out.contains("\n    \"mcpServers\""), "{out}");
        assert!(!out.ends_with('\n'));
    }
}
