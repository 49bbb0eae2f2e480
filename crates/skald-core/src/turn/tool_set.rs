//! The tools one frame may call in one round, resolved once from the agent, the frame's grants
//! and the session: each with its definition and the attributes that offering, gating, running
//! and settling a call read. Nothing else in the turn asks a provider by name.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use serde_json::Value;

use super::{TurnCtx, TurnDeps, TurnPolicy, config_tools, mcp, subagent, synthetic};
use crate::tools::names::{self, SessionTool, ToolName};
use crate::tools::{Tool, ToolCategory, ToolContext, ToolError};

/// One tool of the set.
pub struct OfferedTool {
    pub name: ToolName,
    wire: String,
    /// What the model is offered; `None` for a tool the frame may call without being offered
    /// it (`execute_subtask` at the depth limit: its call gets the limit's error, not
    /// "unknown tool").
    def: Option<Value>,
    /// The registry's tool, for a registered one.
    registered: Option<Arc<dyn Tool>>,
    /// No effects: asked about as a read, and run again after a crash.
    pub read_only: bool,
    /// The category rules and bypasses see; `None` for an MCP tool (its server covers it).
    pub category: Option<ToolCategory>,
}

impl OfferedTool {
    /// A tool of the registry.
    pub fn of_registry(tool: Arc<dyn Tool>) -> Self {
        let def = tool.def();
        Self {
            name: ToolName::Registered(def.name.to_string()),
            wire: def.name.to_string(),
            def: Some(def.to_openai()),
            read_only: def.read_only,
            category: Some(def.category),
            registered: Some(tool),
        }
    }

    /// A tool Skald runs itself (session, delegation, `activate_tools`, the `config` group),
    /// offered as `def`.
    pub fn interface(name: ToolName, def: Value) -> Self {
        Self::own(name, Some(def))
    }

    /// A tool of Skald's own the frame may call but is not offered.
    pub fn callable_unoffered(name: ToolName) -> Self {
        Self::own(name, None)
    }

    fn own(name: ToolName, def: Option<Value>) -> Self {
        Self {
            wire: name.wire(),
            name,
            def,
            registered: None,
            read_only: false,
            category: Some(ToolCategory::Session),
        }
    }

    /// A tool of an MCP server, `read_only` as far as the server is trusted to say so.
    pub fn mcp(server: &str, tool: &str, def: Value, read_only: bool) -> Self {
        let name = ToolName::Mcp { server: server.to_string(), tool: tool.to_string() };
        Self {
            wire: name.wire(),
            name,
            def: Some(def),
            registered: None,
            read_only,
            category: None,
        }
    }

    /// The name the model calls it by.
    pub fn wire(&self) -> &str {
        &self.wire
    }

    /// The registry's tool behind it, if it is a registered one.
    pub fn registered(&self) -> Option<&Arc<dyn Tool>> {
        self.registered.as_ref()
    }

    /// The argument schema the model was offered, which its calls are checked against.
    pub fn schema(&self) -> Option<&Value> {
        self.def.as_ref().map(|d| &d["function"]["parameters"])
    }

    /// Asks to schedule a job (a person approves it, whatever rules or bypasses say).
    pub fn schedules_job(&self, args: &Value) -> bool {
        self.name.schedules_job(args)
    }

    /// Whether a call left running by a crash may simply run again: it may have had effects
    /// otherwise. A delegation that opened no frame yet has done nothing (a job may have been
    /// stored already: nothing keys it to the call, so the person reconciles it); activating a
    /// server again changes nothing.
    pub fn safe_to_rerun(&self, args: &Value) -> bool {
        match &self.name {
            ToolName::Delegation(_) => !self.schedules_job(args),
            ToolName::Activate => true,
            _ => self.read_only,
        }
    }

    /// The server and tool of an MCP tool.
    pub fn mcp_tool(&self) -> Option<(&str, &str)> {
        match &self.name {
            ToolName::Mcp { server, tool } => Some((server, tool)),
            _ => None,
        }
    }

    /// The command a shell tool runs (shown to the person as what they approve).
    pub fn command<'a>(&self, args: &'a Value) -> Option<&'a str> {
        (self.category == Some(ToolCategory::Shell))
            .then(|| args.get("command").and_then(Value::as_str))
            .flatten()
    }

    /// The file the call acts on, resolved against the workdir.
    pub fn target_path(&self, args: &Value, workdir: &Path) -> Option<PathBuf> {
        self.registered.as_ref().and_then(|t| t.target_path(args, workdir))
    }

    /// A write's (current, predicted) content, computed without writing; `None` for a tool
    /// that writes no file.
    pub fn predict_write(
        &self,
        args: &Value,
        ctx: &ToolContext,
    ) -> Option<Result<(Option<String>, String), ToolError>> {
        self.registered.as_ref().and_then(|t| t.predict_write(args, ctx))
    }

    /// Offered on a small window (see [`SMALL_WINDOW`]): reading, searching, writing, editing
    /// and running commands, asking or telling the person, and what the frame activated. Left
    /// out there: the line-edit variants, `find_files`, notes and todos, and delegation (a
    /// sub-agent's brief alone would crowd such a window).
    fn fits_small_window(&self) -> bool {
        match &self.name {
            ToolName::Registered(name) => SMALL_WINDOW_TOOLS.contains(&name.as_str()),
            ToolName::Session(tool) => matches!(tool, SessionTool::Question | SessionTool::Notify),
            ToolName::Delegation(_) => false,
            ToolName::Activate | ToolName::Config(_) | ToolName::Mcp { .. } => true,
        }
    }

    /// The call's labels for the UI (short, full).
    pub fn labels(&self, args: &Value) -> (String, String) {
        match &self.registered {
            Some(t) => (t.describe(args, false), t.describe(args, true)),
            None => labels_of(&self.wire, args),
        }
    }
}

/// The labels of a call to a tool that is not in the set, or not a registered one.
pub fn labels_of(name: &str, args: &Value) -> (String, String) {
    match (
        crate::tools::interface_label(name, args, false),
        crate::tools::interface_label(name, args, true),
    ) {
        (Some(short), Some(full)) => (short, full),
        _ => (name.to_string(), name.to_string()),
    }
}

/// A frame's tools in one round, sorted by name.
pub struct ToolSet {
    tools: Vec<Arc<OfferedTool>>,
    /// The offered definitions in the same order: byte-identical across processes, shared with
    /// every request of the frame (a round copies no definition).
    defs: Arc<[Value]>,
}

impl ToolSet {
    fn new(mut tools: Vec<OfferedTool>) -> Self {
        tools.sort_by(|a, b| a.wire.cmp(&b.wire));
        let defs = tools.iter().filter_map(|t| t.def.clone()).collect();
        Self { tools: tools.into_iter().map(Arc::new).collect(), defs }
    }

    /// The frame's set now.
    ///
    /// Built once per frame and turn, then again only when what can change during a turn
    /// changes: the frame's grants, the configured MCP servers, or the tools of a granted
    /// server. Everything else it is built from is fixed for the turn (the policy: rules,
    /// limits, models; the frame's agent and depth; the engine's tools), including the task
    /// agents `execute_task` lists, which are read at the frame's first round. Building it cost
    /// ~45 µs a round (2026-12, the fresh-session turn bench), half of it reading and copying
    /// the agents; the same list every round also keeps the request's prefix cacheable.
    pub fn resolve(ctx: &TurnCtx) -> Arc<Self> {
        let inputs = SetInputs::of(ctx);
        let lock = || RESOLVED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(hit) = lock().iter().find(|o| o.is_for(ctx) && o.inputs == inputs) {
            return hit.set.clone();
        }
        let set = Arc::new(build(ctx));
        let mut cache = lock();
        // Frames of ended turns go first, then the oldest.
        cache.retain(|o| o.policy.strong_count() > 0 && !o.is_for(ctx));
        if cache.len() >= CACHED_FRAMES {
            cache.remove(0);
        }
        cache.push(Resolved {
            deps: Arc::downgrade(&ctx.deps),
            policy: Arc::downgrade(&ctx.policy),
            stack_id: ctx.frame.stack_id,
            inputs,
            set: set.clone(),
        });
        set
    }

    /// The tool the model calls `name`, if the frame may call it now.
    pub fn get(&self, name: &str) -> Option<&Arc<OfferedTool>> {
        self.tools.binary_search_by(|t| t.wire.as_str().cmp(name)).ok().map(|i| &self.tools[i])
    }

    /// The definitions offered to the model.
    pub fn defs(&self) -> Arc<[Value]> {
        self.defs.clone()
    }

    /// The names offered to the model, sorted.
    pub fn offered_names(&self) -> Vec<&str> {
        self.tools.iter().filter(|t| t.def.is_some()).map(|t| t.wire.as_str()).collect()
    }
}

/// A model whose window is at most this many tokens is offered the core tools only: the full
/// set's definitions alone are ~3,300 tokens by bytes / 4 and ~5,000 in a small local model's
/// own count (SmolLM2 under llama-cpp-python), more than a 4,096-token window holds.
pub const SMALL_WINDOW: u64 = 8_192;

/// The registry's tools offered on a small window.
const SMALL_WINDOW_TOOLS: [&str; 6] = [
    names::READ_FILE,
    names::LIST_DIR,
    names::SEARCH_FILES,
    names::WRITE_FILE,
    names::EDIT_FILE,
    names::EXECUTE_CMD,
];

/// Whether the frame's model has a small window: configured so, or learned from a refusal
/// (during this turn too).
fn small_window(ctx: &TurnCtx) -> bool {
    ctx.frame.chain.first().is_some_and(|model| {
        let learned = ctx.deps.windows.get(&model.name, &model.model);
        let window = match (model.context_window, learned) {
            (Some(configured), Some(learned)) => Some(configured.min(learned)),
            (configured, learned) => configured.or(learned),
        };
        window.is_some_and(|w| w <= SMALL_WINDOW)
    })
}

/// Every provider's tools for the frame, minus those whose first name-matching rule denies
/// them, and only the core ones on a small window.
fn build(ctx: &TurnCtx) -> ToolSet {
    let small = small_window(ctx);
    let hidden = |t: &OfferedTool| {
        (small && !t.fits_small_window())
            || ctx.policy.rules.as_ref().is_ok_and(|r| r.hides_tool(&t.wire, t.read_only))
    };
    let tools = ctx
        .deps
        .tools
        .all()
        .into_iter()
        .map(OfferedTool::of_registry)
        .chain(synthetic::tools(ctx))
        .chain(subagent::tools(ctx))
        .chain(mcp::tools(ctx))
        .chain(config_tools::tools(ctx))
        .filter(|t| !hidden(t))
        .collect();
    ToolSet::new(tools)
}

/// The sets of the frames run lately (any engine of the process).
static RESOLVED: Mutex<Vec<Resolved>> = Mutex::new(Vec::new());
/// Frames whose set is kept: more than run at once in practice (a turn's frames, its batch of
/// sub-agents, a few sessions).
const CACHED_FRAMES: usize = 64;

/// One frame's set. The weak references name the engine and the turn without keeping them
/// alive, and keep their addresses from being reused while the entry exists.
struct Resolved {
    deps: Weak<TurnDeps>,
    policy: Weak<TurnPolicy>,
    stack_id: i64,
    inputs: SetInputs,
    set: Arc<ToolSet>,
}

impl Resolved {
    /// Built for this frame of this turn.
    fn is_for(&self, ctx: &TurnCtx) -> bool {
        self.stack_id == ctx.frame.stack_id
            && std::ptr::eq(self.policy.as_ptr(), Arc::as_ptr(&ctx.policy))
            && std::ptr::eq(self.deps.as_ptr(), Arc::as_ptr(&ctx.deps))
    }
}

/// What a frame's set depends on that can change while its turn runs: `activate_tools`
/// grants, the `config` tools edit the servers, a server restarts or changes its list.
#[derive(PartialEq)]
struct SetInputs {
    grants: Vec<String>,
    servers: Vec<(String, Option<String>)>,
    granted_tools: Vec<Option<Vec<skald_mcp::McpTool>>>,
    /// A refusal may teach a small window in the middle of a turn.
    small_window: bool,
}

impl SetInputs {
    fn of(ctx: &TurnCtx) -> Self {
        let grants = ctx.frame.grants.list();
        let granted_tools = grants.iter().map(|s| ctx.deps.mcp.tools(s)).collect();
        let small_window = small_window(ctx);
        Self { grants, servers: super::mcp::activatable(ctx), granted_tools, small_window }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    /// The turn asks the tool set what a tool is; it never compares tool names itself. A name
    /// compared anywhere else would be a provider the set does not know about.
    #[test]
    fn no_turn_module_but_the_tool_set_compares_tool_names() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/turn");
        let comparisons =
            ["== names::", "!= names::", "names::is_", "names::schedules_job", "matches!(name"];
        let mut found = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|n| n == "tool_set.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (number, line) in text.lines().enumerate() {
                if comparisons.iter().any(|c| line.contains(c))
                    || (line.contains("name ==") && line.contains("names::"))
                {
                    found.push(format!("{}:{}: {}", path.display(), number + 1, line.trim()));
                }
            }
        }
        assert!(
            found.is_empty(),
            "tool names compared outside the tool set:\n{}",
            found.join("\n")
        );
        // The scan looks at the files it should (a moved directory would pass vacuously).
        assert!(dir.join("call_flow.rs").exists());
    }
}
