"""The trace of a cycle: protocol-neutral events, labelled in each vendor's terms, their replay
from a history, and the linter's verdict on each drawn request."""
