//! The one place that knows how a value reaches tmux as exactly itself.
//!
//! Owns: [`Arg`], the only thing the tmux wrapper accepts as an argument, and [`Text`], a
//! value that came from a person, a model, a directory or a git ref (names, paths,
//! titles, messages, patterns, status values). Why a type: every tmux argument is read by
//! tmux's command parser (a trailing `;` ends the command and the next argument runs as a
//! new one) and some are format-expanded (`#{pane_id}` becomes an id, `#(cmd)` runs a
//! shell): docs/tmux-versions.md#traps-on-every-release.
//!
//! Invariants:
//! - A runtime string cannot become an `Arg` without saying what position it takes:
//!   [`Arg::literal`] (or [`Arg::id`]) for one tmux does not expand (targets, option values,
//!   channels, the `sh -c` command of new-window/split-window), [`Arg::expanded`] for one it
//!   does (`new-window -n`, `new-session -s`, `-c`, `rename-window`, `select-pane -T`,
//!   `display-message -p`), [`Arg::drawn`] for one it expands and then draws with styles
//!   (menu items, popup titles, status fragments), [`Arg::ours`] for
//!   formats and command lists built only from our literals and tmux-generated ids.
//!   Names and paths from people are first checked into a [`Text`].
//! - Every runtime encoding survives tmux's argument parser unchanged: a trailing `;`
//!   is written `\;` (tmux strips the `;` and turns the backslash before it into `;`,
//!   so `T;` arrives as `T;` for every `T`, including `T` ending in `\`).
//! - `expanded` doubles every `#` (`##` is tmux's literal `#`), so nothing in the value is a
//!   format, a `#(...)`, a style or a one-letter alias like `#S`.
//! - `Text` never holds a newline, NUL or other control character, nor invalid UTF-8:
//!   tmux would show, split or mangle them. Construction refuses them with a message.

use std::borrow::Cow;
use std::fmt;

/// One tmux argument: a literal of ours, a tmux-generated id, or an encoded [`Text`].
#[derive(Clone, PartialEq, Eq)]
pub struct Arg<'a>(Cow<'a, str>);

impl fmt::Debug for Arg<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl From<&'static str> for Arg<'_> {
    /// A literal written in tmuxmate's source: a command, a flag, a format of ours, or the
    /// command separator `;`. Passed verbatim.
    fn from(s: &'static str) -> Self {
        Arg(Cow::Borrowed(s))
    }
}

impl<'a> From<&'a Arg<'a>> for Arg<'a> {
    fn from(a: &'a Arg<'a>) -> Self {
        Arg(Cow::Borrowed(a.as_str()))
    }
}

impl<'a> Arg<'a> {
    /// The command separator of a tmux command list.
    pub const SEP: Arg<'static> = Arg(Cow::Borrowed(";"));

    /// Runtime text for a position tmux does not format-expand: a target or id tmux
    /// generated, an option value, a wait-for channel, a shell command line for the command
    /// position of `new-window`/`split-window`/`new-session` (handed to `sh -c` unexpanded;
    /// its words already shell-quoted). Arrives as exactly this text.
    pub fn literal(s: &'a str) -> Arg<'a> {
        Arg(escape_semicolon(Cow::Borrowed(s)))
    }

    /// The same argument, owning its text (to keep it in a command list built in parts).
    pub fn into_owned(self) -> Arg<'static> {
        Arg(Cow::Owned(self.0.into_owned()))
    }

    /// `literal`, named for what tmux generated (`%N`, `@N`, `$N`, `$N:`, numbers).
    pub fn id(s: &'a str) -> Arg<'a> {
        Arg::literal(s)
    }

    /// Runtime text for a position tmux format-expands: arrives as exactly this text.
    pub fn expanded(s: &str) -> Arg<'static> {
        Arg(escape_semicolon(Cow::Owned(escape_format(s))))
    }

    /// Runtime text for a position tmux format-expands and then draws with styles (menu
    /// items, popup and menu titles, messages on a client): every `#` doubled, so the
    /// expansion leaves `#`, or a `##[` the drawing shows as `#[`.
    pub fn drawn(s: &str) -> Arg<'static> {
        Arg(escape_semicolon(Cow::Owned(escape_draw(s))))
    }

    /// A format, target or command line built only from our literals and tmux-generated
    /// ids (never from user text). Passed verbatim, because it may contain formats.
    pub fn ours(s: impl Into<Cow<'a, str>>) -> Arg<'a> {
        Arg(s.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Why a value cannot be given to tmux as itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextError {
    pub what: String,
    pub reason: String,
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.what, self.reason)
    }
}

/// A value from a person, a model, a directory or a git ref, checked to be representable.
#[derive(Clone, PartialEq, Eq)]
pub struct Text(String);

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Text {
    /// `value` as a tmux value; `what` names it in the refusal ("the window name").
    pub fn new(what: &str, value: &str) -> Result<Text, TextError> {
        if let Some(c) = value.chars().find(|c| c.is_control()) {
            let reason = match c {
                '\n' | '\r' => "contains a line break, which tmux cannot hold in one line: \
                                use a single line"
                    .to_string(),
                _ => format!(
                    "contains the control character U+{:04X}, which tmux would not show as \
                     itself: remove it",
                    c as u32
                ),
            };
            return Err(TextError {
                what: what.into(),
                reason,
            });
        }
        Ok(Text(value.to_string()))
    }

    /// A path or OS string: refused when it is not valid UTF-8 (tmux stores UTF-8 only).
    pub fn from_os(what: &str, value: &std::ffi::OsStr) -> Result<Text, TextError> {
        match value.to_str() {
            Some(s) => Text::new(what, s),
            None => Err(TextError {
                what: what.into(),
                reason: format!(
                    "is not valid UTF-8 ({}), which tmux cannot hold: rename it or pick another",
                    value.to_string_lossy()
                ),
            }),
        }
    }

    /// Text that tmuxmate itself produced from data (a digest line, a report): control
    /// characters become spaces instead of being refused, since nobody can retype them.
    pub fn lossy(value: &str) -> Text {
        Text(
            value
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect(),
        )
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// For a position tmux does not format-expand: arrives as exactly this text.
    pub fn literal(&self) -> Arg<'_> {
        Arg::literal(&self.0)
    }

    /// For a position tmux format-expands: every `#` doubled, then as `literal`.
    pub fn expanded(&self) -> Arg<'static> {
        Arg::expanded(&self.0)
    }
}

/// What tmux's format expansion turns back into `s`: every `#` doubled (`##` is a literal
/// `#`), except a run of `#` right before `[`, which expansion keeps verbatim for the
/// status line's style parser (measured on tmux 3.3a: `#[x]` and `##[x]` stay as they are).
pub fn escape_format(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 8);
    let mut run = 0usize;
    for c in s.chars() {
        if c == '#' {
            run += 1;
            continue;
        }
        let n = if c == '[' { run } else { run * 2 };
        o.extend(std::iter::repeat_n('#', n));
        run = 0;
        o.push(c);
    }
    o.extend(std::iter::repeat_n('#', run * 2));
    o
}

/// What the status line's drawing shows as `s` after expansion inserted it unexpanded
/// (an option value inside `#{@name}`): every `#` doubled, so `##[` draws as `#[`, not a
/// style.
pub fn escape_draw(s: &str) -> String {
    s.replace('#', "##")
}

/// A trailing `;` as `\;`: tmux's argument parser ends a command at an argument's
/// trailing `;` unless a backslash precedes it, and then keeps `;` in the backslash's place.
fn escape_semicolon(s: Cow<'_, str>) -> Cow<'_, str> {
    match s.strip_suffix(';') {
        Some(head) => Cow::Owned(format!("{head}\\;")),
        None => s,
    }
}

/// What a list of arguments for one tmux call can be: arrays or slices of literals of
/// ours, or of [`Arg`]s. A `&String` or a `&str` borrowed from data is neither, so it does
/// not compile.
pub trait Args {
    fn argv(&self) -> Vec<&str>;
}

impl<const N: usize> Args for [&'static str; N] {
    fn argv(&self) -> Vec<&str> {
        self.to_vec()
    }
}

impl Args for [&'static str] {
    fn argv(&self) -> Vec<&str> {
        self.to_vec()
    }
}

impl Args for Vec<&'static str> {
    fn argv(&self) -> Vec<&str> {
        self.clone()
    }
}

impl<const N: usize> Args for [Arg<'_>; N] {
    fn argv(&self) -> Vec<&str> {
        self.iter().map(|a| a.as_str()).collect()
    }
}

impl Args for [Arg<'_>] {
    fn argv(&self) -> Vec<&str> {
        self.iter().map(|a| a.as_str()).collect()
    }
}

impl Args for Vec<Arg<'_>> {
    fn argv(&self) -> Vec<&str> {
        self.iter().map(|a| a.as_str()).collect()
    }
}

/// `targs!["set-option", "-t", Arg::id(&p), text.literal()]`: literals and `Arg`s in one list.
#[macro_export]
macro_rules! targs {
    ($($e:expr),* $(,)?) => {
        [$($crate::tmux::Arg::from($e)),*]
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tmux 3.3a's cmd_parse_from_arguments for one argument: (text kept, ends command).
    fn tmux_parses(arg: &str) -> (String, bool) {
        let mut s = arg.to_string();
        if s.ends_with(';') {
            s.pop();
            if s.ends_with('\\') {
                s.pop();
                s.push(';');
                return (s, false);
            }
            return (s, true);
        }
        (s, false)
    }

    #[test]
    fn every_trailing_semicolon_survives_the_parser() {
        for v in [
            "x;", ";", "a;b", "\\;", "x\\;", "x\\\\;", ";;", "plain", "", "\\",
        ] {
            let t = Text::new("v", v).unwrap();
            let (kept, ends) = tmux_parses(t.literal().as_str());
            assert_eq!((kept.as_str(), ends), (v, false), "{v:?}");
        }
    }

    #[test]
    fn expanded_doubles_every_hash() {
        let t = Text::new("v", "#{pane_id}#(touch X)##x;").unwrap();
        assert_eq!(t.expanded().as_str(), "##{pane_id}##(touch X)####x\\;");
        // Expansion keeps a run of '#' before '[' as it is.
        assert_eq!(escape_format("#[x]a##[y]#"), "#[x]a##[y]##");
    }

    #[test]
    fn control_characters_and_bad_utf8_are_refused() {
        assert!(
            Text::new("the name", "a\nb")
                .unwrap_err()
                .to_string()
                .contains("line break")
        );
        assert!(Text::new("the name", "a\u{1b}b").is_err());
        use std::os::unix::ffi::OsStrExt;
        let bad = std::ffi::OsStr::from_bytes(b"a\xffb");
        assert!(
            Text::from_os("the path", bad)
                .unwrap_err()
                .reason
                .contains("UTF-8")
        );
        assert_eq!(Text::lossy("a\nb").as_str(), "a b");
    }

    #[test]
    fn ids_cannot_split_a_command() {
        assert_eq!(Arg::id("%3").as_str(), "%3");
        assert_eq!(Arg::id("x;").as_str(), "x\\;");
    }
}
