"""A recipe-box MCP server written with the SDK's ``MCPServer``, not with flowdebug, for
tests/cli/test_cli_mcp.py: ``python -m tests.cli.foreign_mcp_server`` serves it over stdio.

It imports the SDK and pydantic only: every test that starts it pays for its imports (it was
the test module's ``--serve`` mode, which imported flowdebug's command line and runtime too).
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel


class Grams(BaseModel):  # module level: the server resolves its tools' annotations by name
    grams: float
    ingredient: str


def serve() -> None:
    """Serve the recipe box over stdio until the client closes it."""
    server = MCPServer("recipe-box", instructions="Kitchen conversions.", log_level="ERROR")
    density = {"flour": 120.0, "sugar": 200.0, "butter": 227.0}

    @server.tool(name="units/cups_to_grams", title="Cups to grams")
    def cups_to_grams(ingredient: str, cups: float) -> Grams:
        """Convert a volume in cups of a baking ingredient to grams."""
        if ingredient not in density:
            raise ToolError(f"no density for {ingredient!r}; known: {', '.join(density)}")
        return Grams(grams=cups * density[ingredient], ingredient=ingredient)

    @server.tool()
    def scale_recipe(
        servings_from: int, servings_to: int, quantities: dict[str, float]
    ) -> dict[str, float]:
        """Scale ingredient quantities from one number of servings to another."""
        return {k: v * servings_to / servings_from for k, v in quantities.items()}

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def pantry_check(item: str) -> str:
        """Say whether an item is in the pantry."""
        raise ToolError("the pantry is locked")

    server.run()


if __name__ == "__main__":
    serve()
