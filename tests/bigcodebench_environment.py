"""BigCodeBench's evaluation environment as the tests that judge its tasks find it (``make setup-bigcodebench``
builds it): its interpreter, or, where there is none, why (the skip reason of every such test)."""

from __future__ import annotations

from sotacheck.core.errors import InputError
from sotacheck.reruns.sandbox.unittest_judge import evaluation_python

try:
    PYTHON, MISSING = evaluation_python(), ""
except InputError as exc:
    PYTHON, MISSING = "", f"BigCodeBench's tasks cannot be judged here: {exc}"
