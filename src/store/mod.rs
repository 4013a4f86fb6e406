//! The durable task store (seed 002).
