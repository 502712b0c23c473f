"""An MCP server (the official Python SDK's FastMCP) that requires
`Authorization: Bearer $MCP_TOKEN` on every HTTP request (or, when set, the header
$MCP_HEADER with the value $MCP_EXPECT); anything else is a 401 whose body
quotes what it was sent, and the prompt `leak` fails quoting the token (so a test sees
whether the client masks what a server echoes, at connect and after it).

Usage: bearer_mcp.py sse|streamable-http — binds a free port on 127.0.0.1 and prints
`PORT <n>`. Every request's Authorization header is appended to $MCP_SEEN (one per line)
when that is set, so a test can check what the client sent.
"""

import os
import socket
import sys

import anyio
import uvicorn
from mcp.server.fastmcp import FastMCP

TOKEN = os.environ["MCP_TOKEN"]
SEEN = os.environ.get("MCP_SEEN")
HEADER = os.environ.get("MCP_HEADER", "authorization").lower().encode()
EXPECT = os.environ.get("MCP_EXPECT", f"Bearer {TOKEN}")

mcp = FastMCP("bearer-guarded")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


@mcp.prompt()
def greet(name: str) -> str:
    """Greets someone."""
    return f"Hello, {name}!"


@mcp.prompt()
def leak() -> str:
    """Fails quoting the token it was reached with (an error after connect)."""
    raise ValueError(f"upstream refused token {TOKEN}")


class RequireBearer:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        got = headers.get(HEADER, b"").decode("latin-1")
        if SEEN:
            with open(SEEN, "a") as f:
                f.write(got + "\n")
        if got != EXPECT:
            body = f"unauthorized: you sent {got!r}".encode()
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"text/plain"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        return await self.app(scope, receive, send)


def main() -> None:
    mode = sys.argv[1]
    app = mcp.sse_app() if mode == "sse" else mcp.streamable_http_app()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.listen(128)
    server = uvicorn.Server(uvicorn.Config(RequireBearer(app), log_level="warning", lifespan="on"))

    async def run() -> None:
        print(f"PORT {port}", flush=True)
        await server.serve(sockets=[sock])

    anyio.run(run)


if __name__ == "__main__":
    main()
