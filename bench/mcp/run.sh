#!/usr/bin/env bash
# MCP tools/call benchmark: picomcp vs the official TypeScript SDK vs rmcp.
#
# For each server: a trivial `echo` tool, driven by bench/mcp/loadgen (Rust,
# tokio + hyper) with
#   * Streamable HTTP, one stateful session (initialize -> Mcp-Session-Id),
#     client Accept "application/json, text/event-stream", 1 and 50 requests in
#     flight (50 = 50 keep-alive connections, one request each);
#   * stdio, 50 requests pipelined on the server's stdin.
# Reports req/s, p50/p99 latency, errors, the response content type the server
# chose, and the server's peak RSS (VmHWM, /proc/PID/status) after the runs.
# For picomcp (and the others) also: RSS per idle HTTP session (N initializes).
#
# NOT part of the test suite.  Usage:
#   bench/mcp/run.sh                          # everything (~3 min of load)
#   BENCH_SERVERS="picomcp rmcp" BENCH_DURATION=5 bench/mcp/run.sh
# Env: BENCH_DURATION (s, default 10), BENCH_WARMUP (s, default 2),
#      BENCH_SESSIONS (default 900; picomcp caps sessions at 1000),
#      BENCH_SERVERS (default "picomcp ts-sdk rmcp"), BENCH_OUT (results dir),
#      BENCH_LOADGEN_THREADS (client tokio worker threads, default 1),
#      BENCH_MODERN_SERVERS (default "picomcp"): servers also driven in the MCP 2026-07-28
#      era (no initialize, no session: every request stateless, `--modern` in the loadgen).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
source "$ROOT/scripts/mcp/lib.sh"
CACHE="${MM_DEV_CACHE:-$HOME/.cache/mm-dev}"
BENCH_TARGET="$CACHE/bench-target"
DURATION="${BENCH_DURATION:-10}"
WARMUP="${BENCH_WARMUP:-2}"
SESSIONS="${BENCH_SESSIONS:-900}"
SERVERS="${BENCH_SERVERS:-picomcp ts-sdk rmcp}"
THREADS="${BENCH_LOADGEN_THREADS:-1}"
MODERN_SERVERS="${BENCH_MODERN_SERVERS:-picomcp}"
OUT="${BENCH_OUT:-$CACHE/bench-results/$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$OUT"
RESULTS="$OUT/results.jsonl"
: >"$RESULTS"

log() { echo "[bench] $*" >&2; }

# ---- build / install (idempotent)
mcp_setup_node
ln -sfn ../../interop/node_modules "$HERE/node_modules"
log "building loadgen and rmcp-echo (release, target $BENCH_TARGET)"
for p in loadgen rmcp-echo; do
  (cd "$HERE/$p" && CARGO_TARGET_DIR="$BENCH_TARGET" cargo build --release --locked --quiet)
done
log "building picomcp example echo (release, target $PICOMCP_TARGET_DIR)"
mcp_build_examples --release --example echo --quiet
LOADGEN="$BENCH_TARGET/release/mcp-loadgen"
RMCP="$BENCH_TARGET/release/rmcp-echo"
PICO="$PICOMCP_TARGET_DIR/release/examples/echo"
LOAD_START="$(cut -d' ' -f1-3 /proc/loadavg)"

server_cmd() { # server_cmd NAME -> the stdio command line (HTTP adds --http ADDR)
  case "$1" in
    picomcp) echo "$PICO" ;;
    ts-sdk) echo "$NODE22 $HERE/ts-echo-server.mjs" ;;
    rmcp) echo "$RMCP" ;;
    *) echo "unknown server $1" >&2; exit 2 ;;
  esac
}

SERVER_PID=""
stop_server() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 30); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  SERVER_PID=""
}
trap stop_server EXIT INT TERM

start_http() { # start_http NAME -> sets SERVER_PID, URL
  local port
  port="$(mcp_free_port)"
  # shellcheck disable=SC2046
  $(server_cmd "$1") --http "127.0.0.1:$port" >"$OUT/$1-http.log" 2>&1 &
  SERVER_PID=$!
  mcp_wait_port "$port" "$SERVER_PID" 30
  URL="http://127.0.0.1:$port/mcp"
}

run_lg() { # run_lg MODE ARGS... : run loadgen, append its JSON line to results
  local line mode="$1"
  shift
  line="$("$LOADGEN" "$mode" --threads "$THREADS" "$@")"
  echo "$line" >>"$RESULTS"
  log "$line"
}

for s in $SERVERS; do
  log "== $s: Streamable HTTP"
  start_http "$s"
  run_lg http --url "$URL" -c 1 --warmup "$WARMUP" --duration "$DURATION" --pid "$SERVER_PID" --label "$s"
  run_lg http --url "$URL" -c 50 --warmup "$WARMUP" --duration "$DURATION" --pid "$SERVER_PID" --label "$s"
  stop_server
  if [[ " $MODERN_SERVERS " == *" $s "* ]]; then
    log "== $s: Streamable HTTP, 2026-07-28 (stateless)"
    start_http "$s"
    run_lg http --modern --url "$URL" -c 1 --warmup "$WARMUP" --duration "$DURATION" --pid "$SERVER_PID" --label "$s"
    run_lg http --modern --url "$URL" -c 50 --warmup "$WARMUP" --duration "$DURATION" --pid "$SERVER_PID" --label "$s"
    stop_server
    log "== $s: stdio, 2026-07-28, 50 pipelined"
    # shellcheck disable=SC2046
    run_lg stdio --modern -c 50 --warmup "$WARMUP" --duration "$DURATION" --label "$s" -- $(server_cmd "$s")
  fi
  log "== $s: idle sessions"
  start_http "$s"
  run_lg sessions --url "$URL" --n "$SESSIONS" --pid "$SERVER_PID" --label "$s"
  stop_server
  log "== $s: stdio, 50 pipelined"
  # shellcheck disable=SC2046
  run_lg stdio -c 50 --warmup "$WARMUP" --duration "$DURATION" --label "$s" -- $(server_cmd "$s")
done

{
  echo "MCP echo tools/call benchmark — $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, warmup ${WARMUP}s + ${DURATION}s per row, loadgen threads $THREADS, load average before/after: $LOAD_START / $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "picomcp $(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?'), @modelcontextprotocol/sdk $("$NODE22" -p "require('$ROOT/interop/node_modules/@modelcontextprotocol/sdk/package.json').version") on node $("$NODE22" --version), rmcp $(sed -n 's/^rmcp = { version = "=\([^"]*\)".*/\1/p' "$HERE/rmcp-echo/Cargo.toml")"
  echo
  "$LOADGEN" table "$RESULTS"
} | tee "$OUT/table.md"
log "results: $OUT"
