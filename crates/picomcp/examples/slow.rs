//! `slow`: waits `seconds`, reporting progress when the request carries a progress token, and
//! stops at once when the client cancels (picomcp drops the handler and sends no response).

mod common;

use std::time::Duration;

use picomcp::{Ctx, Server, ToolConfig, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SlowInput {
    /// How long to wait, in seconds.
    #[schemars(range(min = 0, max = 3600))]
    seconds: f64,
}

/// Progress is reported every quarter second.
const TICK: Duration = Duration::from_millis(250);

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut server = Server::new("slow", env!("CARGO_PKG_VERSION"));
    server.tool(
        "slow",
        ToolConfig::new()
            .description("Wait for some seconds, reporting progress; cancellable.")
            .read_only_hint(true)
            .idempotent_hint(true),
        |input: SlowInput, ctx: Ctx| async move {
            let total = Duration::from_secs_f64(input.seconds);
            let ticks = (total.as_secs_f64() / TICK.as_secs_f64()).ceil() as u32;
            // Progress is sent as each tick starts, never right before the result: some clients
            // handle notifications after a response that follows them closely.
            for i in 0..ticks {
                ctx.progress(f64::from(i), Some(f64::from(ticks)), Some("waiting"));
                let step = TICK.min(total.saturating_sub(TICK * i));
                tokio::time::sleep(step).await;
            }
            Ok::<_, ToolError>(format!("Waited {} seconds.", input.seconds))
        },
    )?;
    common::run(server).await
}
