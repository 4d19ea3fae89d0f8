"""The layering of docs/architecture holds: `lint-imports` keeps the contracts in pyproject.toml."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_import_contracts_are_kept():
    lint_imports = Path(sys.executable).parent / "lint-imports"
    assert lint_imports.exists(), "import-linter is missing: run `make setup` (it is a dev extra)"
    result = subprocess.run([str(lint_imports), "--no-cache", "--no-logo"], cwd=REPO, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    # Every contract in pyproject.toml was checked and kept.
    contracts = (REPO / "pyproject.toml").read_text().count("[[tool.importlinter.contracts]]")
    assert f"Contracts: {contracts} kept, 0 broken." in result.stdout, result.stdout
