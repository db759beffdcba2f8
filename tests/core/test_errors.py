"""The error family (``sotacheck.core.errors``): every user error the layers raise is one of its classes."""

from __future__ import annotations

import pytest

from sotacheck.core.errors import ArgumentError, InputError, SotacheckError, UsageError
from sotacheck.core.rundir import OutcomeError


def test_one_error_family() -> None:
    assert issubclass(OutcomeError, InputError) and issubclass(OutcomeError, ValueError)
    assert issubclass(ArgumentError, UsageError) and issubclass(ArgumentError, ValueError)
    from sotacheck.audit.claim_registry import ClaimsError
    from sotacheck.audit.gate import GateInputError

    assert issubclass(ClaimsError, InputError) and issubclass(GateInputError, InputError)
    assert issubclass(InputError, SotacheckError) and issubclass(UsageError, SotacheckError)
    from sotacheck.audit.intervals import proportion_interval

    with pytest.raises(ArgumentError, match="`method`"):
        proportion_interval(1, 3, method="wald")  # type: ignore[arg-type]


def test_an_error_naming_parameters_survives_pickling() -> None:
    """Ray sends errors between processes: the parameters and the template travel with the message."""
    import pickle

    error = pickle.loads(pickle.dumps(UsageError("{min_n} must be at least 1", parameters=("min_n",))))
    assert str(error) == "`min_n` must be at least 1" and error.naming({"min_n": "--min-n"}) == "--min-n must be at least 1"
