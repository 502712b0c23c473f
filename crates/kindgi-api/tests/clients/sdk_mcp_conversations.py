"""Drives /v1/mcp/endpoints and /v1/conversations with the official Python SDK (kindgi 0.1.10).

Env: KINDGI_API_URL, KINDGI_TOKEN, MCP_URL (a streamable-HTTP MCP server with resources and
prompts), CONVERSATION_ID (a conversation of the token's tenant with messages).
Prints one JSON object of what it observed; raises on anything unexpected.
"""

import json
import os

from kindgi.client import Kindgi, KindgiApiError


def error_of(call):
    try:
        call()
    except KindgiApiError as e:
        return {"status": e.status, "code": e.server_code, "details": dict(e.details)}
    raise AssertionError("the call did not fail")


def dump(model):
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


client = Kindgi(os.environ["KINDGI_API_URL"], token=os.environ["KINDGI_TOKEN"], max_retries=0)
endpoints = client.mcp.endpoints
out = {}

registered = endpoints.register(
    endpoint_id="sdk",
    name="SDK catalog",
    transport="streamable-http",
    config={"transport": "streamable-http", "url": os.environ["MCP_URL"]},
    scope_kind="tenant",
)
out["register"] = dump(registered)
out["duplicate"] = error_of(
    lambda: endpoints.register(
        endpoint_id="sdk",
        name="SDK catalog",
        transport="streamable-http",
        config={"transport": "streamable-http", "url": os.environ["MCP_URL"]},
        scope_kind="tenant",
    )
)
# (The SDK itself refuses a dot in the id; a credential header only the server knows.)
out["credential"] = error_of(
    lambda: endpoints.register(
        endpoint_id="cred",
        name="x",
        transport="streamable-http",
        config={"transport": "streamable-http", "url": "http://h/mcp", "headers": {"X-Api-Key": "s"}},
        scope_kind="tenant",
    )
)
out["list"] = dump(endpoints.list(transport="streamable-http"))
out["get"] = dump(endpoints.get("sdk"))
out["resources"] = dump(endpoints.resources.list("sdk"))
out["read"] = dump(endpoints.resources.read("sdk", "docs://readme"))
out["prompts"] = dump(endpoints.prompts.list("sdk"))
out["prompt"] = dump(endpoints.prompts.get("sdk", "greet", arguments={"name": "Ada"}))
out["tool"] = dump(client.tools.get("sdk.ping"))
out["unregister"] = dump(endpoints.unregister("sdk"))
out["unregister_again"] = error_of(lambda: endpoints.unregister("sdk"))
out["tool_after"] = error_of(lambda: client.tools.get("sdk.ping"))

conversations = client.conversations
opened = conversations.open(agent_id="support", agent_version="1.0.0", title="From the SDK")
out["open"] = dump(opened)
out["conv_list"] = dump(conversations.list(agent_id="support", status="open"))
out["conv_get"] = dump(conversations.get(opened.id))
out["close"] = dump(conversations.close(opened.id))
out["close_again"] = dump(conversations.close(opened.id))
out["conv_unregister"] = error_of(lambda: conversations.unregister(opened.id))
out["conv_missing"] = error_of(lambda: conversations.get("5f0c6a52-3b1e-4c7a-9d2e-8a41b7c9e001"))
first = conversations.messages(os.environ["CONVERSATION_ID"], limit=2)
out["messages_first"] = dump(first)
out["messages_rest"] = dump(conversations.messages(os.environ["CONVERSATION_ID"], cursor=first.next_cursor))
print(json.dumps(out))
