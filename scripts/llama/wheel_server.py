"""llama.cpp's own HTTP server from the pinned `xllamacpp` wheel, with llama-server's command line.

scripts/llama/server.sh installs the wheel into a venv under ~/.cache/mm-dev/ and copies this file
beside it as `llama-server` (run by the venv's Python), so that every script and test that starts
`llama-server ARGS` starts the wheel's server the same way. Only the flags the project uses are
read; any other flag is an error (exit 2) rather than silently ignored.

    llama-server --jinja -m MODEL --host 127.0.0.1 --port N -c 4096 -np 1 -t 2 \
        [--chat-template-file F] [--temp T] [--seed S] [--no-cache-prompt] ...
    llama-server --version             the wheel's version and the CPU features it uses
    llama-server --self-test MODEL     load MODEL, answer one completion, exit 0 (or 1 with why)

The server runs until SIGTERM, SIGINT or SIGHUP, then exits 0.
"""

import argparse
import json
import os
import signal
import socket
import sys
import threading
import time
import urllib.request


def parse(argv):
    p = argparse.ArgumentParser(prog="llama-server (xllamacpp)", allow_abbrev=False)
    p.add_argument("-m", "--model")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("-c", "--ctx-size", type=int, default=4096)
    p.add_argument("-np", "--parallel", type=int, default=1)
    p.add_argument("-t", "--threads", type=int, default=os.cpu_count() or 2)
    p.add_argument("-tb", "--threads-batch", type=int)
    p.add_argument("-b", "--batch-size", type=int)
    p.add_argument("-ub", "--ubatch-size", type=int)
    p.add_argument("-n", "--n-predict", type=int)
    p.add_argument("--jinja", action="store_true", default=True)
    p.add_argument("--no-jinja", dest="jinja", action="store_false")
    p.add_argument("--chat-template-file")
    p.add_argument("--chat-template")
    p.add_argument("--temp", type=float)
    p.add_argument("--seed", type=int)
    p.add_argument("--top-k", type=int)
    p.add_argument("--top-p", type=float)
    p.add_argument("--min-p", type=float)
    p.add_argument("--repeat-penalty", type=float)
    p.add_argument("--cache-prompt", dest="cache_prompt", action="store_true", default=True)
    p.add_argument("--no-cache-prompt", dest="cache_prompt", action="store_false")
    p.add_argument("--no-warmup", action="store_true")
    p.add_argument("-lv", "--verbosity", "--log-verbosity", type=int)
    p.add_argument("--version", action="store_true")
    p.add_argument("--self-test", metavar="MODEL")
    return p.parse_args(argv)


def params(args):
    import xllamacpp as x

    cfg = x.common_params_sampling_config
    p = x.CommonParams()
    p.model.path = args.model
    p.hostnames = [args.host]
    p.port = args.port
    p.n_ctx = args.ctx_size
    p.n_parallel = args.parallel
    p.cpuparams.n_threads = args.threads
    p.cpuparams_batch.n_threads = args.threads_batch or args.threads
    if args.batch_size:
        p.n_batch = args.batch_size
    if args.ubatch_size:
        p.n_ubatch = args.ubatch_size
    if args.n_predict is not None:
        p.n_predict = args.n_predict
    p.use_jinja = args.jinja
    if args.chat_template_file:
        with open(args.chat_template_file, encoding="utf-8") as f:
            p.chat_template = f.read()
    elif args.chat_template:
        p.chat_template = args.chat_template
    p.cache_prompt = args.cache_prompt
    p.ui = False
    if args.no_warmup:
        p.warmup = False
    if args.verbosity is not None:
        p.verbosity = args.verbosity
    # As llama-server's own flags do: a sampling value given here wins over the model's defaults.
    user = 0
    for flag, attr, bit in [
        (args.temp, "temp", cfg.COMMON_PARAMS_SAMPLING_CONFIG_TEMP),
        (args.top_k, "top_k", cfg.COMMON_PARAMS_SAMPLING_CONFIG_TOP_K),
        (args.top_p, "top_p", cfg.COMMON_PARAMS_SAMPLING_CONFIG_TOP_P),
        (args.min_p, "min_p", cfg.COMMON_PARAMS_SAMPLING_CONFIG_MIN_P),
        (args.repeat_penalty, "penalty_repeat", cfg.COMMON_PARAMS_SAMPLING_CONFIG_PENALTY_REPEAT),
    ]:
        if flag is not None:
            setattr(p.sampling, attr, flag)
            user |= int(bit)
    if args.seed is not None:
        p.sampling.seed = args.seed & 0xFFFFFFFF
    p.sampling.user_sampling_config = user
    return p


def version():
    import importlib.metadata

    import xllamacpp as x

    print(f"xllamacpp {importlib.metadata.version('xllamacpp')} (llama.cpp server from the wheel)")
    print(x.get_system_info().strip())


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def self_test(model):
    """Loads `model` and has it write one token through the HTTP API: proves the wheel's code runs
    on this CPU (an unsupported instruction kills the process here, not in a test)."""
    import xllamacpp as x

    args = parse(["-m", model, "--port", str(free_port()), "-c", "512", "--no-warmup", "-lv", "0"])
    server = x.Server(params(args))
    body = json.dumps({"prompt": "Hello", "n_predict": 1}).encode()
    url = f"http://127.0.0.1:{args.port}/completion"
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(urllib.request.Request(url, body), timeout=60) as r:
                reply = json.load(r)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    if "content" not in reply:
        sys.exit(f"self-test: unexpected reply {reply!r}")
    print(f"self-test ok: {os.path.basename(model)} answered {reply['content']!r}")
    del server
    sys.stdout.flush()
    os._exit(0)


def main():
    args = parse(sys.argv[1:])
    if args.version:
        version()
        return
    if args.self_test:
        self_test(args.self_test)
        return
    if not args.model:
        sys.exit("llama-server (xllamacpp): -m MODEL is required")
    import xllamacpp as x

    stop = threading.Event()
    ending = {}

    def on_signal(signum, _frame):
        ending["signal"] = signum
        stop.set()

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, on_signal)
    server = x.Server(params(args))
    print(f"listening on {server.listening_address}", file=sys.stderr, flush=True)
    while not stop.wait(3600):
        pass
    print(f"stopping on signal {ending.get('signal')}", file=sys.stderr, flush=True)
    # The server's threads end with the process; its destructor is not waited for.
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
