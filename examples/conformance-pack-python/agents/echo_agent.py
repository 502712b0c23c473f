"""conformance.echo-agent: an agent that may call conformance.echo."""

from kindgi import Agent

echo_agent = Agent(
    id="conformance.echo-agent",
    version="1.0.0",
    name="Echo agent",
    instructions="Repeat the user's message with conformance.echo.",
    tools=[{"id": "conformance.echo", "version": "1.0.0"}],
)
