"""The analyzer does without numpy's transparent-huge-page advice (jbgui/model/__init__.py): on
javac's billion-event trace the kernel's compaction on first touch cost toggling only my code
three times its time. Each case runs in a fresh interpreter, as the setting is per process."""

import subprocess
import sys

import pytest

PROBE = """
import {first}, {second}
numpy = __import__("numpy")
core = getattr(numpy, "_core", None) or numpy.core
print(core.multiarray._set_madvise_hugepage(False))   # returns the setting it replaces
"""


def advice(first: str, second: str, env_value: str | None = None) -> str:
    import os
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    if env_value is not None:
        env["NUMPY_MADVISE_HUGEPAGE"] = env_value
    out = subprocess.run([sys.executable, "-c", PROBE.format(first=first, second=second)], env=env,
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_numpy_alone_advises_huge_pages():
    # the premise: without jbgui, numpy on Linux asks for them (else this test guards nothing)
    assert advice("numpy", "json") == "True"


@pytest.mark.parametrize("first,second", [("jbgui.model", "numpy"), ("numpy", "jbgui.model")])
def test_importing_the_model_turns_the_advice_off_before_or_after_numpy(first, second):
    assert advice(first, second) == "False"


def test_a_setting_the_user_made_stands():
    assert advice("jbgui.model", "numpy", env_value="1") == "True"
