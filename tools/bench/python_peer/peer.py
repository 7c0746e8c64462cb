#!/usr/bin/python3
"""A minimal Python streaming client: the floor of what a Python benchmark
client costs per request (AIPerf's workers, like this, run on uvloop, read
SSE through aiohttp and decode each event's JSON in Python; they do more
besides). Uses uvloop when it is installed (Debian: python3-uvloop), else
asyncio's own loop; the output names the loop.

Closed loop of --concurrency tasks over one aiohttp session; each request is
POSTed, its SSE body read line by line, every `data:` event decoded with
json.loads and stamped with perf_counter_ns; TTFT and inter-token latencies
are computed at the end. Prints one JSON object: requests, errors, events,
wall seconds, req/s, TTFT and ITL p50/p99 (ms).

Usage: peer.py URL --requests N [--concurrency 64]
"""
import argparse
import asyncio
import json
import sys
import time

import aiohttp

try:
    import uvloop
except ImportError:
    uvloop = None

BODY = {
    "model": "mock-model",
    "messages": [{"role": "user", "content": "Tell me a story"}],
    "max_completion_tokens": 16,
    "stream": True,
}


def percentile(values, q):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(q / 100 * len(values)))]


async def one_request(session, url, ttft, itl, counts):
    start = time.perf_counter_ns()
    stamps = []
    async with session.post(url, json=BODY) as resp:
        if resp.status != 200:
            counts["errors"] += 1
            await resp.read()
            return
        async for line in resp.content:
            if not line.startswith(b"data:"):
                continue
            data = line[5:].strip()
            if data == b"[DONE]":
                break
            event = json.loads(data)
            counts["events"] += 1
            choices = event.get("choices") or []
            if choices and (choices[0].get("delta") or {}).get("content"):
                stamps.append(time.perf_counter_ns())
    if not stamps:
        counts["errors"] += 1
        return
    ttft.append((stamps[0] - start) / 1e6)
    itl.extend((b - a) / 1e6 for a, b in zip(stamps, stamps[1:]))


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--requests", type=int, required=True)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    if args.requests < 1 or args.concurrency < 1:
        sys.exit("--requests and --concurrency must be at least 1")
    ttft, itl = [], []
    counts = {"errors": 0, "events": 0}
    remaining = args.requests
    connector = aiohttp.TCPConnector(limit=args.concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def loop():
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                await one_request(session, args.url, ttft, itl, counts)

        begin = time.perf_counter()
        await asyncio.gather(*(loop() for _ in range(args.concurrency)))
        wall = time.perf_counter() - begin
    print(json.dumps({
        "loop": "uvloop" if uvloop else "asyncio",
        "requests": args.requests,
        "errors": counts["errors"],
        "events": counts["events"],
        "wall_s": wall,
        "req_per_s": args.requests / wall,
        "ttft_ms_p50": percentile(ttft, 50),
        "ttft_ms_p99": percentile(ttft, 99),
        "itl_ms_p50": percentile(itl, 50),
        "itl_ms_p99": percentile(itl, 99),
    }))


if uvloop:
    uvloop.install()
asyncio.run(main())
