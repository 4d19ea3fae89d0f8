"""The `jbtrace` entry point: dispatch, usage errors, the installed console script. No JVM."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from jbgui import __version__
from jbgui.cli.main import SUBCOMMAND_MODULES, all_subcommands, main, split_command


def test_the_console_script_is_installed_and_runs():
    script = Path(sys.executable).parent / "jbtrace"
    assert script.exists(), "jbtrace is not installed in this environment: run `make setup`"
    result = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    assert result.stdout == f"jbtrace {__version__}\n"


def test_without_a_subcommand_help_goes_to_stderr_and_the_status_is_2(capsys):
    assert main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "record" in captured.err


def test_the_command_line_is_split_at_the_first_separator_only():
    assert split_command(["record", "-o", "t", "--", "java", "--", "x"]) == (
        ["record", "-o", "t"], ["java", "--", "x"])
    assert split_command(["record"]) == (["record"], None)


def test_the_programs_own_options_are_not_read_as_ours(capsys):
    # `--help` and `-o` after `--` belong to the program; the launcher check fails first here.
    assert main(["record", "--", "no-such-launcher", "--help", "-o", "x"]) == 127
    assert capsys.readouterr().err == "jbtrace: error: no-such-launcher: command not found\n"


def test_bad_mode_is_reported_by_argparse_with_status_2(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["record", "--mode", "3", "--", "java", "-version"])
    assert exit_.value.code == 2
    assert "argument --mode: invalid choice: 3" in capsys.readouterr().err


def test_every_subcommand_module_has_the_plug_in_interface():
    modules = all_subcommands()
    assert [m.NAME for m in modules] == list(SUBCOMMAND_MODULES)
    for module in modules:
        assert isinstance(module.NAME, str) and isinstance(module.HELP, str)
        assert callable(module.add_arguments) and callable(module.run)


def test_help_lists_every_subcommand(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for name in SUBCOMMAND_MODULES:
        assert f"    {name} " in out or f"    {name}\n" in out, name


def test_record_starts_the_program_without_loading_the_analyzer(tmp_path):
    """`jbtrace record` imports only what recording needs: numba and the replay cost about a
    second before the JVM even started (python -X importtime)."""
    code = ("import sys; from jbgui.cli.main import main; "
            "status = main(['record', '-o', sys.argv[1], '--', 'no-such-launcher']); "
            "print(status, sorted(m for m in ('numba', 'numpy', 'jbgui.model.analysis', 'jbgui.cli.calls') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path / "t")], capture_output=True, text=True,
                            timeout=120)
    assert result.stdout.strip() == "127 []", result.stdout + result.stderr
    # The same check can fail: a subcommand that needs the analyzer loads it.
    code = code.replace("'record', '-o', sys.argv[1], '--', 'no-such-launcher'", "'calls', sys.argv[1]")
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path / "missing")], capture_output=True, text=True,
                            timeout=120)
    assert result.stdout.startswith("2 [") and "numba" in result.stdout, result.stdout + result.stderr
