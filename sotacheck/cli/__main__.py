"""``python -m sotacheck.cli``: the same as the ``sotacheck`` command."""

from sotacheck.cli.launch import main

main()
