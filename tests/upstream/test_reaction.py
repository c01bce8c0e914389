"""The network side of issue 28, exact virtual times: bilibili's tolerance per proxy (risk
control), the adaptive response's rate factor and budget, 4xx answers and Retry-After draws.

Every test drives :class:`SimulatedUpstream` from one client that tries a request every 100 ms
(latencies are exactly 100 ms: median = p99), through ``bulkSnapshot`` (Aliyun FC only) or
``getVideoInfo`` with the deployed limiters off, so every time below follows by hand.
"""

from __future__ import annotations

import trio

from sim.clock import VirtualClock
from sim.cvsa.vocabulary import UpstreamErrorKind
from sim.determinism import deterministic_trio
from sim.engine import VirtualEngine
from sim.events import EventLog
from sim.events.cvsa_kinds import PROXY_OUTCOME, UpstreamRequest
from sim.events.upstream_kinds import RATE_CHANGE, RateFactorChanged
from sim.ports import UpstreamError
from sim.rng import RandomStreams
from sim.scenario.upstream import UpstreamSection
from sim.testing.harness import Recorder
from sim.testing.runs import T0
from sim.units import Ms
from sim.upstream import NetworkFaults, SimulatedUpstream

STEP_MS = 100
NO_ERRORS = {
    "fetch_error": 0,
    "timeout": 0,
    "http_5xx": 0,
    "http_429": 0,
    "throttled": 0,
}
WORD = dict(enumerate(PROXY_OUTCOME.words))


def drive(
    cfg: dict[str, object],
    n: int,
    task: str = "bulkSnapshot",
    storm_until_ms: Ms = 0,
) -> tuple[Recorder, list[UpstreamError | None]]:
    """``n`` requests tried every 100 ms from T0; bilibili's tolerance is nil (every request
    throttled by risk control) for requests started before ``T0 + storm_until_ms``."""
    section = UpstreamSection.model_validate(
        {
            "single": {"median": "100ms", "p99": "100ms"},
            "bulk": {"median": "100ms", "p99": "100ms"},
            "rate_limits": False,
            **cfg,
        }
    )
    recorder = Recorder()
    log = EventLog([recorder])
    engine = VirtualEngine(clock=VirtualClock(T0), log=log, seed=1, elide=False)
    faults = NetworkFaults()
    streams = RandomStreams(1)
    up = SimulatedUpstream(
        engine,
        section,
        streams.stream("upstream"),
        lambda aid, t: 7,
        lambda aid, t: 0,
        faults,
        streams=streams,
    )
    errors: list[UpstreamError | None] = []

    async def client() -> None:
        for k in range(n):
            await engine.sleep_until(T0 + k * STEP_MS)
            faults.risk_scale = 1e9 if k * STEP_MS < storm_until_ms else 1.0
            err: UpstreamError | None = None
            try:
                if task == "bulkSnapshot":
                    await up.get_videos([1], engine.now)
                else:
                    await up.get_video(1, engine.now, task=task)
            except UpstreamError as caught:
                err = caught
            errors.append(err)

    async def before() -> None:
        engine.spawn(client(), name="client")

    log.open()
    with deterministic_trio(1):
        trio.run(engine.run, T0 + n * STEP_MS + 1000, before)
    return recorder, errors


def answers(rec: Recorder) -> list[tuple[Ms, str]]:
    return [(e.t_ms - T0, WORD[e.outcome]) for e in rec.events(UpstreamRequest)]


def test_risk_control_answers_412_beyond_the_tolerance_per_proxy() -> None:
    """Tolerance 2 per second (a GCRA: burst 2, then one per 500 ms): starts at 0 and 100 ms
    pass, 200-400 ms are throttled, 500 ms passes, then 600-900 ms throttled, 1000 ms passes."""
    rec, errors = drive(
        {"errors": NO_ERRORS, "risk_control": {"enabled": True, "limit": 2, "period": "1s"}}, 11
    )
    ok = [100, 200, 600, 1100]
    assert answers(rec) == [(t, "ok" if t in ok else "throttled") for t in range(100, 1200, 100)]
    throttled = [e for e in errors if e is not None]
    assert {(e.kind, e.code) for e in throttled} == {(UpstreamErrorKind.BILI_CODE, -412)}


def test_risk_control_can_answer_429_instead() -> None:
    """Tolerance 1 per second: the first request passes, the next two get 429, which reaches
    the crawler through Aliyun FC as ALICLOUD_PROXY_ERR (§14.4) while the log keeps the answer."""
    rec, errors = drive(
        {
            "errors": NO_ERRORS,
            "risk_control": {"enabled": True, "limit": 1, "period": "1s", "answer": "http_429"},
        },
        3,
    )
    assert answers(rec) == [(100, "ok"), (200, "http_429"), (300, "http_429")]
    assert [None if e is None else e.kind for e in errors] == [
        None,
        UpstreamErrorKind.ALICLOUD_ERROR,
        UpstreamErrorKind.ALICLOUD_ERROR,
    ]


def test_adaptive_response_drops_holds_and_restores_at_exact_times() -> None:
    """Every answer is -412 for requests started before 3 s, none after. Window 1 s, at least 3
    answers to cut, threshold 20 %, halve, restore +25 % at most once a second at <= 5 %.

    * 300 ms: answers of 100-300 ms all throttled: factor 50 %; the reference is the 3 answers in
      the window, so the budget is 3 x 50 % = 1 request per second (GCRA, burst 1).
    * The start at 300 ms takes that token; 400-1200 ms are held back (no proxy), 1300, 2300 and
      3300 pass. Answers at 1400 and 2400 ms are throttled but alone in their window: too few
      to cut again (and the factor may fall only once per window anyway).
    * 3400 ms: the answer to 3300 is clean: restore to 75 % (3.1 s since the drop), budget 2 per
      second (one per 500 ms): 3800 and 4300 pass.
    * 4400 ms: clean, a second since the restore: back to 100 %, the budget goes; every 100 ms
      passes again.
    """
    rec, _ = drive(
        {
            "errors": NO_ERRORS,
            "risk_control": {"enabled": True, "limit": 1000, "period": "1s"},
            "adaptive": {
                "enabled": True,
                "window": "1s",
                "min_answers": 3,
                "threshold": 0.2,
                "restore_below": 0.05,
                "lower": 0.5,
                "floor": 0.1,
                "restore_step": 0.25,
                "restore_period": "1s",
            },
        },
        50,
        storm_until_ms=3000,
    )
    changes = rec.events(RateFactorChanged)
    assert [
        (e.t_ms - T0, e.factor_permille, e.share_permille, e.answers, RATE_CHANGE.word(e.reason))
        for e in changes
    ] == [
        (300, 500, 1000, 3, "drop"),
        (3400, 750, 0, 1, "restore"),
        (4400, 1000, 0, 2, "restore"),
    ]
    sent = [(t, w) for t, w in answers(rec) if w != "no_proxy"]
    assert sent == [
        *[(t, "throttled") for t in (100, 200, 300, 400, 1400, 2400)],
        *[(t, "ok") for t in (3400, 3900, 4400, *range(4500, 5100, 100))],
    ]
    held = [t for t, w in answers(rec) if w == "no_proxy"]
    assert held == [
        *range(400, 1300, 100),
        *range(1400, 2300, 100),
        *range(2400, 3300, 100),
        *range(3400, 3800, 100),
        *range(3900, 4300, 100),
    ]


def test_4xx_answers_and_retry_after_draw_only_from_their_own_stream() -> None:
    """Every answer a 429 through cf-worker/native carries Retry-After 7 s with share 1; a
    plain 4xx is HTTP_4XX (ALICLOUD_ERROR through FC). The ``upstream`` stream is drawn as
    without them: the same proxies and latencies, request for request."""
    base = {**NO_ERRORS, "http_429": 1.0}
    rec, errors = drive(
        {"errors": {**base, "retry_after_share": 1.0, "retry_after": "7s"}},
        20,
        task="getVideoInfo",
    )
    plain, plain_errors = drive({"errors": base}, 20, task="getVideoInfo")
    assert [(e.t_ms, e.proxy, e.latency_ms) for e in rec.events(UpstreamRequest)] == [
        (e.t_ms, e.proxy, e.latency_ms) for e in plain.events(UpstreamRequest)
    ]
    got = [(e.kind, e.retry_after_ms) for e in errors if e is not None]
    assert set(got) == {(UpstreamErrorKind.HTTP_429, 7000), (UpstreamErrorKind.ALICLOUD_ERROR, 0)}
    assert {e.retry_after_ms for e in plain_errors if e is not None} == {0}
    _, four = drive({"errors": {**NO_ERRORS, "http_4xx": 1.0}}, 20, task="getVideoInfo")
    assert {e.kind for e in four if e is not None} == {
        UpstreamErrorKind.HTTP_4XX,
        UpstreamErrorKind.ALICLOUD_ERROR,
    }
