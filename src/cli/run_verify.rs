//! `baton run verify --queue NAME`: every item of a queue through the verify pipeline.

use std::process::ExitCode;

use super::Ctx;
use super::run::Args;
use crate::error::{Error, Result};

pub fn run(_ctx: &Ctx, _a: Args) -> Result<ExitCode> {
    Err(Error::invalid("not built yet"))
}
