#!/usr/bin/env python3
"""What the example agent's first request costs: bytes, characters and tokens (a table).

    bench/prompt_cost.py [--tokenize URL] [--agent FILE] BIN

Runs BIN (mm) once per variant against the stub server of bench/startup.py, keeps its first
request, and prints: the request's bytes, the system prompt's characters, the `tools` field's
bytes, and each tool's bytes as sent. Variants: every built-in on (the agent as written) and
built-ins off (`builtins: []`, which also drops `read_skill` and the catalogue). With
`--tokenize http://127.0.0.1:8080` (a llama-server), the system prompt and the tools are also
counted in tokens with the server's `/tokenize` endpoint (the model's own tokenizer).
"""

import argparse
import json
import os
import re
import sys
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from startup import Stub, serve  # noqa: E402


class Recorder(Stub):
    def reply(self, body):
        if self.first is None:
            self.body = body
        return super().reply(body)


def first_request(binary, agent, url, stub):
    stub.reset(0)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")}
    import subprocess
    subprocess.run([binary, "--agent", agent.name, "--base-url", url, "-p", "go"],
                   cwd=agent.parent, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return stub.body


def tokens(url, text):
    request = urllib.request.Request(f"{url.rstrip('/')}/tokenize",
                                     data=json.dumps({"content": text}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return len(json.load(response)["tokens"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokenize", help="a llama-server base URL (without /v1)")
    parser.add_argument("--agent", default=str(Path(__file__).resolve().parent.parent
                                               / "examples/ops/mm.md"))
    parser.add_argument("binary")
    opts = parser.parse_args()
    agent = Path(opts.agent).resolve()
    binary = str(Path(opts.binary).resolve())
    stub = Recorder()
    server = serve(stub)
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"

    text = agent.read_text()
    off = agent.with_name(f".{agent.stem}-builtins-off{agent.suffix}")
    # The same agent with `builtins: []` added to its front matter, beside it (relative paths).
    off.write_text(re.sub(r"^---\n", "---\nbuiltins: []\n", text, count=1))
    try:
        variants = [("all built-ins", first_request(binary, agent, url, stub)),
                    ("built-ins off", first_request(binary, off, url, stub))]
    finally:
        off.unlink()

    print(f"agent {agent}")
    header = "| variant | request | system prompt | tools field | tools |"
    if opts.tokenize:
        header += " system prompt tokens | tools tokens |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    per_tool = {}
    for name, body in variants:
        request = json.loads(body)
        system = request["messages"][0]["content"]
        tools = request.get("tools", [])
        tools_text = json.dumps(tools, separators=(",", ":"), ensure_ascii=False)
        row = (f"| {name} | {len(body)} B | {len(system)} chars | {len(tools_text.encode())} B "
               f"| {len(tools)} |")
        if opts.tokenize:
            row += f" {tokens(opts.tokenize, system)} | {tokens(opts.tokenize, tools_text)} |"
        print(row)
        if name == "all built-ins":
            for tool in tools:
                per_tool[tool["function"]["name"]] = len(
                    json.dumps(tool, separators=(",", ":"), ensure_ascii=False).encode())
            base_system = system
        else:
            catalogue = len(base_system) - len(system)
    print()
    print("| tool | bytes as sent |")
    print("|---|---|")
    for name, size in per_tool.items():
        print(f"| {name} | {size} B |")
    print(f"| (skills catalogue in the system prompt) | {catalogue} chars |")


if __name__ == "__main__":
    main()
