//! The tool table against itself and the published answer: every schema property is a
//! field of the handler's argument type and the reverse, each with the type the schema
//! says; exactly the published required fields are required; `tools/list` stays the
//! answer clients have seen (a change to it is a change to this file's fixture).

use std::fmt;

use serde::Deserializer;
use serde::de::{DeserializeOwned, Visitor};
use serde_json::{Value, json};

use super::super::handlers as h;
use super::{TOOLS, list};

#[test]
fn tools_list_fits_the_token_budget() {
    let bytes = serde_json::to_string(list()).unwrap().len();
    eprintln!("tools/list: {bytes} bytes");
    // Fourteen tools at under 800 bytes each: 11 KB (peers: 57-140 KB for fewer).
    assert!(bytes <= 11 * 1024, "tools/list is {bytes} bytes");
    assert_eq!(TOOLS.len(), 14);
}

#[test]
fn tools_list_is_the_published_answer_byte_for_byte() {
    let published: Value =
        serde_json::from_str(include_str!("../../../tests/fixtures/mcp-tools-list.json")).unwrap();
    assert_eq!(
        serde_json::to_string(list()).unwrap(),
        serde_json::to_string(&published).unwrap()
    );
}

#[test]
fn every_tool_name_is_one_entry() {
    let mut names: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(
        names.len(),
        TOOLS.len(),
        "a tool name is in the table twice"
    );
}

/// The fields a struct's `Deserialize` asks for (after renames): its `deserialize_struct`
/// call is caught and its field list kept.
#[derive(Debug)]
struct Caught(Option<&'static [&'static str]>);

impl fmt::Display for Caught {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "caught")
    }
}
impl std::error::Error for Caught {}
impl serde::de::Error for Caught {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Caught(None)
    }
}

struct Introspect;

impl<'de> Deserializer<'de> for Introspect {
    type Error = Caught;
    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Caught> {
        Err(Caught(None))
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Caught> {
        Err(Caught(Some(fields)))
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

fn fields<T: DeserializeOwned>() -> Vec<&'static str> {
    match T::deserialize(Introspect) {
        Err(Caught(Some(f))) => f.to_vec(),
        _ => panic!("not a struct"),
    }
}

fn parses<T: DeserializeOwned>(v: &Value) -> Result<(), String> {
    serde_json::from_value::<T>(v.clone())
        .map(drop)
        .map_err(|e| e.to_string())
}

/// One tool's argument type, as the test needs it.
struct Probe {
    fields: Vec<&'static str>,
    parses: fn(&Value) -> Result<(), String>,
    type_name: &'static str,
}

fn probe<T: DeserializeOwned>() -> Probe {
    Probe {
        fields: fields::<T>(),
        parses: parses::<T>,
        type_name: std::any::type_name::<T>(),
    }
}

/// Each tool's handler argument type. A tool missing here fails the test.
fn probe_of(name: &str) -> Option<Probe> {
    Some(match name {
        "tmux_list" => probe::<crate::control::list::Ask>(),
        "tmux_send_keys" => probe::<crate::control::input::SendAsk>(),
        "tmux_paste" => probe::<crate::control::input::PasteAsk>(),
        "tmux_capture" => probe::<crate::control::capture::Ask>(),
        "tmux_split" => probe::<crate::control::split::SplitAsk>(),
        "tmux_swap" => probe::<crate::control::swap::SwapAsk>(),
        "tmux_run" => probe::<crate::control::run::RunAsk>(),
        "tmux_watch" => probe::<h::Watch>(),
        "tmux_kill" => probe::<crate::control::kill::KillAsk>(),
        "tmux_agents" => probe::<h::Agents>(),
        "agent_ask" => probe::<h::Ask>(),
        "side_chat_main_status" => probe::<crate::side::request::Status>(),
        "side_chat_main_history" => probe::<crate::side::request::History>(),
        "side_chat_report" => probe::<crate::side::request::Report>(),
        _ => return None,
    })
}

/// A control tool reads its operation's request type, the one the CLI command flattens
/// (`control::<op>`), never an argument type of the MCP server's own.
#[test]
fn every_control_tool_reads_its_operations_request_type() {
    let control = [
        "tmux_list",
        "tmux_send_keys",
        "tmux_paste",
        "tmux_capture",
        "tmux_split",
        "tmux_swap",
        "tmux_run",
        "tmux_kill",
    ];
    for name in control {
        let t = probe_of(name).unwrap().type_name;
        assert!(t.starts_with("tmuxmate::control::"), "{name}: {t}");
    }
    for tool in TOOLS.iter().filter(|t| !control.contains(&t.name)) {
        let t = probe_of(tool.name).unwrap().type_name;
        assert!(
            !t.contains("::control::"),
            "{}: {t} is a control type",
            tool.name
        );
    }
}

/// Values the schema allows (one per alternative), and values it does not.
fn samples(schema: &Value) -> (Vec<Value>, Vec<Value>) {
    if let Some(alts) = schema["anyOf"].as_array() {
        let ok = alts.iter().flat_map(|a| samples(a).0).collect();
        return (ok, vec![json!({}), json!(true)]);
    }
    if let Some(e) = schema["enum"].as_array() {
        return (e.clone(), vec![json!({}), json!(1)]);
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        other => panic!("schema without a type: {other}"),
    };
    let mut ok = Vec::new();
    for t in &types {
        ok.push(match *t {
            "string" => json!("x"),
            "boolean" => json!(true),
            "integer" => json!(7),
            "number" => json!(1.5),
            "array" => json!(["x"]),
            other => panic!("type {other} not sampled"),
        });
    }
    let mut bad = vec![json!({"x": 1})];
    if !types.contains(&"string") {
        bad.push(json!("x"));
    }
    if schema["minimum"] == json!(0) {
        bad.push(json!(-1));
    }
    (ok, bad)
}

#[test]
fn every_input_schema_is_its_handlers_argument_type() {
    for tool in TOOLS {
        let name = tool.name;
        let probe = probe_of(name).unwrap_or_else(|| panic!("{name}: no argument type"));
        let props = (tool.input)();
        let mut published: Vec<&str> = props.iter().map(|(k, _)| *k).collect();
        let mut fields = probe.fields.clone();
        published.sort();
        fields.sort();
        assert_eq!(
            published, fields,
            "{name}: schema properties vs type fields"
        );
        let parse = |v: &Value| (probe.parses)(v);
        let sample = |k: &str, v: &Value| -> Value {
            let mut o: serde_json::Map<String, Value> = tool
                .required
                .iter()
                .map(|r| {
                    let schema = &props.iter().find(|(p, _)| p == r).unwrap().1;
                    (r.to_string(), samples(schema).0[0].clone())
                })
                .collect();
            o.insert(k.to_string(), v.clone());
            Value::Object(o)
        };
        // Only the required fields: enough.
        let minimal = sample("_", &Value::Null);
        let mut minimal = minimal.as_object().unwrap().clone();
        minimal.remove("_");
        parse(&Value::Object(minimal.clone())).unwrap_or_else(|e| panic!("{name}: {e}"));
        // Each required field left out: refused.
        for r in tool.required {
            let mut less = minimal.clone();
            less.remove(*r);
            assert!(
                parse(&Value::Object(less)).is_err(),
                "{name}: {r} is published as required but the type does not need it"
            );
        }
        // Each property with each value its schema allows: taken; with others: refused.
        for (k, schema) in &props {
            let (ok, bad) = samples(schema);
            for v in ok {
                parse(&sample(k, &v)).unwrap_or_else(|e| panic!("{name}.{k} = {v}: {e}"));
            }
            for v in bad {
                assert!(
                    parse(&sample(k, &v)).is_err(),
                    "{name}.{k} = {v}: taken, but the schema does not allow it"
                );
            }
        }
        // A property no schema names: refused.
        assert!(parse(&sample("bogus", &json!(1))).is_err(), "{name}: bogus");
    }
}
