#!/usr/bin/env python3
"""mm and its peers measured side by side against one scripted server (a table, not a test).

    bench/agents.py --mm BIN --peers DIR [--runs N] [--calls N] [--only a,b] [--e2e-url URL]

Run by `bench/run`, which installs the peers and puts this script in a private network
namespace (loopback only). Every agent runs in print mode with a dummy key, a private HOME
under DIR/home, stdin closed, against bench/stub.py on 127.0.0.1, which speaks the wire API
each one needs. Figures per agent:
  - first request: bytes of the body of the first conversation request (the first one that
    offers the agent's shell tool); `requests` counts every model request of a plain run;
  - start-up: from spawning the agent to that request arriving, median and p90 of N runs;
  - per round trip: in a run of CALLS shell-tool calls, the mean time from the stub's reply
    carrying a call to the agent's next request (which must carry the call's output), median
    over N runs; the wall-time estimate ((median run with calls − median run without) / CALLS)
    is printed in the notes, it carries the noise of start-up;
  - peak RSS: GNU time's %M (the largest process of the agent's tree) in a run with CALLS calls,
    median of 3.
The runs go round robin across the agents (one plain run of each, then the next round), so
that on a shared machine they all meet the same load; the first round is a warm-up.
With --e2e-url (a llama-server), mm's demo question end to end on the real model, against one
direct request to the same server with the same body as mm's first request, and (--e2e-log)
the server's own time during mm's runs, read from its log.
"""

import argparse
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import stub as stubmod  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PROMPT = "go"
DEMO_QUESTION = "What is the status of the billing service?"
TIMEOUT = 180


class Failed(Exception):
    """A run that did not do what the script asked; the message says why."""


class Agent:
    """How to run one agent: argv, environment and working directory for a stub URL."""

    def __init__(self, key, label, api, version, setup):
        self.key, self.label, self.api, self.version = key, label, api, version
        self._setup = setup
        self.argv = self.env = self.cwd = None
        self.error = ""  # why it could not be set up

    def prepare(self, home, url):
        if home.exists():
            shutil.rmtree(home)
        home.mkdir(parents=True)
        work = home / "work"
        work.mkdir()
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local/share"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_STATE_HOME": str(home / ".local/state"),
            "TMPDIR": str(home / "tmp"),
        }
        (home / "tmp").mkdir()
        self.argv, extra, self.cwd = self._setup(home, work, url)
        self.env = {**env, **extra}


def pkg_version(peers, name):
    try:
        return json.loads((peers / "node_modules" / name / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return "?"


def agents(mm, peers, rev):
    """Every agent of the table, in its order; `rev` says what mm was built from."""
    bin_dir = peers / "node_modules/.bin"
    mm_version = subprocess.run([mm, "--version"], capture_output=True, text=True).stdout.split()
    mm_version = mm_version[-1] if mm_version else "?"
    mm_version = f"{mm_version} ({rev})" if rev else mm_version

    def platform_binary(pattern):
        """The binary of a platform package (a glob under node_modules): what a launcher runs.
        Claude Code's and opencode's launchers are placeholders that their install scripts
        overwrite, and `npm install --ignore-scripts` leaves them so; Codex's is a Node script."""
        found = next(iter(sorted((peers / "node_modules").glob(pattern))), None)
        if found is None:
            raise FileNotFoundError(f"no {pattern} under {peers / 'node_modules'}")
        return str(found)

    def mm_ops(home, work, url):
        ops = work / "ops"
        shutil.copytree(ROOT / "examples/ops", ops)
        return ([mm, "--agent", "mm.md", "--base-url", f"{url}/v1", "--yolo", "-p", PROMPT],
                {}, ops)

    def mm_default(home, work, url):
        return [mm, "--base-url", f"{url}/v1", "--yolo", "-p", PROMPT], {}, work

    def codex(home, work, url):
        codex_home = home / ".codex"
        codex_home.mkdir()
        # A local model is a custom provider and a model id Codex has no metadata for (it warns
        # and uses its fallback metadata: the `exec_command` shell tool). Chat Completions
        # (`wire_api = "chat"`) is no longer accepted: Codex speaks only the Responses API.
        (codex_home / "config.toml").write_text(f'''model = "stub"
model_provider = "stub"
check_for_update_on_startup = false

[model_providers.stub]
name = "stub"
base_url = "{url}/v1"
env_key = "STUB_API_KEY"
wire_api = "responses"

[analytics]
enabled = false
''')
        return ([str(bin_dir / "codex"), "exec", "--skip-git-repo-check",
                 "--dangerously-bypass-approvals-and-sandbox", PROMPT],
                {"CODEX_HOME": str(codex_home), "STUB_API_KEY": "dummy"}, work)

    def codex_native(home, work, url):
        argv, env, cwd = codex(home, work, url)
        # The platform package's binary, which the launcher (a Node script) spawns; what a
        # user who installed Codex without npm runs.
        return [platform_binary("@openai/codex-linux-x64/vendor/*/bin/codex"), *argv[1:]], env, cwd

    def claude(home, work, url):
        # IS_SANDBOX=1: as root, --dangerously-skip-permissions is refused outside a sandbox.
        return ([platform_binary("@anthropic-ai/claude-code-linux-x64/claude"), "-p", PROMPT,
                 "--dangerously-skip-permissions"],
                {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "dummy", "IS_SANDBOX": "1",
                 "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
                 "DISABLE_ERROR_REPORTING": "1",
                 "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}, work)

    def pi(home, work, url):
        agent_dir = home / ".pi/agent"
        agent_dir.mkdir(parents=True)
        (agent_dir / "models.json").write_text(json.dumps({"providers": {"stub": {
            "baseUrl": f"{url}/v1", "api": "openai-completions", "apiKey": "STUB_API_KEY",
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
            "models": [{"id": "stub", "contextWindow": 32768, "maxTokens": 2048}]}}}))
        return ([str(bin_dir / "pi"), "--provider", "stub", "--model", "stub", "-p", PROMPT],
                {"PI_CODING_AGENT_DIR": str(agent_dir), "PI_OFFLINE": "1",
                 "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0", "STUB_API_KEY": "dummy"},
                work)

    def opencode(home, work, url):
        config = home / ".config/opencode"
        config.mkdir(parents=True)
        (config / "opencode.json").write_text(json.dumps({
            "$schema": "https://opencode.ai/config.json",
            "provider": {"stub": {"npm": "@ai-sdk/openai-compatible", "name": "stub",
                                  "options": {"baseURL": f"{url}/v1",
                                              "apiKey": "{env:STUB_API_KEY}"},
                                  "models": {"stub": {"name": "stub"}}}},
            "model": "stub/stub", "small_model": "stub/stub",
            "permission": {"bash": "allow", "edit": "allow"},
            "autoupdate": False, "share": "disabled"}))
        return ([platform_binary("opencode-linux-x64/bin/opencode"), "run", PROMPT],
                {"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
                 "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_SHARE": "1",
                 "STUB_API_KEY": "dummy"}, work)

    return [
        Agent("mm", "mm (examples/ops)", "chat completions", mm_version, mm_ops),
        Agent("mm-default", "mm (no agent file)", "chat completions", mm_version, mm_default),
        Agent("codex", "Codex CLI", "responses", pkg_version(peers, "@openai/codex"), codex),
        Agent("codex-native", "Codex CLI (native binary)", "responses",
              pkg_version(peers, "@openai/codex"), codex_native),
        Agent("claude", "Claude Code", "anthropic messages",
              pkg_version(peers, "@anthropic-ai/claude-code"), claude),
        Agent("pi", "pi", "chat completions",
              pkg_version(peers, "@mariozechner/pi-coding-agent"), pi),
        Agent("opencode", "opencode", "chat completions", pkg_version(peers, "opencode-ai"),
              opencode),
    ]


def run(agent, stub, calls, wrap=()):
    """One run: (start-up s, wall s, first request bytes, requests, mean s per round trip);
    Failed if it went wrong."""
    stub.reset(calls)
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        try:
            proc = subprocess.Popen([*wrap, *agent.argv], cwd=agent.cwd, env=agent.env,
                                    stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as e:
            raise Failed(f"could not be started: {e}") from e
        try:
            code = proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            code = None
        ended = time.perf_counter()
        try:  # whatever it left behind (a server, a helper) goes with it
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        out.seek(0)
        tail = out.read().decode("utf-8", "replace").strip().splitlines()[-3:]
    why = None
    if code is None:
        why = f"no exit after {TIMEOUT} s"
    elif code != 0:
        why = f"exit {code}"
    elif stub.first is None:
        why = "no request offered a shell tool"
    elif stub.calls_left or not stub.answered:
        why = f"stopped after {calls - stub.calls_left} of {calls} calls"
    elif stub.missing:
        why = f"{stub.missing} of {calls} call results never came back"
    if why:
        raise Failed(f"{why}: {' / '.join(tail) or 'no output'}")
    trip = statistics.mean(stub.gaps) if stub.gaps else None
    return stub.first[0] - started, ended - started, stub.first[1], len(stub.requests), trip


def peak_rss(agent, stub, calls):
    with tempfile.NamedTemporaryFile("r") as out:
        run(agent, stub, calls, ("/usr/bin/time", "-f", "%M", "-o", out.name))
        return int(out.read().split()[-1]) / 1024


def measure(chosen, stub, runs, calls, loads):
    """One row per agent: a dict of figures, with `note` saying what could not be measured.

    The runs go round robin (run i of every agent, then run i + 1), so that on a shared machine
    every agent meets the same load; `loads` gets the 1-minute load average of every round."""
    rows = {a.key: {"agent": a, "note": a.error, "plain": [], "tools": []} for a in chosen}

    def each(phase, calls, rounds):
        for i in range(rounds):
            loads.append(float(load()))
            for agent in chosen:
                row = rows[agent.key]
                if row["note"] or (phase == "tools" and not row["plain"]):
                    continue
                try:
                    result = run(agent, stub, calls)
                except Failed as e:
                    row["note"] = (f"did not complete a plain run: {e}" if phase == "plain"
                                   else f"tool calls: {e}")
                    continue
                if i > 0:  # the first round sets up homes (databases, caches), warms caches
                    row[phase].append(result)

    print(f"[bench] {runs} rounds without calls", file=sys.stderr, flush=True)
    each("plain", 0, runs + 1)
    print(f"[bench] {runs} rounds with {calls} calls", file=sys.stderr, flush=True)
    each("tools", calls, runs + 1)
    print("[bench] peak RSS, 3 rounds", file=sys.stderr, flush=True)
    for agent in chosen:
        row = rows[agent.key]
        if not row["plain"]:
            continue
        plain = row["plain"]
        starts = sorted(r[0] * 1000 for r in plain)
        row.update(size=plain[0][2], requests=plain[0][3], start=statistics.median(starts),
                   p90=starts[min(len(starts) - 1, int(len(starts) * 0.9))])
        if row["tools"]:
            tools = row["tools"]
            row["trip"] = statistics.median(r[4] for r in tools) * 1000
            row["trip_wall"] = (statistics.median(r[1] for r in tools)
                                - statistics.median(r[1] for r in plain)) / calls * 1000
        row["rss_plain"] = not row["tools"]
        row["rss"] = []
    for _ in range(3):
        for agent in chosen:
            row = rows[agent.key]
            if "rss" in row:
                try:
                    row["rss"].append(peak_rss(agent, stub, 0 if row["rss_plain"] else calls))
                except Failed as e:
                    row["note"] = row["note"] or f"peak RSS run: {e}"
    for row in rows.values():
        if "rss" in row:
            row["rss"] = statistics.median(row["rss"]) if row["rss"] else None
    return [rows[a.key] for a in chosen]


def post(url, body):
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    started = time.perf_counter()
    with urllib.request.urlopen(req, timeout=600) as r:
        r.read()
    return time.perf_counter() - started


def server_ms(log, offset):
    """llama-server's own `total time` of the requests it logged past `offset`: (sum in ms,
    how many requests)."""
    with open(log, "rb") as f:
        f.seek(offset)
        text = f.read().decode("utf-8", "replace")
    times = [float(m) for m in re.findall(r"total time =\s*([\d.]+) ms", text)]
    return sum(times), len(times)


def end_to_end(mm, url, runs, stub, stub_url, home, server_log):
    """mm's demo question on the real model: median seconds end to end, of one direct request
    with the body of mm's first request, and of the server's own time during mm's runs."""
    ops = home / "e2e-ops"
    if ops.exists():
        shutil.rmtree(ops)
    shutil.copytree(ROOT / "examples/ops", ops)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")}
    log = home / "ops-calls.log"  # examples/ops/scripts/record.sh: what really ran
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / ".local/share"), MM_OPS_LOG=str(log))
    argv = [mm, "--agent", "mm.md", "--yolo", "--output-format", "json", "-p", DEMO_QUESTION]
    stub.reset(0)
    subprocess.run([*argv, "--base-url", f"{stub_url}/v1"], cwd=ops, env=env,
                   stdin=subprocess.DEVNULL, capture_output=True, check=True)
    body = stub.first_body
    post(f"{url}/chat/completions", body)  # warm the server's prompt cache like mm's runs do
    # Interleaved, so that both see the same load on a shared machine.
    directs, times, served, result = [], [], [], {}
    for _ in range(runs):
        directs.append(post(f"{url}/chat/completions", body))
        log.unlink(missing_ok=True)
        time.sleep(0.5)  # the server logs a request's timings just after its last byte
        offset = os.path.getsize(server_log) if server_log else 0
        started = time.perf_counter()
        proc = subprocess.run([*argv, "--base-url", url], cwd=ops, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=600)
        elapsed = time.perf_counter() - started
        times.append(elapsed)
        try:
            result = json.loads(proc.stdout)
        except ValueError:
            result = {"result": proc.stdout}
        result["code"] = proc.returncode
        if server_log:
            time.sleep(0.5)
            ms, count = server_ms(server_log, offset)
            if count == result.get("turns"):  # else the log and mm disagree: leave it out
                served.append((ms / 1000, elapsed - ms / 1000))
    calls = " / ".join(log.read_text().splitlines()) if log.exists() else "nothing"
    return {"direct": statistics.median(directs), "e2e": statistics.median(times),
            "served": statistics.median(s for s, _ in served) if served else None,
            "own": statistics.median(o for _, o in served) if served else None,
            "answer": " ".join(str(result.get("result", "")).split()), "code": result["code"],
            "turns": result.get("turns", "?"), "size": len(body), "calls": calls}


def fmt_bytes(n):
    return f"{n:,} B"


def fmt_ms(ms):
    return f"{ms / 1000:.2f} s" if ms >= 1000 else f"{ms:.1f} ms"


def machine():
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Linux {platform.release()}"


def load():
    return Path("/proc/loadavg").read_text().split()[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mm", required=True)
    parser.add_argument("--mm-rev", default="", help="what mm was built from (git describe)")
    parser.add_argument("--peers", required=True, type=Path)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--only", default="", help="comma-separated keys: mm,mm-default,codex,"
                                                   "codex-native,claude,pi,opencode")
    parser.add_argument("--e2e-url", help="a llama-server's base URL (…/v1)")
    parser.add_argument("--e2e-model", default="?", help="the model the server serves (a label)")
    parser.add_argument("--e2e-runs", type=int, default=5)
    parser.add_argument("--e2e-log", help="the llama-server's log (its per-request timings)")
    opts = parser.parse_args()
    mm = str(Path(opts.mm).resolve())
    chosen = [a for a in agents(mm, opts.peers, opts.mm_rev)
              if not opts.only or a.key in opts.only.split(",")]
    stub = stubmod.Stub()
    server = stubmod.serve(stub)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    load_before = load()
    for agent in chosen:
        try:
            agent.prepare(opts.peers / "home" / agent.key, url)
        except OSError as e:
            agent.error = f"could not be set up: {e}"
        print(f"[bench] {agent.label} {agent.version} {agent.error}", file=sys.stderr,
              flush=True)
    loads = []
    rows = measure(chosen, stub, opts.runs, opts.calls, loads)
    e2e = None
    if opts.e2e_url:
        print(f"[bench] mm end to end on {opts.e2e_model} (load {load()})", file=sys.stderr,
              flush=True)
        try:
            e2e = end_to_end(mm, opts.e2e_url, opts.e2e_runs, stub, url,
                             opts.peers / "home/mm-e2e", opts.e2e_log)
        except (subprocess.SubprocessError, OSError) as e:
            e2e = {"error": str(e)}
    load_after = load()

    print(f"{time.strftime('%Y-%m-%d %H:%M %Z')} · {machine()} · load average (1 min): "
          f"{load_before} before, {statistics.median(loads):.2f} median over the rounds "
          f"({min(loads):.2f}–{max(loads):.2f}), {load_after} after")
    print(f"Each agent in a private network namespace (loopback only) against bench/stub.py; "
          f"{opts.runs} runs per figure, round robin across the agents; {opts.calls} shell-tool "
          f"calls for the round trip.")
    print()
    print("| agent | version | API | first request | requests | start-up median | start-up p90 "
          "| per round trip | peak RSS |")
    print("|---|---|---|---|---|---|---|---|---|")
    notes = []
    for row in rows:
        a = row["agent"]
        if "size" not in row:
            print(f"| {a.label} | {a.version} | {a.api} | – | – | – | – | – | – |")
        else:
            trip = f"{row['trip']:.1f} ms" if "trip" in row else "–"
            rss = "–" if row["rss"] is None else (
                f"{row['rss']:.1f} MiB" + (" (no calls)" if row["rss_plain"] else ""))
            print(f"| {a.label} | {a.version} | {a.api} | {fmt_bytes(row['size'])} "
                  f"| {row['requests']} | {fmt_ms(row['start'])} | {fmt_ms(row['p90'])} "
                  f"| {trip} | {rss} |")
        if row["note"]:
            notes.append(f"- {a.label}: {row['note']}")
    walls = [f"{r['agent'].label} {r['trip_wall']:.1f} ms" for r in rows if "trip_wall" in r]
    if walls:
        notes.append("- per round trip from wall times ((run with calls − run without) / calls): "
                     + ", ".join(walls))
    if notes:
        print()
        print("\n".join(notes))

    if e2e is not None:
        print()
        print(f"End to end on the real model ({opts.e2e_model}, llama-server in the same "
              f"namespace), median of {opts.e2e_runs}, interleaved: mm's demo question "
              f"(examples/ops) against one direct request with the body of mm's first request.")
        print()
        if "error" in e2e:
            print(f"- not measured: {e2e['error']}")
        else:
            ratio = e2e["e2e"] / e2e["direct"]
            served = "–" if e2e["served"] is None else f"{e2e['served']:.2f} s"
            own = "–" if e2e["own"] is None else f"{e2e['own'] * 1000:.0f} ms"
            print("| agent | one direct request | end to end | ratio | model requests "
                  "| server's own time | the rest (mm, tools, HTTP) | exit | what ran (last run) "
                  "| answer (last run) |")
            print("|---|---|---|---|---|---|---|---|---|---|")
            answer = e2e["answer"][:120] + ("…" if len(e2e["answer"]) > 120 else "")
            print(f"| mm | {e2e['direct']:.2f} s | {e2e['e2e']:.2f} s | {ratio:.2f}× "
                  f"| {e2e['turns']} | {served} | {own} | {e2e['code']} | `{e2e['calls']}` "
                  f"| {answer} |")
            e2e["ratio"] = ratio

    mm_row = next((r for r in rows if r["agent"].key == "mm" and "size" in r), None)
    if mm_row:
        checks = [
            ("first request", "≤ 3 KB", fmt_bytes(mm_row["size"]), mm_row["size"] <= 3000),
            ("start-up median", "≤ 5 ms", fmt_ms(mm_row["start"]), mm_row["start"] <= 5),
        ]
        if "trip" in mm_row:
            checks.append(("per round trip", "≤ 3 ms", fmt_ms(mm_row["trip"]),
                           mm_row["trip"] <= 3))
        if mm_row["rss"] is not None:
            checks.append(("peak RSS", "≤ 10 MiB", f"{mm_row['rss']:.2f} MiB",
                           mm_row["rss"] <= 10))
        if e2e and "ratio" in e2e:
            checks.append(("end to end / one direct request", "≤ 2×", f"{e2e['ratio']:.2f}×",
                           e2e["ratio"] <= 2))
        print()
        print("| mm (examples/ops) | target | measured | |")
        print("|---|---|---|---|")
        for name, target, value, ok in checks:
            print(f"| {name} | {target} | {value} | {'met' if ok else 'missed'} |")


if __name__ == "__main__":
    main()
