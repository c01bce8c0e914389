"""Shared fixtures and the services policy (README "Services": skips become failures in CI)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent
REQUIRE_SERVICES = os.environ.get("SIM_REQUIRE_SERVICES") == "1"


def skip_or_fail(reason: str) -> None:
    """Skip with ``reason``; in CI (``SIM_REQUIRE_SERVICES=1``) fail instead."""
    if REQUIRE_SERVICES:
        pytest.fail(f"{reason} (SIM_REQUIRE_SERVICES=1: a missing service is a failure)")
    pytest.skip(reason)


@pytest.fixture
def small_scenario() -> Path:
    return DATA / "small.toml"
