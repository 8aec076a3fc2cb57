"""How Kafka measures a client against its quota: a rate over sampled time windows (the
client metrics' ``Rate`` over a ``SampledStat``), the throttle time that follows from it, and
the token bucket of the controller mutation quota.

Defaults are Kafka's ``quota.window.num`` (11 samples) and ``quota.window.size.seconds`` (1 s).
A rate is what was recorded in the live samples divided by the window they span, which is
never taken as shorter than ``(samples - 1) * window`` (10 s): a burst right after a quota
appears is measured over 10 s, as on Kafka.  All times are milliseconds on the cluster's
clock, so a manual clock decides what a rate measures.
"""

from __future__ import annotations

SAMPLES = 11
WINDOW_MS = 1000


class _Sample:
    __slots__ = ("start", "last", "value")

    def __init__(self, now: int):
        self.start = self.last = now
        self.value = 0.0

    def reset(self, now: int) -> None:
        self.start = self.last = now
        self.value = 0.0


class Rate:
    """Kafka's ``Rate``: values recorded into a ring of ``samples + 1`` windows."""

    def __init__(self, samples: int = SAMPLES, window_ms: int = WINDOW_MS):
        self.samples_wanted = samples
        self.window_ms = window_ms
        self._samples: list[_Sample] = []
        self._current = 0

    def record(self, value: float, now: int) -> None:
        if not self._samples:
            self._samples.append(_Sample(now))
        sample = self._samples[self._current]
        if now - sample.start >= self.window_ms:
            self._current = (self._current + 1) % (self.samples_wanted + 1)
            if self._current >= len(self._samples):
                self._samples.append(_Sample(now))
            else:
                self._samples[self._current].reset(now)
            sample = self._samples[self._current]
        sample.value += value
        sample.last = now

    def _purge(self, now: int) -> None:
        horizon = self.samples_wanted * self.window_ms
        for sample in self._samples:
            if now - sample.last >= horizon:
                sample.reset(now)

    def window(self, now: int) -> int:
        """The span, in ms, the rate divides by (Kafka's ``Rate.windowSize``)."""
        self._purge(now)
        if not self._samples:
            self._samples.append(_Sample(now))
        elapsed = now - min(s.start for s in self._samples)
        full = elapsed // self.window_ms
        if full < self.samples_wanted - 1:
            elapsed += (self.samples_wanted - 1 - full) * self.window_ms
        return max(elapsed, 1)

    def measure(self, now: int) -> tuple[float, int]:
        """(the rate per second, the window in ms it was measured over)."""
        window = self.window(now)
        return sum(s.value for s in self._samples) / (window / 1000.0), window


def throttle_ms(rate: float, bound: float, window_ms: int) -> int:
    """How long a client over its quota waits (Kafka's ``QuotaUtils.throttleTime``): the time
    until the rate over the window is back at the bound.  Java's ``Math.round``."""
    if rate <= bound:
        return 0
    return int((rate - bound) / bound * window_ms + 0.5)


class TokenBucket:
    """The controller mutation quota (Kafka's ``TokenBucket``): ``rate`` tokens a second, up
    to a burst of ``samples * window`` seconds' worth; the bucket starts full and may go below
    zero, which is when the quota is exceeded."""

    def __init__(self, rate: float, now: int, samples: int = SAMPLES,
                 window_ms: int = WINDOW_MS):
        self.rate = rate
        self.burst = samples * window_ms / 1000.0 * rate
        self.tokens = self.burst
        self.last = now

    def refill(self, now: int) -> None:
        self.tokens = min(self.burst, self.tokens + self.rate * (now - self.last) / 1000.0)
        self.last = now

    def take(self, permits: float, now: int) -> None:
        self.refill(now)
        self.tokens = min(self.burst, self.tokens - permits)

    def deficit_ms(self, now: int) -> int:
        """How long until the bucket is back at zero (0 when it is not below)."""
        self.refill(now)
        if self.tokens >= 0:
            return 0
        return int(-self.tokens / self.rate * 1000 + 0.5)
