"""The ``flowdebug`` command (:mod:`flowdebug.cli.main`)."""
