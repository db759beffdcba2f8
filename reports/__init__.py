"""Renderers (``sotacheck.reports``): the HTML report, paper tables, claim and gate texts, leaderboards. They
render the results ``sotacheck.audit`` computed and compute none themselves.

The public modules are ``__all__`` (``docs/python-api.md`` lists them), imported on first use. The others
(``figures``, ``glance``, ``html_types``, ``leaderboard_figures``) are the public modules' internals.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sotacheck.core.lazy import lazy_submodules

if TYPE_CHECKING:
    from sotacheck.reports import claims_text, files, gate, html, leaderboard_html, leaderboard_tables, leaderboard_text, tables

__all__ = ["claims_text", "files", "gate", "html", "leaderboard_html", "leaderboard_tables", "leaderboard_text", "tables"]

__getattr__ = lazy_submodules(__name__, __all__)
