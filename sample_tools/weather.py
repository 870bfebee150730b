"""get_weather with fixed data for a few cities. Tokyo never answers within the tool's
1 s timeout, so the canonical scenario's Tokyo call times out."""

from __future__ import annotations

from typing import Any

from flowdebug.engine.execution.handler_io import ToolContext
from flowdebug.engine.execution.handlers import Toolset
from flowdebug.engine.execution.python_tools import python_tool

PARAMETERS = {
    "type": "object",
    "properties": {
        "location": {"type": "string", "description": "City name, e.g. Paris"},
        "unit": {"type": "string", "enum": ["c", "f"], "description": "Temperature unit"},
    },
    "required": ["location"],
}
# degrees Celsius, conditions
CITIES = {
    "paris": (18, "partly cloudy"),
    "london": (12, "light rain"),
    "new york": (22, "sunny"),
    "sydney": (25, "clear"),
}
HANGING = {"tokyo"}
HANG_SECONDS = 30.0  # bounded, and cut short when the runtime abandons the call
TIMEOUT = 1.0


def get_weather(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Get the current weather for a location."""
    location, unit = args["location"], args.get("unit", "c")
    key = location.strip().lower()
    if key in HANGING:
        ctx.sleep(HANG_SECONDS)
        raise TimeoutError(f"the weather service did not answer for {location}")
    if key not in CITIES:
        known = ", ".join(c.title() for c in CITIES)
        raise ValueError(f"no weather data for {location!r}; known cities: {known}")
    celsius, conditions = CITIES[key]
    temperature = celsius if unit == "c" else round(celsius * 9 / 5 + 32)
    return {
        "location": location,
        "temperature": temperature,
        "unit": unit,
        "conditions": conditions,
    }


TOOLSET = Toolset(entries=[python_tool(get_weather, PARAMETERS, timeout=TIMEOUT)])
