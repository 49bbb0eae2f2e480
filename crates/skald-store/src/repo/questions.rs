//! Clarification questions and their answers (single assignment, from any process).

use sqlx::FromRow;

use crate::error::StoreError;
use crate::pool::Store;

#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct QuestionRow {
    pub tool_call_id: i64,
    pub session_id: i64,
    pub stack_id: i64,
    pub title: String,
    pub question: String,
    pub suggested_answers: String,
    pub created_at: String,
    pub source: String,
    pub agent_id: String,
    pub context_label: Option<String>,
}

const OPEN_SELECT: &str = "SELECT q.tool_call_id, q.session_id, q.stack_id, q.title, q.question, \
     q.suggested_answers, q.created_at, s.source, st.agent_id, s.context_label \
     FROM clarification_questions q JOIN chat_llm_tools t ON t.id = q.tool_call_id \
     JOIN chat_sessions s ON s.id = q.session_id JOIN chat_sessions_stack st ON st.id = q.stack_id \
     LEFT JOIN clarification_answers a ON a.tool_call_id = q.tool_call_id";

impl Store {
    #[allow(clippy::too_many_arguments)]
    pub async fn create_question(
        &self,
        tool_call_id: i64,
        session_id: i64,
        stack_id: i64,
        title: &str,
        question: &str,
        suggested_answers: &str,
    ) -> Result<(), StoreError> {
        let insert = sqlx::query(
            "INSERT INTO clarification_questions (tool_call_id, session_id, stack_id, title, \
             question, suggested_answers, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) \
             ON CONFLICT(tool_call_id) DO NOTHING",
        )
        .bind(tool_call_id)
        .bind(session_id)
        .bind(stack_id)
        .bind(title)
        .bind(question)
        .bind(suggested_answers)
        .bind(self.now());
        self.execute_carrying_events(insert).await
    }

    pub async fn question(&self, tool_call_id: i64) -> Result<Option<QuestionRow>, StoreError> {
        Ok(sqlx::query_as::<_, QuestionRow>(&format!("{OPEN_SELECT} WHERE q.tool_call_id = ?"))
            .bind(tool_call_id)
            .fetch_optional(&mut *self.read().await?)
            .await?)
    }

    /// Questions still waiting for an answer, across all sessions, oldest first.
    pub async fn open_questions(&self) -> Result<Vec<QuestionRow>, StoreError> {
        Ok(sqlx::query_as::<_, QuestionRow>(&format!(
            "{OPEN_SELECT} WHERE t.status = 'pending' AND a.id IS NULL \
             ORDER BY q.created_at, q.tool_call_id"
        ))
        .fetch_all(&mut *self.read().await?)
        .await?)
    }

    /// Records the answer; the first wins, the same answer again is a no-op, another one is a
    /// `Conflict`. Returns whether it was new.
    pub async fn answer_question(
        &self,
        tool_call_id: i64,
        answer: &str,
        decided_by: &str,
    ) -> Result<bool, StoreError> {
        let mut tx = self.begin_write().await?;
        let open: Option<String> = sqlx::query_scalar(
            "SELECT t.status FROM clarification_questions q JOIN chat_llm_tools t \
             ON t.id = q.tool_call_id WHERE q.tool_call_id = ?",
        )
        .bind(tool_call_id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(status) = open else {
            return Err(StoreError::NotFound { what: "question", id: tool_call_id });
        };
        let prev: Option<String> =
            sqlx::query_scalar("SELECT answer FROM clarification_answers WHERE tool_call_id = ?")
                .bind(tool_call_id)
                .fetch_optional(&mut *tx)
                .await?;
        if let Some(prev) = prev {
            if prev == answer {
                return Ok(false);
            }
            return Err(StoreError::Conflict(format!(
                "question {tool_call_id} was already answered"
            )));
        }
        if status != "pending" {
            return Err(StoreError::Conflict(format!(
                "question {tool_call_id} is no longer waiting (it is {status})"
            )));
        }
        sqlx::query(
            "INSERT INTO clarification_answers (tool_call_id, answer, decided_by, created_at) \
             VALUES (?, ?, ?, ?)",
        )
        .bind(tool_call_id)
        .bind(answer)
        .bind(decided_by)
        .bind(self.now())
        .execute(&mut *tx)
        .await?;
        // The answer and its continuation are one write.
        let session_id: i64 = sqlx::query_scalar(
            "SELECT session_id FROM clarification_questions WHERE tool_call_id = ?",
        )
        .bind(tool_call_id)
        .fetch_one(&mut *tx)
        .await?;
        crate::repo::work::enqueue_in(&mut tx, session_id, &self.now()).await?;
        self.commit(tx).await?;
        Ok(true)
    }

    pub async fn answer(&self, tool_call_id: i64) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar("SELECT answer FROM clarification_answers WHERE tool_call_id = ?")
            .bind(tool_call_id)
            .fetch_optional(&mut *self.read().await?)
            .await?)
    }

    /// Sessions with an answered question that no turn has settled yet.
    pub async fn sessions_with_unsettled_answers(&self) -> Result<Vec<i64>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT DISTINCT q.session_id FROM clarification_questions q \
             JOIN clarification_answers a ON a.tool_call_id = q.tool_call_id \
             JOIN chat_llm_tools t ON t.id = q.tool_call_id WHERE t.status = 'pending'",
        )
        .fetch_all(&mut *self.read().await?)
        .await?)
    }
}
