"""Recording a real agent's traffic: ``flowdebug record``.

:mod:`~flowdebug.record.proxy` is a local HTTP proxy speaking every vendor's model routes (the
emulator's, from the vendors' facts) that forwards each request unchanged to the upstream and
streams the answer back as it comes; :mod:`~flowdebug.record.mcp` stands in front of an MCP
server (stdio or Streamable HTTP). Every exchange goes to a
:class:`~flowdebug.record.sessions.Recorder`, which keeps one session in the store per
conversation (a request whose history extends a recorded conversation's joins it) and saves it
after each exchange, so the Sessions page shows it while the agent runs.
"""
