"""The step debugger's state machine: a session's phases, steps, undo, edits, background steps, who
plays the model, and the scenarios it opens."""
