//! Typed run events.
