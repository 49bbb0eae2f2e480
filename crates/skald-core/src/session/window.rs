//! A window of the session tree (`Engine::session_window`): the rows before, after or around
//! one row in the full tree's order, read page by page with keyset queries.
//!
//! The tree's order is the replay order of the root frame with every sub-agent frame spliced in
//! after its spawning call (see `debug_tree`). A row's position is known from its ancestry alone
//! (its frame, that frame's spawning call, the call's message, ...), so a window starting
//! anywhere, inside a child frame too, is a list of pending segments: the rest of a call's
//! children, the rest of a message's calls, the rest of a frame's messages, one level at a time
//! up to the root. Each segment reads at most as many rows as the window still needs.

use std::collections::{HashMap, HashSet};

use skald_protocol::{
    DebugMessage, EndedTurn, ItemRef, MAX_WINDOW_LIMIT, SessionWindow, WindowAnchor, WindowQuery,
};
use skald_store::repo::stack::StackFrame;
use skald_store::repo::tree_page::{Direction, MessagePreview, ToolPreview};
use skald_store::{Store, StoreError};

use super::debug_tree;
use super::items::{self, Labeler, PREVIEW};

/// What is left to walk, in walk order.
#[derive(Debug, Clone)]
enum Segment {
    /// Messages of a frame after (forward) or before (backward) `bound`, with their subtrees.
    Messages { frame: StackFrame, bound: Option<i64> },
    /// Calls of one message after/before `bound`, with their sub-agent frames.
    Calls { frame: StackFrame, message: i64, bound: Option<i64> },
    /// Frames spawned by one call after/before `bound`, each whole.
    Children { call: i64, bound: Option<i64> },
    /// The opening row of a frame (backward walks end a frame with it).
    Start(StackFrame),
    /// The closing row of a frame (forward walks end a frame with it).
    End(StackFrame),
    /// One message row (backward walks reach a call's message after the call).
    Message { frame: StackFrame, message: i64 },
    /// One call row (backward walks reach a call after its children).
    Call { frame: StackFrame, call: i64 },
}

/// How a frame hangs under its parent.
#[derive(Debug, Clone)]
struct Link {
    frame: StackFrame,
    /// `(call, message, frame of the message)` that spawned `frame`; `None` for the root.
    spawned_by: Option<(i64, i64, StackFrame)>,
}

/// Collects rows until the window is full.
struct Walk<'a> {
    store: &'a Store,
    labeler: Labeler<'a>,
    dir: Direction,
    out: Vec<DebugMessage>,
    /// Rows still wanted.
    left: usize,
}

impl Walk<'_> {
    fn full(&self) -> bool {
        self.left == 0
    }

    fn push(&mut self, row: DebugMessage) {
        if self.left > 0 {
            self.out.push(row);
            self.left -= 1;
        }
    }

    /// Rows a read may need at most (each row read becomes at least one row of the window).
    fn want(&self) -> u32 {
        u32::try_from(self.left).unwrap_or(u32::MAX)
    }

    async fn segment(&mut self, segment: Segment) -> Result<(), StoreError> {
        if self.full() {
            return Ok(());
        }
        match segment {
            Segment::Messages { frame, bound } => {
                let rows = self
                    .store
                    .page_messages(frame.id, bound, self.dir, self.want(), PREVIEW)
                    .await?;
                self.messages(&frame, rows).await
            }
            Segment::Calls { frame, message, bound } => {
                let calls = self
                    .store
                    .page_calls(&[message], bound, self.dir, self.want(), PREVIEW)
                    .await?;
                self.calls(&frame, calls).await
            }
            Segment::Children { call, bound } => {
                let frames =
                    self.store.page_child_frames(&[call], bound, self.dir, self.want()).await?;
                self.frames(frames).await
            }
            Segment::Start(frame) => {
                self.push(items::agent_start(&frame));
                Ok(())
            }
            Segment::End(frame) => {
                self.push(items::agent_end(&frame));
                Ok(())
            }
            Segment::Message { frame, message } => {
                let row = self.store.message_preview(message, PREVIEW).await?;
                self.push(items::preview_message(&row, &frame)?);
                Ok(())
            }
            Segment::Call { frame, call } => {
                let row = self.store.tool_preview(call, PREVIEW).await?;
                self.push(items::preview_tool(&row, &frame, self.labeler)?);
                Ok(())
            }
        }
    }

    /// Messages of `frame` in walk order, each with its calls and their sub-agents.
    async fn messages(
        &mut self,
        frame: &StackFrame,
        rows: Vec<MessagePreview>,
    ) -> Result<(), StoreError> {
        let ids: Vec<i64> = rows.iter().map(|m| m.row.id).collect();
        let calls = self.store.page_calls(&ids, None, self.dir, self.want(), PREVIEW).await?;
        let mut by_message: HashMap<i64, Vec<ToolPreview>> = HashMap::new();
        for call in calls {
            by_message.entry(call.row.message_id).or_default().push(call);
        }
        for m in rows {
            if self.full() {
                break;
            }
            let calls = by_message.remove(&m.row.id).unwrap_or_default();
            let row = items::preview_message(&m, frame)?;
            match self.dir {
                Direction::Forward => {
                    self.push(row);
                    self.calls(frame, calls).await?;
                }
                Direction::Backward => {
                    self.calls(frame, calls).await?;
                    self.push(row);
                }
            }
        }
        Ok(())
    }

    /// Calls in walk order, each with the sub-agent frames it spawned.
    async fn calls(
        &mut self,
        frame: &StackFrame,
        calls: Vec<ToolPreview>,
    ) -> Result<(), StoreError> {
        if calls.is_empty() || self.full() {
            return Ok(());
        }
        let ids: Vec<i64> = calls.iter().map(|c| c.row.id).collect();
        let children = self.store.page_child_frames(&ids, None, self.dir, self.want()).await?;
        let mut by_call: HashMap<i64, Vec<StackFrame>> = HashMap::new();
        for child in children {
            if let Some(call) = child.parent_tool_call_id {
                by_call.entry(call).or_default().push(child);
            }
        }
        for call in calls {
            if self.full() {
                break;
            }
            let children = by_call.remove(&call.row.id).unwrap_or_default();
            let row = items::preview_tool(&call, frame, self.labeler)?;
            match self.dir {
                Direction::Forward => {
                    self.push(row);
                    self.frames(children).await?;
                }
                Direction::Backward => {
                    self.frames(children).await?;
                    self.push(row);
                }
            }
        }
        Ok(())
    }

    /// Sub-agent frames in walk order, each whole between its opening and closing rows.
    async fn frames(&mut self, frames: Vec<StackFrame>) -> Result<(), StoreError> {
        for child in frames {
            if self.full() {
                break;
            }
            let (first, last) = match self.dir {
                Direction::Forward => (items::agent_start(&child), items::agent_end(&child)),
                Direction::Backward => (items::agent_end(&child), items::agent_start(&child)),
            };
            self.push(first);
            let inner = Segment::Messages { frame: child, bound: None };
            Box::pin(self.segment(inner)).await?;
            self.push(last);
        }
        Ok(())
    }
}

/// The frame chain from `frame` up to the root, `frame` first.
async fn ancestry(
    store: &Store,
    session_id: i64,
    frame: StackFrame,
) -> Result<Vec<Link>, StoreError> {
    let mut chain = Vec::new();
    let mut seen = HashSet::new();
    let mut current = frame;
    loop {
        // A frame of another session, or a link that loops, is no position in this tree.
        if current.session_id != session_id || !seen.insert(current.id) {
            return Err(StoreError::NotFound { what: "row of session", id: session_id });
        }
        let Some(call) = current.parent_tool_call_id else {
            chain.push(Link { frame: current, spawned_by: None });
            return Ok(chain);
        };
        let message = store.tool_call(call).await?.message_id;
        let parent = store.frame(store.message_frame(message).await?).await?;
        chain.push(Link { frame: current, spawned_by: Some((call, message, parent.clone())) });
        current = parent;
    }
}

/// Segments that continue a walk from the end of `chain[0]`'s frame up to the root.
fn rest_of_tree(chain: &[Link], dir: Direction) -> Vec<Segment> {
    let mut out = Vec::new();
    for link in chain {
        let Some((call, message, parent)) = &link.spawned_by else { break };
        let bound = Some(link.frame.id);
        match dir {
            Direction::Forward => out.extend([
                Segment::End(link.frame.clone()),
                Segment::Children { call: *call, bound },
                Segment::Calls { frame: parent.clone(), message: *message, bound: Some(*call) },
                Segment::Messages { frame: parent.clone(), bound: Some(*message) },
            ]),
            Direction::Backward => out.extend([
                Segment::Start(link.frame.clone()),
                Segment::Children { call: *call, bound },
                Segment::Call { frame: parent.clone(), call: *call },
                Segment::Calls { frame: parent.clone(), message: *message, bound: Some(*call) },
                Segment::Message { frame: parent.clone(), message: *message },
                Segment::Messages { frame: parent.clone(), bound: Some(*message) },
            ]),
        }
    }
    out
}

/// Segments that walk from `item` (excluded) to one end of the tree.
async fn segments_from(
    store: &Store,
    session_id: i64,
    item: ItemRef,
    dir: Direction,
) -> Result<Vec<Segment>, StoreError> {
    use Direction::{Backward, Forward};
    Ok(match item {
        ItemRef::Message { id } => {
            let frame = store.frame(store.message_frame(id).await?).await?;
            let chain = ancestry(store, session_id, frame.clone()).await?;
            let mut out = match dir {
                Forward => vec![Segment::Calls { frame: frame.clone(), message: id, bound: None }],
                Backward => vec![],
            };
            out.push(Segment::Messages { frame, bound: Some(id) });
            out.extend(rest_of_tree(&chain, dir));
            out
        }
        ItemRef::Tool { id } => {
            let message = store.tool_call(id).await?.message_id;
            let frame = store.frame(store.message_frame(message).await?).await?;
            let chain = ancestry(store, session_id, frame.clone()).await?;
            let mut out = match dir {
                Forward => vec![
                    Segment::Children { call: id, bound: None },
                    Segment::Calls { frame: frame.clone(), message, bound: Some(id) },
                ],
                Backward => vec![
                    Segment::Calls { frame: frame.clone(), message, bound: Some(id) },
                    Segment::Message { frame: frame.clone(), message },
                ],
            };
            out.push(Segment::Messages { frame, bound: Some(message) });
            out.extend(rest_of_tree(&chain, dir));
            out
        }
        ItemRef::Agent { stack_id } | ItemRef::AgentEnd { stack_id } => {
            let frame = store.frame(stack_id).await?;
            if frame.parent_tool_call_id.is_none() {
                return Err(StoreError::NotFound { what: "sub-agent frame", id: stack_id });
            }
            let chain = ancestry(store, session_id, frame.clone()).await?;
            let rest = rest_of_tree(&chain, dir);
            let opening = matches!(item, ItemRef::Agent { .. });
            match (dir, opening) {
                // Inside the frame: its messages, then the rest from its closing/opening row.
                (Forward, true) | (Backward, false) => {
                    let mut out = vec![Segment::Messages { frame, bound: None }];
                    out.extend(rest);
                    out
                }
                // Outside the frame: the rest, without the row itself.
                (Forward, false) | (Backward, true) => rest.into_iter().skip(1).collect(),
            }
        }
    })
}

/// Walks `segments` in `dir` for up to `limit` rows; the flag says whether more rows follow.
async fn walk(
    store: &Store,
    labeler: Labeler<'_>,
    dir: Direction,
    segments: Vec<Segment>,
    limit: usize,
) -> Result<(Vec<DebugMessage>, bool), StoreError> {
    // One row more than asked tells whether the window reaches the end.
    let mut w = Walk { store, labeler, dir, out: Vec::new(), left: limit + 1 };
    for segment in segments {
        if w.full() {
            break;
        }
        w.segment(segment).await?;
    }
    let more = w.out.len() > limit;
    w.out.truncate(limit);
    Ok((w.out, more))
}

/// The frame `item` belongs to, checked to be one of the session's.
async fn frame_of(store: &Store, session_id: i64, item: ItemRef) -> Result<StackFrame, StoreError> {
    let frame_id = match item {
        ItemRef::Message { id } => store.message_frame(id).await?,
        ItemRef::Tool { id } => store.message_frame(store.tool_call(id).await?.message_id).await?,
        ItemRef::Agent { stack_id } | ItemRef::AgentEnd { stack_id } => stack_id,
    };
    let frame = store.frame(frame_id).await?;
    if frame.session_id != session_id {
        return Err(StoreError::NotFound { what: "row of session", id: session_id });
    }
    Ok(frame)
}

/// The item a window is anchored on, as a row of the window.
async fn anchor_row(
    store: &Store,
    session_id: i64,
    item: ItemRef,
    labeler: Labeler<'_>,
) -> Result<DebugMessage, StoreError> {
    let frame = frame_of(store, session_id, item).await?;
    Ok(match item {
        ItemRef::Message { id } => {
            items::preview_message(&store.message_preview(id, PREVIEW).await?, &frame)?
        }
        ItemRef::Tool { id } => {
            items::preview_tool(&store.tool_preview(id, PREVIEW).await?, &frame, labeler)?
        }
        ItemRef::Agent { .. } => items::agent_start(&frame),
        ItemRef::AgentEnd { .. } => items::agent_end(&frame),
    })
}

/// Reads one window of a session's tree.
pub async fn load(
    store: &Store,
    session_id: i64,
    query: WindowQuery,
    labeler: Labeler<'_>,
) -> Result<SessionWindow, StoreError> {
    let session = store.session(session_id).await?;
    let pending_inputs = debug_tree::pending_inputs(store, session_id).await?;
    let limit = usize::try_from(query.limit.clamp(1, MAX_WINDOW_LIMIT)).unwrap_or(1);
    let (items, has_more_before, has_more_after, anchor_index) = match query.anchor {
        WindowAnchor::Latest => {
            let start =
                vec![Segment::Messages { frame: store.root_frame(session_id).await?, bound: None }];
            let (mut rows, before) =
                walk(store, labeler, Direction::Backward, start, limit).await?;
            rows.reverse();
            (rows, before, false, None)
        }
        WindowAnchor::Before { item } => {
            let start = segments_from(store, session_id, item, Direction::Backward).await?;
            let (mut rows, before) =
                walk(store, labeler, Direction::Backward, start, limit).await?;
            rows.reverse();
            (rows, before, true, None)
        }
        WindowAnchor::After { item } => {
            let start = segments_from(store, session_id, item, Direction::Forward).await?;
            let (rows, after) = walk(store, labeler, Direction::Forward, start, limit).await?;
            (rows, true, after, None)
        }
        WindowAnchor::Around { item } => {
            let anchor = anchor_row(store, session_id, item, labeler).await?;
            let back = (limit - 1) / 2;
            let start = segments_from(store, session_id, item, Direction::Backward).await?;
            let (mut rows, before) = walk(store, labeler, Direction::Backward, start, back).await?;
            rows.reverse();
            let index = u32::try_from(rows.len()).ok();
            rows.push(anchor);
            let start = segments_from(store, session_id, item, Direction::Forward).await?;
            let ahead = limit - rows.len();
            let (after_rows, after) =
                walk(store, labeler, Direction::Forward, start, ahead).await?;
            rows.extend(after_rows);
            (rows, before, after, index)
        }
    };
    let awaiting_human = store.calls_awaiting_human(session_id).await?;
    let turn_ends =
        turn_ends_within(store, session_id, &items, has_more_before, has_more_after).await?;
    let tasks = store.tasks_of_parent(session_id).await?.iter().map(|t| t.info()).collect();
    Ok(SessionWindow {
        session: session.meta(),
        items,
        has_more_before,
        has_more_after,
        anchor_index,
        pending_inputs,
        awaiting_human,
        turn_ends,
        tasks,
    })
}

/// The turn ends that go between the window's rows: from its oldest history row (or the very
/// start, when nothing is before it) to its newest (or the very end, when nothing is after it).
async fn turn_ends_within(
    store: &Store,
    session_id: i64,
    items: &[DebugMessage],
    has_more_before: bool,
    has_more_after: bool,
) -> Result<Vec<EndedTurn>, StoreError> {
    let ids = items.iter().filter_map(|row| match row {
        DebugMessage::User { message_id, .. }
        | DebugMessage::Thinking { message_id, .. }
        | DebugMessage::Assistant { message_id, .. }
        | DebugMessage::Tool { message_id, .. } => Some(*message_id),
        DebugMessage::Agent { .. } | DebugMessage::AgentEnd { .. } => None,
    });
    let (lo, hi) = (ids.clone().min(), ids.max());
    if lo.is_none() && (has_more_before || has_more_after) {
        // Only sub-agent bookkeeping rows: no place in the transcript to put an end.
        return Ok(Vec::new());
    }
    let from = if has_more_before { lo } else { None };
    let to = if has_more_after { hi } else { None };
    store.turn_ends_between(session_id, from, to).await
}

/// One row of the session's tree whole (what a window cut to a preview, fetched on expand).
pub async fn item(
    store: &Store,
    session_id: i64,
    item: ItemRef,
    labeler: Labeler<'_>,
) -> Result<DebugMessage, StoreError> {
    let frame = frame_of(store, session_id, item).await?;
    Ok(match item {
        ItemRef::Message { id } => {
            let has_calls = store.message_has_calls(id).await?;
            items::full_message(&store.message(id).await?, has_calls, &frame)?
        }
        ItemRef::Tool { id } => {
            items::full_tool(&store.tool_call_with_diff(id).await?, &frame, labeler)?
        }
        ItemRef::Agent { .. } => items::agent_start(&frame),
        ItemRef::AgentEnd { .. } => items::agent_end(&frame),
    })
}
