"""Connections to one endpoint, spread over several small httpx clients: the fastest way found here to drive
httpx, used by ``bench_harness.py``'s bare loop (the harness itself sends its calls with aiohttp).

httpx's connection pool looks at every connection it holds for each request it assigns (checking each one
for expiry, which polls its socket), so one client with 64 connections spends more time choosing a
connection than sending the request: against an endpoint that answers at once, one client with 64
connections sends about 380 requests/s here, sixteen clients of four connections about 1,470
(``bench/RESULTS.md``, "Harness"). :class:`ClientShards` keeps the per-request work constant: each
request borrows a slot of a client with at most ``per_client`` connections, and never more requests are
in flight on a client than it has connections.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

PER_CLIENT = 4


class ClientShards:
    """``max_connections`` connections as ceil(max_connections / per_client) httpx clients."""

    def __init__(self, max_connections: int, per_client: int = PER_CLIENT, **client_options: Any) -> None:
        if max_connections < 1:
            raise ValueError(f"`max_connections` must be at least 1, got {max_connections}")
        if per_client < 1:
            raise ValueError(f"`per_client` must be at least 1, got {per_client}")
        sizes = [min(per_client, max_connections - start) for start in range(0, max_connections, per_client)]
        self.clients = [httpx.AsyncClient(limits=httpx.Limits(max_connections=size), **client_options)
                        for size in sizes]
        # interleaved (0, 1, 2, ..., 0, 1, 2, ...): a few requests at a time go to different clients
        self._slots: list[int] = [i for round_ in range(per_client) for i, size in enumerate(sizes) if round_ < size]
        self._free: asyncio.Queue[int] | None = None

    @asynccontextmanager
    async def client(self) -> AsyncIterator[httpx.AsyncClient]:
        """A client with a free connection slot, for one request."""
        if self._free is None:  # made on first use, inside the running event loop
            self._free = asyncio.Queue()
            for slot in self._slots:
                self._free.put_nowait(slot)
        index = await self._free.get()
        try:
            yield self.clients[index]
        finally:
            self._free.put_nowait(index)

    async def aclose(self) -> None:
        for client in self.clients:
            await client.aclose()
