# Shared helpers for scripts/mcp/*.sh (sourced, not executed).
MCP_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export PICOMCP_TARGET_DIR="${PICOMCP_TARGET_DIR:-$MCP_ROOT/target-picomcp}"

# Sets NODE22 and puts it first on PATH (installs it if needed).
mcp_setup_node() {
  eval "$("$MCP_ROOT/scripts/mcp/setup-node.sh" --env)"
}

# Prints a free TCP port on 127.0.0.1.
mcp_free_port() {
  "$NODE22" -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

# mcp_wait_port PORT PID [SECONDS]: wait until 127.0.0.1:PORT accepts, or PID dies.
mcp_wait_port() {
  local port="$1" pid="$2" secs="${3:-30}" i
  for ((i = 0; i < secs * 10; i++)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "process $pid exited before listening on $port" >&2
      return 1
    fi
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  echo "timed out waiting for 127.0.0.1:$port" >&2
  return 1
}

# Build picomcp examples (debug) into $PICOMCP_TARGET_DIR; args: cargo build flags.
mcp_build_examples() {
  (cd "$MCP_ROOT" && CARGO_TARGET_DIR="$PICOMCP_TARGET_DIR" cargo build --locked -p picomcp "$@")
}
