"""The ``sotacheck`` command line: argument parsing and printing only; every command calls
:mod:`sotacheck.api`. One module per command or group of related commands; ``main.py`` assembles them."""
