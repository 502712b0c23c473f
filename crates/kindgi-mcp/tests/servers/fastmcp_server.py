"""A tiny MCP server built with the official Python MCP SDK (FastMCP), for kindgi-mcp tests.

Usage: python fastmcp_server.py stdio
       python fastmcp_server.py sse|streamable-http
The HTTP modes bind 127.0.0.1 on a free port and print "PORT <n>" on stdout when ready.
"""

import socket
import sys

import anyio
import uvicorn
from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations
from pydantic import BaseModel

mcp = FastMCP("kindgi-fastmcp-test", host="127.0.0.1", log_level="WARNING")


class Weather(BaseModel):
    city: str
    temperature: int
    conditions: str


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers and return the sum."""
    return a + b


@mcp.tool()
def weather(city: str) -> Weather:
    """Report the (made up) weather for a city."""
    return Weather(city=city, temperature=21, conditions="Sunny")


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True, title="Peek"))
def peek(key: str) -> str:
    """Read a value without changing anything (claims to be read-only)."""
    return "value-of-" + key


@mcp.tool()
def order_status(order_id: str) -> str:
    """Report an order's status (a snake_case name, as Python tools often have)."""
    return f"order {order_id} shipped"


@mcp.tool()
def fail(message: str) -> str:
    """Always fails with the given message."""
    raise ValueError(message)


@mcp.tool()
async def slow(seconds: float) -> str:
    """Sleeps, then answers."""
    await anyio.sleep(seconds)
    return "done"


def serve_http(transport: str) -> None:
    app = mcp.sse_app() if transport == "sse" else mcp.streamable_http_app()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.listen(128)  # accept (queue) connections before "PORT" is printed
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)

    async def run() -> None:
        print(f"PORT {port}", flush=True)
        await server.serve(sockets=[sock])

    # The streamable-http app runs its session manager in its own lifespan.
    anyio.run(run)


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        mcp.run("stdio")
    else:
        serve_http(mode)
