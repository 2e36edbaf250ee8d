//! The live view's state and its keys: the board, the selection (kept on the same agent
//! as rows move), the filter, the line being typed, and what each key asks for.
//!
//! Invariants: pure (no tmux, no terminal): a key becomes an [`Effect`] that the loop
//! carries out; the selection is always a shown row (or none when none is shown); what is
//! typed is one line of printable text.

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};

use super::super::row::{Board, Row};

/// The longest line `a` takes (a question, not a document).
pub const ASK_MAX: usize = 2000;

#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    Normal,
    /// Typing the filter.
    Filter,
    /// Typing a question for the agent in `pane`.
    Ask {
        pane: String,
        input: String,
    },
    /// `x` pressed on a managed agent: y stops it.
    Confirm {
        pane: String,
        name: String,
    },
    Help,
}

/// What the loop does after a key.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    None,
    Quit,
    Jump(Row),
    Ask(Row, String),
    Side(Row),
    Stop(Row),
}

pub struct App {
    pub board: Board,
    /// Indexes into `board.agents` of the rows the filter shows.
    pub shown: Vec<usize>,
    /// Index into `shown`.
    pub selected: usize,
    /// The person moved the selection off the top row: it then stays on its agent while
    /// rows reorder. Untouched, it stays on the top row, so the agent that comes up as
    /// needing the person is the one Enter goes to.
    pinned: bool,
    /// The first shown row on screen.
    pub offset: usize,
    pub filter: String,
    pub mode: Mode,
    /// The last outcome (text, good).
    pub message: Option<(String, bool)>,
    /// Rows of the table on screen (set by the drawing).
    pub page: usize,
    /// Where the first row is drawn (set by the drawing): for the mouse.
    pub table_top: u16,
}

impl App {
    pub fn new(filter: &str) -> App {
        App {
            board: Board::default(),
            shown: Vec::new(),
            selected: 0,
            pinned: false,
            offset: 0,
            filter: filter.to_string(),
            mode: Mode::Normal,
            message: None,
            page: 10,
            table_top: 0,
        }
    }

    pub fn current(&self) -> Option<&Row> {
        self.shown
            .get(self.selected)
            .and_then(|&i| self.board.agents.get(i))
    }

    /// A new board: a selection the person moved stays on its agent when it is still
    /// shown; an untouched one stays on the top row.
    pub fn set_board(&mut self, b: Board) {
        let keep = self
            .current()
            .filter(|_| self.pinned)
            .map(|r| (r.pane_id.clone(), r.socket.clone(), r.host.clone()));
        if !self.pinned {
            self.selected = 0;
        }
        self.board = b;
        self.refilter(keep);
    }

    fn refilter(&mut self, keep: Option<(String, Option<String>, Option<String>)>) {
        let needle = self.filter.trim().to_lowercase();
        self.shown = self
            .board
            .agents
            .iter()
            .enumerate()
            .filter(|(_, r)| r.matches(&needle))
            .map(|(i, _)| i)
            .collect();
        if let Some(k) = keep
            && let Some(pos) = self.shown.iter().position(|&i| {
                let r = &self.board.agents[i];
                r.pane_id == k.0 && r.socket == k.1 && r.host == k.2
            })
        {
            self.selected = pos;
        }
        self.selected = self.selected.min(self.shown.len().saturating_sub(1));
        self.scroll();
    }

    /// Keep the selection on screen.
    pub fn scroll(&mut self) {
        let page = self.page.max(1);
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + page {
            self.offset = self.selected + 1 - page;
        }
        let last_top = self.shown.len().saturating_sub(page);
        self.offset = self.offset.min(last_top);
    }

    fn step(&mut self, by: isize) {
        if self.shown.is_empty() {
            return;
        }
        let max = self.shown.len() as isize - 1;
        self.selected = (self.selected as isize + by).clamp(0, max) as usize;
        self.pinned = self.selected != 0;
        self.scroll();
    }

    pub fn key(&mut self, k: KeyEvent) -> Effect {
        if k.kind == KeyEventKind::Release {
            return Effect::None;
        }
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && k.code == KeyCode::Char('c') {
            return Effect::Quit;
        }
        match self.mode.clone() {
            Mode::Help => {
                self.mode = Mode::Normal;
                Effect::None
            }
            Mode::Filter => {
                match k.code {
                    KeyCode::Enter => self.mode = Mode::Normal,
                    KeyCode::Esc => {
                        self.filter.clear();
                        self.mode = Mode::Normal;
                    }
                    KeyCode::Backspace => {
                        self.filter.pop();
                    }
                    KeyCode::Char('u') if ctrl => self.filter.clear(),
                    KeyCode::Char(c) if !ctrl && !c.is_control() && self.filter.len() < 200 => {
                        self.filter.push(c)
                    }
                    _ => return Effect::None,
                }
                let keep = self
                    .current()
                    .map(|r| (r.pane_id.clone(), r.socket.clone(), r.host.clone()));
                self.refilter(keep);
                Effect::None
            }
            Mode::Ask { pane, mut input } => match k.code {
                KeyCode::Esc => {
                    self.mode = Mode::Normal;
                    self.message = Some(("nothing asked".into(), true));
                    Effect::None
                }
                KeyCode::Enter => {
                    self.mode = Mode::Normal;
                    let row = self.row_of(&pane);
                    match row {
                        Some(r) if !input.trim().is_empty() => {
                            self.message = Some((format!("asking {}…", label(&r)), true));
                            Effect::Ask(r, input)
                        }
                        Some(_) => {
                            self.message = Some(("nothing asked (the line is empty)".into(), true));
                            Effect::None
                        }
                        None => {
                            self.message =
                                Some(("that agent is gone; nothing asked".into(), false));
                            Effect::None
                        }
                    }
                }
                KeyCode::Backspace => {
                    input.pop();
                    self.mode = Mode::Ask { pane, input };
                    Effect::None
                }
                KeyCode::Char('u') if ctrl => {
                    self.mode = Mode::Ask {
                        pane,
                        input: String::new(),
                    };
                    Effect::None
                }
                KeyCode::Char(c) if !ctrl && !c.is_control() && input.len() < ASK_MAX => {
                    input.push(c);
                    self.mode = Mode::Ask { pane, input };
                    Effect::None
                }
                _ => Effect::None,
            },
            Mode::Confirm { pane, name } => {
                self.mode = Mode::Normal;
                match (k.code, self.row_of(&pane)) {
                    (KeyCode::Char('y') | KeyCode::Char('Y'), Some(r)) => {
                        self.message = Some((format!("stopping {name}…"), true));
                        Effect::Stop(r)
                    }
                    _ => {
                        self.message = Some((format!("{name} not stopped"), true));
                        Effect::None
                    }
                }
            }
            Mode::Normal => self.normal(k),
        }
    }

    fn row_of(&self, pane: &str) -> Option<Row> {
        self.current()
            .filter(|r| r.pane_id == pane)
            .cloned()
            .or_else(|| {
                self.board
                    .agents
                    .iter()
                    .find(|r| r.pane_id == pane && r.here())
                    .cloned()
            })
    }

    fn normal(&mut self, k: KeyEvent) -> Effect {
        let page = self.page.max(1) as isize;
        match k.code {
            KeyCode::Char('q') | KeyCode::Esc => return Effect::Quit,
            KeyCode::Down | KeyCode::Char('j') => self.step(1),
            KeyCode::Up | KeyCode::Char('k') => self.step(-1),
            KeyCode::PageDown => self.step(page),
            KeyCode::PageUp => self.step(-page),
            KeyCode::Home | KeyCode::Char('g') => self.step(isize::MIN / 2),
            KeyCode::End | KeyCode::Char('G') => self.step(isize::MAX / 2),
            KeyCode::Char('/') => self.mode = Mode::Filter,
            KeyCode::Char('?') => self.mode = Mode::Help,
            KeyCode::Enter => return self.on_row(|r| Ok(Effect::Jump(r.clone()))),
            KeyCode::Char('s') => return self.on_row(|r| Ok(Effect::Side(r.clone()))),
            KeyCode::Char('a') => {
                // The question is typed first; the effect comes with Enter.
                if let Effect::Ask(r, _) =
                    self.on_row(|r| Ok(Effect::Ask(r.clone(), String::new())))
                {
                    self.mode = Mode::Ask {
                        pane: r.pane_id,
                        input: String::new(),
                    };
                }
            }
            KeyCode::Char('x') => {
                if let Some(r) = self.current().cloned() {
                    if !r.managed {
                        self.message = Some((
                            format!(
                                "{} was not started by `tmuxmate agent start`: stop it in its pane",
                                label(&r)
                            ),
                            false,
                        ));
                    } else if let Err(e) = reachable(&r) {
                        self.message = Some((e, false));
                    } else {
                        self.mode = Mode::Confirm {
                            pane: r.pane_id.clone(),
                            name: r.name.clone(),
                        };
                    }
                }
            }
            _ => {}
        }
        Effect::None
    }

    /// The effect on the selected row, or why it cannot be (a row on another server or
    /// host).
    fn on_row(&mut self, f: impl FnOnce(&Row) -> Result<Effect, String>) -> Effect {
        let Some(r) = self.current().cloned() else {
            return Effect::None;
        };
        match reachable(&r).and_then(|()| f(&r)) {
            Ok(e) => e,
            Err(e) => {
                self.message = Some((e, false));
                Effect::None
            }
        }
    }

    pub fn mouse(&mut self, m: MouseEvent) {
        match m.kind {
            MouseEventKind::ScrollDown => self.step(1),
            MouseEventKind::ScrollUp => self.step(-1),
            MouseEventKind::Down(MouseButton::Left) if m.row >= self.table_top => {
                let i = self.offset + usize::from(m.row - self.table_top);
                if i < self.shown.len() && i < self.offset + self.page {
                    self.selected = i;
                    self.pinned = i != 0;
                }
            }
            _ => {}
        }
    }
}

/// `claude api`, how a row is named in messages.
pub fn label(r: &Row) -> String {
    match (r.harness.as_str(), r.name.as_str()) {
        ("", "") => r.pane_id.clone(),
        (h, "") => format!("{h} {}", r.pane_id),
        ("", n) => n.to_string(),
        (h, n) => format!("{h} {n}"),
    }
}

/// Whether the dashboard can act on `r` (its server is the one it talks to).
pub fn reachable(r: &Row) -> Result<(), String> {
    match (&r.host, &r.socket) {
        (Some(h), _) => Err(format!(
            "{} runs on host {h}: act on it there (`ssh {h}`, then `tmuxmate dashboard`)",
            label(r)
        )),
        (None, Some(s)) => Err(format!(
            "{} is on another tmux server: `tmux -S {s} attach -t {}`, or `tmuxmate -S {s} dashboard`",
            label(r),
            r.target
        )),
        (None, None) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::row::tests::row;
    use super::*;

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    fn board(states: &[&'static str]) -> Board {
        Board {
            agents: states
                .iter()
                .enumerate()
                .map(|(i, s)| row(&format!("%{i}"), s))
                .collect(),
            ..Board::default()
        }
    }

    #[test]
    fn the_selection_follows_its_agent_and_the_filter() {
        let mut a = App::new("");
        a.page = 2;
        a.set_board(board(&["needs-you", "working", "idle"]));
        a.key(key(KeyCode::Down));
        a.key(key(KeyCode::Down));
        assert_eq!(a.current().unwrap().pane_id, "%2");
        assert_eq!(a.offset, 1);
        // %2 moves to the top: the selection goes with it.
        let mut b = board(&["needs-you", "working", "idle"]);
        b.agents.rotate_right(1);
        a.set_board(b);
        assert_eq!(a.current().unwrap().pane_id, "%2");
        assert_eq!(a.selected, 0);
        a.key(key(KeyCode::Char('/')));
        for c in "WORK".chars() {
            a.key(key(KeyCode::Char(c)));
        }
        assert_eq!(a.shown.len(), 1);
        assert_eq!(a.current().unwrap().state, "working");
        a.key(key(KeyCode::Esc));
        assert_eq!(a.shown.len(), 3);
        assert_eq!(a.key(key(KeyCode::Char('q'))), Effect::Quit);
    }

    /// The wheel steps the selection; a click on a row selects it (and pins it there, as
    /// keys do); `s` opens the side chat of the selected row.
    #[test]
    fn the_mouse_selects_and_s_opens_the_side_chat() {
        let m = |kind, row| MouseEvent {
            kind,
            column: 3,
            row,
            modifiers: KeyModifiers::NONE,
        };
        let mut a = App::new("");
        a.page = 10;
        a.table_top = 2;
        a.set_board(board(&["needs-you", "working", "idle"]));
        a.mouse(m(MouseEventKind::ScrollDown, 0));
        assert_eq!(a.current().unwrap().pane_id, "%1");
        a.mouse(m(MouseEventKind::ScrollUp, 0));
        assert_eq!(a.current().unwrap().pane_id, "%0");
        a.mouse(m(MouseEventKind::Down(MouseButton::Left), 4));
        assert_eq!(a.current().unwrap().pane_id, "%2");
        // Above the table, and below the last row: nothing changes.
        a.mouse(m(MouseEventKind::Down(MouseButton::Left), 1));
        a.mouse(m(MouseEventKind::Down(MouseButton::Left), 9));
        assert_eq!(a.current().unwrap().pane_id, "%2");
        // Clicked, it stays on its agent when the rows reorder.
        let mut b = board(&["needs-you", "working", "idle"]);
        b.agents.rotate_right(1);
        a.set_board(b);
        assert_eq!(a.current().unwrap().pane_id, "%2");
        match a.key(key(KeyCode::Char('s'))) {
            Effect::Side(r) => assert_eq!(r.pane_id, "%2"),
            _ => panic!("s did not open the side chat"),
        }
    }

    /// Left where it was opened, the selection is the top row whatever comes up there: the
    /// agent that starts to need the person is the one Enter goes to.
    #[test]
    fn an_untouched_selection_stays_on_the_top_row() {
        let mut a = App::new("");
        a.set_board(board(&["working", "idle"]));
        assert_eq!(a.current().unwrap().pane_id, "%0");
        let mut b = board(&["working", "idle", "needs-you"]);
        b.agents.rotate_right(1);
        a.set_board(b);
        assert_eq!(a.current().unwrap().pane_id, "%2");
        assert_eq!(a.current().unwrap().state, "needs-you");
        // Down then Up: back on the top row, untouched again.
        a.key(key(KeyCode::Down));
        a.key(key(KeyCode::Up));
        let mut c = board(&["working", "idle", "needs-you"]);
        c.agents.rotate_right(2);
        a.set_board(c);
        assert_eq!(a.current().unwrap().pane_id, "%1");
    }

    #[test]
    fn ask_takes_a_line_and_stop_needs_a_managed_agent_and_a_yes() {
        let mut a = App::new("");
        let mut b = board(&["idle", "idle"]);
        b.agents[1].managed = true;
        b.agents[1].name = "fixer".into();
        a.set_board(b);
        assert_eq!(a.key(key(KeyCode::Char('a'))), Effect::None);
        for c in "hi?".chars() {
            a.key(key(KeyCode::Char(c)));
        }
        a.key(key(KeyCode::Backspace));
        match a.key(key(KeyCode::Enter)) {
            Effect::Ask(r, text) => assert_eq!((r.pane_id.as_str(), text.as_str()), ("%0", "hi")),
            e => panic!("{e:?}"),
        }
        assert_eq!(a.key(key(KeyCode::Char('x'))), Effect::None);
        assert!(!a.message.as_ref().unwrap().1, "unmanaged: refused");
        a.key(key(KeyCode::Down));
        a.key(key(KeyCode::Char('x')));
        assert!(matches!(a.mode, Mode::Confirm { .. }));
        assert_eq!(a.key(key(KeyCode::Char('n'))), Effect::None);
        a.key(key(KeyCode::Char('x')));
        assert!(matches!(a.key(key(KeyCode::Char('y'))), Effect::Stop(_)));
        // A row of another server: no jump, a message that says where it is.
        let mut c = board(&["needs-you"]);
        c.agents[0].socket = Some("/tmp/other".into());
        a.set_board(c);
        assert_eq!(a.key(key(KeyCode::Enter)), Effect::None);
        assert!(a.message.as_ref().unwrap().0.contains("-S /tmp/other"));
    }
}
