"""The same measurement as examples/mcp_latency.rs, with the official Python MCP SDK client
(for comparison). Stdio servers only.

python python_client_latency.py TOOL INPUT_JSON CALLS COMMAND [ARGS...]
"""

import asyncio
import json
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main() -> None:
    tool, arguments, calls = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
    params = StdioServerParameters(command=sys.argv[4], args=sys.argv[5:])
    started = time.perf_counter()
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            print(f"connect + initialize: {(time.perf_counter() - started) * 1e3:.1f} ms")
            for _ in range(50):
                await session.call_tool(tool, arguments)
            latencies = []
            started = time.perf_counter()
            for _ in range(calls):
                t = time.perf_counter()
                await session.call_tool(tool, arguments)
                latencies.append(time.perf_counter() - t)
            total = time.perf_counter() - started
            latencies.sort()
            pct = lambda p: latencies[min(int(len(latencies) * p), len(latencies) - 1)] * 1e6
            print(
                f"sequential: {calls} calls in {total:.2f} s = {calls / total:.0f} calls/s; "
                f"p50 {pct(0.5):.0f} µs, p90 {pct(0.9):.0f} µs, p99 {pct(0.99):.0f} µs"
            )


asyncio.run(main())
