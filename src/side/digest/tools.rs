//! One-line summaries of tool calls, shared by every wire format.
//!
//! Owns: choosing the argument that says what a call does (`Bash` → its command, `Read`
//! → its path, `apply_patch` → the files it touches, ...). Invariant: a summary is built
//! from the call's own input only and is clipped by the digest; an input of an
//! unexpected shape gives an empty summary, never an error.

use serde_json::Value;

use super::model::{SUMMARY_CHARS, clip};

fn str_of<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| v.get(k).and_then(Value::as_str))
        .filter(|s| !s.trim().is_empty())
}

/// `["bash","-lc","cargo test"]` → `cargo test`; other arrays joined with spaces.
fn command_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Array(a) => {
            let words: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
            let shell = words
                .first()
                .is_some_and(|w| w.ends_with("sh") || w.ends_with("bash") || w.ends_with("zsh"));
            if shell && words.len() >= 3 && words[1].starts_with('-') {
                Some(words[2..].join(" "))
            } else {
                Some(words.join(" "))
            }
        }
        _ => None,
    }
}

/// The files an `apply_patch` body touches: `*** Update File: a.rs` lines.
pub fn patch_files(patch: &str) -> String {
    let files: Vec<&str> = patch
        .lines()
        .filter_map(|l| {
            l.strip_prefix("*** Update File: ")
                .or_else(|| l.strip_prefix("*** Add File: "))
                .or_else(|| l.strip_prefix("*** Delete File: "))
        })
        .map(str::trim)
        .take(8)
        .collect();
    files.join(", ")
}

/// What the call does, in a few words.
pub fn summarize(name: &str, input: &Value) -> String {
    let lower = name.to_ascii_lowercase();
    let s = match lower.as_str() {
        "bash" | "shell" | "exec_command" | "local_shell" | "run_command" | "shell_command"
        | "unified_exec" => input
            .get("command")
            .or_else(|| input.get("cmd"))
            .and_then(command_of),
        "read" | "write" | "edit" | "multiedit" | "notebookedit" | "read_file" | "write_file"
        | "edit_file" | "view" => {
            str_of(input, &["file_path", "path", "notebook_path", "file"]).map(str::to_string)
        }
        "grep" | "glob" | "search" | "rg" => {
            str_of(input, &["pattern", "query"]).map(|p| match str_of(input, &["path"]) {
                Some(path) => format!("{p} in {path}"),
                None => p.to_string(),
            })
        }
        "todowrite" => input
            .get("todos")
            .and_then(Value::as_array)
            .map(|a| format!("{} items", a.len())),
        "update_plan" => input
            .get("plan")
            .and_then(Value::as_array)
            .map(|a| format!("{} steps", a.len())),
        "taskupdate" => {
            let id = str_of(input, &["taskId", "id", "task_id"]).unwrap_or("?");
            let st = str_of(input, &["status"]).unwrap_or("");
            Some(format!("#{id} {st}").trim().to_string())
        }
        "apply_patch" => str_of(input, &["input", "patch"]).map(patch_files),
        _ => None,
    };
    let s = s.or_else(|| {
        str_of(
            input,
            &[
                "command",
                "cmd",
                "file_path",
                "path",
                "pattern",
                "query",
                "url",
                "description",
                "subject",
                "prompt",
                "skill",
                "title",
            ],
        )
        .map(str::to_string)
    });
    let s = s.or_else(|| {
        input
            .as_object()
            .and_then(|m| m.values().find_map(Value::as_str))
            .map(str::to_string)
    });
    clip(&s.unwrap_or_default(), SUMMARY_CHARS)
}

/// Summarize arguments that arrive as a JSON string (Codex, dsh); a string that is not
/// JSON is its own summary (Codex's freeform `apply_patch` input).
pub fn summarize_str(name: &str, args: &str) -> (String, Option<Value>) {
    match serde_json::from_str::<Value>(args) {
        Ok(v @ Value::Object(_)) => (summarize(name, &v), Some(v)),
        _ if name == "apply_patch" || args.contains("*** Begin Patch") => {
            (clip(&patch_files(args), SUMMARY_CHARS), None)
        }
        _ => (clip(args, SUMMARY_CHARS), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summaries() {
        assert_eq!(
            summarize("Bash", &json!({"command":"cargo test","description":"x"})),
            "cargo test"
        );
        assert_eq!(
            summarize("Read", &json!({"file_path":"/a/b.rs"})),
            "/a/b.rs"
        );
        assert_eq!(
            summarize("exec_command", &json!({"cmd":["bash","-lc","ls -la"]})),
            "ls -la"
        );
        assert_eq!(
            summarize("TaskUpdate", &json!({"taskId":"3","status":"completed"})),
            "#3 completed"
        );
        assert_eq!(summarize("Mystery", &json!({"zzz":"hello"})), "hello");
        assert_eq!(summarize("Mystery", &json!([1, 2])), "");
        assert_eq!(
            summarize_str(
                "apply_patch",
                "*** Begin Patch\n*** Update File: src/a.rs\n@@\n*** End Patch"
            )
            .0,
            "src/a.rs"
        );
    }
}
