//! The queues of scripted replies and the rule for which one serves a request.

use std::collections::{HashMap, VecDeque};

use super::reply::Reply;

/// A global FIFO, per-model FIFOs and per-prompt FIFOs. A prompt queue (its key found in the
/// request's first non-system message, i.e. the task an agent was given) wins over the model's
/// queue, which wins over the global one: concurrent sub-agents each get their own script.
#[derive(Default, Debug)]
pub(crate) struct ReplyQueue {
    global: VecDeque<Reply>,
    by_model: HashMap<String, VecDeque<Reply>>,
    by_prompt: Vec<(String, VecDeque<Reply>)>,
}

impl ReplyQueue {
    pub(crate) fn push_for_prompt(&mut self, key: &str, reply: Reply) {
        match self.by_prompt.iter_mut().find(|(k, _)| k == key) {
            Some((_, q)) => q.push_back(reply),
            None => self.by_prompt.push((key.to_owned(), VecDeque::from([reply]))),
        }
    }

    pub(crate) fn push(&mut self, model: Option<&str>, reply: Reply) {
        match model {
            Some(m) => self.by_model.entry(m.to_owned()).or_default().push_back(reply),
            None => self.global.push_back(reply),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.global.len()
            + self.by_model.values().map(VecDeque::len).sum::<usize>()
            + self.by_prompt.iter().map(|(_, q)| q.len()).sum::<usize>()
    }

    /// Every queued reply with the model it is reserved for (global ones first).
    pub(crate) fn remaining(&self) -> Vec<(Option<&str>, &Reply)> {
        let global = self.global.iter().map(|r| (None, r));
        let mut models: Vec<&String> = self.by_model.keys().collect();
        models.sort();
        let by_model = models
            .into_iter()
            .flat_map(|m| self.by_model[m].iter().map(move |r| (Some(m.as_str()), r)));
        let by_prompt =
            self.by_prompt.iter().flat_map(|(k, q)| q.iter().map(move |r| (Some(k.as_str()), r)));
        global.chain(by_model).chain(by_prompt).collect()
    }

    pub(crate) fn clear(&mut self) {
        self.global.clear();
        self.by_model.clear();
        self.by_prompt.clear();
    }

    /// Takes the reply that serves one request for `model`. A `Status` entry serves `times`
    /// requests before it is removed.
    #[cfg(test)]
    pub(crate) fn take(&mut self, model: &str) -> Option<Reply> {
        self.take_for(model, "")
    }

    /// [`ReplyQueue::take`] for a request whose first non-system message is `first_text`.
    pub(crate) fn take_for(&mut self, model: &str, first_text: &str) -> Option<Reply> {
        let keyed = self
            .by_prompt
            .iter()
            .position(|(k, q)| !q.is_empty() && !first_text.is_empty() && first_text.contains(k));
        let queue = if let Some(i) = keyed {
            &mut self.by_prompt[i].1
        } else {
            match self.by_model.get_mut(model) {
                Some(q) if !q.is_empty() => q,
                _ => &mut self.global,
            }
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
    fn a_prompt_queue_serves_requests_whose_first_message_holds_its_key() {
        let mut q = ReplyQueue::default();
        q.push(None, Reply::text("global"));
        q.push_for_prompt("task B", Reply::text("for B"));
        q.push_for_prompt("task A", Reply::text("for A"));
        assert_eq!(q.take_for("m", "do task A now"), Some(Reply::text("for A")));
        assert_eq!(q.take_for("m", "the user asks"), Some(Reply::text("global")));
        assert_eq!(q.take_for("m", "task B please"), Some(Reply::text("for B")));
        assert_eq!(q.len(), 0);
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
