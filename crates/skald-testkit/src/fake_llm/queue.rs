//! The queues of scripted replies and the rule for which one serves a request.

use std::collections::{HashMap, VecDeque};

use super::reply::Reply;

/// A global FIFO plus per-model FIFOs; a model's own queue wins over the global one.
#[derive(Default, Debug)]
pub(crate) struct ReplyQueue {
    global: VecDeque<Reply>,
    by_model: HashMap<String, VecDeque<Reply>>,
}

impl ReplyQueue {
    pub(crate) fn push(&mut self, model: Option<&str>, reply: Reply) {
        match model {
            Some(m) => self.by_model.entry(m.to_owned()).or_default().push_back(reply),
            None => self.global.push_back(reply),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.global.len() + self.by_model.values().map(VecDeque::len).sum::<usize>()
    }

    /// Every queued reply with the model it is reserved for (global ones first).
    pub(crate) fn remaining(&self) -> Vec<(Option<&str>, &Reply)> {
        let global = self.global.iter().map(|r| (None, r));
        let mut models: Vec<&String> = self.by_model.keys().collect();
        models.sort();
        let by_model = models
            .into_iter()
            .flat_map(|m| self.by_model[m].iter().map(move |r| (Some(m.as_str()), r)));
        global.chain(by_model).collect()
    }

    pub(crate) fn clear(&mut self) {
        self.global.clear();
        self.by_model.clear();
    }

    /// Takes the reply that serves one request for `model`. A `Status` entry serves `times`
    /// requests before it is removed.
    pub(crate) fn take(&mut self, model: &str) -> Option<Reply> {
        let queue = match self.by_model.get_mut(model) {
            Some(q) if !q.is_empty() => q,
            _ => &mut self.global,
        };
        loop {
            match queue.front_mut() {
                None => return None,
                Some(Reply::Status { times, .. }) if *times == 0 => {
                    queue.pop_front();
                }
                Some(Reply::Status { times, .. }) if *times > 1 => {
                    *times -= 1;
                    return queue.front().cloned();
                }
                Some(_) => return queue.pop_front(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_serves_times_then_next() {
        let mut q = ReplyQueue::default();
        q.push(None, Reply::status(503, 2));
        q.push(None, Reply::text("ok"));
        assert!(matches!(q.take("m"), Some(Reply::Status { code: 503, .. })));
        assert!(matches!(q.take("m"), Some(Reply::Status { code: 503, .. })));
        assert_eq!(q.take("m"), Some(Reply::text("ok")));
        assert_eq!(q.take("m"), None);
    }

    #[test]
    fn model_queue_wins_then_falls_back_to_global() {
        let mut q = ReplyQueue::default();
        q.push(None, Reply::text("global"));
        q.push(Some("b"), Reply::text("for b"));
        assert_eq!(q.len(), 2);
        assert_eq!(q.take("b"), Some(Reply::text("for b")));
        assert_eq!(q.take("b"), Some(Reply::text("global")));
        assert_eq!(q.len(), 0);
    }
}
