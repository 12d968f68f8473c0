//! Drawing: one widget per concern, all reading the app's state and none
//! changing the session.

pub mod approval;
pub mod cells;
pub mod composer;
pub mod context;
pub mod diff;
pub mod flowchart;
pub mod help;
pub mod highlight;
pub mod markdown;
pub mod picker;
pub mod rewind;
pub mod screen;
pub mod status;
pub mod streaming;
pub mod theme;
pub mod tool_row;
pub mod transcript;
pub mod trust;
pub mod wrap;
