//! `get_price`: a typed output (`outputSchema`, validated, sent as `structuredContent`).

mod common;

use picomcp::{Ctx, Server, ToolConfig, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PriceInput {
    /// The product's stock-keeping unit, e.g. `SKU-42`.
    sku: String,
}

#[derive(Serialize, JsonSchema)]
enum Currency {
    #[allow(clippy::upper_case_acronyms)]
    EUR,
}

#[derive(Serialize, JsonSchema)]
struct Price {
    sku: String,
    /// The price in cents.
    cents: i64,
    currency: Currency,
}

/// A made-up but stable price.
fn price_of(sku: &str) -> i64 {
    let sum: i64 = sku.bytes().map(i64::from).sum();
    500 + sum % 9500
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut server = Server::new("prices", env!("CARGO_PKG_VERSION"));
    server.tool_with_output(
        "get_price",
        ToolConfig::new()
            .description("The current price of a product, in euro cents.")
            .read_only_hint(true),
        |input: PriceInput, _ctx: Ctx| async move {
            let cents = price_of(&input.sku);
            Ok::<_, ToolError>(Price {
                sku: input.sku,
                cents,
                currency: Currency::EUR,
            })
        },
    )?;
    common::run(server).await
}
