"""my-pack.echo-agent: answers the greeting it is handed. It calls no tools."""

from kindgi import Agent

echo_agent = Agent(
    id="my-pack.echo-agent",
    version="0.1.0",
    name="Echo agent",
    instructions="Reply to the greeting you are given, briefly.",
)
