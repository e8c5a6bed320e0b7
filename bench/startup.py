#!/usr/bin/env python3
"""mm's fast figures, for one or more mm binaries side by side (a table, not a test).

    bench/startup.py [--runs N] [--agent FILE] [--sandbox MODE,...] BIN [BIN ...]

Against a stub OpenAI-compatible server on 127.0.0.1 (this script; it answers at once), each
binary is run N times (default 30) in print mode, and the table gives:
  - first request: bytes of the body of mm's first POST /chat/completions;
  - start-up: from spawning mm to that request arriving (median and 90th percentile);
  - round trip: the extra wall time per tool call, from a run of 10 `bash` calls (distinct
    `true N` commands, --yolo) against a run with none, medians;
  - peak RSS: mm's maximum resident set (GNU time), in a run without calls and in one with 10.
The agent is `--agent FILE` (default: examples/ops/mm.md), run from its folder.
`--sandbox off,workspace` runs each binary once per mode (`mm --sandbox MODE`), a row each: the
round-trip column then gives the sandbox's cost per tool call (docs/sandbox.md).
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CALLS = 10
SCRATCH = tempfile.mkdtemp(prefix="mm-bench-")


class Stub:
    """Serves a script of replies per run: `calls` tool calls to bash, then a text answer."""

    def __init__(self):
        self.lock = threading.Lock()
        self.calls_left = 0
        self.first = None  # (arrival time, body length) of the first request of the run
        self.counter = 0

    def reset(self, calls):
        with self.lock:
            self.calls_left = calls
            self.first = None

    def reply(self, body):
        with self.lock:
            if self.first is None:
                self.first = (time.perf_counter(), len(body))
            if self.calls_left > 0:
                self.calls_left -= 1
                self.counter += 1
                args = json.dumps({"command": f"true {self.counter}"})
                delta = {"tool_calls": [{"index": 0, "id": f"c{self.counter}", "type": "function",
                                         "function": {"name": "bash", "arguments": args}}]}
                finish = "tool_calls"
            else:
                delta, finish = {"content": "ok"}, "stop"
        chunks = [
            {"choices": [{"index": 0, "delta": {"role": "assistant", **delta}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
        ]
        return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def serve(stub):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self):
            super().setup()
            # Headers and body are two writes: without this, Nagle and the client's delayed ACK
            # add 40 ms to every reply.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, *args):
            pass

        def do_GET(self):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            data = stub.reply(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def run(binary, agent, url, stub, calls, wrap=(), sandbox=None):
    stub.reset(calls)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")}
    # Sessions (and MCP logs) go to a scratch folder, not the user's.
    env["XDG_DATA_HOME"] = env["XDG_STATE_HOME"] = SCRATCH
    argv = [*wrap, binary, "--agent", agent.name, "--base-url", url, "--yolo", "-p", "go"]
    if sandbox:
        argv[len(wrap) + 1:len(wrap) + 1] = ["--sandbox", sandbox]
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=agent.parent, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    ended = time.perf_counter()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{binary} failed (exit {os.waitstatus_to_exitcode(status)}): {' '.join(argv)}")
    arrived, size = stub.first
    return arrived - started, ended - started, size, usage.ru_maxrss


def peak_rss(binary, agent, url, stub, calls, sandbox=None):
    """mm's own peak RSS in MiB, read by GNU time (a child forked from this script would count
    the Python pages it held before exec)."""
    with tempfile.NamedTemporaryFile("r") as out:
        run(binary, agent, url, stub, calls, ("/usr/bin/time", "-f", "%M", "-o", out.name),
            sandbox)
        return int(out.read().split()[-1]) / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--agent", default=str(Path(__file__).resolve().parent.parent
                                               / "examples/ops/mm.md"))
    parser.add_argument("--sandbox", default="",
                        help="comma-separated sandbox modes to run each binary with")
    parser.add_argument("binaries", nargs="+")
    opts = parser.parse_args()
    agent = Path(opts.agent).resolve()
    stub = Stub()
    server = serve(stub)
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    rows = []
    modes = [m for m in opts.sandbox.split(",") if m] or [None]
    for binary, mode in ((str(Path(b).resolve()), m) for b in opts.binaries for m in modes):
        run(binary, agent, url, stub, 0, sandbox=mode)  # warm the page cache
        plain = [run(binary, agent, url, stub, 0, sandbox=mode) for _ in range(opts.runs)]
        tools = [run(binary, agent, url, stub, CALLS, sandbox=mode) for _ in range(opts.runs)]
        starts = sorted(r[0] * 1000 for r in plain)
        p90 = starts[min(len(starts) - 1, int(len(starts) * 0.9))]
        trip = (statistics.median(r[1] for r in tools)
                - statistics.median(r[1] for r in plain)) / CALLS * 1000
        rss, rss_tools = (peak_rss(binary, agent, url, stub, calls, mode)
                          for calls in (0, CALLS))
        label = f"{binary} --sandbox {mode}" if mode else binary
        rows.append((label, plain[0][2], statistics.median(starts), p90, trip, rss, rss_tools))
    print(f"agent {agent}, {opts.runs} runs each, {os.cpu_count()} cores, "
          f"{time.strftime('%Y-%m-%d')}")
    print("| binary | first request | start-up median | start-up p90 | per round trip "
          "| peak RSS | peak RSS, 10 calls |")
    print("|---|---|---|---|---|---|---|")
    for binary, size, median, p90, trip, rss, rss_tools in rows:
        print(f"| {binary} | {size} B | {median:.2f} ms | {p90:.2f} ms | {trip:.2f} ms "
              f"| {rss:.1f} MiB | {rss_tools:.1f} MiB |")


if __name__ == "__main__":
    main()
