"""Dynamic metrics on a recorded program whose receivers and block counts are known."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from jbgui.model import layout, metrics
from jbgui.model.analysis import Analysis


@pytest.fixture(scope="module")
def shapes(record, default_jdk) -> Analysis:
    run = record("polymorphism", default_jdk)
    assert run.exit_code == 0, run.describe()
    assert run.stdout.strip() == "35"   # 27 from total, 8 from the two calls of once
    return Analysis.open(run.trace_dir)


def site_of(a: Analysis, caller: str) -> dict | None:
    found = [s for s in metrics.polymorphism(a) if s["caller"].startswith(caller)]
    assert len(found) <= 1
    return found[0] if found else None


def test_a_polymorphic_site_lists_its_receivers_and_type_changes(shapes):
    site = site_of(shapes, "Main.total")
    assert site is not None
    assert site["calls"] == 7
    assert site["receiver_types"] == 3
    assert site["type_changes"] == 4
    assert {r["class"]: r["calls"] for r in site["receivers"]} == {
        "Main$Triangle": 3, "Main$Square": 2, "Main$Pentagon": 2}
    assert site["receivers"][0]["class"] == "Main$Triangle"   # most calls first


def test_a_monomorphic_site_is_not_listed(shapes):
    assert site_of(shapes, "Main.once") is None


def test_top_keeps_the_sites_with_most_calls(shapes):
    every = metrics.polymorphism(shapes)
    assert len(every) > 3   # the JDK's own startup has polymorphic sites too
    assert metrics.polymorphism(shapes, 3) == every[:3]
    calls = [s["calls"] for s in every]
    assert calls == sorted(calls, reverse=True)


def test_block_metrics_are_counts_times_static_metrics(shapes):
    st = shapes.statics
    counts = shapes.block_counts
    totals = metrics.block_metric_totals(shapes, counts)
    executed = np.nonzero(counts)[0]
    for k, name in enumerate(layout.METRIC_NAMES):
        assert totals[name] == sum(int(counts[b]) * int(st.b_metrics[b, k]) for b in executed), name


def test_stats_json_reports_the_site(shapes):
    out = subprocess.run([sys.executable, "-m", "jbgui.cli", "stats", str(shapes.trace.path), "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    sites = [s for s in json.loads(out.stdout)["polymorphic_sites"] if s["caller"].startswith("Main.total")]
    assert [(s["calls"], s["receiver_types"], s["type_changes"]) for s in sites] == [(7, 3, 4)]
