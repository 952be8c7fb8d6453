"""A stand-in for vLLM's OpenAI completion endpoint, to time the request path around it.

It serves POST /v1/completions the way vLLM 0.19's API server streams a completion
(`vllm/entrypoints/openai/api_server.py`, `serving_completion.py`): a FastAPI app with CORS
middleware under uvicorn on uvloop, the JSON body parsed into a request model before the
handler runs, the handler raced against the client's disconnect (`with_cancellation`), and a
`StreamingResponse` of server-sent events — the first token at once, then one chunk every
`--stream-interval` tokens (InferenceX's script passes 20), the usage chunk
(`stream_options.include_usage`) and `data: [DONE]`. There is no model: tokens are paced by
`--itl-us`. Per request it records, on CLOCK_MONOTONIC (the same clock as the harness's),
when the handler was entered and when the last token's chunk was handed to the transport.
GET /stub/log returns the records. Written for routerlab (issue 19); not vLLM's code.
"""

import argparse
import asyncio
import json
import re
import time

import uvicorn
import uvloop
from fastapi import FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel

RECORDS = []
ARGS = None
ID = re.compile(r"rp-id=(\d+)")


class StreamOptions(BaseModel):
    include_usage: bool = False


class CompletionRequest(BaseModel):
    model: str
    prompt: str
    max_tokens: int = 16
    temperature: float = 1.0
    best_of: int = 1
    logprobs: int | None = None
    stream: bool = False
    stream_options: StreamOptions | None = None
    ignore_eos: bool = False


app = FastAPI()
app.add_middleware(CORSMiddleware, allow_origins=["*"], allow_credentials=True,
                   allow_methods=["*"], allow_headers=["*"])


def chunk(rid, created, text, finish=None):
    return "data: " + json.dumps({
        "id": f"cmpl-{rid}", "object": "text_completion", "created": created, "model": "stub",
        "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": finish,
                     "stop_reason": None}],
        "usage": None}) + "\n\n"


async def stream(rid, req, rec):
    created = int(time.time())
    n = req.max_tokens
    every = max(ARGS.stream_interval, 1)
    sent = 0
    itl = ARGS.itl_us / 1e6
    while sent < n:
        # The first token goes at once; later ones in chunks of `every` tokens.
        k = 1 if sent == 0 else min(every, n - sent)
        if sent > 0:
            await asyncio.sleep(k * itl)
        sent += k
        last = sent == n
        yield chunk(rid, created, " tok" * k, "length" if last else None)
        now = time.monotonic_ns()
        if sent == k:
            rec["first_ns"] = now
        if last:
            rec["last_ns"] = now
    if req.stream_options and req.stream_options.include_usage:
        yield "data: " + json.dumps({
            "id": f"cmpl-{rid}", "object": "text_completion", "created": created, "model": "stub",
            "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": n,
                                     "total_tokens": n + 1}}) + "\n\n"
    yield "data: [DONE]\n\n"
    rec["done_ns"] = time.monotonic_ns()


async def listen_for_disconnect(request):
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


@app.post("/v1/completions")
async def create_completion(request: CompletionRequest, raw_request: Request):
    entry = time.monotonic_ns()
    m = ID.search(request.prompt)
    rec = {"id": int(m.group(1)) if m else -1, "entry_ns": entry}
    RECORDS.append(rec)

    async def handle():
        return StreamingResponse(content=stream(rec["id"], request, rec),
                                 media_type="text/event-stream")

    # As vLLM's with_cancellation: the handler races the client's disconnect.
    handler = asyncio.create_task(handle())
    watcher = asyncio.create_task(listen_for_disconnect(raw_request))
    done, pending = await asyncio.wait([handler, watcher], return_when=asyncio.FIRST_COMPLETED)
    for t in pending:
        t.cancel()
    if handler in done:
        return handler.result()
    return None


@app.get("/stub/log")
async def log():
    return JSONResponse(RECORDS)


@app.post("/stub/reset")
async def reset():
    RECORDS.clear()
    return JSONResponse({"ok": True})


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--itl-us", type=float, default=8000)
    p.add_argument("--stream-interval", type=int, default=20)
    p.add_argument("--access-log", default="")
    ARGS = p.parse_args()
    config = uvicorn.Config(app, host="127.0.0.1", port=ARGS.port, log_level="info",
                            timeout_keep_alive=5, access_log=True)
    server = uvicorn.Server(config)
    uvloop.install()
    asyncio.run(server.serve())


if __name__ == "__main__":
    main()
