"""What flowdebug knows about Amazon Bedrock Converse, declared once.

Checked against botocore's service model for ``bedrock-runtime`` (2023-09-30), as loaded by
``botocore.session.get_session().get_service_model("bedrock-runtime")``.
"""

from __future__ import annotations

import hashlib
import re

from flowdebug.model import StopReason

PROTOCOL = "bedrock"
TITLE = "Bedrock Converse"
# The model id is part of the URL, never of the body: POST /model/{modelId}/converse
# (and /converse-stream), URL-encoded (``...v1%3A0``).
ENDPOINT = "/model/{modelId}/converse"
STREAM_ENDPOINT = "/model/{modelId}/converse-stream"

# botocore ToolName: pattern [a-zA-Z0-9_-]+, length 1-64.
NAME_RULE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
NAME_LIMIT = 64
# botocore ToolUseId: pattern [a-zA-Z0-9_.:-]+, length 1-64 (older models only [a-zA-Z0-9_-]).
ID_RULE = re.compile(r"^[a-zA-Z0-9_.:-]{1,64}$")
ID_LIMIT = 64

# botocore ContentBlock members (a union: one key per block, no "type").
BLOCK_NAMES = frozenset(
    {"text", "image", "document", "video", "audio", "toolUse", "toolResult", "guardContent",
     "cachePoint", "reasoningContent", "citationsContent", "searchResult", "toolAddition",
     "toolRemoval"}
)  # fmt: skip
# Blocks no other vendor spells this way (Gemini parts also have a bare "text").
OWN_BLOCKS = BLOCK_NAMES - {"text"}
# botocore ToolResultContentBlock members.
RESULT_BLOCK_NAMES = frozenset({"json", "text", "image", "document", "video", "searchResult"})
# botocore ImageFormat.
IMAGE_FORMATS = {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}
MEDIA_FORMATS = {media: fmt for fmt, media in IMAGE_FORMATS.items()}

# botocore ConverseStreamOutput members: the ``:event-type`` of each event-stream frame.
EVENT_NAMES = frozenset(
    {"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop",
     "messageStop", "metadata"}
)  # fmt: skip
ERROR_EVENTS = frozenset(
    {"internalServerException", "modelStreamErrorException", "validationException",
     "throttlingException", "serviceUnavailableException"}
)  # fmt: skip

# botocore StopReason -> canonical. guardrail_intervened, malformed_model_output,
# malformed_tool_use and model_context_window_exceeded keep their wire value in
# provider_details so they come back unchanged.
STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "content_filtered": "content_filter",
    "guardrail_intervened": "content_filter",
    "malformed_model_output": "other",
    "malformed_tool_use": "other",
    "model_context_window_exceeded": "other",
}
WIRE_STOP: dict[StopReason, str] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "content_filter": "content_filtered",
}

# TokenUsage <-> canonical counters. Bedrock, like Anthropic, counts cache reads and writes
# apart from inputTokens, so they take Anthropic's canonical names.
USAGE = {
    "inputTokens": "input_tokens",
    "outputTokens": "output_tokens",
    "cacheReadInputTokens": "cache_read_input_tokens",
    "cacheWriteInputTokens": "cache_creation_input_tokens",
}
USAGE_WIRE = {v: k for k, v in USAGE.items()}


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:8]


def safe_name(name: str) -> str:
    """``name`` if Bedrock accepts it as a ToolName, else a deterministic legal rewrite (the
    same rewrite base.safe_name makes for a 64-character ``[a-zA-Z0-9_-]`` vendor)."""
    if NAME_RULE.match(name):
        return name
    cleaned = re.sub(r"[^a-zA-Z0-9_-]", "_", name) or "tool"
    if len(cleaned) > NAME_LIMIT:
        cleaned = cleaned[: NAME_LIMIT - 9] + "_" + _digest(name)
    return cleaned


def safe_call_id(call_id: str) -> str:
    """``call_id`` if Bedrock accepts it as a ToolUseId, else a deterministic legal rewrite."""
    if ID_RULE.match(call_id):
        return call_id
    cleaned = re.sub(r"[^a-zA-Z0-9_.:-]", "_", call_id)[: ID_LIMIT - 9] or "call"
    return f"{cleaned}_{_digest(call_id)}"
