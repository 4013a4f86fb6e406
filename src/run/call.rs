//! The one phase pipeline.
