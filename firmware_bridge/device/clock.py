"""Device time as a device's clock counts it: whole microseconds (a board's timer, and the C
firmware, count so: the same ticks end a wait on every device, whatever the rounding of the
host's float times)."""

from __future__ import annotations

import math


def since_s(now: float, then: float) -> float:
    """Seconds from device time `then` to `now` (s), in whole microseconds; none if the clock
    stepped back (a wait must not end, nor a motion run backwards); forever since -inf."""
    if then == -math.inf:
        return math.inf
    return max(0, round(now * 1e6) - round(then * 1e6)) * 1e-6


def device_us(now: float, boot_time: float) -> int:
    """Microseconds since boot, as the wire carries them."""
    return max(0, int(round((now - boot_time) * 1e6)))
