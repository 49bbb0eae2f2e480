//! Events that ride the write transaction making them true: inside `with_staged_events`, the
//! first write transaction the task commits through the store appends the staged events to the
//! outbox before it commits, so a change and its events are stored together or not at all.
//!
//! Why a task-local rather than a parameter: the events are the engine's business and the writes
//! are the store's; threading an event list through every store function that can be the last
//! step of a change would put the outbox in each signature. The engine names the events, the
//! store finds them when it commits, and a write that runs outside a scope costs nothing more.

use std::cell::RefCell;
use std::future::Future;

use skald_protocol::EventEnvelope;

use crate::error::StoreError;
use crate::pool::Store;

tokio::task_local! {
    static STAGED: RefCell<Staged>;
}

/// Builds the staged events once the write knows what it created: the id of the row it
/// inserted (a message), or `None` for a write that only changed rows.
pub type BuildEvents = Box<dyn FnOnce(Option<i64>) -> Vec<EventEnvelope> + Send>;

#[derive(Default)]
struct Staged {
    instance_id: String,
    /// Taken by the transaction that appends the events.
    build: Option<BuildEvents>,
    /// The events appended, each with its sequence.
    appended: Option<Vec<EventEnvelope>>,
}

/// What became of staged events.
pub enum StagedOutcome {
    /// Appended in the write's transaction; each event carries the sequence it was given.
    Appended(Vec<EventEnvelope>),
    /// The write committed no transaction through the store: the builder comes back to the
    /// caller, who appends the events on their own if the write succeeded. `None` when the
    /// transaction that was to carry them failed (nothing of the change was stored).
    NotAppended(Option<BuildEvents>),
}

impl std::fmt::Debug for StagedOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Appended(events) => f.debug_tuple("Appended").field(events).finish(),
            Self::NotAppended(build) => write!(f, "NotAppended(builder: {})", build.is_some()),
        }
    }
}

/// Runs `write` with events staged for the outbox as instance `instance_id`: the first write
/// transaction `write` commits through the store builds them and appends them inside itself.
pub async fn with_staged_events<F: Future>(
    instance_id: &str,
    build: BuildEvents,
    write: F,
) -> (F::Output, StagedOutcome) {
    let staged = RefCell::new(Staged {
        instance_id: instance_id.to_string(),
        build: Some(build),
        appended: None,
    });
    let (output, staged) = STAGED
        .scope(staged, async {
            let output = write.await;
            (output, STAGED.with(|s| std::mem::take(&mut *s.borrow_mut())))
        })
        .await;
    let outcome = match staged.appended {
        Some(events) => StagedOutcome::Appended(events),
        None => StagedOutcome::NotAppended(staged.build),
    };
    (output, outcome)
}

impl Store {
    /// Commits a write transaction, first appending the events staged for it (if any are still
    /// waiting in this task): the one way repositories commit.
    pub(crate) async fn commit(&self, tx: crate::pool::WriteTx) -> Result<(), StoreError> {
        self.commit_created(tx, None).await
    }

    /// `commit` for a write that inserted the row `created` (a message): staged events that
    /// name it are built with its id.
    pub(crate) async fn commit_created(
        &self,
        mut tx: crate::pool::WriteTx,
        created: Option<i64>,
    ) -> Result<(), StoreError> {
        let waiting = STAGED
            .try_with(|s| {
                let mut s = s.borrow_mut();
                let build = s.build.take()?;
                Some((s.instance_id.clone(), build))
            })
            .ok()
            .flatten();
        let Some((instance_id, build)) = waiting else {
            tx.commit().await?;
            return Ok(());
        };
        let mut events = build(created);
        let refs: Vec<&EventEnvelope> = events.iter().collect();
        let seqs = self.insert_events(&mut tx, &instance_id, &refs).await?;
        tx.commit().await?;
        for (event, seq) in events.iter_mut().zip(seqs) {
            event.seq = Some(seq);
        }
        STAGED.with(|s| s.borrow_mut().appended = Some(events));
        Ok(())
    }
}

/// Whether events wait in this task for the next write transaction: a single-statement write
/// then runs in a transaction of its own so they can ride it, and otherwise stays a plain
/// statement (one trip to the connection instead of three).
pub(crate) fn events_staged() -> bool {
    STAGED.try_with(|s| s.borrow().build.is_some()).unwrap_or(false)
}

impl Store {
    /// Runs one `INSERT … RETURNING id`: alone when no events are staged, else in a write
    /// transaction of its own that carries them, built with the new row's id.
    pub(crate) async fn insert_carrying_events<'q>(
        &self,
        insert: sqlx::query::QueryScalar<'q, sqlx::Sqlite, i64, sqlx::sqlite::SqliteArguments<'q>>,
    ) -> Result<i64, StoreError> {
        if !events_staged() {
            return Ok(insert.fetch_one(&mut *self.write_conn().await?).await?);
        }
        let mut tx = self.begin_write().await?;
        let id = insert.fetch_one(&mut *tx).await?;
        self.commit_created(tx, Some(id)).await?;
        Ok(id)
    }

    /// Runs one statement that changes rows: alone when no events are staged, else in a write
    /// transaction of its own that carries them.
    pub(crate) async fn execute_carrying_events<'q>(
        &self,
        statement: sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'q>>,
    ) -> Result<(), StoreError> {
        if !events_staged() {
            statement.execute(&mut *self.write_conn().await?).await?;
            return Ok(());
        }
        let mut tx = self.begin_write().await?;
        statement.execute(&mut *tx).await?;
        self.commit(tx).await
    }
}
