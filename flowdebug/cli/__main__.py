"""``python -m flowdebug.cli``: the same as the ``flowdebug`` command."""

from flowdebug.cli.main import main

raise SystemExit(main())
