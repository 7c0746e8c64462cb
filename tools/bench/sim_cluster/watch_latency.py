#!/usr/bin/python3
"""Watch delivery latency of `aiperf-node sim-cluster` (plain HTTP).

Usage: watch_latency.py PORT [WATCHES=1000] [UPDATES_PER_S=100] [SECONDS=20]

Creates WATCHES ConfigMaps in namespace default, opens one watch per
ConfigMap (fieldSelector metadata.name=...), then patches a random one
UPDATES_PER_S times a second with the send time in its data; every watch
event's latency is its arrival time minus that stamp. Prints p50/p99/max.
"""
import asyncio
import json
import random
import sys
import time

PORT = int(sys.argv[1])
WATCHES = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
RATE = float(sys.argv[3]) if len(sys.argv) > 3 else 100
SECONDS = float(sys.argv[4]) if len(sys.argv) > 4 else 20
latencies = []


async def request(method, path, body=None, ctype="application/json"):
    r, w = await asyncio.open_connection("127.0.0.1", PORT)
    data = b"" if body is None else json.dumps(body).encode()
    w.write(("%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: %s\r\n"
             "Content-Length: %d\r\n\r\n" % (method, path, ctype, len(data))).encode() + data)
    await w.drain()
    out = await r.read()
    w.close()
    return out


async def watch(name, ready):
    r, w = await asyncio.open_connection("127.0.0.1", PORT)
    w.write(("GET /api/v1/namespaces/default/configmaps?watch=true&resourceVersion=%s"
             "&fieldSelector=metadata.name%%3D%s HTTP/1.1\r\nHost: x\r\n\r\n"
             % (ready["rv"], name)).encode())
    await w.drain()
    await r.readuntil(b"\r\n\r\n")
    ready["n"] += 1
    while True:
        size = int((await r.readline()).strip(), 16)
        if size == 0:
            return
        chunk = await r.readexactly(size + 2)
        now = time.time()
        for line in chunk[:-2].split(b"\n"):
            if not line:
                continue
            ev = json.loads(line)
            sent = ev["object"].get("data", {}).get("sent")
            if sent:
                latencies.append(now - float(sent))


async def main():
    for i in range(WATCHES):
        await request("POST", "/api/v1/namespaces/default/configmaps",
                      {"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": "w%d" % i}, "data": {}})
    lst = await request("GET", "/api/v1/namespaces/default/configmaps?limit=1")
    rv = json.loads(lst.split(b"\r\n\r\n", 1)[1])["metadata"]["resourceVersion"]
    ready = {"n": 0, "rv": rv}
    tasks = [asyncio.create_task(watch("w%d" % i, ready)) for i in range(WATCHES)]
    while ready["n"] < WATCHES:
        await asyncio.sleep(0.05)
    start = time.time()
    n = 0
    while time.time() - start < SECONDS:
        due = start + n / RATE
        await asyncio.sleep(max(0, due - time.time()))
        name = "w%d" % random.randrange(WATCHES)
        asyncio.create_task(request(
            "PATCH", "/api/v1/namespaces/default/configmaps/" + name,
            {"data": {"sent": "%.6f" % time.time()}}, "application/merge-patch+json"))
        n += 1
    await asyncio.sleep(1)
    lat = sorted(latencies)
    if not lat:
        print("no events received")
        sys.exit(1)
    q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1000
    print("watches %d, updates %d (%.0f/s), events %d: latency p50 %.2f ms, p99 %.2f ms, max %.2f ms"
          % (WATCHES, n, RATE, len(lat), q(0.5), q(0.99), lat[-1] * 1000))
    for t in tasks:
        t.cancel()


asyncio.run(main())
