"""Times the request path of InferenceX's closed-loop client against stub_server.py.

Runs InferenceX's own request function (`async_request_openai_completions` from
`utils/bench_serving/backend_request_func.py`, fetched, not part of routerlab: pass its
directory with --client-dir) in the closed loop `benchmark_serving.py` builds around it — every
request a task, at most --concurrency of them inside an `asyncio.Semaphore`, a warm-up of
2 × concurrency requests first — on the default asyncio loop, as `asyncio.run(benchmark(...))`
runs it. The client module imports `transformers` and `huggingface_hub` for tokenizers it does
not use here; empty stand-ins are put in `sys.modules` so it imports without them.

For every timed request it pairs, through the semaphore's FIFO hand-over, the request whose
end freed its slot, and reports on CLOCK_MONOTONIC (shared by both processes):
  gap     = next request's handler entry − its predecessor's last token handed to the socket
  post    = handler entry − the moment the slot was acquired and the request function called
  drain   = the request function's return − its last token handed to the socket
  resend  = the next request's send (slot acquired) − its predecessor's last token
  first   = the client's first token (slot acquired + the function's own TTFT, which it times
            from just before its POST) − the first token's chunk handed to the server's socket
Prints one JSON line with the medians and percentiles. Written for routerlab (issue 19).
"""

import argparse
import asyncio
import collections
import json
import random
import statistics
import sys
import time
import types
import urllib.request


def stub_modules():
    hub = types.ModuleType("huggingface_hub")
    hub.constants = types.ModuleType("huggingface_hub.constants")
    sys.modules["huggingface_hub"] = hub
    sys.modules["huggingface_hub.constants"] = hub.constants
    tr = types.ModuleType("transformers")
    for name in ("AutoTokenizer", "PreTrainedTokenizer", "PreTrainedTokenizerFast"):
        setattr(tr, name, type(name, (), {}))
    sys.modules["transformers"] = tr


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def summary(v):
    return {"median_ms": round(statistics.median(v) / 1e6, 3), "p10_ms": round(pct(v, 0.1) / 1e6, 3),
            "p90_ms": round(pct(v, 0.9) / 1e6, 3), "n": len(v)}


async def run(args, brf):
    url = f"http://127.0.0.1:{args.port}/v1/completions"

    rng = random.Random(args.seed)
    # Output lengths as sample_random_requests draws them: uniform on [⌊OSL × ratio⌋, OSL].
    lengths = {}

    def make(i):
        if i not in lengths:
            lengths[i] = rng.randint(int(args.osl * args.range_ratio), args.osl)
        return brf.RequestFuncInput(prompt=f"rp-id={i} " + "abc " * args.prompt_words, api_url=url,
                                    prompt_len=args.prompt_words, output_len=lengths[i],
                                    model="stub", ignore_eos=True)

    c = args.concurrency
    # Warm-up as benchmark_serving.py: 2 × concurrency requests, at most c at once.
    warm = asyncio.Semaphore(c)

    async def warm_one(i):
        async with warm:
            return await brf.async_request_openai_completions(request_func_input=make(i))

    outs = await asyncio.gather(*[asyncio.create_task(warm_one(-1 - i)) for i in range(2 * c)])
    if not all(o.success for o in outs):
        raise SystemExit("warm-up failed: " + next(o.error for o in outs if not o.success))
    urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{args.port}/stub/reset", method="POST")).read()

    sem = asyncio.Semaphore(c)
    released = collections.deque()
    client = {}

    async def limited(i):
        async with sem:
            pred = released.popleft() if released else None
            t0 = time.monotonic_ns()
            out = await brf.async_request_openai_completions(request_func_input=make(i))
            t1 = time.monotonic_ns()
            client[i] = {"acquire_ns": t0, "return_ns": t1, "pred": pred, "ok": out.success,
                         "first_ns": t0 + int(out.ttft * 1e9)}
            released.append(i)
        return out

    n = args.requests_per_slot * c
    await asyncio.gather(*[asyncio.create_task(limited(i)) for i in range(n)])
    server = {r["id"]: r for r in json.load(urllib.request.urlopen(f"http://127.0.0.1:{args.port}/stub/log"))}
    gap, post, drain, resend, first = [], [], [], [], []
    for i, cl in client.items():
        s = server[i]
        post.append(s["entry_ns"] - cl["acquire_ns"])
        drain.append(cl["return_ns"] - s["last_ns"])
        first.append(cl["first_ns"] - s["first_ns"])
        if cl["pred"] is not None:
            gap.append(s["entry_ns"] - server[cl["pred"]]["last_ns"])
            resend.append(cl["acquire_ns"] - server[cl["pred"]]["last_ns"])
    return {"concurrency": c, "requests": n, "failed": sum(not v["ok"] for v in client.values()),
            "gap_last_token_to_next_handler": summary(gap), "post_to_handler": summary(post),
            "last_token_to_client_return": summary(drain), "last_token_to_next_send": summary(resend),
            "first_token_to_client": summary(first)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--client-dir", required=True, help="InferenceX's utils/bench_serving (fetched)")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--concurrency", type=int, required=True)
    p.add_argument("--requests-per-slot", type=int, default=4)
    p.add_argument("--osl", type=int, default=1024)
    p.add_argument("--range-ratio", type=float, default=0.8)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--prompt-words", type=int, default=1024)
    args = p.parse_args()
    stub_modules()
    sys.path.insert(0, args.client_dir)
    import backend_request_func as brf
    print(json.dumps(asyncio.run(run(args, brf))))


if __name__ == "__main__":
    main()
