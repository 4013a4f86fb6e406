//! `baton run orchestrate|poc|graduate TASK`: a task of the store through its workflow.

use std::process::ExitCode;

use super::Ctx;
use super::run::Args;
use crate::error::{Error, Result};

pub fn run(_ctx: &Ctx, _a: Args) -> Result<ExitCode> {
    Err(Error::invalid("not built yet"))
}
