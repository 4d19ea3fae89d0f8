"""Fixtures of the bridge tests: the process's one bridge (JPype starts one JVM per process, so
every test shares it), traces recorded with ``instructions=on`` once per session, and what their
static.xml says about each block, read here independently of the bridge's own parser.

Blocks are compared as the tuples of ``block_tuples.py``.
"""

from __future__ import annotations

from typing import Callable

import pytest
from block_tuples import recorded_blocks

from jbgui.bridge import Bridge, get_bridge


@pytest.fixture(scope="session")
def bridge() -> Bridge:
    """The process's bridge, its JVM started."""
    bridge = get_bridge()
    bridge.start()
    return bridge


@pytest.fixture(scope="session")
def recorded(record, default_jdk) -> Callable[..., tuple]:
    """``recorded(program, bba="default", jdk=None) -> (run, precise, blocks)``: the program
    recorded with ``instructions=on`` (once per session), ``blocks`` its static.xml's blocks by
    class and method."""
    cache: dict[tuple, tuple] = {}

    def get(program: str, bba: str = "default", jdk=None) -> tuple:
        jdk = jdk or default_jdk
        key = (program, bba, jdk.id)
        if key not in cache:
            run = record(program, jdk, instructions=True, bba=bba)
            assert run.exit_code == 0, run.describe()
            cache[key] = (run, bba == "precise", recorded_blocks(run.trace_dir))
        return cache[key]

    return get
