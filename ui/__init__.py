"""What the pages share, with Streamlit: the sidebar, the Debugger's drawing, Play,
the projector's keys, the browser session's owner and lifetime, rooms. A helper of
the pages, never a page: the pages are the scripts in pages/."""
