"""Tool execution: validating a call's arguments, dispatching it to its handler under policy
(timeouts, faults, approvals) and making one result per call; the handler kinds, the registry of
tool sets, and the owners of what a call starts (resources)."""
