//! `image`: a tool returning a small PNG (drawn here, no dependencies) with a caption.

mod common;

use picomcp::{Ctx, Server, ToolConfig, ToolError, image, text};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ChartInput {
    /// Width and height in pixels.
    #[serde(default = "default_size")]
    #[schemars(range(min = 1, max = 256))]
    size: u32,
}

fn default_size() -> u32 {
    16
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut server = Server::new("image", env!("CARGO_PKG_VERSION"));
    server.tool(
        "render_chart",
        ToolConfig::new()
            .title("Render chart")
            .description("Render a small bar chart as a PNG image.")
            .read_only_hint(true),
        |input: ChartInput, _ctx: Ctx| async move {
            let n = input.size;
            let png = common::png(n, |x, y| {
                // Four bars of rising height on a white background.
                let bar = x * 4 / n;
                let height = (bar + 1) * n / 4;
                if n - y <= height && x % (n / 4).max(1) != 0 {
                    [30, 90, 200]
                } else {
                    [255, 255, 255]
                }
            });
            Ok::<_, ToolError>(vec![
                text(format!("A {n}x{n} bar chart:")),
                image(png, "image/png"),
            ])
        },
    )?;
    common::run(server).await
}
