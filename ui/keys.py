"""Every key the app keeps in ``st.session_state``, declared once with what it holds. A helper
of the pages, not a page.

A browser session's state is these keys and nothing else (``tests/app/test_state_keys.py``
reads the pages, their helpers and app.py and fails on a key used but not declared here, or
declared and no longer used). Widgets whose value a page only reads back through the widget
itself need no entry; a widget key that a page also reads or sets through
``st.session_state`` is listed.
"""

from __future__ import annotations

STATE: dict[str, str] = {
    # the session this browser session works on, and who it is
    "fd_session": "the debugger Session this browser session works on",
    "fd_branches": "branch name -> session id, of the forks made in this browser session",
    "fd_revisions": "session id -> the store revision this tab last read or wrote",
    "fd_stale": "id of a session another tab or server changed since this tab read it",
    "fd_owner": "the owner this browser session acts as on a shared server",
    "fd_owner_sent": "the owner secret already written to the browser's cookie",
    "fd_attendee": "an attendee's id on a room page when no owner cookie is set",
    "fd_collapse_sidebar": "presenter mode just turned on: app.py collapses the sidebar once",
    "fd_flash": "the messages an action said for the page's next run (ui/flash.py)",
    "scenario": "the scenario picked in the sidebar",
    "branch": "the branch picked on the History page",
    # the sidebar's settings
    "protocols": "the vendors shown, in order",
    "presenter": "presenter mode (large type, sidebar collapsed)",
    "fd_player_choice": "who plays the model (a PlayerChoice, never holding the key)",
    "fd_player_for": "the session whose kept player the sidebar's player settings show",
    "live_protocol": "the live player's API",
    "live_key": "the live player's API key, kept in this browser session only",
    "live_stream": "whether the live player streams",
    # the Debugger
    "fd_action": "the control (Step, Undo, ...) pressed in this run, for the Step's fragment",
    "fd_event": "the event picked in the picture or the graphs",
    "fd_picture": "the teaching picture's component state (the lit row)",
    "fd_status_slot": "the sidebar's status line container, which the Step's fragment writes",
    "fd_status_text": "the text last written in that container",
    "graph_layout": "the Debugger's layout: teaching, aligned or separate",
    "per_row": "how many per-vendor graphs share a row",
    "show_all": "whether every per-vendor graph is drawn, not only the chosen vendors'",
    "show_history": "whether the message history is shown under the graphs",
    "show_stream": "whether streamed responses are drawn as their events",
    "fd_room_beat": "(room code, event) of Play's beat last published to the room",
    "manual_turn": "the model's turn typed for the manual player (kept with the session)",
    "fd_manual_for": "the session whose kept manual turn that editor was filled from",
    # Play (ui/play.py)
    "fd_playing": "whether a playback is on",
    "fd_play_toggled": "Play or Pause was pressed in this run",
    "fd_play_upto": "the last event a playback revealed (-1: none yet)",
    "fd_play_pace": "seconds between a playback's events",
    "fd_play_due": "when a playback's next event is due (time.monotonic)",
    "fd_play_trace": "the trace being played (None: the one a queued Run is making)",
    "fd_play_run": "one per press of Play: the view follows each run until a person takes over",
    # rooms
    "fd_room_code": "the room this tab follows (or came from, after a fork)",
    "fd_room_fork": "the id of this tab's own try, forked from the room",
    # the History page
    "history_rev": "the history revision the History editors were filled from",
    "hist_from": "the first message the History page shows",
    "rerun_view": "the last re-run of a turn: both requests and both model turns",
    # the Tools page
    "tool_pick": "the tool chosen in the Tools editor",
    "tool_form_rev": "the toolset revision the Tools editor was filled from",
    "tool_parameters": "the parameters schema typed in the Tools editor",
    "paste_text": "the tools pasted on the Tools page",
    "fd_token_counts": "the tools' footprint as the vendors counted it, and for which tools",
    # the Failures page
    "fault_kind": "the fault chosen to inject",
    "fault_target": "what the fault applies to: a call, a tool or the nth call",
    "fault_call": "the call a fault targets",
    "fault_tool": "the tool a fault targets",
    "fault_nth": "the nth call a fault targets",
    # the Compare page
    "fd_compare": "the last comparison's rows",
    "fd_compare_for": "the request the comparison was made for",
    "fd_ab": "the last A/B test's tallies",
    "fd_ab_runs": "the last A/B test's runs, one row each",
    "ab_tool": "the tool the A/B test varies",
    "ab_desc_0": "variant A's description, prefilled from the tool chosen",
    # the Sessions page
    "sess_pick": "the saved session picked in the list",
    "sess_pick_for": "the session the pick was made while on",
    "fd_new_mcp": "the MCP server listed in the New session form and its tool names",
    "new_mcp_pick": "the listed MCP server's tools chosen to declare in a new session",
}
