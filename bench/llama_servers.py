#!/usr/bin/env python3
"""The two llama.cpp servers side by side: the `xllamacpp` wheel's (the default) and the source
build (the fallback), same model, same settings, same prompts, runs interleaved.

    bench/llama_servers.py [--model qwen-0.5b|PATH] [--runs 5] [--threads 2]

Prints a Markdown table (docs/local-model.md): prompt processing and generation speed (the
server's own `timings`), time to first token (client side, streamed), wall time, and the
server's peak RSS (VmHWM of its process). Each request sends `cache_prompt: false`, so every
prompt is processed in full, and `ignore_eos`, so every reply has the same length.
Needs both servers: scripts/llama/server.sh and scripts/llama/server.sh --from-source.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LONG = (
    "You are the operations assistant of ACME. Here is the incident log of the week. "
    + " ".join(
        f"Entry {i}: the billing service restarted at 0{i % 10}:1{i % 6} after a memory alarm; "
        "the on-call engineer checked the queue depth, the error rate and the last deploy."
        for i in range(24)
    )
    + " Summarise the week in one paragraph."
)
SHORT = "Write a short story about a lighthouse keeper and a cat."


def server_path(from_source):
    args = [os.path.join(ROOT, "scripts/llama/server.sh")]
    if from_source:
        args.append("--from-source")
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1]


def model_path(name):
    if os.path.isfile(name):
        return name
    script = os.path.join(ROOT, f"scripts/model/fetch-{name}.sh")
    out = subprocess.run([script], check=True, capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1]


def start(binary, model, threads):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [binary, "--jinja", "-m", model, "--host", "127.0.0.1", "--port", str(port),
         "-c", "4096", "-np", "1", "-t", str(threads), "--temp", "0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    started = time.monotonic()
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if r.status == 200:
                    return proc, port, time.monotonic() - started
        except OSError:
            pass
        if proc.poll() is not None:
            sys.exit(f"{binary} exited at start")
        if time.monotonic() - started > 180:
            sys.exit(f"{binary} did not become healthy")
        time.sleep(0.1)


def peak_rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def one(port, prompt, n_predict):
    body = json.dumps({
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": n_predict, "stream": True, "cache_prompt": False, "ignore_eos": True,
        "stream_options": {"include_usage": True}, "timings_per_token": False,
    }).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", body,
                                 {"Content-Type": "application/json"})
    sent = time.monotonic()
    first = None
    timings = {}
    with urllib.request.urlopen(req, timeout=600) as r:
        for raw in r:
            line = raw.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            for choice in chunk.get("choices", []):
                if first is None and (choice.get("delta") or {}).get("content"):
                    first = time.monotonic() - sent
            timings = chunk.get("timings", timings)
    wall = time.monotonic() - sent
    return {
        "pp": timings.get("prompt_per_second", float("nan")),
        "tg": timings.get("predicted_per_second", float("nan")),
        "ttft": first if first is not None else float("nan"),
        "wall": wall,
        "prompt_n": timings.get("prompt_n"),
    }


def fmt(values, unit=""):
    values = [v for v in values if v == v]
    if not values:
        return "–"
    return f"{statistics.median(values):.1f}{unit} ({min(values):.1f}–{max(values):.1f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen-0.5b")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--n-predict", type=int, default=128)
    opts = parser.parse_args()
    model = model_path(opts.model)
    servers = {"xllamacpp wheel": server_path(False), "source build": server_path(True)}
    running = {}
    for name, binary in servers.items():
        running[name] = start(binary, model, opts.threads)
    results = {name: [] for name in servers}
    try:
        for _ in range(opts.runs):
            for name, (proc, port, _) in running.items():
                for prompt in (LONG, SHORT):
                    results[name].append((prompt is LONG, one(port, prompt, opts.n_predict)))
        rss = {name: peak_rss_mib(proc.pid) for name, (proc, _, _) in running.items()}
    finally:
        for proc, _, _ in running.values():
            proc.terminate()
    load = open("/proc/loadavg").read().split()[0]
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · {os.path.basename(model)} · "
          f"{opts.threads} threads · {opts.runs} runs each, interleaved · load average {load}")
    print()
    print("| server | start to /health | prompt tok/s (long prompt) | generation tok/s | "
          "first token, long prompt | first token, short prompt | peak RSS |")
    print("|---|---|---|---|---|---|---|")
    for name in servers:
        long = [r for is_long, r in results[name] if is_long]
        short = [r for is_long, r in results[name] if not is_long]
        print(f"| {name} | {running[name][2]:.1f} s | {fmt([r['pp'] for r in long])} | "
              f"{fmt([r['tg'] for r in long + short])} | {fmt([r['ttft'] for r in long], ' s')} | "
              f"{fmt([r['ttft'] for r in short], ' s')} | {rss[name]:.0f} MiB |")
    wheel, source = (results[n] for n in servers)
    for key, label in (("pp", "prompt"), ("tg", "generation")):
        w = statistics.median([r[key] for is_long, r in wheel if is_long or key == "tg"])
        s = statistics.median([r[key] for is_long, r in source if is_long or key == "tg"])
        print(f"\n{label}: the wheel at {100 * w / s:.0f} % of the source build", end="")
    print()


if __name__ == "__main__":
    main()
