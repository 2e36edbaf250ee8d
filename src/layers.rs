//! The shape of the module tree, checked: each capability is one folder over shared
//! layers, the shared layers import no capability, and no module imports one that
//! imports it back (neither folders nor files), so every module can be read knowing only
//! what is below it.
//!
//! How the graph is read: a module is a file (`mod.rs` is its folder's module); it imports
//! the modules its code names through `crate::`, `super::` and `self::` paths (a path is
//! taken to the longest prefix that is a module, so `crate::tmux::Arg` is `tmux`), outside
//! comments and outside its `#[cfg(test)] mod tests`. `cmd/` is the composition layer that
//! wires the capabilities together; `main.rs` only declares the tree.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use regex::Regex;

/// The layers every capability may use and none of which may use a capability.
const SHARED: &[&str] = &["tmux", "sys", "harness", "error", "op"];

/// Modules (a file's module path joined with `/`) that are still part of a circle of
/// files, each to leave this list with the work that breaks it. This list must shrink to
/// empty: a module here that is in no circle fails the test.
const CIRCLES_NOT_YET_BROKEN: &[&str] = &[];

type Module = Vec<String>;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every source file with its module path (`src/watch/remote/mod.rs` is `watch/remote`).
fn files() -> BTreeMap<Module, PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut paths = Vec::new();
    walk(&src(), &mut paths);
    let root = src();
    paths
        .into_iter()
        .filter_map(|p| {
            let rel = p.strip_prefix(&root).ok()?.with_extension("");
            let mut m: Module = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if m.last().is_some_and(|l| l == "mod") {
                m.pop();
            }
            if m == ["main"] {
                m.clear();
            }
            Some((m, p))
        })
        .collect()
}

/// The code of a file that counts: no comment lines, no trailing comments, no test module.
fn code(text: &str) -> String {
    let body = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    body.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| match l.find("// ") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module paths `code` names, relative paths made absolute from `at`.
fn named(code: &str, at: &Module) -> Vec<Module> {
    static RES: std::sync::OnceLock<(Regex, Regex)> = std::sync::OnceLock::new();
    let (path, group) = RES.get_or_init(|| {
        (
            Regex::new(r"\b(crate|(?:super::)+|self::)((?:::)?\w+(?:::\w+)*)").unwrap(),
            Regex::new(r"use (crate|(?:super::)*super|self)((?:::\w+)*)::\{([^}]*)\}").unwrap(),
        )
    });
    let base = |head: &str| -> Module {
        if head == "crate" {
            return Vec::new();
        }
        let ups = head.matches("super").count();
        at[..at.len().saturating_sub(ups)].to_vec()
    };
    let mut out = Vec::new();
    for c in path.captures_iter(code) {
        let mut m = base(&c[1]);
        m.extend(
            c[2].split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string),
        );
        out.push(m);
    }
    for c in group.captures_iter(code) {
        let mut pre = base(&c[1]);
        pre.extend(
            c[2].split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string),
        );
        for part in c[3].split(',') {
            let first = part.trim().split("::").next().unwrap_or("").trim();
            if !first.is_empty() && first != "self" {
                let mut m = pre.clone();
                m.push(first.to_string());
                out.push(m);
            }
        }
    }
    out
}

/// Module -> the modules it imports (itself and its own ancestors left out).
fn graph() -> BTreeMap<Module, BTreeSet<Module>> {
    let files = files();
    let mut g = BTreeMap::new();
    for (m, p) in &files {
        let text = std::fs::read_to_string(p).unwrap();
        let mut to = BTreeSet::new();
        for n in named(&code(&text), m) {
            let Some(hit) = (1..=n.len())
                .rev()
                .map(|k| n[..k].to_vec())
                .find(|k| files.contains_key(k))
            else {
                continue;
            };
            if hit != *m && !m.starts_with(&hit) {
                to.insert(hit);
            }
        }
        g.insert(m.clone(), to);
    }
    g
}

/// The same graph one level up: folder (or top-level file) -> folders it imports.
fn folders(g: &BTreeMap<Module, BTreeSet<Module>>) -> BTreeMap<String, BTreeSet<String>> {
    let top = |m: &Module| m.first().cloned().unwrap_or_else(|| "main".into());
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, to) in g {
        let entry = out.entry(top(a)).or_default();
        for b in to {
            if top(b) != top(a) {
                entry.insert(top(b));
            }
        }
    }
    out
}

/// The circles of a graph: its strongly connected components of more than one node.
fn circles<N: Ord + Clone>(g: &BTreeMap<N, BTreeSet<N>>) -> Vec<Vec<N>> {
    // Kosaraju: finish order on g, then components on the reversed graph.
    let nodes: Vec<N> = g.keys().cloned().collect();
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    for n in &nodes {
        if seen.contains(n) {
            continue;
        }
        let mut stack = vec![(n.clone(), false)];
        while let Some((v, done)) = stack.pop() {
            if done {
                order.push(v);
                continue;
            }
            if !seen.insert(v.clone()) {
                continue;
            }
            stack.push((v.clone(), true));
            for w in g.get(&v).into_iter().flatten() {
                if !seen.contains(w) {
                    stack.push((w.clone(), false));
                }
            }
        }
    }
    let mut rev: BTreeMap<N, Vec<N>> = BTreeMap::new();
    for (a, to) in g {
        for b in to {
            rev.entry(b.clone()).or_default().push(a.clone());
        }
    }
    let mut placed = BTreeSet::new();
    let mut out = Vec::new();
    for n in order.into_iter().rev() {
        if placed.contains(&n) {
            continue;
        }
        let mut comp = Vec::new();
        let mut stack = vec![n];
        while let Some(v) = stack.pop() {
            if !placed.insert(v.clone()) {
                continue;
            }
            comp.push(v.clone());
            stack.extend(rev.get(&v).into_iter().flatten().cloned());
        }
        if comp.len() > 1 {
            comp.sort();
            out.push(comp);
        }
    }
    out
}

#[test]
fn the_shared_layers_import_no_capability() {
    let g = graph();
    let mut wrong = Vec::new();
    for (a, to) in &g {
        if !a.first().is_some_and(|t| SHARED.contains(&t.as_str())) {
            continue;
        }
        for b in to {
            let t = b.first().map(String::as_str).unwrap_or("main");
            if !SHARED.contains(&t) {
                wrong.push(format!("{} imports {}", a.join("/"), b.join("/")));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "a shared layer ({}) must not import a capability: move the shared piece down, or \
         pass what it needs in:\n{}",
        SHARED.join(", "),
        wrong.join("\n")
    );
}

#[test]
fn no_folder_imports_one_that_imports_it_back() {
    let f = folders(&graph());
    let c = circles(&f);
    let text: Vec<String> = c
        .iter()
        .map(|comp| {
            let edges: Vec<String> = comp
                .iter()
                .flat_map(|a| {
                    f[a].iter()
                        .filter(|b| comp.contains(b))
                        .map(move |b| format!("{a} -> {b}"))
                })
                .collect();
            edges.join(", ")
        })
        .collect();
    assert!(
        c.is_empty(),
        "folders in a circle (each names a module of the next): {}",
        text.join("; ")
    );
    // The graph is read at all: the tree's known arrows are there.
    assert!(f["cmd"].contains("location") && f["tmux"].contains("sys"));
}

#[test]
fn no_file_imports_one_that_imports_it_back() {
    let g = graph();
    let in_circles: BTreeSet<String> = circles(&g)
        .into_iter()
        .flatten()
        .map(|m| m.join("/"))
        .collect();
    let allowed: BTreeSet<String> = CIRCLES_NOT_YET_BROKEN
        .iter()
        .map(|s| s.to_string())
        .collect();
    let new: Vec<&String> = in_circles.difference(&allowed).collect();
    assert!(
        new.is_empty(),
        "modules in a circle of files: {new:?}; move what both need into a third module"
    );
    let broken: Vec<&String> = allowed.difference(&in_circles).collect();
    assert!(
        broken.is_empty(),
        "{broken:?} left every circle: take them out of CIRCLES_NOT_YET_BROKEN"
    );
}

#[test]
fn a_circle_is_found_and_a_chain_is_not() {
    let g: BTreeMap<u8, BTreeSet<u8>> = [
        (1, [2].into()),
        (2, [3].into()),
        (3, [1].into()),
        (4, [1].into()),
        (5, BTreeSet::new()),
    ]
    .into();
    assert_eq!(circles(&g), vec![vec![1, 2, 3]]);
    let chain: BTreeMap<u8, BTreeSet<u8>> =
        [(1, [2].into()), (2, [3].into()), (3, BTreeSet::new())].into();
    assert!(circles(&chain).is_empty());
}

#[test]
fn paths_are_read_from_code_only() {
    let at: Module = vec!["watch".into(), "poller".into()];
    let code = code(
        "use super::job::{self, Job};\n// crate::side::x in a comment\nlet a = crate::tmux::Arg::id(x); // super::tidy\nuse crate::control::{list, run};\n",
    );
    let mut got: Vec<String> = named(&code, &at).iter().map(|m| m.join("/")).collect();
    got.sort();
    got.dedup();
    assert_eq!(
        got,
        vec![
            "control",
            "control/list",
            "control/run",
            "tmux/Arg/id",
            "watch/job",
            "watch/job/Job",
        ]
    );
}
