//! Drawing the view: a title bar with the counts, the table of agents (columns chosen
//! by the width: the narrowest terminal keeps state, age, agent, project and what it is
//! doing), the watch line, and a line for the outcome, the prompt or the keys.
//!
//! Invariants: every cell is cut to its column with [`fit`] before it is drawn, so a wide
//! character never pushes a column; only the rows on screen are built (200 agents cost
//! what a page costs); the drawing changes nothing but the page size and where the table
//! sits, which the mouse needs.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Row as TRow, Table};

use super::app::{App, Mode};
use super::fit::{Palette, fit, width};
use crate::dashboard::row::Row;
use crate::dashboard::text;
use crate::state::list::human;

/// A column: its title, its width range and how a row fills it.
struct Col {
    title: &'static str,
    min: u16,
    max: u16,
    cell: fn(&Row, u64) -> String,
}

const STATE: Col = Col {
    title: "STATE",
    min: 9,
    max: 9,
    cell: |r, _| r.state.to_string(),
};
const AGE: Col = Col {
    title: "AGE",
    min: 4,
    max: 4,
    cell: |r, now| human(now.saturating_sub(r.since) / 1000),
};
const AGENT: Col = Col {
    title: "AGENT",
    min: 10,
    max: 22,
    cell: |r, _| {
        let h = if r.harness.is_empty() {
            "?"
        } else {
            &r.harness
        };
        if r.name.is_empty() {
            h.to_string()
        } else {
            format!("{h} {}", r.name)
        }
    },
};
const PROJECT: Col = Col {
    title: "PROJECT",
    min: 10,
    max: 30,
    cell: |r, _| text::place(r),
};
const WHERE: Col = Col {
    title: "WHERE",
    min: 8,
    max: 18,
    cell: |r, _| match (&r.host, &r.socket) {
        (Some(h), _) => format!("{h}:{}", r.target),
        (None, Some(_)) => format!("{} (-S)", r.target),
        _ => r.target.clone(),
    },
};
const TODO: Col = Col {
    title: "TODO",
    min: 5,
    max: 7,
    cell: |r, _| {
        r.todos
            .as_ref()
            .map(|t| format!("{}/{}", t.done, t.total))
            .unwrap_or_default()
    },
};
const INBOX: Col = Col {
    title: "INBOX",
    min: 7,
    max: 9,
    cell: |r, _| {
        let p = &r.pending;
        match (p.watch, p.notes) {
            (0, 0) => String::new(),
            (w, 0) => format!("{w} res"),
            (0, n) => format!("{n} note"),
            (w, n) => format!("{w}r {n}n"),
        }
    },
};
const CTX: Col = Col {
    title: "CONTEXT",
    min: 9,
    max: 16,
    cell: |r, _| text::usage(r).trim_start_matches("ctx ").to_string(),
};

/// What the NOW column needs at least before another column is added.
const NOW_MIN: u16 = 24;

/// The columns that fit `w`, in order, with their widths; NOW (what the agent is doing)
/// takes what is left.
fn columns(w: u16, rows: &[&Row], now: u64) -> (Vec<(&'static Col, u16)>, u16) {
    // Added in this order while NOW keeps its room.
    let order: [&'static Col; 8] = [&STATE, &AGE, &AGENT, &PROJECT, &TODO, &INBOX, &WHERE, &CTX];
    let mut chosen: Vec<(&'static Col, u16)> = Vec::new();
    let mut used: u16 = 0;
    for c in order {
        let content = rows
            .iter()
            .map(|r| width(&(c.cell)(r, now)))
            .max()
            .unwrap_or(0)
            .max(c.title.len()) as u16;
        let cw = content.clamp(c.min, c.max);
        // The first columns always; the others when NOW keeps its room.
        let essential = chosen.len() < 4;
        if !essential && used + cw + 1 + NOW_MIN > w {
            continue;
        }
        // An optional column nobody uses is left out.
        if !essential
            && content <= c.title.len() as u16
            && rows.iter().all(|r| (c.cell)(r, now).is_empty())
        {
            continue;
        }
        used += cw + 1;
        chosen.push((c, cw));
    }
    // Narrow terminals: shrink AGENT and PROJECT before NOW goes under its room.
    let mut now_w = w.saturating_sub(used);
    for i in [3usize, 2] {
        if now_w >= NOW_MIN {
            break;
        }
        if let Some((c, cw)) = chosen.get_mut(i) {
            let give = (NOW_MIN - now_w).min(cw.saturating_sub(c.min));
            *cw -= give;
            now_w += give;
        }
    }
    // Back in the table's order: NOW after PROJECT.
    let rank = |c: &Col| match c.title {
        "STATE" => 0,
        "AGE" => 1,
        "AGENT" => 2,
        "PROJECT" => 3,
        "TODO" => 5,
        "INBOX" => 6,
        "CONTEXT" => 7,
        _ => 8,
    };
    chosen.sort_by_key(|(c, _)| rank(c));
    (chosen, now_w)
}

fn now_cell(r: &Row) -> String {
    if !r.why.is_empty() {
        return r.why.clone();
    }
    if r.doing.is_empty()
        && let Some(t) = r.todos.as_ref().and_then(|t| t.now.clone())
    {
        return t;
    }
    r.doing.clone()
}

pub fn draw(f: &mut Frame, app: &mut App, pal: &Palette, now: u64) {
    let area = f.area();
    if area.height < 4 || area.width < 20 {
        f.render_widget(
            Paragraph::new(fit("tmuxmate: too small", area.width.into())),
            area,
        );
        return;
    }
    let title = Rect { height: 1, ..area };
    let table = Rect {
        y: area.y + 1,
        height: area.height - 3,
        ..area
    };
    let watch = Rect {
        y: area.y + area.height - 2,
        height: 1,
        ..area
    };
    let bottom = Rect {
        y: area.y + area.height - 1,
        height: 1,
        ..area
    };
    draw_title(f, app, pal, title);
    draw_table(f, app, pal, table, now);
    draw_watch(f, app, pal, watch, now);
    draw_bottom(f, app, pal, bottom);
    if app.mode == Mode::Help {
        draw_help(f, area);
    }
}

fn draw_title(f: &mut Frame, app: &App, pal: &Palette, area: Rect) {
    let n = app.board.agents.len();
    let mut left = format!(" tmuxmate · {n} agent{}", if n == 1 { "" } else { "s" });
    let counts = app.board.counts.text();
    if !counts.is_empty() {
        left.push_str(" · ");
        left.push_str(&counts);
    }
    let mut right = String::new();
    if !app.filter.is_empty() {
        right.push_str(&format!("filter: {}  ", app.filter));
    }
    right.push_str("? keys ");
    let w = usize::from(area.width);
    let right = fit(&right, w / 2);
    let left = fit(&left, w.saturating_sub(width(&right) + 1));
    let pad = w.saturating_sub(width(&left) + width(&right));
    let line = format!("{left}{}{right}", " ".repeat(pad));
    f.render_widget(Paragraph::new(line).style(pal.bar()), area);
}

fn draw_table(f: &mut Frame, app: &mut App, pal: &Palette, area: Rect, now: u64) {
    app.page = usize::from(area.height.saturating_sub(1)).max(1);
    app.table_top = area.y + 1;
    app.scroll();
    let visible: Vec<&Row> = app
        .shown
        .iter()
        .skip(app.offset)
        .take(app.page)
        .filter_map(|&i| app.board.agents.get(i))
        .collect();
    if app.shown.is_empty() {
        let msg = if app.board.agents.is_empty() {
            "no agents yet: an agent appears once its CLI sends a state event (`tmuxmate install claude|codex|gemini` wires them)"
        } else {
            "no agent matches the filter (/ to change it, Escape in the filter to clear it)"
        };
        f.render_widget(
            Paragraph::new(fit(msg, area.width.into())).style(pal.dim()),
            area,
        );
        return;
    }
    let (cols, now_w) = columns(area.width, &visible, now);
    let mut widths: Vec<Constraint> = Vec::new();
    let mut header: Vec<String> = Vec::new();
    let mut now_at = cols.len();
    for (i, (c, w)) in cols.iter().enumerate() {
        if c.title == "TODO" || c.title == "INBOX" || c.title == "CONTEXT" || c.title == "WHERE" {
            now_at = now_at.min(i);
        }
        widths.push(Constraint::Length(*w));
        header.push(fit(c.title, usize::from(*w)));
    }
    // NOW's width: what the others left, less the spacing before it.
    let now_w = now_w.saturating_sub(1).max(1);
    widths.insert(now_at, Constraint::Length(now_w));
    header.insert(now_at, fit("NOW", now_w.into()));
    let rows: Vec<TRow> = visible
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut cells: Vec<Span> = cols
                .iter()
                .map(|(c, w)| {
                    let t = fit(&(c.cell)(r, now), usize::from(*w));
                    match c.title {
                        "STATE" => Span::styled(t, pal.state(r.state)),
                        "AGE" | "WHERE" => Span::styled(t, pal.dim()),
                        _ => Span::raw(t),
                    }
                })
                .collect();
            let now_style = if r.why.is_empty() {
                Style::default()
            } else {
                pal.state(r.state)
            };
            cells.insert(
                now_at,
                Span::styled(fit(&now_cell(r), now_w.into()), now_style),
            );
            let row = TRow::new(cells);
            if app.offset + i == app.selected {
                row.style(pal.selected())
            } else {
                row
            }
        })
        .collect();
    let t = Table::new(rows, widths)
        .header(TRow::new(header).style(pal.header()))
        .column_spacing(1);
    f.render_widget(t, area);
}

fn draw_watch(f: &mut Frame, app: &App, pal: &Palette, area: Rect, now: u64) {
    let w = &app.board.watch;
    let mut parts = vec![];
    let counts = crate::watch::status::text(w.running, w.done, 0);
    parts.push(if counts.is_empty() {
        "watch: none running".to_string()
    } else {
        counts
    });
    for j in &w.jobs {
        parts.push(format!(
            "{} {} {}",
            j.job_id,
            j.command,
            human(now.saturating_sub(j.start) / 1000)
        ));
    }
    for u in &app.board.unreached_hosts {
        parts.push(format!("host {} not reached", u.host));
    }
    let line = fit(&parts.join(" │ "), area.width.into());
    f.render_widget(Paragraph::new(line).style(pal.dim()), area);
}

fn draw_bottom(f: &mut Frame, app: &App, pal: &Palette, area: Rect) {
    let w = usize::from(area.width);
    let line = match &app.mode {
        Mode::Filter => Line::from(fit(&format!("/{}", app.filter), w)),
        Mode::Ask { input, .. } => {
            let who = app.current().map(super::app::label).unwrap_or_default();
            let prompt = format!("ask {who}: ");
            // The end of a long line stays in view.
            let room = w.saturating_sub(width(&prompt) + 1);
            let shown: String = if width(input) > room {
                let skip = input.chars().count().saturating_sub(room);
                input.chars().skip(skip).collect()
            } else {
                input.clone()
            };
            Line::from(vec![
                Span::styled(prompt, pal.header()),
                Span::raw(fit(&shown, room)),
            ])
        }
        Mode::Confirm { name, .. } => Line::from(Span::styled(
            fit(
                &format!(
                    "stop agent {name}? its session and every process of it end. y: stop, any other key: no"
                ),
                w,
            ),
            pal.bad(),
        )),
        _ => match &app.message {
            Some((m, good)) => Line::from(Span::styled(
                fit(m, w),
                if *good { pal.good() } else { pal.bad() },
            )),
            None => Line::from(Span::styled(
                fit(
                    "↑↓ select  ⏎ go to it  a ask  s side chat  x stop  / filter  ? keys  q quit",
                    w,
                ),
                pal.dim(),
            )),
        },
    };
    f.render_widget(Paragraph::new(line), area);
}

const HELP: &[(&str, &str)] = &[
    ("↑ ↓ j k", "select an agent (PgUp PgDn Home End)"),
    ("Enter", "go to its pane (this client switches to it)"),
    (
        "a",
        "ask it one line (sent as the bridge sends: never into a dialog)",
    ),
    ("s", "open its side chat"),
    (
        "x",
        "stop it (agents started by `tmuxmate agent start`; asks first)",
    ),
    ("/", "filter the rows (Enter keeps it, Escape clears it)"),
    ("mouse", "click selects, the wheel scrolls"),
    ("q Esc", "close"),
];

fn draw_help(f: &mut Frame, area: Rect) {
    let w = area.width.min(72);
    let h = (HELP.len() as u16 + 4).min(area.height);
    let r = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    let inner = usize::from(w.saturating_sub(2));
    let mut lines: Vec<Line> = HELP
        .iter()
        .map(|(k, what)| Line::from(fit(&format!("{k:<8} {what}"), inner)))
        .collect();
    lines.push(Line::from(""));
    lines.push(Line::from(fit("any key closes this", inner)));
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title(" keys ")),
        r,
    );
}
