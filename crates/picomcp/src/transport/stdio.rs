//! The stdio transport: one JSON-RPC message per line in, one per line out.
//!
//! Reading, handling and writing run concurrently: the reader registers each request and spawns
//! its handler, so a slow tool never holds back the next line (nor the `notifications/cancelled`
//! that may follow it); a single writer task owns stdout, batches whatever is queued into a
//! buffer and flushes only when the queue is empty, so a burst of answers costs one write.

use std::io;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;

use crate::era::{self, Era};
use crate::jsonrpc::{self, Incoming};
use crate::server::Server;

const BUFFER: usize = 64 * 1024;

impl Server {
    /// Serves this server over stdin/stdout until stdin ends and every request in flight has
    /// been answered.
    pub async fn serve_stdio(self) -> io::Result<()> {
        serve(self, tokio::io::stdin(), tokio::io::stdout()).await
    }
}

/// Serves `server` over any reader/writer pair (stdio, a pipe, an in-memory duplex in tests).
pub async fn serve<R, W>(server: Server, reader: R, writer: W) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let server = server.into_inner();
    let session = server.new_session();
    let (tx, rx) = mpsc::unbounded_channel::<String>();
    session.set_standalone(Some(tx.clone()));
    let writer_task = tokio::spawn(write_loop(writer, rx));

    let mut reader = BufReader::with_capacity(BUFFER, reader);
    let mut line = Vec::with_capacity(1024);
    let read_result = loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) => break Ok(()),
            Ok(_) => {}
            Err(e) => break Err(e),
        }
        let message = line.trim_ascii();
        if message.is_empty() {
            continue;
        }
        match Incoming::parse(message) {
            Err(bad) => {
                let _ = tx.send(jsonrpc::encode_error(bad.id.as_ref(), &bad.error));
            }
            Ok(incoming) => {
                // Each request says its era (both may share the connection); in the modern one
                // the connection's session only tracks it for `notifications/cancelled`.
                let era = match &incoming {
                    Incoming::Request { id, method, params } => {
                        match era::classify(method, params.as_ref(), None) {
                            Ok(era) => era,
                            Err(refusal) => {
                                let _ = tx.send(jsonrpc::encode_error(Some(id), &refusal.error));
                                continue;
                            }
                        }
                    }
                    _ => Era::Legacy,
                };
                if let Some(answer) = session.handle(&server, incoming, era, &tx) {
                    let tx = tx.clone();
                    tokio::spawn(async move {
                        if let Some(response) = answer.await {
                            let _ = tx.send(response.body);
                        }
                    });
                }
            }
        }
    };
    // Requests in flight still get their answers; the writer ends when the last sender (held by
    // those requests) is dropped.
    session.close_input();
    drop(tx);
    let write_result = writer_task
        .await
        .map_err(|e| io::Error::other(format!("stdio writer task failed: {e}")))?;
    read_result?;
    if let Err(e) = &write_result {
        tracing::debug!(error = %e, "stdio writer stopped");
    }
    match write_result {
        // The client went away first: a normal end.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(
    writer: W,
    mut rx: mpsc::UnboundedReceiver<String>,
) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(BUFFER, writer);
    while let Some(message) = rx.recv().await {
        out.write_all(message.as_bytes()).await?;
        out.write_all(b"\n").await?;
        while let Ok(message) = rx.try_recv() {
            out.write_all(message.as_bytes()).await?;
            out.write_all(b"\n").await?;
        }
        out.flush().await?;
    }
    out.flush().await
}
