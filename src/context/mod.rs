//! The context toolkit: what keeps every agent context small (markdown sections for now;
//! tokens, masking, extraction and summary blocks live here too).

pub mod markdown;
pub mod mask;
