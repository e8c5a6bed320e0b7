#!/usr/bin/env bash
# What MCP servers cost mm (a table, not a test):
#   1. start-up to the first request, and the other fast figures of bench/startup.py, for the
#      example agent alone, with one Streamable HTTP server, with one stdio server, and with
#      both (the picomcp `echo` example: one tool); the servers connect in parallel;
#   2. the bytes one tool adds to the first request as an MCP tool (`web_echo`) and as the same
#      tool declared in the agent file (`echo`, same description and parameter).
#   bench/mcp.sh [--runs N]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=30
[ "${1:-}" = "--runs" ] && runs="$2"
cargo build -q --profile dist --locked -p mm
cargo build -q --release --locked -p picomcp --example echo
BIN="$PWD/target/dist/mm"
ECHO="$PWD/target/release/examples/echo"
tmp="$(mktemp -d)"
cp -r examples/ops "$tmp/ops"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$ECHO" --http "127.0.0.1:$port" 2>/dev/null &
pid=$!
trap 'kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.05; done

# agent NAME MCP_YAML: the example agent with these `mcp:` lines in its front matter.
agent() {
  python3 - "$tmp/ops/mm.md" "$tmp/ops/$1.md" "$2" <<'PY'
import sys
src, dst, mcp = sys.argv[1:]
text = open(src).read()
head, sep, body = text.partition("\n---\n")
open(dst, "w").write(head + ("\n" + mcp if mcp else "") + sep + body)
PY
}
agent none ""
agent http "mcp:
  web: {url: \"http://127.0.0.1:$port/mcp\"}"
agent stdio "mcp:
  cli: {command: [\"$ECHO\"]}"
agent both "mcp:
  web: {url: \"http://127.0.0.1:$port/mcp\"}
  cli: {command: [\"$ECHO\"]}"

echo "## start-up with MCP servers (picomcp echo; $runs runs each)"
for name in none http stdio both; do
  echo
  echo "### $name"
  python3 bench/startup.py --runs "$runs" --agent "$tmp/ops/$name.md" "$BIN" | tail -n +2
done

echo
echo "## bytes one tool adds to the first request"
cat > "$tmp/ops/declared.md" <<'MD'
---
builtins: []
tools:
  echo:
    description: Echo the text back.
    parameters:
      text: {type: string, description: The text to send back.}
    command: [echo, "{{text}}"]
---
MD
cat > "$tmp/ops/mcp.md" <<MD
---
builtins: []
mcp:
  web: {url: "http://127.0.0.1:$port/mcp"}
---
MD
echo "| as | name | bytes in the request | the tool as sent |"
echo "|---|---|---|---|"
for name in declared mcp; do
  (cd "$tmp/ops" && "$BIN" --agent "$name.md" tools) | python3 -c '
import json, sys
for tool in json.load(sys.stdin):
    text = json.dumps(tool, separators=(",", ":"))
    name = tool["function"]["name"]
    print(f"| {sys.argv[1]} | {name} | {len(text)} B | `{text}` |")
' "$name"
done
