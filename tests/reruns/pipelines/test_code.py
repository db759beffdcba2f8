"""The code a reply carries (``sotacheck.reruns.pipelines.code``)."""

from __future__ import annotations

from sotacheck.reruns.pipelines.code import last_code_block


def test_last_code_block() -> None:
    assert last_code_block("x\n```python\ndef f():\n    return 1\n```\nthen\n```\ndef g(): pass\n```") == "def g(): pass"
    assert last_code_block("no code here") is None
    assert last_code_block("```python\n\n```") is None
