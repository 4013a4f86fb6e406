//! placeholder
use super::Ctx;
use crate::error::Result;
use clap::Args as ClapArgs;
use std::process::ExitCode;
#[derive(Debug, ClapArgs)]
pub struct Args {}
pub fn run(_ctx: &Ctx, _a: Args) -> Result<ExitCode> {
    Ok(ExitCode::SUCCESS)
}
