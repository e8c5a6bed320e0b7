#!/usr/bin/env bash
# Start / stop a local llama-server (OpenAI-compatible API) for mm development.
#
#   scripts/llama/serve.sh start [--model NAME|PATH] [--port N] [--ctx N] [--from-source] [-- extra llama-server args]
#       NAME is one of the models of docs/models.md, fetched by its script when missing:
#         gemma      Gemma 3 270M base (scripts/model/fetch-gemma.sh; the default, or $MM_SERVE_MODEL)
#         qwen-0.5b  Qwen2.5-Coder-0.5B-Instruct (native tool calls through its own template)
#         qwen-1.5b  Qwen2.5-Coder-1.5B-Instruct (same)
#         smollm2    SmolLM2-135M-Instruct (ChatML without tools: mm's constrained mode)
#       PATH is any GGUF file. Ensures the model and the server exist (scripts/llama/server.sh:
#       llama.cpp's server from the pinned xllamacpp wheel, or the source build with --from-source
#       or when the wheel cannot run here), starts llama-server in the
#       background on 127.0.0.1:<free port>, waits for GET /health == 200, and
#       prints (eval-able):
#           MM_BASE_URL=http://127.0.0.1:PORT/v1
#           MM_LLAMA_PID=PID
#           MM_LLAMA_LOG=/path/to/log
#       e.g.  eval "$(scripts/llama/serve.sh start)"; echo "$MM_BASE_URL"
#   scripts/llama/serve.sh stop [PID]    stop the server we started (pid file) or PID
#   scripts/llama/serve.sh status        print URL/PID if running
#
# Every model runs with --jinja: its own chat template (Qwen's renders tools and tool calls; llama-server
# then parses <tool_call> replies into tool_calls), or the one below.
#
# Env: MM_DEV_CACHE (default ~/.cache/mm-dev), LLAMA_SERVER (binary override),
#      MM_LLAMA_FROM_SOURCE=1 (same as --from-source),
#      LLAMA_THREADS (default: nproc), LLAMA_PARALLEL (slots, default 1),
#      HEALTH_TIMEOUT (seconds, default 180),
#      MM_CHAT_TEMPLATE: Jinja template file passed as --chat-template-file. Default:
#        scripts/llama/templates/gemma3.jinja when the model file name contains
#        "gemma-3" (the PyPI GGUF has no embedded template; llama-server would fall
#        back to ChatML). Set MM_CHAT_TEMPLATE=none to use the model's own/fallback.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${MM_DEV_CACHE:-$HOME/.cache/mm-dev}"
RUN="$CACHE/run"
PIDFILE="$RUN/llama-server.pid"
URLFILE="$RUN/llama-server.url"

log() { echo "[serve] $*" >&2; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

is_running() { [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null; }

cmd_start() {
  local model="" port="" ctx=4096 extra=() source_args=()
  while (($#)); do
    case "$1" in
      --model) model="$2"; shift 2 ;;
      --port) port="$2"; shift 2 ;;
      --ctx) ctx="$2"; shift 2 ;;
      --from-source) source_args=(--from-source); shift ;;
      --) shift; extra=("$@"); break ;;
      *) log "unknown arg: $1"; exit 2 ;;
    esac
  done

  if [[ -f "$PIDFILE" ]] && is_running "$(cat "$PIDFILE")"; then
    log "already running (pid $(cat "$PIDFILE")); use 'stop' first"
    echo "MM_BASE_URL=$(cat "$URLFILE")"
    echo "MM_LLAMA_PID=$(cat "$PIDFILE")"
    return 0
  fi

  model="${model:-${MM_SERVE_MODEL:-gemma}}"
  case "$model" in
    gemma | qwen-0.5b | qwen-1.5b | smollm2)
      model="$("$ROOT/scripts/model/fetch-$model.sh" | tail -1)" ;;
    *) [[ -f "$model" ]] || { log "no model file $model (or a name: gemma, qwen-0.5b, qwen-1.5b, smollm2)"; exit 2; } ;;
  esac
  local bin="${LLAMA_SERVER:-}"
  [[ -n "$bin" ]] || bin="$("$HERE/server.sh" "${source_args[@]}" --model "$model" | tail -1)"
  [[ -n "$port" ]] || port="$(free_port)"

  local tmpl="${MM_CHAT_TEMPLATE:-}" tmpl_args=()
  if [[ -z "$tmpl" && "$(basename "$model")" == *gemma-3* ]]; then
    tmpl="$HERE/templates/gemma3.jinja"
  fi
  if [[ -n "$tmpl" && "$tmpl" != none ]]; then
    [[ -f "$tmpl" ]] || { log "chat template not found: $tmpl"; exit 1; }
    tmpl_args=(--chat-template-file "$tmpl")
  fi

  mkdir -p "$RUN"
  local logf="$RUN/llama-server-$port.log"
  log "starting $bin on 127.0.0.1:$port (ctx $ctx, model $model, template ${tmpl:-model default})"
  # setsid: own process group, so the caller's shell/job control does not kill it.
  setsid "$bin" --jinja -m "$model" --host 127.0.0.1 --port "$port" \
    -c "$ctx" -np "${LLAMA_PARALLEL:-1}" -t "${LLAMA_THREADS:-$(nproc)}" \
    "${tmpl_args[@]}" "${extra[@]}" >"$logf" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$PIDFILE"
  echo "http://127.0.0.1:$port/v1" >"$URLFILE"

  local deadline=$((SECONDS + ${HEALTH_TIMEOUT:-180})) code=""
  while ((SECONDS < deadline)); do
    if ! is_running "$pid"; then
      log "llama-server exited early; last log lines:"
      tail -20 "$logf" >&2
      rm -f "$PIDFILE" "$URLFILE"
      exit 1
    fi
    code="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health" || true)"
    [[ "$code" == 200 ]] && break
    sleep 0.5
  done
  if [[ "$code" != 200 ]]; then
    log "timed out waiting for /health (last status $code); stopping pid $pid"
    kill "$pid" 2>/dev/null || true
    rm -f "$PIDFILE" "$URLFILE"
    exit 1
  fi
  log "healthy after ${SECONDS}s"
  echo "MM_BASE_URL=http://127.0.0.1:$port/v1"
  echo "MM_LLAMA_PID=$pid"
  echo "MM_LLAMA_LOG=$logf"
}

cmd_stop() {
  local pid="${1:-}"
  [[ -n "$pid" ]] || { [[ -f "$PIDFILE" ]] && pid="$(cat "$PIDFILE")"; }
  if [[ -z "$pid" ]]; then log "no pid file; nothing to stop"; return 0; fi
  if is_running "$pid"; then
    kill "$pid"
    for _ in $(seq 1 50); do is_running "$pid" || break; sleep 0.1; done
    if is_running "$pid"; then kill -9 "$pid" 2>/dev/null || true; fi
    log "stopped pid $pid"
  else
    log "pid $pid not running"
  fi
  if [[ -f "$PIDFILE" && "$(cat "$PIDFILE")" == "$pid" ]]; then rm -f "$PIDFILE" "$URLFILE"; fi
}

cmd_status() {
  if [[ -f "$PIDFILE" ]] && is_running "$(cat "$PIDFILE")"; then
    echo "MM_BASE_URL=$(cat "$URLFILE")"
    echo "MM_LLAMA_PID=$(cat "$PIDFILE")"
  else
    log "not running"
    return 1
  fi
}

case "${1:-}" in
  start) shift; cmd_start "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  status) shift; cmd_status "$@" ;;
  *) echo "usage: $0 start [--model NAME|PATH] [--port N] [--ctx N] [--from-source] [-- args] | stop [PID] | status" >&2; exit 2 ;;
esac
