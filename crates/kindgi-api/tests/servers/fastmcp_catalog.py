"""An MCP server with resources and prompts, built with the official Python MCP SDK (FastMCP),
for kindgi-api's proxy-route tests. Streamable HTTP on a free 127.0.0.1 port; prints
"PORT <n>" on stdout when ready.
"""

import socket

import anyio
import uvicorn
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("kindgi-catalog-test", host="127.0.0.1", log_level="WARNING")


@mcp.resource("docs://readme", name="readme", description="The readme", mime_type="text/markdown")
def readme() -> str:
    return "# Catalog\nHello."


@mcp.resource("docs://broken", name="broken", description="Fails to read")
def broken() -> str:
    raise ValueError("the disk is on fire")


@mcp.prompt(name="greet", description="Greet someone")
def greet(name: str) -> str:
    return f"Say hello to {name}."


@mcp.tool()
def ping() -> str:
    """Answers pong."""
    return "pong"


def main() -> None:
    app = mcp.streamable_http_app()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.listen(128)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))

    async def run() -> None:
        print(f"PORT {port}", flush=True)
        await server.serve(sockets=[sock])

    anyio.run(run)


if __name__ == "__main__":
    main()
