"""Getting code out of a model reply.

Two rules: :func:`last_code_block` (the last fenced block, or nothing) for the pipelines sotacheck defines
itself, and :func:`reply_code` for the re-implementations of MapCoder and CodeSim, which take code the way the
authors' released parsers do (``parse_code`` in MapCoder.py, ``parse_response`` in CodeGenerator's
``utils/parse.py``): a reply with no fence at all *is* the code, and a reply that opens a fence it never
closes has no code — their parser raises there and the cell ends as an ``error``, so ours does too.
"""

from __future__ import annotations

import re

from sotacheck.reruns.context import CellError

_FENCE = re.compile(r"```[ \t]*(?:python3?|py)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
_ANY_FENCE = re.compile(r"```([^\n`]*)(.*?)```", re.DOTALL)
_PYTHON_TAG = re.compile(r"python3?$", re.IGNORECASE)


def last_code_block(reply: str) -> str | None:
    """The content of the last fenced code block, or None when the reply has none."""
    blocks = _FENCE.findall(reply)
    if not blocks:
        return None
    code = blocks[-1].strip("\n")
    return code if code.strip() else None


class UnclosedFence(CellError):
    """A reply opens a code fence and never closes it (typically a reply cut off by a token limit)."""


def reply_code(reply: str, where: str) -> str:
    """The code of ``reply`` as the released MapCoder and CodeSim parsers take it: the text after a closing
    ``</think>``; the whole reply when it holds no fence; else the last closed fenced block, a block tagged
    Python where there is one. Raises :class:`UnclosedFence`, naming ``where``, when the reply has fences but
    no closed block."""
    if "</think>" in reply:
        reply = reply.split("</think>", 1)[1]
    if "```" not in reply:
        return reply
    blocks = [(tag.strip(), body) for tag, body in _ANY_FENCE.findall(reply)]
    if not blocks:
        raise UnclosedFence(f"{where} opens a ``` code block and never closes it (a reply cut off by the token "
                            f"limit or the model's context?)")
    tagged = [body for tag, body in blocks if _PYTHON_TAG.match(tag)]
    return (tagged or [body for _, body in blocks])[-1].strip("\n")
