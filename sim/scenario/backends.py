"""``[backends]``: where the scheduler's state lives (sim.backends; README "Real backends").

The command line (``--store``, ``--counter``) overrides these."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from sim.scenario.types import Section


class BackendsSection(Section):
    """``[backends]``."""

    store: str = Field(
        default="memory", pattern=r"^(memory|reference|sqlite:.+|postgres(ql)?://.+)$"
    )
    """``memory`` (the optimised in-memory store), ``reference`` (the same in plain Python, to
    check a result), ``sqlite:PATH`` or ``postgresql://USER@HOST:PORT/DB``."""
    counter: str = Field(
        default="memory", pattern=r"^(memory|reference|fakeredis|rediss?://.+|unix://.+)$"
    )
    """``memory`` (optimised), ``reference`` (plain Python), ``fakeredis`` or
    ``redis://HOST:PORT/DB``."""
    schema_name: str = Field(default="sim", alias="schema", pattern=r"^[a-z_][a-z0-9_]*$")
    """PostgreSQL schema for the tables."""
    key_prefix: str = "sim:"
    """Prefix of every Redis key."""
    reservation: Literal["loop", "lua"] = "loop"
    """Window reservation on Redis: the deployed client-side loop, or one Lua script."""
