"""Calls made again, with growing waits, while a service answers that it is briefly unavailable.

The Optuna storage (harness.fleet.steady_storage: a database restarting or out of reach) and the MLflow
client (harness.tracking.steady_client: a tracking server whose own database is busy) both retry a call
the service did not carry out, for a bounded window, then give up: the caller takes that for an outage
and queues its trial again.

Waits: 0.5, 1, 2, 4, 8, 15, 15, ... s, each times a random factor in [0.8, 1.2] so that the many workers
of one study that met the same restart do not come back in step; the last one is cut to end exactly when
the window does (one more try then, none after). The window counts from the call's first failure.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
FIRST_DELAY, LONGEST_DELAY = 0.5, 15.0


def retried_for(
    call: Callable[[], T],
    window: float,
    transient: Callable[[Exception], bool],
    on_failure: Callable[[Exception, float], None] = lambda exc, elapsed: None,
    give_up: Callable[[Exception], BaseException] | None = None,
) -> T:
    """`call()`'s answer, `call` made again after each exception `transient` accepts until `window`
    seconds have passed since its first failure. `on_failure(exc, seconds since the first failure)` runs
    before each wait (0.0 at the first). An exception `transient` rejects goes on at once; the last
    transient one goes on past the window, or what `give_up` makes of it (raised from None)."""
    first_failure: float | None = None
    delay = FIRST_DELAY
    while True:
        try:
            return call()
        except Exception as exc:
            if not transient(exc):
                raise
            now = time.monotonic()
            first_failure = now if first_failure is None else first_failure
            elapsed = now - first_failure
            if elapsed >= window:
                if give_up is None:
                    raise
                raise give_up(exc) from None
            on_failure(exc, elapsed)
            # the jitter never shortens the wait that ends the window: a shortened one would leave a
            # sliver of window, and retries in quick succession to fill it
            time.sleep(min(delay * random.uniform(0.8, 1.2), window - elapsed))
            delay = min(2 * delay, LONGEST_DELAY)
