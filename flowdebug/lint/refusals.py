"""The vendors' own refusal texts: what each API answers when a message history breaks its
rules, quoted as the APIs return them (sources beside each constant).

The linter's findings carry these as their ``vendor`` text (:mod:`flowdebug.lint.vendors`,
:mod:`flowdebug.lint.protocol`); a wire-location prefix (``messages.4: …``) is left out, since
a finding's path already points at the canonical part.
"""

from __future__ import annotations

# Anthropic [3P: API errors quoted in anthropics/claude-code#5060, #13460, #37, gitea mirror
# of claude-code "duplicate-tool-result-bug"; lobehub#1601; portkey error library 10488;
# claude-agent-sdk-python#522].
ANTHROPIC_MISSING = (
    "`tool_use` ids were found without `tool_result` blocks immediately after: {ids}. Each "
    "`tool_use` block must have a corresponding `tool_result` block in the next message."
)
ANTHROPIC_UNEXPECTED = (
    "unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block "
    "must have a corresponding `tool_use` block in the previous message."
)
ANTHROPIC_NOT_FIRST = (
    "Did not find {n} `tool_result` block(s) at the beginning of this message. Messages "
    "following `tool_use` blocks must begin with a matching number of `tool_result` blocks."
)
ANTHROPIC_DUPLICATE_ID = "`tool_use` ids must be unique"
ANTHROPIC_DUPLICATE_RESULT = (
    "each tool_use must have a single result. Found multiple `tool_result` blocks with id: {id}"
)
ANTHROPIC_ID_PATTERN = "String should match pattern '^[a-zA-Z0-9_-]+$'"
ANTHROPIC_FIRST_USER = 'messages: first message must use the "user" role'
ANTHROPIC_NO_TOOLS = "Requests which include `tool_use` or `tool_result` blocks must define tools."
# OpenAI Chat Completions [3P: BerriAI/litellm#10083, sdcb/chats#132, agno#5116]; "preceeding"
# is the API's own spelling.
CHAT_MISSING = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)
CHAT_UNEXPECTED = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'."
)
CHAT_DUPLICATE_RESULT = (
    "Invalid parameter: Duplicate value for 'tool_call_id' of '{id}', in messages[{first}] and "
    "messages[{second}]."
)
# OpenAI Responses [3P: OpenAI community thread 1142327, microsoft/vscode#320060,
# router-for-me/CLIProxyAPI commit c8cee6a].
RESPONSES_MISSING = "No tool output found for function call {id}."
RESPONSES_UNEXPECTED = "No tool call found for function call output with call_id {id}."
# Gemini [3P: google-gemini/gemini-cli#4217, #11814, #26486; langchain#27799; CLIProxyAPI#5199].
GEMINI_COUNT = (
    "Please ensure that the number of function response parts is equal to the number of "
    "function call parts of the function call turn."
)
GEMINI_RESPONSE_TURN = (
    "Please ensure that function response turn comes immediately after a function call turn."
)
GEMINI_CALL_TURN = (
    "Please ensure that function call turn comes immediately after a user turn or after a "
    "function response turn."
)
GEMINI_ID_MISMATCH = "functionResponse.id does not match functionCall.id"
# MCP: the reference server's JSON-RPC error (-32602) for an unknown tool [reference
# mcp.tools_call.response.protocol_error_unknown_tool.json].
MCP_UNKNOWN_TOOL = "Unknown tool: {name}"
