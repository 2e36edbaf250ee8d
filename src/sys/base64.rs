//! Standard base64 (RFC 4648) decoding, for the short `msg=` fields of terminal status
//! sequences.
//!
//! Invariants: bounded by its input; padding optional; any byte outside the alphabet
//! (whitespace included) makes the whole value undecodable (`None`), never a guess.

/// The bytes `text` encodes, or `None` when it is not base64.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    let t = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(t.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for b in t.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    // One leftover character cannot encode a byte.
    (bits < 6).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn decodes_padded_unpadded_and_refuses_others() {
        assert_eq!(decode("aGk=").unwrap(), b"hi");
        assert_eq!(decode("aGk").unwrap(), b"hi");
        assert_eq!(
            decode("YXBwcm92ZSBCYXNoOiBscw==").unwrap(),
            b"approve Bash: ls"
        );
        assert_eq!(decode("").unwrap(), b"");
        assert_eq!(decode("a"), None);
        assert_eq!(decode("a b"), None);
    }
}
