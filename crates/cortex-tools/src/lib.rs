//! The workspace catalog over a filesystem root.
//!
//! Pure tool semantics, used inside the guest: this crate knows nothing of
//! sessions, models, sandboxes or the wire. Every path a tool touches goes
//! through [`Workspace::resolve`], which confines it to the root after
//! resolving `..` and symlinks. Every result is capped ([`cap_middle`]).

#![warn(missing_docs)]

pub mod bash;
mod cap;
mod check;
pub mod defs;
mod edit;
mod edit_lines;
mod error;
mod glob;
mod grep;
mod image;
mod near_miss;
mod open;
mod plan;
mod plan_steps;
mod python_lint;
mod read;
mod search;
mod spec;
mod suggest;
mod syntax;
mod todo;
mod traceback;
pub mod web;
mod workspace;

pub use bash::{BashEnding, BashOutcome, MAX_STREAMED_BYTES, run_bash};
pub use cap::{MAX_OUTPUT_BYTES, cap_middle};
pub use edit::{IDENTICAL_EDIT, MAX_DIFF_BYTES};
pub use error::ToolError;
pub use image::{ImageFile, MAX_IMAGE_BYTES, image_type};
pub use plan::{PlanError, validate_plan};
pub use plan_steps::{PlanStep, checklist, plan_steps};
pub use python_lint::{STILL_WONT_RUN, WONT_RUN};
pub use read::{shown_file, shown_line};
pub use spec::{SpecError, spec_slug, validate_spec};
pub use syntax::{
    BROKE_THE_FILE, NOT_BEFORE_EITHER, STILL_BROKEN, data_problem, json_object_completed,
};
pub use todo::render_todos;
pub use traceback::KEY_HINT;
pub use workspace::{PROTECTED_PATHS, Workspace, Written};
