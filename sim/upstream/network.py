"""bilibili through the deployed proxies (reference §14), as the upstream port.

One request (``NetworkDelegate.request``, §14.3):

1. Shuffle the task's proxies (§14.2 table). For each: trigger the task limiter, if the task has
   one, then that proxy's provider limiter; a denial moves on to the next proxy. If every proxy
   is limited: ``no_proxy`` at once ("rate-limited everywhere right now", not a network failure).
2. Draw the latency (log-normal, per request kind) and whether the request fails. A request that
   times out -- drawn, or slower than the proxy's timeout -- takes the timeout, then fails.
3. Through Aliyun FC any failure is ALICLOUD_PROXY_ERR (non-200 or exception, §14.4); through
   native and cf-worker it is a fetch error, a timeout, or bilibili's 429/5xx.
4. On success the counts are read at the midpoint of the request (the proxy's server time,
   §2.2); a video the API cannot show raises its bilibili code (single path) or is left out of
   the bulk response (reference Q3: the simulator's choice).

Every request is logged (``UpstreamRequest``) with its proxy, latency and outcome. Faults
(:class:`NetworkFaults`) change the behaviour while they last: an outage fails every request,
a throttling storm divides every limit, a latency spike multiplies latencies, a risk-control
storm divides bilibili's tolerance.

Issue 28 (docs/upstream-reaction.md), each off by default: bilibili's own per-proxy tolerance
(``[upstream.risk_control]``: beyond it a request that reached bilibili is answered -412 or
429), plain 4xx answers and Retry-After headers on 429s (``[upstream.errors]``), and the
crawler's adaptive response (``[upstream.adaptive]``): each answer feeds
:class:`sim.cvsa.throttle.AdaptiveRate`; while its factor is below 1, a GCRA budget of that
factor of the rate before the throttling is checked before the proxies of step 1 (spent: no
proxy).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from sim.cvsa.throttle import AdaptiveRate
from sim.cvsa.vocabulary import UpstreamErrorKind
from sim.engine import Engine
from sim.events.cvsa_kinds import PROXY_OUTCOME, UpstreamRequest
from sim.events.upstream_kinds import RATE_CHANGE, RateFactorChanged
from sim.ports import UpstreamError, VideoStats, new_record
from sim.rng import RandomStreams
from sim.scenario.upstream import LatencySection, UpstreamSection
from sim.units import Ms
from sim.upstream.limiter import BULK_TASK_TIERS, PROVIDER_TIERS, Gcra, MultiTierLimiter

ALICLOUD: Final = "alicloud_hangzhou"
CF_WORKER: Final = "cf-worker"
NATIVE: Final = "native"
TASK_PROXIES: Final[dict[str, tuple[str, ...]]] = {
    "bulkSnapshot": (ALICLOUD,),
    "snapshotVideo": (ALICLOUD, CF_WORKER),
    "snapshotMilestoneVideo": (ALICLOUD, CF_WORKER, NATIVE),
    "getVideoInfo": (ALICLOUD, CF_WORKER),
}
"""Proxies per network task (reference §14.2)."""
THROTTLED_CODE: Final = -412
"""bilibili's "request blocked" code (a business error in a 200 response)."""
_SINGLE: Final = 0
_BULK: Final = 1


_NV_MAGICCONST: Final = 4 * math.exp(-0.5) / math.sqrt(2.0)
_OUTCOME_CODE: Final = PROXY_OUTCOME.codes()
_KIND_OF: Final = {k.value: k for k in UpstreamErrorKind}
"""A drawn failure's word (``fetch_error``, ``timeout``, ...) as the error kind it raises."""
_UNSENT: Final = frozenset({"fetch_error", "timeout"})
"""Drawn failures of a request that never reached bilibili (its tolerance does not see it)."""
_ANSWERED: Final = frozenset({"ok", "http_5xx", "http_429", "throttled", "http_4xx"})
"""Outcomes that are bilibili's answers: what the adaptive response's window holds."""
_THROTTLED: Final = frozenset({"throttled", "http_429"})
_RATE_CODE: Final = RATE_CHANGE.codes()


def shuffle_draw(rng: random.Random, x: list[str]) -> None:
    """``rng.shuffle(x)``: the same draws and the same order, compiled.

    ``Random.shuffle`` and its ``_randbelow`` are interpreted (three Python frames a request);
    this is the Fisher-Yates loop over ``getrandbits`` as CPython 3.11 writes them
    (tests/upstream/test_network.py compares the two on the running Python)."""
    for i in range(len(x) - 1, 0, -1):
        n = i + 1
        k = n.bit_length()
        j = rng.getrandbits(k)
        while j >= n:
            j = rng.getrandbits(k)
        x[i], x[j] = x[j], x[i]


def lognormal_draw(rng: random.Random, mu: float, sigma: float) -> float:
    """``rng.lognormvariate(mu, sigma)``: the same draws and the same value, compiled.

    The method is interpreted (two Python frames a request); this is its
    Kinderman-Monahan loop as CPython 3.11 writes it, drawing from ``rng`` in the same order
    (tests/upstream/test_network.py compares the two draw for draw on the running Python)."""
    while True:
        u1 = rng.random()
        u2 = 1.0 - rng.random()
        z = _NV_MAGICCONST * (u1 - 0.5) / u2
        if z * z / 4.0 <= -math.log(u2):
            return math.exp(mu + z * sigma)


@dataclass
class NetworkFaults:
    """What the fault injector has switched on right now."""

    outage: str | None = None
    """Every request fails with this kind (``http_5xx``, ``timeout`` or ``fetch_error``)."""
    latency_factor: float = 1.0
    limit_scale: float = 1.0
    """Every rate limit is divided by this."""
    risk_scale: float = 1.0
    """bilibili's tolerance (``[upstream.risk_control]``) is divided by this."""


class SimulatedUpstream:
    """The upstream port over the synthetic world (see the module docstring)."""

    def __init__(
        self,
        engine: Engine,
        cfg: UpstreamSection,
        rng: random.Random,
        views: Callable[[int, Ms], int],
        api_error: Callable[[int, Ms], int],
        faults: NetworkFaults | None = None,
        *,
        streams: RandomStreams | None = None,
    ) -> None:
        self.engine = engine
        self.cfg = cfg
        self.rng = rng
        self.views = views
        self.api_error = api_error
        self.faults = faults or NetworkFaults()
        self.providers = {
            p: MultiTierLimiter(PROVIDER_TIERS) for p in (ALICLOUD, CF_WORKER, NATIVE)
        }
        self.task_limiters = {("bulkSnapshot", ALICLOUD): MultiTierLimiter(BULK_TASK_TIERS)}
        self.timeouts = {
            ALICLOUD: cfg.timeouts.alicloud,
            CF_WORKER: cfg.timeouts.cf_worker,
            NATIVE: cfg.timeouts.native,
        }
        log = engine.log
        self._proxy_idx = {p: log.name(p) for p in (ALICLOUD, CF_WORKER, NATIVE)}
        self._emit = log.emitter(UpstreamRequest)
        # Issue 28, each off by default and then drawing and changing nothing.
        rc = cfg.risk_control
        self.risk = (
            {p: Gcra(rc.period, rc.limit) for p in (ALICLOUD, CF_WORKER, NATIVE)}
            if rc.enabled
            else None
        )
        """bilibili's tolerance per proxy (``[upstream.risk_control]``)."""
        self.adaptive = AdaptiveRate(cfg.adaptive.params()) if cfg.adaptive.enabled else None
        """The adaptive response's state (``[upstream.adaptive]``, :mod:`sim.cvsa.throttle`)."""
        self.governor: Gcra | None = None
        """The adaptive response's budget while its factor is below 1 (a GCRA per window)."""
        self._emit_rate = log.emitter(RateFactorChanged)
        self.retry_after_rng: random.Random | None = None
        if cfg.errors.retry_after_share > 0:
            if streams is None:
                raise ValueError("errors.retry_after_share > 0 needs the run's streams")
            self.retry_after_rng = streams.stream("retry_after")

    # -- the port -----------------------------------------------------------------------------
    async def get_video(self, aid: int, now_ms: Ms, task: str = "snapshotVideo") -> VideoStats:
        t_ms = await self._request(task, _SINGLE, 1, self.cfg.single)
        code = self.api_error(aid, t_ms)
        if code:
            raise UpstreamError(UpstreamErrorKind.BILI_CODE, code)
        return new_record(VideoStats, (aid, self.views(aid, t_ms), t_ms))

    async def get_videos(
        self, aids: Sequence[int], now_ms: Ms, task: str = "bulkSnapshot"
    ) -> list[VideoStats]:
        t_ms = await self._request(task, _BULK, len(aids), self.cfg.bulk)
        views, api_error = self.views, self.api_error
        return [
            new_record(VideoStats, (a, views(a, t_ms), t_ms))
            for a in aids
            if not api_error(a, t_ms)
        ]

    # -- one request --------------------------------------------------------------------------
    def pick_proxy(self, task: str, now_ms: Ms) -> str | None:
        """The first proxy (in shuffled order) whose limiters let the request through; None when
        the adaptive budget (issue 28, checked first) or every proxy's limiters refuse."""
        proxies = list(TASK_PROXIES[task])
        shuffle_draw(self.rng, proxies)
        governor = self.governor
        if governor is not None and not governor.allow(now_ms):
            return None  # issue 28: the adaptive response's budget is spent for now
        if not self.cfg.rate_limits:
            return proxies[0]
        scale = self.faults.limit_scale
        for proxy in proxies:
            task_limiter = self.task_limiters.get((task, proxy))
            if task_limiter is not None and not task_limiter.trigger(now_ms, scale):
                continue
            if self.providers[proxy].trigger(now_ms, scale):
                return proxy
        return None

    async def _request(self, task: str, kind: int, n_aids: int, latency: LatencySection) -> Ms:
        """Send one request; return the server time of its answer, or raise UpstreamError."""
        engine = self.engine
        start = engine.now
        proxy = self.pick_proxy(task, start)
        if proxy is None:
            self._emit(start, -1, kind, n_aids, 0, _OUTCOME_CODE["no_proxy"])
            raise UpstreamError(UpstreamErrorKind.NO_PROXY)
        delay = self._latency(latency)
        failure = self.faults.outage or self._draw_failure()
        # A request that reached bilibili: its tolerance for this proxy decides first.
        if (
            self.risk is not None
            and not self.faults.outage
            and failure not in _UNSENT
            and not self.risk[proxy].allow(start, self.faults.risk_scale)
        ):
            failure = self.cfg.risk_control.answer
        retry_after = 0
        # Only a 429 that reaches the crawler with its headers (not through Ali FC, §14.4).
        if (
            failure == "http_429"
            and self.retry_after_rng is not None
            and proxy != ALICLOUD
            and self.retry_after_rng.random() < self.cfg.errors.retry_after_share
        ):
            retry_after = self.cfg.errors.retry_after
        timeout = self.timeouts[proxy]
        if failure == "timeout" or delay > timeout:
            failure, delay = "timeout", timeout
        await engine.sleep(delay)
        now = engine.now
        outcome = failure or "ok"
        self._emit(now, self._proxy_idx[proxy], kind, n_aids, delay, _OUTCOME_CODE[outcome])
        if self.adaptive is not None and outcome in _ANSWERED:
            self._observe(now, outcome)
        if failure is None:
            return start + delay // 2
        if failure == "throttled":
            raise UpstreamError(UpstreamErrorKind.BILI_CODE, THROTTLED_CODE)
        # Through Aliyun FC every failure becomes ALICLOUD_PROXY_ERR (§14.4).
        if proxy == ALICLOUD:
            raise UpstreamError(UpstreamErrorKind.ALICLOUD_ERROR)
        raise UpstreamError(_KIND_OF[failure], retry_after_ms=retry_after)

    def _observe(self, now_ms: Ms, outcome: str) -> None:
        """Feed the adaptive response one answer; log a change of its factor (issue 28)."""
        adaptive = self.adaptive
        assert adaptive is not None
        change = adaptive.observe(now_ms, outcome in _THROTTLED)
        if change is not None:
            budget = adaptive.budget()
            if budget is None:
                self.governor = None
            elif self.governor is None:
                self.governor = Gcra(adaptive.params.window_ms, budget)
            else:
                self.governor.limit = budget
            window = adaptive.window
            self._emit_rate(
                now_ms, change[0], window.share_permille(), len(window), _RATE_CODE[change[1]]
            )

    def _latency(self, latency: LatencySection) -> Ms:
        sigma = math.log(latency.p99 / latency.median) / 2.3263478740408408  # z of 0.99
        draw = lognormal_draw(self.rng, math.log(latency.median), sigma)
        return max(1, round(draw * self.faults.latency_factor))

    def _draw_failure(self) -> str | None:
        e = self.cfg.errors
        u = self.rng.random()
        for name, p in (
            ("fetch_error", e.fetch_error),
            ("timeout", e.timeout),
            ("http_5xx", e.http_5xx),
            ("http_429", e.http_429),
            ("throttled", e.throttled),
            ("http_4xx", e.http_4xx),  # last: at 0 it changes no draw (issue 28)
        ):
            if u < p:
                return name
            u -= p
        return None
