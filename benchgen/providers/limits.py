"""Client-side rate limits: token buckets for requests/min and tokens/min.

A :class:`TokenBucket` holds up to ``capacity`` units and refills continuously at
``rate_per_min / 60`` units per second. ``acquire(n)`` waits until ``n`` units are available and
takes them. The clock and the sleep function are injectable so the arithmetic is unit-testable
without real waiting.

Tokens/min is enforced with an *estimate* before the call (prompt characters / 4 + max_tokens);
:meth:`RateLimiter.settle` corrects the bucket with the real usage afterwards (the balance may go
negative, which delays later calls accordingly).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from benchgen.providers.base import Request

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


class TokenBucket:
    """Continuous-refill token bucket (units per minute), starting full."""

    def __init__(
        self,
        rate_per_min: float,
        capacity: float | None = None,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if rate_per_min <= 0:
            raise ValueError("rate_per_min must be > 0")
        self.rate = rate_per_min / 60.0  # units per second
        self.capacity = float(capacity if capacity is not None else rate_per_min)
        self._clock = clock
        self._sleep = sleep
        self._level = self.capacity
        self._stamp = clock()
        self._lock = asyncio.Lock()

    def _refill(self) -> None:
        now = self._clock()
        if now > self._stamp:
            self._level = min(self.capacity, self._level + (now - self._stamp) * self.rate)
        self._stamp = now

    @property
    def level(self) -> float:
        """Units available now (may be negative after :meth:`debit`)."""
        self._refill()
        return self._level

    def wait_time(self, n: float) -> float:
        """Seconds until ``n`` units are available (0 when they are). ``n`` is capped at capacity."""
        self._refill()
        need = min(n, self.capacity) - self._level
        return 0.0 if need <= 0 else need / self.rate

    def try_acquire(self, n: float) -> bool:
        """Take ``n`` units if available now; never waits."""
        if self.wait_time(n) > 0:
            return False
        self._level -= min(n, self.capacity)
        return True

    def debit(self, n: float) -> None:
        """Adjust the level by ``-n`` without waiting (``n`` may be negative: a refund)."""
        self._refill()
        self._level = min(self.capacity, self._level - n)

    async def acquire(self, n: float = 1.0) -> float:
        """Wait until ``n`` units are available, take them; return the seconds waited."""
        waited = 0.0
        async with self._lock:  # FIFO: one waiter at a time, so large requests are not starved
            while True:
                delay = self.wait_time(n)
                if delay <= 0:
                    self._level -= min(n, self.capacity)
                    return waited
                await self._sleep(delay)
                waited += delay


def estimate_tokens(request: Request) -> int:
    """Rough upper-bound token count of a call: prompt characters / 4 plus ``max_tokens``."""
    chars = len(request.system or "") + sum(len(m.content) for m in request.messages)
    return chars // 4 + 1 + request.max_tokens


class RateLimiter:
    """Requests/min and tokens/min limits for one provider (either may be None: unlimited)."""

    def __init__(
        self,
        rpm: float | None = None,
        tpm: float | None = None,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.requests = TokenBucket(rpm, clock=clock, sleep=sleep) if rpm else None
        self.tokens = TokenBucket(tpm, clock=clock, sleep=sleep) if tpm else None

    @property
    def active(self) -> bool:
        return self.requests is not None or self.tokens is not None

    async def acquire(self, request: Request) -> int:
        """Wait for a request slot and the estimated tokens; return the estimate taken."""
        estimate = estimate_tokens(request)
        if self.requests is not None:
            await self.requests.acquire(1)
        if self.tokens is not None:
            await self.tokens.acquire(estimate)
        return estimate

    def settle(self, estimate: int, actual: int) -> None:
        """Correct the tokens bucket once the real usage (input + output tokens) is known."""
        if self.tokens is not None:
            self.tokens.debit(actual - min(estimate, self.tokens.capacity))
