//! Bounded capture of a process's output stream: the first and last bytes, and the total.

use std::collections::VecDeque;

use tokio::io::{AsyncRead, AsyncReadExt};

/// Keeps at most `cap` bytes of the start and `cap` of the end, so any later budget <= `cap`
/// can show both ends of an arbitrarily long output.
pub(crate) struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: usize,
    cap: usize,
}

impl Capture {
    pub(crate) fn new(cap: usize) -> Self {
        Self { head: Vec::new(), tail: VecDeque::new(), total: 0, cap }
    }

    pub(crate) fn total(&self) -> usize {
        self.total
    }

    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len();
        let room = self.cap - self.head.len();
        if room > 0 {
            let take = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.len() >= self.cap {
            self.tail.clear();
            bytes = &bytes[bytes.len() - self.cap..];
        }
        self.tail.extend(bytes);
        let excess = self.tail.len().saturating_sub(self.cap);
        self.tail.drain(..excess);
    }

    /// The last `n` bytes of the whole stream (`n` <= cap and <= total).
    fn last(&self, n: usize) -> Vec<u8> {
        let start = self.total - n;
        if start >= self.head.len() {
            self.tail.iter().skip(self.tail.len() - n).copied().collect()
        } else {
            // Nothing was dropped between head and tail, so they are contiguous.
            let mut out = self.head[start..].to_vec();
            out.extend(self.tail.iter());
            out
        }
    }

    /// The stream as text within `budget` bytes: complete, or head + marker + tail.
    pub(crate) fn render(&self, budget: usize) -> String {
        let budget = budget.min(self.cap);
        if self.total <= budget {
            let mut all = self.head.clone();
            all.extend(self.tail.iter());
            return String::from_utf8_lossy(&all).into_owned();
        }
        let first = budget / 2;
        let last = budget - first;
        format!(
            "{}\n[… output truncated: {} bytes total, showing first {first} and last {last}]\n{}",
            String::from_utf8_lossy(&self.head[..first]),
            self.total,
            String::from_utf8_lossy(&self.last(last)),
        )
    }
}

/// How to share `budget` between two streams: a small one keeps everything, the big one gets
/// the rest; two big ones split evenly.
pub(crate) fn split_budget(a: usize, b: usize, budget: usize) -> (usize, usize) {
    let half = budget / 2;
    if a + b <= budget {
        (a, b)
    } else if a <= half {
        (a, budget - a)
    } else if b <= half {
        (budget - b, b)
    } else {
        (half, budget - half)
    }
}

/// Reads a stream to its end (or first error) into `capture`.
pub(crate) async fn pump(stream: Option<impl AsyncRead + Unpin>, capture: &mut Capture) {
    let Some(mut stream) = stream else { return };
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => capture.push(&buf[..n]),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn head_and_tail_survive_many_small_pushes() {
        let mut c = Capture::new(10);
        for i in 0..1000u32 {
            c.push(format!("{:03}|", i % 1000).as_bytes());
        }
        assert_eq!(c.total(), 4000);
        let text = c.render(8);
        assert!(text.starts_with("000|"), "{text}");
        assert!(text.ends_with("999|"), "{text}");
        assert!(text.contains("4000 bytes total, showing first 4 and last 4"), "{text}");
    }

    #[test]
    fn tail_overlapping_head_is_contiguous() {
        let mut c = Capture::new(10);
        c.push(b"abcdefghijkl");
        let expected =
            "abcd\n[… output truncated: 12 bytes total, showing first 4 and last 4]\nijkl";
        assert_eq!(c.render(8), expected);
    }

    #[test]
    fn budget_goes_to_the_big_stream() {
        assert_eq!(split_budget(10, 3, 100), (10, 3));
        assert_eq!(split_budget(1000, 3, 100), (97, 3));
        assert_eq!(split_budget(1000, 1000, 100), (50, 50));
    }
}
