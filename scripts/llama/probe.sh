#!/usr/bin/env bash
# Probe a running llama-server for the behaviours the mm provider relies on, and
# print the exact request/response bodies (Markdown) — the source of the
# findings in docs/local-model.md.
#
#   scripts/llama/probe.sh [BASE_URL]      (default $MM_BASE_URL or serve.sh status)
#
# Probes: /health, /props (chat_template_caps ...), /v1/models, a plain chat
# completion, `tools` (non-stream + stream), response_format json_schema
# (oneOf tool-call/answer), json_object, streaming on/off, and a context
# overflow (prompt longer than -c).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BASE_URL="${1:-${MM_BASE_URL:-}}"
if [[ -z "$BASE_URL" ]]; then
  BASE_URL="$("$HERE/serve.sh" status | sed -n 's/^MM_BASE_URL=//p')"
fi
[[ -n "$BASE_URL" ]] || { echo "no server; run scripts/llama/serve.sh start" >&2; exit 1; }

python3 - "$BASE_URL" <<'PY'
import json, sys, time, urllib.request, urllib.error

v1 = sys.argv[1].rstrip("/")
root = v1[:-3] if v1.endswith("/v1") else v1

def req(method, url, body=None, stream=False):
    data = json.dumps(body).encode() if body is not None else None
    r = urllib.request.Request(url, data=data, method=method,
                               headers={"Content-Type": "application/json"})
    t0 = time.monotonic()
    try:
        resp = urllib.request.urlopen(r, timeout=600)
        status = resp.status
    except urllib.error.HTTPError as e:
        resp, status = e, e.code
    ttft = None
    if stream and status == 200:
        events = []
        for raw in resp:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if line.startswith("data:") and ttft is None:
                ttft = time.monotonic() - t0
            if line.strip():
                events.append(line)
        text = "\n".join(events)
    else:
        text = resp.read().decode("utf-8", "replace")
    dt = time.monotonic() - t0
    return status, text, dt, ttft

def show(title, method, path, body=None, stream=False, maxlen=4000, base=v1):
    print(f"\n### {title}\n")
    if body is not None:
        b = json.dumps(body)
        print(f"`{method} {path}` body:\n```json\n{b if len(b) < 1500 else b[:1500] + ' …(truncated)'}\n```")
    else:
        print(f"`{method} {path}`")
    status, text, dt, ttft = req(method, base + path, body, stream)
    extra = f", first SSE line after {ttft:.2f}s" if ttft is not None else ""
    print(f"\nHTTP {status} in {dt:.2f}s{extra}\n")
    try:
        pretty = json.dumps(json.loads(text), indent=1, ensure_ascii=False)
    except Exception:
        pretty = text
    if len(pretty) > maxlen:
        pretty = pretty[:maxlen] + "\n…(truncated)"
    print(f"```\n{pretty}\n```")
    return status, text

print(f"# llama-server probe: {v1}")
show("health", "GET", "/health", base=root)

st, props = req("GET", root + "/props")[:2]
print("\n### /props (selected fields)\n")
try:
    p = json.loads(props)
    sel = {k: p.get(k) for k in ("chat_template_caps", "build_info", "model_path",
                                   "total_slots", "modalities", "bos_token", "eos_token")}
    dgs = p.get("default_generation_settings", {})
    sel["default_generation_settings.n_ctx"] = dgs.get("n_ctx")
    sel["default_generation_settings.params.n_predict"] = dgs.get("params", {}).get("n_predict")
    print(f"HTTP {st}\n```json\n{json.dumps(sel, indent=1)}\n```")
    tmpl = p.get("chat_template", "")
    print(f"\nchat_template: {len(tmpl)} chars; mentions 'tool': {'tool' in tmpl}\n")
except Exception as e:
    print(f"HTTP {st}: {props[:2000]} ({e})")

show("/v1/models", "GET", "/models")

msgs = [{"role": "user", "content": "Say hello in five words."}]
show("plain chat, stream=false", "POST", "/chat/completions",
     {"messages": msgs, "max_tokens": 32, "temperature": 0})
show("plain chat, stream=true", "POST", "/chat/completions",
     {"messages": msgs, "max_tokens": 16, "temperature": 0, "stream": True})

tools = [{"type": "function", "function": {
    "name": "status", "description": "Get the status of a service",
    "parameters": {"type": "object", "properties": {"service": {"type": "string"}},
                   "required": ["service"]}}}]
q = [{"role": "system", "content": "You are an ops assistant. Use the status tool to check services."},
     {"role": "user", "content": "What is the status of the billing service?"}]
show("/apply-template with tools (are tools rendered into the prompt?)", "POST", "/apply-template",
     {"messages": q, "tools": tools}, base=root)
show("tools, stream=false", "POST", "/chat/completions",
     {"messages": q, "tools": tools, "max_tokens": 128, "temperature": 0})
show("tools, tool_choice=required, stream=false", "POST", "/chat/completions",
     {"messages": q, "tools": tools, "tool_choice": "required", "max_tokens": 128, "temperature": 0})
show("tools, stream=true", "POST", "/chat/completions",
     {"messages": q, "tools": tools, "max_tokens": 128, "temperature": 0, "stream": True}, maxlen=6000)

schema = {"oneOf": [
    {"type": "object", "properties": {"tool": {"const": "status"},
     "arguments": {"type": "object", "properties": {"service": {"type": "string"}},
                   "required": ["service"]}}, "required": ["tool", "arguments"]},
    {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}]}
q2 = [{"role": "system", "content": "You are an ops assistant. Reply with JSON only: either "
       '{"tool":"status","arguments":{"service":NAME}} to check a service, or {"answer":TEXT}.'},
      {"role": "user", "content": "What is the status of the billing service?"}]
show("response_format json_schema (oneOf), stream=false", "POST", "/chat/completions",
     {"messages": q2, "max_tokens": 128, "temperature": 0,
      "response_format": {"type": "json_schema", "json_schema": {"name": "step", "schema": schema}}})
show("response_format json_schema (oneOf), no system hint (is it still constrained?)", "POST",
     "/chat/completions",
     {"messages": [{"role": "user", "content": "Write a haiku about autumn."}], "max_tokens": 96,
      "temperature": 0,
      "response_format": {"type": "json_schema", "json_schema": {"name": "step", "schema": schema}}})
show("response_format json_schema (oneOf), stream=true", "POST", "/chat/completions",
     {"messages": q2, "max_tokens": 96, "temperature": 0, "stream": True,
      "response_format": {"type": "json_schema", "json_schema": {"name": "step", "schema": schema}}},
     maxlen=6000)
show("response_format json_object", "POST", "/chat/completions",
     {"messages": [{"role": "user", "content": "Give me a JSON object describing a cat."}],
      "max_tokens": 64, "temperature": 0, "response_format": {"type": "json_object"}})
show("response_format json_schema + tools together", "POST", "/chat/completions",
     {"messages": q2, "tools": tools, "max_tokens": 64, "temperature": 0,
      "response_format": {"type": "json_schema", "json_schema": {"name": "step", "schema": schema}}})

long = "word " * 6000
show("context overflow (prompt > n_ctx), stream=false", "POST", "/chat/completions",
     {"messages": [{"role": "user", "content": long}], "max_tokens": 16})
show("context overflow (prompt > n_ctx), stream=true", "POST", "/chat/completions",
     {"messages": [{"role": "user", "content": long}], "max_tokens": 16, "stream": True})
mid = "word " * 4000
show("prompt fits, but prompt + max_tokens > n_ctx", "POST", "/chat/completions",
     {"messages": [{"role": "user", "content": mid + "\nSummarise."}], "max_tokens": 512,
      "temperature": 0}, maxlen=1500)
PY
