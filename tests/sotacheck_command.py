"""The ``sotacheck`` command as the tests start it: this interpreter with ``-P``, so that the working directory
(the repository root under ``make test``) does not go first on sys.path, where the checkout's ``sotacheck/``
folder would shadow the installed package (the editable install is a tree of links: Makefile, setup-core)."""

from __future__ import annotations

import sys

SOTACHECK = [sys.executable, "-P", "-m", "sotacheck.cli"]
