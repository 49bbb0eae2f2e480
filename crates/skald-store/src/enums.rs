//! Enum columns cross SQLite as typed values: one mapping per enum, one rule for unknown values.
//! (`chat_history.role` and `chat_llm_tools.status` have theirs in `Role` and `ToolStatus`.)
//!
//! Each column's CHECK constraint admits exactly the values below, so an unknown value comes only
//! from a hand edit or a damaged file. It never widens what Skald does: a rule's unknown action
//! reads as `deny` (the gate refuses what the rule matches, the settings page shows Deny), an
//! unknown approval kind reads as `tool` (the call still waits for a human, shown with its raw
//! arguments), and any other unknown value is a `StoreError::Corrupt`.

use skald_protocol::{ApprovalKind, RuleAction};
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::sqlite::{Sqlite, SqliteArgumentValue, SqliteTypeInfo, SqliteValueRef};
use sqlx::{Decode, Encode, Type};

use crate::error::StoreError;

/// An enum stored as text.
pub trait StoredEnum: Sized + Copy + 'static {
    /// `table.column`, for errors.
    const COLUMN: &'static str;
    /// Every variant, so the mapping is written once (`as_stored`) and read back from it.
    const ALL: &'static [Self];
    fn as_stored(self) -> &'static str;
    /// What a value this build does not know reads as; `None` makes it `Corrupt`.
    fn unknown() -> Option<Self> {
        None
    }

    fn from_stored(text: &str) -> Result<Self, StoreError> {
        Self::ALL
            .iter()
            .copied()
            .find(|v| v.as_stored() == text)
            .or_else(Self::unknown)
            .ok_or_else(|| StoreError::Corrupt { column: Self::COLUMN, value: text.to_string() })
    }
}

/// The sqlx face of a `StoredEnum`: bind `Stored(value)`, and decode a row field with
/// `#[sqlx(try_from = "Stored<T>")]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stored<T>(pub T);

impl<T: StoredEnum> Type<Sqlite> for Stored<T> {
    fn type_info() -> SqliteTypeInfo {
        <str as Type<Sqlite>>::type_info()
    }

    fn compatible(ty: &SqliteTypeInfo) -> bool {
        <str as Type<Sqlite>>::compatible(ty)
    }
}

impl<'r, T: StoredEnum> Decode<'r, Sqlite> for Stored<T> {
    fn decode(value: SqliteValueRef<'r>) -> Result<Self, BoxDynError> {
        let text = <&str as Decode<Sqlite>>::decode(value)?;
        Ok(Self(T::from_stored(text)?))
    }
}

impl<'q, T: StoredEnum> Encode<'q, Sqlite> for Stored<T> {
    fn encode_by_ref(&self, buf: &mut Vec<SqliteArgumentValue<'q>>) -> Result<IsNull, BoxDynError> {
        <&str as Encode<'q, Sqlite>>::encode_by_ref(&self.0.as_stored(), buf)
    }
}

/// Declares a `StoredEnum` and lets a row field of type `$ty` decode through `Stored<$ty>`.
macro_rules! stored_enum {
    ($ty:ty, $column:literal, unknown: $unknown:expr, { $($variant:path => $text:literal),+ $(,)? }) => {
        impl StoredEnum for $ty {
            const COLUMN: &'static str = $column;
            const ALL: &'static [Self] = &[$($variant),+];

            fn as_stored(self) -> &'static str {
                match self {
                    $($variant => $text),+
                }
            }

            fn unknown() -> Option<Self> {
                $unknown
            }
        }

        impl From<Stored<$ty>> for $ty {
            fn from(stored: Stored<$ty>) -> Self {
                stored.0
            }
        }
    };
}

stored_enum!(RuleAction, "approval_rules.action", unknown: Some(RuleAction::Deny), {
    RuleAction::Allow => "allow",
    RuleAction::Require => "require",
    RuleAction::Deny => "deny",
});

stored_enum!(ApprovalKind, "approval_requests.kind", unknown: Some(ApprovalKind::Tool), {
    ApprovalKind::Write => "write",
    ApprovalKind::Command => "command",
    ApprovalKind::Tool => "tool",
});
