#!/usr/bin/env bash
# Re-runnable latency/throughput measurement against a running llama-server.
#
#   scripts/llama/bench.sh [BASE_URL] [RUNS]
#
# BASE_URL defaults to $MM_BASE_URL, else the URL of the server started by
# scripts/llama/serve.sh (pid file). If none is running, one is started (and
# stopped again at the end).
#
# Measures, for RUNS (default 3) streamed chat completions:
#   ttft_s     time from request to the first content token (client side)
#   total_s    request to end of stream
#   tokens     completion tokens (server usage/timings)
#   tok/s      server-side generation speed (timings.predicted_per_second)
#   pp tok/s   server-side prompt processing speed (timings.prompt_per_second)
# then (hook) the end-to-end seconds of the mm demo question if target/dist/mm
# exists. Output is a small Markdown table on stdout.
#
# Env: BENCH_MAX_TOKENS (default 128), BENCH_PROMPT, BENCH_LONG=0 (skip the ~1.2k-token
#      prompt case), MM_BIN (default target/dist/mm), BENCH_E2E_TIMEOUT (default 300 s)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${MM_DEV_CACHE:-$HOME/.cache/mm-dev}"

BASE_URL="${1:-${MM_BASE_URL:-}}"
RUNS="${2:-3}"
STARTED_PID=""

if [[ -z "$BASE_URL" ]]; then
  if out="$("$HERE/serve.sh" status 2>/dev/null)"; then
    BASE_URL="$(sed -n 's/^MM_BASE_URL=//p' <<<"$out")"
  else
    out="$("$HERE/serve.sh" start)"
    BASE_URL="$(sed -n 's/^MM_BASE_URL=//p' <<<"$out")"
    STARTED_PID="$(sed -n 's/^MM_LLAMA_PID=//p' <<<"$out")"
  fi
fi
cleanup() { if [[ -n "$STARTED_PID" ]]; then "$HERE/serve.sh" stop "$STARTED_PID" || true; fi; }
trap cleanup EXIT

echo "# llama-server bench: $BASE_URL ($(date -u +%FT%TZ), $(nproc) cores)"
echo
python3 - "$BASE_URL" "$RUNS" <<'PY'
import json, os, sys, time, urllib.request

base, runs = sys.argv[1].rstrip("/"), int(sys.argv[2])
max_tokens = int(os.environ.get("BENCH_MAX_TOKENS", "128"))
prompt = os.environ.get(
    "BENCH_PROMPT",
    "Explain in a few sentences what a reverse proxy does and why one would use it.",
)

def model_id():
    try:
        with urllib.request.urlopen(base + "/models", timeout=10) as r:
            return json.load(r)["data"][0]["id"]
    except Exception:
        return "local"

mid = model_id()
# An agent-like long prompt (~1k tokens): a system prompt plus tool documentation.
long_prompt = ("You are an ops assistant. Tools: status(service) returns the health of a "
               "service; logs(service, lines) returns recent log lines. " * 40) + "\n" + prompt
cases = [("short", prompt)]
if os.environ.get("BENCH_LONG", "1") != "0":
    cases.append(("long", long_prompt))
rows = []
for case, text in cases:
  for i in range(runs):
    body = {
        "model": mid,
        "messages": [{"role": "user", "content": text}],
        "max_tokens": max_tokens,
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True},
        "cache_prompt": False,  # llama.cpp: measure prompt processing every run
    }
    req = urllib.request.Request(
        base + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    t0 = time.monotonic()
    ttft = None
    usage, timings, chunks = {}, {}, 0
    with urllib.request.urlopen(req, timeout=600) as r:
        for raw in r:
            line = raw.decode("utf-8", "replace").strip()
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            ev = json.loads(data)
            for ch in ev.get("choices") or []:
                d = ch.get("delta") or {}
                if d.get("content") or d.get("reasoning_content"):
                    chunks += 1
                    if ttft is None:
                        ttft = time.monotonic() - t0
            if ev.get("usage"):
                usage = ev["usage"]
            if ev.get("timings"):
                timings = ev["timings"]
    total = time.monotonic() - t0
    toks = usage.get("completion_tokens") or timings.get("predicted_n") or chunks
    rows.append((f"{case} {i + 1}", ttft, total, usage.get("prompt_tokens", timings.get("prompt_n")),
                 toks, timings.get("predicted_per_second"), timings.get("prompt_per_second")))

f = lambda v, p=2: "-" if v is None else (f"{v:.{p}f}" if isinstance(v, float) else str(v))
print("| run | ttft_s | total_s | prompt_tok | completion_tok | gen tok/s | pp tok/s |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r[0]} | {f(r[1])} | {f(r[2])} | {f(r[3])} | {f(r[4])} | {f(r[5],1)} | {f(r[6],1)} |")
for case, _ in cases:
    rs = [r for r in rows if r[0].startswith(case + " ")]
    def avg(k):
        v = [r[k] for r in rs if r[k] is not None]
        return sum(v) / len(v) if v else float("nan")
    print(f"| {case} mean | {avg(1):.2f} | {avg(2):.2f} | | | {avg(5):.1f} | {avg(6):.1f} |")
PY

# ---------------------------------------------------------------------------
# HOOK: end-to-end seconds for the demo question (runs only if mm is built).
# ---------------------------------------------------------------------------
MM_BIN="${MM_BIN:-$ROOT/target/dist/mm}"
DEMO_Q="What is the status of the billing service?"
echo
if [[ -x "$MM_BIN" ]]; then
  echo "## end-to-end: mm demo question"
  mkdir -p "$CACHE/run"
  t0=$(date +%s.%N)
  set +e
  (cd "$ROOT" && timeout "${BENCH_E2E_TIMEOUT:-300}" "$MM_BIN" -a examples/ops/mm.md --base-url "$BASE_URL" --yolo -p "$DEMO_Q") \
    >"$CACHE/run/bench-e2e.out" 2>"$CACHE/run/bench-e2e.err"
  rc=$?
  set -e
  t1=$(date +%s.%N)
  printf '| e2e_s | exit | question |\n|---|---|---|\n| %.2f | %d | %s |\n' \
    "$(python3 -c "print($t1-$t0)")" "$rc" "$DEMO_Q"
  echo
  echo "mm output (first 20 lines):"
  head -20 "$CACHE/run/bench-e2e.out" | sed 's/^/    /'
else
  echo "## end-to-end: skipped ($MM_BIN not built; run 'cargo build --profile dist -p mm' first)"
fi
