"""A hand-written stdio MCP server that misbehaves on purpose (no SDK), for kindgi-mcp tests.

Usage: python misbehaving.py exit|hang|garbage|garbage-at-start|exit-at-start|cursor-loop|stderr-flood
It answers initialize and tools/list properly (except the *-at-start modes and cursor-loop,
whose tools/list always names a next page with the same cursor); on tools/call it exits
(code 3, after a line on stderr), never answers, prints a line that is not JSON, or
(stderr-flood) first writes bytes that are not UTF-8 and then 1 MiB to stderr, far more than
a pipe holds, and then answers.
"""

import json
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "exit"


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    msg = json.loads(line)
    method = msg.get("method")
    if method == "initialize":
        if MODE == "garbage-at-start":
            print("Welcome to my server! (this banner breaks the protocol)", flush=True)
            continue
        if MODE == "exit-at-start":
            sys.stderr.write("cannot start: missing configuration\n")
            sys.exit(2)
        send({
            "jsonrpc": "2.0",
            "id": msg["id"],
            "result": {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "misbehaving", "version": "1.2.3"},
            },
        })
    elif method == "tools/list" and MODE == "cursor-loop":
        send({
            "jsonrpc": "2.0",
            "id": msg["id"],
            "result": {"tools": [], "nextCursor": "again"},
        })
    elif method == "tools/list":
        send({
            "jsonrpc": "2.0",
            "id": msg["id"],
            "result": {"tools": [{
                "name": "boom",
                "description": "Misbehaves when called.",
                "inputSchema": {"type": "object", "properties": {}},
            }]},
        })
    elif method == "tools/call":
        if MODE == "stderr-flood":
            sys.stderr.buffer.write(b"\xff\xfe not utf-8\n")
            for _ in range(1024):
                sys.stderr.buffer.write(b"x" * 1023 + b"\n")
            sys.stderr.buffer.write(b"flood over\n")
            sys.stderr.flush()
            send({
                "jsonrpc": "2.0",
                "id": msg["id"],
                "result": {"content": [{"type": "text", "text": "survived"}]},
            })
        elif MODE == "exit":
            sys.stderr.write("dying on purpose in the middle of a call\n")
            sys.stderr.flush()
            sys.exit(3)
        elif MODE == "garbage":
            print("Traceback (most recent call last): this is not JSON-RPC", flush=True)
        # hang: never answer
    elif "id" in msg and method is not None:
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "method not found"}})
