//! `#{window_layout}` to a size-free pane tree.
//!
//! Owns: parsing tmux's layout string (`csum,WxH,X,Y{...}` / `[...]` / `,ID`) and rendering
//! it as `{%1,[%2,%3]}` (`{}` side by side, `[]` stacked, leaves pane ids). Invariant: no
//! cell sizes survive, so a terminal resize never changes the rendering; malformed input is
//! an error, never a partial tree.

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Pane(u32),
    Row(Vec<Node>),
    Col(Vec<Node>),
}

pub fn parse(layout: &str) -> Result<Node, String> {
    let b = layout.as_bytes();
    // Skip the 4-hex-digit checksum and its comma.
    let comma = layout.find(',').ok_or("no checksum")?;
    let mut p = Parser { b, i: comma + 1 };
    let node = p.cell()?;
    if p.i != b.len() {
        return Err(format!("trailing text at {}", p.i));
    }
    Ok(node)
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn num(&mut self) -> Result<u32, String> {
        let s = self.i;
        while self.i < self.b.len() && self.b[self.i].is_ascii_digit() {
            self.i += 1;
        }
        std::str::from_utf8(&self.b[s..self.i])
            .ok()
            .and_then(|x| x.parse().ok())
            .ok_or_else(|| format!("expected a number at {s}"))
    }
    fn eat(&mut self, c: u8) -> Result<(), String> {
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected '{}' at {}", c as char, self.i))
        }
    }
    fn cell(&mut self) -> Result<Node, String> {
        self.num()?;
        self.eat(b'x')?;
        self.num()?;
        self.eat(b',')?;
        self.num()?;
        self.eat(b',')?;
        self.num()?;
        match self.b.get(self.i) {
            Some(b',') => {
                self.i += 1;
                Ok(Node::Pane(self.num()?))
            }
            Some(&open @ (b'{' | b'[')) => {
                self.i += 1;
                let close = if open == b'{' { b'}' } else { b']' };
                let mut kids = vec![self.cell()?];
                while self.b.get(self.i) == Some(&b',') {
                    self.i += 1;
                    kids.push(self.cell()?);
                }
                self.eat(close)?;
                Ok(if open == b'{' {
                    Node::Row(kids)
                } else {
                    Node::Col(kids)
                })
            }
            _ => Err(format!("unexpected end of cell at {}", self.i)),
        }
    }
}

pub fn render(n: &Node) -> String {
    match n {
        Node::Pane(id) => format!("%{id}"),
        Node::Row(k) => format!("{{{}}}", k.iter().map(render).collect::<Vec<_>>().join(",")),
        Node::Col(k) => format!("[{}]", k.iter().map(render).collect::<Vec<_>>().join(",")),
    }
}

/// Parse and render in one step.
pub fn tree(layout: &str) -> Result<String, String> {
    parse(layout).map(|n| render(&n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_trees() {
        assert_eq!(tree("b25d,80x24,0,0,0").unwrap(), "%0");
        assert_eq!(
            tree("d67e,80x24,0,0{40x24,0,0,0,39x24,41,0[39x12,41,0,1,39x11,41,13,2]}").unwrap(),
            "{%0,[%1,%2]}"
        );
        assert!(tree("d67e,80x24,0,0{40x24").is_err());
        assert!(tree("").is_err());
    }

    #[test]
    fn sizes_do_not_matter() {
        assert_eq!(
            tree("aaaa,200x50,0,0[200x25,0,0,3,200x24,0,26,4]").unwrap(),
            tree("bbbb,80x24,0,0[80x12,0,0,3,80x11,0,13,4]").unwrap()
        );
    }
}
