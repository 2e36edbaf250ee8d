//! A small line diff for `--dry-run` (unified style, 3 lines of context).
//!
//! Invariant: the common prefix and suffix are cut before the LCS table, so a one-entry
//! change in a large `~/.claude.json` costs the changed region only.

fn lcs_ops<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<(char, &'a str)> {
    let (n, m) = (a.len(), b.len());
    if n * m > 4_000_000 {
        // Too large to align: show it as a replacement.
        let mut out: Vec<(char, &str)> = a.iter().map(|l| ('-', *l)).collect();
        out.extend(b.iter().map(|l| ('+', *l)));
        return out;
    }
    let mut t = vec![0u32; (n + 1) * (m + 1)];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            t[i * (m + 1) + j] = if a[i] == b[j] {
                t[(i + 1) * (m + 1) + j + 1] + 1
            } else {
                t[(i + 1) * (m + 1) + j].max(t[i * (m + 1) + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            out.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if j < m && (i == n || t[i * (m + 1) + j + 1] >= t[(i + 1) * (m + 1) + j]) {
            out.push(('+', b[j]));
            j += 1;
        } else {
            out.push(('-', a[i]));
            i += 1;
        }
    }
    out
}

/// Unified diff of `old` → `new` (None = file absent) under the given label.
pub fn unified(label: &str, old: Option<&str>, new: Option<&str>) -> String {
    let a: Vec<&str> = old.map(|s| s.lines().collect()).unwrap_or_default();
    let b: Vec<&str> = new.map(|s| s.lines().collect()).unwrap_or_default();
    let pre = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mut ops: Vec<(char, &str)> = a[..pre].iter().map(|l| (' ', *l)).collect();
    ops.extend(lcs_ops(&a[pre..a.len() - suf], &b[pre..b.len() - suf]));
    ops.extend(a[a.len() - suf..].iter().map(|l| (' ', *l)));
    let mut out = format!(
        "--- {}\n+++ {}\n",
        if old.is_some() { label } else { "/dev/null" },
        if new.is_some() { label } else { "/dev/null" }
    );
    if ops.is_empty() {
        return out;
    }
    // Print changed lines with 3 lines of context; elide the rest.
    let changed: Vec<bool> = ops.iter().map(|(k, _)| *k != ' ').collect();
    let near = |i: usize| {
        let lo = i.saturating_sub(3);
        let hi = (i + 3).min(ops.len() - 1);
        (lo..=hi).any(|k| changed[k])
    };
    let mut skipped = false;
    for (i, (k, l)) in ops.iter().enumerate() {
        if near(i) {
            if skipped {
                out.push_str("@@ … @@\n");
                skipped = false;
            }
            out.push_str(&format!("{k}{l}\n"));
        } else {
            skipped = true;
        }
    }
    if old.is_some()
        && new.is_some()
        && old.map(|s| s.ends_with('\n')) != new.map(|s| s.ends_with('\n'))
    {
        out.push_str("\\ (trailing newline differs)\n");
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn shows_added_lines_with_context() {
        let d = super::unified("f", Some("a\nb\nc\n"), Some("a\nb\nX\nc\n"));
        assert!(d.contains("+X\n"), "{d}");
        assert!(d.contains(" b\n"), "{d}");
        let d = super::unified("f", None, Some("new\n"));
        assert!(d.starts_with("--- /dev/null\n+++ f\n+new\n"), "{d}");
    }
}
