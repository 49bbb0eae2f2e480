//! `Messages`: a request's message array as owned values and shared runs, so a long history kept
//! by the caller (the engine's context cache) goes into a request without being copied.

use std::ops::Range;
use std::sync::Arc;

use serde::ser::{Serialize, SerializeSeq, Serializer};
use serde_json::Value;

/// The messages of one request, in order.
#[derive(Debug, Clone, Default)]
pub struct Messages {
    parts: Vec<Part>,
}

#[derive(Debug, Clone)]
enum Part {
    Owned(Vec<Value>),
    /// `values[range]`, shared with whoever built it.
    Shared(Arc<Vec<Value>>, Range<usize>),
}

impl Part {
    fn as_slice(&self) -> &[Value] {
        match self {
            Part::Owned(v) => v,
            Part::Shared(v, range) => v.get(range.clone()).unwrap_or_default(),
        }
    }
}

impl Messages {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends one message.
    pub fn push(&mut self, message: Value) {
        match self.parts.last_mut() {
            Some(Part::Owned(v)) => v.push(message),
            _ => self.parts.push(Part::Owned(vec![message])),
        }
    }

    /// Appends `values[range]` without copying it (an out-of-bounds range appends nothing).
    pub fn push_shared(&mut self, values: Arc<Vec<Value>>, range: Range<usize>) {
        if !range.is_empty() {
            self.parts.push(Part::Shared(values, range));
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &Value> {
        self.parts.iter().flat_map(|p| p.as_slice().iter())
    }

    pub fn len(&self) -> usize {
        self.parts.iter().map(|p| p.as_slice().len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The messages as one owned array (copies the shared runs).
    pub fn to_vec(&self) -> Vec<Value> {
        self.iter().cloned().collect()
    }
}

impl From<Vec<Value>> for Messages {
    fn from(values: Vec<Value>) -> Self {
        Self { parts: vec![Part::Owned(values)] }
    }
}

impl FromIterator<Value> for Messages {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> Self {
        Self::from(iter.into_iter().collect::<Vec<_>>())
    }
}

impl Extend<Value> for Messages {
    fn extend<I: IntoIterator<Item = Value>>(&mut self, iter: I) {
        for m in iter {
            self.push(m);
        }
    }
}

/// Equal when the message sequences are equal, however they are split into parts.
impl PartialEq for Messages {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

/// Serialised as the JSON array of its messages.
impl Serialize for Messages {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for m in self.iter() {
            seq.serialize_element(m)?;
        }
        seq.end()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn shared_runs_read_and_serialise_as_one_array() {
        let history = Arc::new(vec![json!(1), json!(2), json!(3), json!(4)]);
        let mut m = Messages::from(vec![json!("head")]);
        m.push_shared(history.clone(), 1..3);
        m.push_shared(history.clone(), 4..4);
        m.push(json!("tail"));
        assert_eq!(m.len(), 4);
        assert_eq!(serde_json::to_string(&m).unwrap(), r#"["head",2,3,"tail"]"#);
        assert_eq!(m, Messages::from(vec![json!("head"), json!(2), json!(3), json!("tail")]));
        // The run is shared, not copied.
        assert_eq!(Arc::strong_count(&history), 2);
    }
}
