"""my-pack.greet: builds a greeting. Read-only."""

from pydantic import BaseModel, Field

from kindgi import ToolContext, tool


class Person(BaseModel):
    name: str = Field(min_length=1)


class Greeting(BaseModel):
    greeting: str


@tool(id="my-pack.greet", version="0.1.0", mutating=False)
def greet(person: Person, ctx: ToolContext) -> Greeting:
    """Greets someone by name."""
    return Greeting(greeting=f"Hello, {person.name}!")
