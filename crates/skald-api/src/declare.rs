//! `operations!`: turns the table's declarations into the params types, one typed function per
//! operation (`ops::*`), the JSON dispatcher (`call`) and the spec list (`OPERATIONS`).

/// Declares every operation. Each entry is
///
/// ```text
/// /// Doc comment: what the operation does (shown in Rust, TypeScript and the spec list).
/// name {
///     params: NameParams { field: Type, ... },
///     result: ResultType,
///     errors: [ErrorCode variants it can return],
///     events: [EventKind variants it causes],
///     run: |engine, caller, params| expression returning Result<ResultType, EngineError>,
/// }
/// ```
macro_rules! operations {
    ($(
        $(#[doc = $doc:literal])+
        $name:ident {
            params: $Params:ident { $( $(#[$fattr:meta])* $field:ident : $fty:ty ),* $(,)? },
            result: $Result:ty,
            errors: [$($code:ident),* $(,)?],
            events: [$($event:ident),* $(,)?],
            run: |$engine:ident, $caller:pat_param, $p:pat_param| $body:expr $(,)?
        }
    )+) => {
        $(
            #[doc = concat!("Parameters of [`ops::", stringify!($name), "`].")]
            #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
            #[serde(deny_unknown_fields)]
            pub struct $Params {
                $( $(#[$fattr])* pub $field: $fty, )*
            }
        )+

        /// One typed function per operation: what the CLI calls and what [`call`] dispatches to.
        /// Errors leave as `ApiError`, checked against the declaration in debug builds.
        pub mod ops {
            #[allow(unused_imports)]
            use super::*;

            $(
                $(#[doc = $doc])+
                pub async fn $name(
                    engine: &skald_core::Engine,
                    caller: &$crate::Caller,
                    params: $Params,
                ) -> Result<$Result, skald_protocol::ApiError> {
                    let $engine = engine;
                    let $caller = *caller;
                    let $p = params;
                    let result: Result<$Result, skald_core::EngineError> = $body;
                    result.map_err(|e| {
                        $crate::spec::declared(
                            stringify!($name),
                            &[$(skald_protocol::ErrorCode::$code),*],
                            e,
                        )
                    })
                }
            )+
        }

        /// Runs operation `op` with its params as JSON and answers its result as JSON: the one
        /// entry point of the desktop's `api` command and of `POST /api/<op>`. An unknown `op` is
        /// `not_found`; params of the wrong shape are `invalid_input` naming the op and the field.
        pub async fn call(
            engine: &skald_core::Engine,
            caller: &$crate::Caller,
            op: &str,
            params: serde_json::Value,
        ) -> Result<serde_json::Value, skald_protocol::ApiError> {
            match op {
                $(
                    stringify!($name) => {
                        let params: $Params = $crate::spec::parse(op, params)?;
                        $crate::spec::encode(op, ops::$name(engine, caller, params).await?)
                    }
                )+
                _ => Err($crate::spec::unknown(op)),
            }
        }

        /// Every operation, in table order.
        pub static OPERATIONS: &[$crate::spec::OpSpec] = &[
            $(
                $crate::spec::OpSpec {
                    name: stringify!($name),
                    doc: concat!($($doc, "\n"),+),
                    params: stringify!($Params),
                    result: <$Result as ts_rs::TS>::name,
                    params_decl: <$Params as ts_rs::TS>::decl,
                    errors: &[$(skald_protocol::ErrorCode::$code),*],
                    events: &[$(skald_protocol::EventKind::$event),*],
                },
            )+
        ];
    };
}

pub(crate) use operations;
