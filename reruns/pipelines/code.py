"""Getting code out of a model reply: the last fenced block."""

from __future__ import annotations

import re

_FENCE = re.compile(r"```[ \t]*(?:python3?|py)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)


def last_code_block(reply: str) -> str | None:
    """The content of the last fenced code block, or None when the reply has none."""
    blocks = _FENCE.findall(reply)
    if not blocks:
        return None
    code = blocks[-1].strip("\n")
    return code if code.strip() else None
