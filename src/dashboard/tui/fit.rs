//! Text cut to a number of terminal columns, and the colours the view may use.
//!
//! Invariants: a cut string is never wider than its column (wide characters, CJK and
//! emoji, count two; a cut shows `…`), so no cell spills into the next; with `NO_COLOR`
//! no colour is drawn at all, and otherwise only what the client's terminal takes (as
//! tmux reports its features: `RGB`, `256`, else the 16 basic colours).

use ratatui::style::{Color, Modifier, Style};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Columns `s` takes.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// `s` in at most `w` columns (`…` where cut).
pub fn fit(s: &str, w: usize) -> String {
    if width(s) <= w {
        return s.to_string();
    }
    if w == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if used + cw > w - 1 {
            break;
        }
        out.push(c);
        used += cw;
    }
    out.push('…');
    out
}

/// How many colours the client's terminal shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    None,
    Basic,
    Indexed,
    Rgb,
}

impl Depth {
    /// `NO_COLOR` (any non-empty value) wins; else tmux's features of the client
    /// (`#{client_termfeatures}`).
    pub fn choose(no_color: Option<&str>, features: &str) -> Depth {
        if no_color.is_some_and(|v| !v.is_empty()) {
            return Depth::None;
        }
        let has = |f: &str| features.split(',').any(|x| x.trim() == f);
        if has("RGB") {
            Depth::Rgb
        } else if has("256") {
            Depth::Indexed
        } else {
            Depth::Basic
        }
    }
}

/// The styles of the view at one colour depth.
#[derive(Debug, Clone, Copy)]
pub struct Palette {
    pub depth: Depth,
}

impl Palette {
    fn color(&self, basic: Color, indexed: u8, rgb: (u8, u8, u8)) -> Style {
        match self.depth {
            Depth::None => Style::default(),
            Depth::Basic => Style::default().fg(basic),
            Depth::Indexed => Style::default().fg(Color::Indexed(indexed)),
            Depth::Rgb => Style::default().fg(Color::Rgb(rgb.0, rgb.1, rgb.2)),
        }
    }

    /// A state's word: needs-you stands out (bold even without colour).
    pub fn state(&self, state: &str) -> Style {
        match state {
            "needs-you" => self
                .color(Color::Red, 196, (235, 80, 80))
                .add_modifier(Modifier::BOLD),
            "working" => self.color(Color::Yellow, 214, (230, 180, 60)),
            "done" => self.color(Color::Green, 40, (90, 200, 110)),
            "unknown" => self.color(Color::Magenta, 170, (190, 120, 200)),
            "exited" => self.dim(),
            _ => Style::default(),
        }
    }

    pub fn dim(&self) -> Style {
        match self.depth {
            Depth::None => Style::default(),
            _ => self.color(Color::DarkGray, 244, (130, 130, 130)),
        }
    }

    pub fn header(&self) -> Style {
        Style::default().add_modifier(Modifier::BOLD)
    }

    pub fn selected(&self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }

    pub fn good(&self) -> Style {
        self.color(Color::Green, 40, (90, 200, 110))
    }

    pub fn bad(&self) -> Style {
        self.color(Color::Red, 196, (235, 80, 80))
            .add_modifier(Modifier::BOLD)
    }

    pub fn bar(&self) -> Style {
        match self.depth {
            Depth::None => Style::default().add_modifier(Modifier::REVERSED),
            _ => Style::default()
                .add_modifier(Modifier::BOLD)
                .patch(self.color(Color::Cyan, 45, (80, 190, 230))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_characters_never_overflow() {
        assert_eq!(fit("abc", 5), "abc");
        assert_eq!(fit("abcdef", 4), "abc…");
        // Each CJK character is two columns: three of them do not fit in five.
        assert_eq!(fit("漢字漢字", 5), "漢字…");
        assert_eq!(width(&fit("漢字漢字", 5)), 5);
        assert_eq!(fit("🚀🚀🚀", 4), "🚀…");
        assert!(width(&fit("a🚀b", 2)) <= 2);
        assert_eq!(fit("x", 0), "");
    }

    #[test]
    fn colours_follow_no_color_and_the_client() {
        assert_eq!(Depth::choose(Some("1"), "RGB"), Depth::None);
        assert_eq!(Depth::choose(Some(""), "RGB,256"), Depth::Rgb);
        assert_eq!(Depth::choose(None, "256,title"), Depth::Indexed);
        assert_eq!(Depth::choose(None, ""), Depth::Basic);
    }
}
