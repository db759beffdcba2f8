"""The seed schedule: one base seed per run; each call's seed is derived from (base seed, problem,
repeat, call path) — not from the pipeline — so the same problem, repeat and call path get the same seed
in every pipeline (paired comparisons share their randomness where paths coincide) and repeats differ."""

from __future__ import annotations

import hashlib


def derive_seed(base_seed: int, problem: str, repeat: int, call_path: str) -> int:
    """A 31-bit seed from SHA-256 of ``base_seed|problem|repeat|call_path``."""
    digest = hashlib.sha256(f"{base_seed}|{problem}|{repeat}|{call_path}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF
