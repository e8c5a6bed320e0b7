#!/usr/bin/env python3
"""A scripted model server speaking three wire APIs, for side-by-side agent benchmarks.

    bench/stub.py [--port N] [--calls N]     # standalone, logging every request to stderr

One stub answers, on 127.0.0.1, whatever an agent sends:
  - OpenAI Chat Completions (`POST …/chat/completions`: mm, pi, opencode), streamed or not;
  - OpenAI Responses (`POST …/responses`: Codex, which no longer speaks Chat Completions);
  - Anthropic Messages (`POST …/messages`: Claude Code), plus `…/messages/count_tokens`.

Per run (`reset(calls)`), the script is: `calls` calls of the agent's own shell tool (found in
the request's `tools`, its arguments shaped by that tool's schema: a `command` string, a
`command` argv array, or a `cmd` string), each a distinct `echo $((70000+N))`, then the text
answer `ok`. The request after a call must carry that call's output (`7000N`, a string the
call's arguments do not contain): `missing` counts the calls whose result never came back.
Only requests that offer a shell tool (the conversation) take a step of the script; any other
request (a title, a summary, a quota probe) is answered `ok` and counted as an extra request.
The first conversation request's arrival time and body size are what the benchmark reports,
and `gaps` the time from each reply carrying a call to the agent's next request: the agent's
own cost of a tool round trip (parse the reply, run the tool, build and send the next request).

Every reply is sent with TCP_NODELAY: headers and body are separate writes, and Nagle plus the
client's delayed ACK would otherwise add 40 ms to each.
"""

import argparse
import itertools
import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SHELL_TOOLS = ("bash", "Bash", "shell", "shell_command", "exec_command", "local_shell")


def tool_specs(body):
    """(name, JSON schema) of each tool a request offers, whatever its wire format."""
    specs = []
    for tool in body.get("tools") or []:
        if "function" in tool:  # Chat Completions
            fn = tool["function"]
            specs.append((fn.get("name"), fn.get("parameters") or {}))
        elif "input_schema" in tool:  # Anthropic Messages
            specs.append((tool.get("name"), tool["input_schema"]))
        else:  # Responses: flat function tools, or built-in types such as local_shell
            specs.append((tool.get("name") or tool.get("type"), tool.get("parameters") or {}))
    return specs


def shell_call(body, command):
    """(tool name, arguments) of a call of the request's shell tool, or None if it has none."""
    specs = dict(tool_specs(body))
    name = next((n for n in SHELL_TOOLS if n in specs), None)
    if name is None:
        return None
    props = specs[name].get("properties") or {}
    args = {}
    if "cmd" in props and "command" not in props:
        args["cmd"] = command
    elif (props.get("command") or {}).get("type") == "array":
        args["command"] = ["bash", "-lc", command]
    else:
        args["command"] = command
    for key in specs[name].get("required") or []:
        if key not in args and (props.get(key) or {}).get("type", "string") == "string":
            args[key] = "Runs a no-op command."
    return name, args


class Stub:
    """The script of one run and what was seen during it."""

    def __init__(self, model="stub", log=False, dump=None):
        self.model = model
        self.log = log
        self.dump = dump  # a folder: every request body is written there (debugging)
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        self.reset(0)

    def reset(self, calls):
        with self.lock:
            self.calls_left = calls
            self.first = None  # (arrival time, body bytes, path) of the first conversation request
            self.requests = []  # (path, body bytes, conversation?) of every request of the run
            self.answered = False  # the final answer has been sent
            self.expect = None  # the output of the last call, due in the next request
            self.missing = 0  # calls whose output did not come back
            self.first_body = None  # the first conversation request, as sent
            self.sent = None  # when the last reply carrying a call was written
            self.gaps = []  # seconds from each such reply to the agent's next request

    def step(self, path, raw):
        """What to answer: ("call", name, args) or ("text", "ok")."""
        now = time.perf_counter()
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        with self.lock:
            n = next(self.ids)
            call = shell_call(body, f"echo $((70000+{n}))")
            self.requests.append((path, len(raw), call is not None))
            if self.log:
                names = [s[0] for s in tool_specs(body)]
                print(f"[stub] POST {path} {len(raw)} B tools={names}", file=sys.stderr)
            if self.dump:
                with open(f"{self.dump}/{n:04d}{path.replace('/', '_')}.json", "wb") as f:
                    f.write(raw)
            if call is None:
                return ("text", "ok"), body
            if self.first is None:
                self.first = (now, len(raw), path)
                self.first_body = raw
            if self.sent is not None:
                self.gaps.append(now - self.sent)
                self.sent = None
            if self.expect is not None and self.expect not in raw:
                self.missing += 1
            self.expect = None
            if self.calls_left > 0:
                self.calls_left -= 1
                self.expect = str(70000 + n).encode()
                return ("call", f"call_{n}", *call), body
            self.answered = True
            return ("text", "ok"), body

    def replying(self, action):
        """The reply to `action` is about to be written (headers are buffered until then)."""
        if action[0] == "call":
            with self.lock:
                self.sent = time.perf_counter()

    # --- OpenAI Chat Completions ---------------------------------------------------------

    def chat(self, action, stream):
        base = {"id": "chatcmpl-stub", "created": 0, "model": self.model}
        usage = {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}
        if action[0] == "call":
            _, cid, name, args = action
            call = {"id": cid, "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)}}
            message, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": action[1]}, "stop"
        if not stream:
            return "application/json", json.dumps({
                **base, "object": "chat.completion", "usage": usage,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
        delta = dict(message)
        if "tool_calls" in delta:
            delta["tool_calls"] = [{"index": 0, **c} for c in delta["tool_calls"]]
        chunks = [
            {**base, "object": "chat.completion.chunk",
             "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**base, "object": "chat.completion.chunk",
             "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
            {**base, "object": "chat.completion.chunk", "choices": [], "usage": usage},
        ]
        return "text/event-stream", "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) \
            + "data: [DONE]\n\n"

    # --- OpenAI Responses ------------------------------------------------------------------

    def responses(self, action):
        rid = f"resp_{next(self.ids)}"
        if action[0] == "call":
            _, cid, name, args = action
            if name == "local_shell":
                item = {"type": "local_shell_call", "id": f"lsh_{cid}", "call_id": cid,
                        "status": "completed",
                        "action": {"type": "exec", "command": ["bash", "-lc", args["command"]
                                                                if isinstance(args["command"], str)
                                                                else args["command"][-1]]}}
            else:
                item = {"type": "function_call", "id": f"fc_{cid}", "call_id": cid, "name": name,
                        "arguments": json.dumps(args), "status": "completed"}
        else:
            item = {"type": "message", "id": f"msg_{rid}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": action[1], "annotations": []}]}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 1, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": 11}
        response = {"id": rid, "object": "response", "created_at": 0, "model": self.model,
                    "status": "in_progress", "output": []}
        events = [
            ("response.created", {"type": "response.created", "response": response}),
            ("response.output_item.added", {"type": "response.output_item.added",
                                            "output_index": 0, "item": item}),
            ("response.output_item.done", {"type": "response.output_item.done",
                                           "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed",
                                    "response": {**response, "status": "completed",
                                                 "output": [item], "usage": usage}}),
        ]
        return "text/event-stream", "".join(
            f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events)

    # --- Anthropic Messages ----------------------------------------------------------------

    def messages(self, action, stream):
        mid = f"msg_{next(self.ids)}"
        if action[0] == "call":
            _, cid, name, args = action
            block = {"type": "tool_use", "id": f"toolu_{cid}", "name": name, "input": args}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": action[1]}
            stop = "end_turn"
        usage = {"input_tokens": 10, "output_tokens": 1,
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        message = {"id": mid, "type": "message", "role": "assistant", "model": self.model,
                   "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
        if not stream:
            return "application/json", json.dumps(
                {**message, "content": [block], "stop_reason": stop})
        if block["type"] == "tool_use":
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        events = [
            ("message_start", {"type": "message_start", "message": message}),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 1}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        return "text/event-stream", "".join(
            f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events)


def serve(stub, port=0):
    """Starts the stub on 127.0.0.1:port (0: any) in a daemon thread; returns the server."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self):
            super().setup()
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, *args):
            pass

        def send(self, status, kind, text, action=None):
            data = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            if action is not None:
                # Before the bytes leave: the agent's next request may arrive before this
                # thread runs again.
                stub.replying(action)
            self.end_headers()
            self.wfile.write(data)

        def do_HEAD(self):
            self.send(200, "text/plain", "")

        def do_GET(self):
            path = self.path.split("?")[0]
            if stub.log:
                print(f"[stub] GET {self.path}", file=sys.stderr)
            if path.endswith("/models"):
                self.send(200, "application/json", json.dumps({
                    "object": "list",
                    "data": [{"id": stub.model, "object": "model", "created": 0,
                              "owned_by": "stub"}]}))
            else:
                self.send(404, "application/json", json.dumps({"error": {"message": "not found"}}))

        def do_POST(self):
            path = self.path.split("?")[0]
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if path.endswith("/count_tokens"):
                self.send(200, "application/json", json.dumps({"input_tokens": 10}))
                return
            action, body = stub.step(path, raw)
            stream = bool(body.get("stream"))
            if path.endswith("/chat/completions"):
                self.send(200, *stub.chat(action, stream), action)
            elif path.endswith("/responses"):
                self.send(200, *stub.responses(action), action)
            elif path.endswith("/messages"):
                self.send(200, *stub.messages(action, stream), action)
            else:
                self.send(404, "application/json", json.dumps({"error": {"message": "not found"}}))

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--calls", type=int, default=1)
    parser.add_argument("--dump", help="a folder to write every request body into")
    opts = parser.parse_args()
    stub = Stub(log=True, dump=opts.dump)
    stub.reset(opts.calls)
    server = serve(stub, opts.port)
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
