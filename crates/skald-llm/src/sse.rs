//! Incremental Server-Sent Events parser over arbitrary byte chunks.
//!
//! Network chunks split lines anywhere (even between `\r` and `\n`), so the parser keeps the
//! unfinished line and only hands out whole events. Complete lines inside a chunk are parsed in
//! place without copying.

/// One dispatched event. `data` is the `data:` lines joined with `\n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The `event:` field, empty when absent (the default `message` type).
    pub event: &'a str,
    pub data: &'a str,
}

#[derive(Debug, Default)]
pub struct SseParser {
    /// The unfinished line carried over from the previous chunk.
    partial: Vec<u8>,
    data: String,
    event: String,
    has_data: bool,
    /// The previous chunk ended in `\r`; a leading `\n` in the next one belongs to it.
    pending_cr: bool,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds one network chunk, calling `on_event` for every event it completes.
    pub fn feed(&mut self, mut bytes: &[u8], on_event: &mut impl FnMut(SseEvent<'_>)) {
        if self.pending_cr {
            self.pending_cr = false;
            if let [b'\n', rest @ ..] = bytes {
                bytes = rest;
            }
        }
        while let Some(pos) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            let line_end = pos;
            let mut next = pos + 1;
            if bytes[pos] == b'\r' {
                if next < bytes.len() {
                    if bytes[next] == b'\n' {
                        next += 1;
                    }
                } else {
                    self.pending_cr = true;
                }
            }
            if self.partial.is_empty() {
                self.line(&bytes[..line_end], on_event);
            } else {
                let mut line = std::mem::take(&mut self.partial);
                line.extend_from_slice(&bytes[..line_end]);
                self.line(&line, on_event);
                line.clear();
                self.partial = line;
            }
            bytes = &bytes[next..];
        }
        self.partial.extend_from_slice(bytes);
    }

    /// End of stream: a last event without its closing blank line is still delivered.
    pub fn finish(&mut self, on_event: &mut impl FnMut(SseEvent<'_>)) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line, on_event);
        }
        self.dispatch(on_event);
    }

    fn line(&mut self, line: &[u8], on_event: &mut impl FnMut(SseEvent<'_>)) {
        if line.is_empty() {
            self.dispatch(on_event);
            return;
        }
        if line[0] == b':' {
            return; // comment / keep-alive
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.has_data = true;
                push_utf8(&mut self.data, value);
            }
            b"event" => {
                self.event.clear();
                push_utf8(&mut self.event, value);
            }
            _ => {} // id, retry and unknown fields do not matter for chat completions
        }
    }

    fn dispatch(&mut self, on_event: &mut impl FnMut(SseEvent<'_>)) {
        if self.has_data {
            on_event(SseEvent { event: &self.event, data: &self.data });
        }
        self.data.clear();
        self.event.clear();
        self.has_data = false;
    }
}

fn push_utf8(out: &mut String, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(s) => out.push_str(s),
        Err(_) => out.push_str(&String::from_utf8_lossy(bytes)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn parse_chunks(chunks: &[&[u8]]) -> Vec<(String, String)> {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        let mut cb = |e: SseEvent<'_>| out.push((e.event.to_owned(), e.data.to_owned()));
        for c in chunks {
            p.feed(c, &mut cb);
        }
        p.finish(&mut cb);
        out
    }

    fn datas(chunks: &[&[u8]]) -> Vec<String> {
        parse_chunks(chunks).into_iter().map(|(_, d)| d).collect()
    }

    #[test]
    fn basic_events_with_and_without_space() {
        assert_eq!(datas(&[b"data: a\n\ndata:b\n\n"]), vec!["a", "b"]);
    }

    #[test]
    fn comments_and_other_fields_are_ignored() {
        let got = parse_chunks(&[b": keep-alive\n\nid: 3\nretry: 10\nevent: error\ndata: x\n\n"]);
        assert_eq!(got, vec![("error".to_owned(), "x".to_owned())]);
    }

    #[test]
    fn crlf_and_lone_cr_line_endings() {
        assert_eq!(datas(&[b"data: a\r\n\r\ndata: b\r\rdata: c\n\n"]), vec!["a", "b", "c"]);
    }

    #[test]
    fn crlf_split_between_chunks_is_one_line_ending() {
        assert_eq!(datas(&[b"data: a\r", b"\n\r", b"\ndata: b\r\n\r\n"]), vec!["a", "b"]);
    }

    #[test]
    fn lines_split_anywhere_across_chunks() {
        let full = b"data: {\"x\":1}\n\ndata: {\"y\":\"\xc3\xa9\"}\n\n";
        let expected = vec!["{\"x\":1}".to_owned(), "{\"y\":\"\u{e9}\"}".to_owned()];
        for split in 0..full.len() {
            let (a, b) = full.split_at(split);
            assert_eq!(datas(&[a, b]), expected, "split at {split}");
        }
        let bytes: Vec<&[u8]> = full.chunks(1).collect();
        assert_eq!(datas(&bytes), expected);
    }

    #[test]
    fn multi_line_data_is_joined_with_newline() {
        assert_eq!(datas(&[b"data: one\ndata: two\n\n"]), vec!["one\ntwo"]);
    }

    #[test]
    fn last_event_without_blank_line_is_flushed_on_finish() {
        assert_eq!(datas(&[b"data: a\n\ndata: [DONE]"]), vec!["a", "[DONE]"]);
    }

    #[test]
    fn blank_lines_without_data_dispatch_nothing() {
        assert!(datas(&[b"\n\n\n: x\n\n"]).is_empty());
    }
}
