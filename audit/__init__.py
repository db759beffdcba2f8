"""Statistics of sotacheck (``sotacheck.audit``): pass-rate intervals, paired tests, power, studies, runs
combined once for every audit of them (``combined``), the standard analysis, sweeps and decay fits, claim
registries and verdicts, leaderboards, the CI gate, the importers of other tools' logs, and everything the HTML
report shows (``report_inputs``). Numbers only: nothing here renders or prints.

The public modules are ``__all__`` (``docs/python-api.md`` lists them), imported on first use. The others
(``claim_checks``, ``claim_evidence``, ``claim_model``, ``claim_rank``, ``distributions``,
``leaderboard_facts``, ``paired_range``, ``signflip``) are the public modules' internals.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sotacheck.core.lazy import lazy_submodules

if TYPE_CHECKING:
    from sotacheck.audit import (
        analysis,
        analysis_results,
        claim_registry,
        claims,
        combined,
        compare,
        decay,
        decay_fits,
        fidelity,
        gate,
        importers,
        intervals,
        leaderboard,
        leaderboard_results,
        paired,
        power,
        report_inputs,
        studies,
        sweeps,
    )

__all__ = ["analysis", "analysis_results", "claim_registry", "claims", "combined", "compare", "decay", "decay_fits",
           "fidelity", "gate", "importers", "intervals", "leaderboard", "leaderboard_results", "paired", "power",
           "report_inputs", "studies", "sweeps"]

__getattr__ = lazy_submodules(__name__, __all__)
