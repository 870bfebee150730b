"""flowdebug.lint.linter."""
