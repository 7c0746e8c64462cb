#!/usr/bin/python3
"""Independent OpenAI-compatible SSE server for the aiperf-node fidelity test.

It shares no code with aiperf-node (Python stdlib + aiohttp only) so that it can
act as ground truth: for every request it records, in CLOCK_MONOTONIC ns (the
clock aiperf-node stamps with), when the request arrived and when each write of
the response began and ended, plus the text and token count of every event.

The stream framing varies per request (LF or CRLF delimiters, comment lines and
comment-only blocks, an empty role delta, multi-token chunks, events split
across writes in the middle of a line and inside the line terminators, two
events in one write, an empty finish delta, a usage-only chunk, [DONE]).
Every write is followed by a short sleep so that each write normally lands in
its own socket read on the client.

Usage:
  sse_server.py [--host 127.0.0.1] [--port 0] [--delay-ms 6]
                [--mode auto|lf|crlf|lf-split-term|crlf-split-term]
                [--log-file PATH]

The first stdout line is the bound port. GET /log returns the log as JSON; on
SIGTERM/SIGINT the log is written to --log-file (or stdout) and the server
exits 0.

Log layout (keyed by X-Request-ID):
  {"<id>": {"receive_ns": int, "mode": str, "prepare_ns": int, "done_ns": int,
            "events": [{"kind": "comment"|"role"|"content"|"finish"|"usage"|"done",
                        "text": str, "data": str|null, "tokens": int,
                        "writes": [[begin_ns, end_ns], ...]}]}}
An event's last write is the one that completes it (its blank line).
"""

import argparse
import asyncio
import json
import os
import re
import signal
import sys
import time
import zlib

from aiohttp import web

MODES = ("lf", "crlf", "lf-split-term", "crlf-split-term")
WORDS = ("alpha", "beta", "gamma", "delta", "omega", "river", "stone", "cloud")
WHITESPACE = b" \t\n\r\f\v"


def count_tokens(text):
    """Token count of aiperf-node's built-in tokenizer (runtime/tokenizer).

    A token is a run of whitespace followed by 1..8 non-whitespace bytes
    (longer words are cut every 8 bytes); trailing whitespace counts as one.
    Re-implemented here so that the server's log is independent of the client.
    """
    data = text.encode("utf-8")
    count = 0
    i = 0
    while i < len(data):
        while i < len(data) and data[i] in WHITESPACE:
            i += 1
        if i == len(data):
            count += 1  # trailing whitespace
            break
        run = 0
        while i < len(data) and data[i] not in WHITESPACE:
            i += 1
            run += 1
        count += (run + 7) // 8
    return count


def request_number(request_id):
    """aiperf-node ids end in -r<N>; anything else is hashed."""
    match = re.search(r"-r(\d+)$", request_id)
    if match:
        return int(match.group(1))
    return zlib.crc32(request_id.encode("utf-8"))


def chunk_json(content=None, role=None, finish=None, usage=None):
    body = {
        "id": "chatcmpl-fidelity",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
    }
    if usage is not None:
        body["choices"] = []
        body["usage"] = usage
    else:
        delta = {}
        if role is not None:
            delta["role"] = role
        if content is not None:
            delta["content"] = content
        body["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
    return json.dumps(body, separators=(",", ":"))


def glue(events, index):
    """Moves the bytes of single-write event `index` into the first write of
    the event that follows it."""
    kind, text, data, pieces = events[index]
    nkind, ntext, ndata, npieces = events[index + 1]
    assert len(pieces) == 1, "only a single-write event can be glued"
    events[index] = (kind, text, data, [])
    events[index + 1] = (nkind, ntext, ndata,
                         [pieces[0] + npieces[0]] + npieces[1:])


def build_plan(number, mode, prompt_tokens):
    """Returns the events of one response: (kind, text, data, [byte pieces]).

    Each piece is one write; an event with no pieces is written together
    with the next event's first piece. `number` picks how many trailing
    single-token chunks follow, so OSL differs between requests.
    """
    eol = "\r\n" if mode.startswith("crlf") else "\n"
    split_term = mode.endswith("split-term")

    def block(lines):
        return (eol.join(lines) + eol + eol).encode("utf-8")

    def data_event(kind, text, payload, comment=None, split=None):
        lines = ([": " + comment] if comment else []) + ["data: " + payload]
        raw = block(lines)
        if split == "mid-line":
            # Cut inside the JSON of the data line, and once more inside "data:".
            start = raw.index(b"data: ")
            cuts = [start + 2, start + 6 + len(payload) // 2]
            pieces = [raw[: cuts[0]], raw[cuts[0] : cuts[1]], raw[cuts[1] :]]
        elif split == "terminator":
            # Cut between the data line's end and the blank line; with CRLF
            # inside the data line's "\r\n", so the client must pair a CR
            # that ends one read with the LF that starts the next. The last
            # piece holds the whole blank line, so it completes the event.
            cut = len(raw) - 3 if eol == "\r\n" else len(raw) - 1
            pieces = [raw[:cut], raw[cut:]]
        else:
            pieces = [raw]
        return (kind, text, payload, pieces)

    events = [
        ("comment", "", None, [block([": stream opened, keep-alive"])]),
        data_event("role", "", chunk_json(content="", role="assistant")),
        data_event("content", "Hello", chunk_json(content="Hello")),
        data_event("content", " a b c", chunk_json(content=" a b c"),
                   comment="three tokens in one chunk"),
        data_event("content", " split", chunk_json(content=" split"),
                   split="mid-line"),
        data_event("content", " x y", chunk_json(content=" x y"),
                   split="terminator" if split_term else "mid-line"),
        ("comment", "", None, [block([": ping"])]),
    ]
    first_word = len(events)
    for i in range(2 + number % 4):
        word = " " + WORDS[(number + i) % len(WORDS)]
        events.append(data_event("content", word, chunk_json(content=word),
                                 split="terminator" if i % 2 else None))
    # Several events in one write (an event without pieces goes out with the
    # next event's first piece): "Hello" and " a b c" whole in one write, and
    # the first trailing word with the first part of the next one.
    glue(events, 2)
    glue(events, first_word)
    events.append(data_event("finish", "", chunk_json(finish="stop")))
    output_tokens = sum(count_tokens(e[1]) for e in events if e[0] == "content")
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": output_tokens,
             "total_tokens": prompt_tokens + output_tokens}
    events.append(data_event("usage", "", chunk_json(usage=usage),
                             comment="usage only"))
    events.append(data_event("done", "", "[DONE]"))
    return events


class fidelity_server:
    def __init__(self, delay_ms, mode):
        self.delay_s = delay_ms / 1000.0
        self.mode = mode
        self.log = {}

    async def chat(self, request):
        receive_ns = time.monotonic_ns()
        request_id = request.headers.get("X-Request-ID", "")
        if not request_id:
            return web.json_response(
                {"error": {"message": "X-Request-ID header is missing; the "
                           "fidelity log is keyed by it"}}, status=400)
        try:
            body = json.loads(await request.read())
        except ValueError as e:
            return web.json_response(
                {"error": {"message": f"body is not JSON: {e}"}}, status=400)
        if not isinstance(body, dict) or body.get("stream") is not True:
            return web.json_response(
                {"error": {"message": "stream must be true; this server only "
                           "streams (run aiperf-node with --streaming)"}},
                status=400)
        messages = body.get("messages")
        if not isinstance(messages, list):
            return web.json_response(
                {"error": {"message": "messages must be a list of chat "
                           "messages"}}, status=400)
        # Prompt tokens the way aiperf-node counts ISL: texts joined by " ".
        prompt = " ".join(m.get("content", "") for m in messages
                          if isinstance(m, dict)
                          and isinstance(m.get("content"), str))
        number = request_number(request_id)
        mode = self.mode if self.mode != "auto" else MODES[number % len(MODES)]
        entry = {"receive_ns": receive_ns, "mode": mode, "events": []}
        self.log[request_id] = entry

        response = web.StreamResponse(
            status=200, headers={"Content-Type": "text/event-stream",
                                 "Cache-Control": "no-cache"})
        entry["prepare_ns"] = time.monotonic_ns()
        await response.prepare(request)
        glued = []  # events that go out with the next write
        for kind, text, data, pieces in build_plan(number, mode,
                                             count_tokens(prompt)):
            event = {"kind": kind, "text": text, "data": data,
                     "tokens": count_tokens(text) if text else 0, "writes": []}
            entry["events"].append(event)
            if not pieces:
                glued.append(event)
                continue
            for piece in pieces:
                await asyncio.sleep(self.delay_s)
                begin = time.monotonic_ns()
                await response.write(piece)
                write = [begin, time.monotonic_ns()]
                event["writes"].append(write)
                for e in glued:
                    e["writes"].append(write)
                glued = []
        await response.write_eof()
        entry["done_ns"] = time.monotonic_ns()
        return response

    async def get_log(self, _request):
        return web.json_response(self.log)


async def serve(args):
    server = fidelity_server(args.delay_ms, args.mode)
    app = web.Application()
    app.router.add_post("/v1/chat/completions", server.chat)
    app.router.add_get("/log", server.get_log)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, args.host, args.port)
    await site.start()
    port = runner.addresses[0][1]
    print(port, flush=True)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await runner.cleanup()
    text = json.dumps(server.log, indent=1)
    if args.log_file:
        with open(args.log_file + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        # Rename so that a reader never sees a half-written log.
        os.replace(args.log_file + ".tmp", args.log_file)
    else:
        print(text, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay-ms", type=float, default=6.0,
                        help="sleep before every write (default 6)")
    parser.add_argument("--mode", default="auto", choices=("auto",) + MODES,
                        help="framing for every request; auto varies it by "
                             "request number")
    parser.add_argument("--log-file", default="",
                        help="where to write the log on SIGTERM (default stdout)")
    args = parser.parse_args()
    if args.delay_ms < 0:
        parser.error("--delay-ms must be >= 0")
    if not 0 <= args.port <= 65535:
        parser.error("--port must be in 0..65535")
    asyncio.run(serve(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
