//! What code comments may cite: only what the repository holds (a `docs/` page and its
//! section, a file of the tree) or a public upstream source (a project's file by name, a
//! GitHub thread as `owner/repo#N`). A reader of the code cannot open the notes it was
//! first written from, the agent rig's own README, a design draft or our issue tracker,
//! so a comment that cites them fails here (the facts they held are in `docs/`).
//!
//! Scanned: the comments of `src/`, `tests/` (not `tests/fixtures/`), `examples/` and
//! `scripts/`; `docs/<page>.md` and `docs/<page>.md#<section>` are checked in those
//! comments and in README.md: the page must exist and the section must be one of its
//! headings.

use std::path::{Path, PathBuf};

use regex::Regex;

/// Files others are restructuring, whose old citations are rewritten when that work is
/// merged. This list must shrink to empty: a file here that no longer cites anything
/// forbidden fails the test, so it leaves the list with its last citation.
const NOT_YET_REWRITTEN: &[&str] = &[];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every source file scanned, as a path relative to the repository.
fn sources() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                if !p.ends_with("tests/fixtures") {
                    walk(&p, out);
                }
            } else if p.extension().is_some_and(|x| x == "rs" || x == "sh") {
                out.push(p.strip_prefix(root()).unwrap_or(&p).to_path_buf());
            }
        }
    }
    let mut out = Vec::new();
    for d in ["src", "tests", "examples", "scripts"] {
        walk(&root().join(d), &mut out);
    }
    out.sort();
    out
}

/// The comment part of each line (1-based line numbers): after `//` in Rust, after a `#`
/// that starts a line or follows a blank in a shell script (its embedded Python too).
fn comments(path: &Path, text: &str) -> Vec<(usize, String)> {
    let shell = path.extension().is_some_and(|x| x == "sh");
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let at = if shell {
                line.char_indices()
                    .find(|&(j, c)| {
                        c == '#'
                            && line[..j]
                                .chars()
                                .next_back()
                                .is_none_or(char::is_whitespace)
                    })
                    .map(|(j, _)| j + 1)
            } else {
                line.find("//").map(|j| j + 2)
            };
            at.map(|j| (i + 1, line[j..].to_string()))
        })
        .collect()
}

/// What in one comment cites something the repository does not hold (empty: nothing).
/// `rust`: the comment is Rust's (in a script, a path to the shared checkouts beside the
/// repository is a default location, not a citation).
fn offences(comment: &str, rust: bool) -> Vec<String> {
    struct Rules {
        notes: Regex,
        rig_readme: Regex,
        design: Regex,
        reference: Regex,
        section_sign: Regex,
        issue: Regex,
        shared: Regex,
    }
    static RULES: std::sync::OnceLock<Rules> = std::sync::OnceLock::new();
    let r = RULES.get_or_init(|| Rules {
        notes: Regex::new(r"\b(?:harnesses|tmux|prior-art)\.md").unwrap(),
        rig_readme: Regex::new(r"(?i)\brig(?:'s)? README").unwrap(),
        design: Regex::new(r"\bDESIGN\b").unwrap(),
        reference: Regex::new(r"\breference/[\w.-]+\.md").unwrap(),
        section_sign: Regex::new("\u{a7}").unwrap(),
        // An issue of another project is named with it: `owner/repo issue 12`.
        issue: Regex::new(r"(?i)(?:([\w.-]+/[\w.-]+)\s+)?\bissues?\s+#?\d+").unwrap(),
        shared: Regex::new(r"\.\./shared/").unwrap(),
    });
    let mut found = Vec::new();
    for m in r.notes.find_iter(comment) {
        if !comment[..m.start()].ends_with("docs/") {
            found.push(m.as_str().to_string());
        }
    }
    for c in r.issue.captures_iter(comment) {
        if c.get(1).is_none() {
            found.push(c[0].to_string());
        }
    }
    let mut rules = vec![&r.rig_readme, &r.design, &r.reference, &r.section_sign];
    if rust {
        rules.push(&r.shared);
    }
    for re in rules {
        found.extend(re.find_iter(comment).map(|m| m.as_str().to_string()));
    }
    found
}

/// GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces
/// as `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a docs page, or `None` when there is no such page.
fn anchors(page: &str) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(root().join("docs").join(page)).ok()?;
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.push(slug(line.trim_start_matches('#')));
        }
    }
    Some(out)
}

/// Each `docs/<page>.md[#<section>]` in `text` that names no page, or no section of it.
fn broken_links(text: &str) -> Vec<String> {
    static LINK: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let link = LINK.get_or_init(|| Regex::new(r"\bdocs/([\w.-]+\.md)(?:#([\w-]+))?").unwrap());
    let mut bad = Vec::new();
    for c in link.captures_iter(text) {
        match (anchors(&c[1]), c.get(2)) {
            (None, _) => bad.push(format!("{}: no such page", &c[0])),
            (Some(a), Some(s)) if !a.iter().any(|x| x == s.as_str()) => {
                bad.push(format!("{}: no such section", &c[0]))
            }
            _ => {}
        }
    }
    bad
}

#[test]
fn comments_cite_only_what_the_repository_holds() {
    let mut bad = Vec::new();
    let mut still = Vec::new();
    for path in sources() {
        let text = std::fs::read_to_string(root().join(&path)).unwrap();
        let rust = path.extension().is_some_and(|x| x == "rs");
        let name = path.to_string_lossy().into_owned();
        let allowed = NOT_YET_REWRITTEN.contains(&name.as_str());
        for (n, comment) in comments(&path, &text) {
            let found = offences(&comment, rust);
            if !found.is_empty() {
                if allowed {
                    still.push(name.clone());
                } else {
                    bad.push(format!("{name}:{n}: {found:?} in {:?}", comment.trim()));
                }
            }
            for b in broken_links(&comment) {
                bad.push(format!("{name}:{n}: {b}"));
            }
        }
    }
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    for b in broken_links(&readme) {
        bad.push(format!("README.md: {b}"));
    }
    for f in NOT_YET_REWRITTEN {
        if !still.iter().any(|s| s == f) {
            bad.push(format!(
                "{f} cites nothing forbidden any more: take it off NOT_YET_REWRITTEN"
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "cite docs/<page>.md#<section> instead (or just say why):\n{}",
        bad.join("\n")
    );
}

#[test]
fn forbidden_citations_are_recognised() {
    let sign = "\u{a7}";
    for c in [
        format!("facts (harnesses.md {sign}1.5)"),
        "measured on tmux 3.3a (tmux.md 14)".to_string(),
        "see the rig README, \"Codex hook trust\"".to_string(),
        "DESIGN's layout table".to_string(),
        "../shared/reference/harnesses.md".to_string(),
        "one round trip (issue 13)".to_string(),
        "Issue 10 item 1".to_string(),
        format!("{sign}9"),
    ] {
        assert!(!offences(&c, true).is_empty(), "{c}");
    }
    for c in [
        "docs/harnesses.md#claude-code-hooks",
        "docs/tmux-versions.md: the header changed in 3.6",
        "tmux's own compat/imsg.c",
        "anthropics/claude-code issue 24398",
        "`Task #12 created successfully`",
        "a design that keeps the pane",
    ] {
        assert!(offences(c, true).is_empty(), "{c}");
    }
    assert!(offences("default ../shared/rig beside the repository", false).is_empty());
    assert_eq!(
        slug(" MCP tools (`tmuxmate mcp`)"),
        "mcp-tools-tmuxmate-mcp",
        "GitHub's anchor"
    );
    assert!(broken_links("docs/json.md#mcp-tools-tmuxmate-mcp").is_empty());
    assert_eq!(broken_links("docs/json.md#no-such-heading").len(), 1);
    assert_eq!(broken_links("docs/nothing-here.md").len(), 1);
}
