"""my-pack.add-order-note: adds a note to an order. It writes (mutating left out means
True, plus a `writes` effect), so a dry run stops before calling it."""

import itertools

from pydantic import BaseModel, Field

from kindgi import ToolContext, tool

_next_note = itertools.count(1)


class NoteInput(BaseModel):
    orderId: str = Field(min_length=1)
    text: str = Field(min_length=1)


class Note(BaseModel):
    noteId: str
    orderId: str


@tool(
    id="my-pack.add-order-note",
    version="0.1.0",
    effects=[{"kind": "writes", "resource": "external:orders"}],
)
def add_order_note(note: NoteInput, ctx: ToolContext) -> Note:
    """Adds a note to an order."""
    return Note(noteId=f"note_{next(_next_note)}", orderId=note.orderId)
