"""Interop: the official MCP Python SDK client (`mcp`, pinned in requirements.txt)
against picomcp's examples over stdio and Streamable HTTP.

The Python SDK 2.x connects in mode "auto" by default: it first probes
`server/discover` at the 2026-07-28 revision and falls back to the
`initialize` handshake when the server does not speak it. picomcp serves both
eras on one endpoint, so "auto" gets the 2026-07-28 era (stateless requests)
and "legacy" the 2025-11-25 one; every check runs in both.  Run with scripts/mcp/interop-python.sh.
Prints one line per check and a closing "N passed, N failed" line.
"""
from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
import traceback
import warnings
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning

# ping is deprecated (removed) for 2026-07-28 connections; only the legacy ones ping.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

# The era each connection mode must end up in against picomcp.
EXPECTED_VERSION = {"auto": "2026-07-28", "legacy": "2025-11-25"}

EXAMPLES = Path(os.environ.get("PICOMCP_EXAMPLES_DIR", Path(__file__).resolve().parents[2] / "target-picomcp/debug/examples"))
TRANSPORTS = os.environ.get("MCP_INTEROP_TRANSPORTS", "stdio,http").split(",")
MODES = os.environ.get("MCP_INTEROP_PY_MODES", "auto,legacy").split(",")

passed = 0
failed = 0


def report(name: str, ok: bool, detail: str = "") -> None:
    global passed, failed
    if ok:
        passed += 1
        print(f"ok - {name}", flush=True)
    else:
        failed += 1
        print(f"not ok - {name}\n    {detail}", flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """An example started for one connection (HTTP) or a stdio parameter set."""

    def __init__(self, example: str, kind: str):
        self.example, self.kind, self.proc = example, kind, None

    def __enter__(self):
        binary = str(EXAMPLES / self.example)
        if self.kind == "stdio":
            self.target = StdioServerParameters(command=binary, args=[])
            return self
        port = free_port()
        self.proc = subprocess.Popen([binary, "--http", f"127.0.0.1:{port}"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"{self.example} --http did not start: {self.proc.stderr.read()!r}")
                time.sleep(0.05)
        self.target = f"http://127.0.0.1:{port}/mcp"
        return self

    def __exit__(self, *exc):
        if self.proc:
            self.proc.terminate()
            try:
                self.proc.wait(3)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def text_of(result) -> str:
    return "".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def check(name: str, coro) -> None:
    try:
        await coro
        report(name, True)
    except Exception as e:  # noqa: BLE001 - report every failure and go on
        report(name, False, f"{type(e).__name__}: {e}\n" + "".join(traceback.format_exc(limit=3)))


async def scenario(kind: str, mode: str) -> None:
    tag = f"[python {kind} mode={mode}]"

    with Server("echo", kind) as s:
        async def echo():
            async with Client(s.target, mode=mode) as c:
                assert c.protocol_version == EXPECTED_VERSION[mode], c.protocol_version
                tools = (await c.list_tools()).tools
                assert [t.name for t in tools] == ["echo"], tools
                r = await c.call_tool("echo", {"text": "héllo ✓"})
                assert not r.is_error and text_of(r) == "héllo ✓", r
                if mode == "legacy":
                    await c.send_ping()
        await check(f"{tag} echo: connect (negotiates {EXPECTED_VERSION[mode]}), list, call"
                    + (", ping" if mode == "legacy" else ""), echo())

    with Server("search_issues", kind) as s:
        async def search():
            async with Client(s.target, mode=mode) as c:
                r = await c.call_tool("search_issues", {"repo": "octo/widgets", "query": "crash", "limit": 3})
                assert not r.is_error and text_of(r), r
                r = await c.call_tool("search_issues", {"repo": "octo/widgets", "query": "crash", "limit": 500})
                assert r.is_error, r
                want = 'Invalid arguments for tool "search_issues":\nlimit: Too big: expected number to be <=50'
                assert text_of(r) == want, repr(text_of(r))
        await check(f"{tag} search_issues: call + validation failure text", search())

    with Server("get_price", kind) as s:
        async def price():
            async with Client(s.target, mode=mode) as c:
                tools = (await c.list_tools()).tools
                assert tools[0].output_schema, tools[0]
                r = await c.call_tool("get_price", {"sku": "SKU-42"})
                sc = r.structured_content
                assert not r.is_error and sc["sku"] == "SKU-42" and sc["currency"] == "EUR" and isinstance(sc["cents"], int), r
        await check(f"{tag} get_price: structured content", price())

    with Server("image", kind) as s:
        async def image():
            async with Client(s.target, mode=mode) as c:
                name = (await c.list_tools()).tools[0].name
                r = await c.call_tool(name, {})
                imgs = [b for b in r.content if b.type == "image"]
                assert imgs and imgs[0].mime_type == "image/png", r
        await check(f"{tag} image: image content block", image())

    with Server("slow", kind) as s:
        async def progress():
            async with Client(s.target, mode=mode) as c:
                seen = []

                async def on_progress(progress, total, message):
                    seen.append(progress)

                r = await c.call_tool("slow", {"seconds": 1}, progress_callback=on_progress)
                assert not r.is_error, r
                assert len(seen) >= 1 and seen == sorted(seen), seen
        await check(f"{tag} slow: progress callback", progress())

        async def cancel():
            async with Client(s.target, mode=mode) as c:
                t0 = time.monotonic()
                with anyio.move_on_after(0.4) as scope:
                    await c.call_tool("slow", {"seconds": 30})
                assert scope.cancelled_caught, "call was not cancelled"
                assert time.monotonic() - t0 < 2
                t1 = time.monotonic()
                r = await c.call_tool("slow", {"seconds": 0})
                assert not r.is_error and time.monotonic() - t1 < 2, r
        await check(f"{tag} slow: cancel a call, server stays healthy", cancel())


async def main() -> int:
    for kind in TRANSPORTS:
        for mode in MODES:
            await scenario(kind, mode)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
