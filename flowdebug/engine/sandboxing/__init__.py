"""Where code handlers run: a child process under limits (and bubblewrap where the host has it),
and what keeps it from the server."""
