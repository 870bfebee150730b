"""The linter's floor below the vendor folders: what a finding is (:mod:`.findings`, its codes
in :mod:`.codes`), pairing results with calls as a vendor sees the history (:mod:`.pairing`)
and walking a tool's schema (:mod:`.schema_walk`). Each vendor's ``rules.py`` builds on them;
:mod:`flowdebug.lint.linter`, above the vendor folders, applies the rules."""
