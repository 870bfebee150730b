"""flowdebug.views.debugger."""
