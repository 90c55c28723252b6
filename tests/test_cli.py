"""``python -m loynes check``: flags that apply to some systems only, the seed, --version."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import recursions as rc
from loynes.cli import main

ROOT = Path(__file__).resolve().parents[1]
QUICK = ["--arrival-rate", "1", "--steps", "1024", "--horizon", "1024"]


def run(argv, capsys):
    """Exit status (argparse's SystemExit included), stdout and the lines of stderr."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err.strip().splitlines()


def check_json(argv, capsys):
    code, out, err = run(["check", *argv, *QUICK, "--json"], capsys)
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("seed", ["-1", "-12345"])
def test_negative_seed_is_a_usage_error(seed, capsys):
    code, out, err = run(["check", "--system", "jsw", "--servers", "2", *QUICK,
                          "--seed", seed], capsys)
    assert code == 2 and out == ""
    assert err == [f"python -m loynes: error: --seed must be >= 0, got {seed}"]


def test_seed_zero_is_accepted(capsys):
    assert check_json(["--system", "jsw", "--servers", "2", "--seed", "0"], capsys)["system"] \
        == "JSW(servers=2)"


@pytest.mark.parametrize("system", ["jsw", "loss", "jiq", "random", "leastofd"])
def test_p_rejected_where_it_does_not_apply(system, capsys):
    code, out, err = run(["check", "--system", system, "--servers", "3", "--p", "1", *QUICK],
                         capsys)
    assert code == 2 and out == ""
    assert len(err) == 1
    assert f"--p applies only to --system jpsw, envelope, split, not to {system}" in err[0]


@pytest.mark.parametrize("system", ["jpsw", "envelope", "split"])
def test_p_required_where_it_applies(system, capsys):
    code, out, err = run(["check", "--system", system, "--servers", "3", *QUICK], capsys)
    assert code == 2 and out == ""
    assert len(err) == 1 and f"--system {system} needs --p" in err[0]


@pytest.mark.parametrize(("system", "name"), [
    ("jpsw", "JpSW(servers=3, p=1)"),
    ("envelope", "Envelope(JpSW(servers=3, p=1))"),
    ("split", "SplitBound("),
])
def test_p_given_where_it_applies(system, name, capsys):
    d = check_json(["--system", system, "--servers", "3", "--p", "1"], capsys)
    assert d["system"].startswith(name)


@pytest.mark.parametrize("system", ["jsw", "jpsw", "loss", "jiq", "random", "envelope", "split"])
def test_d_rejected_for_other_systems(system, capsys):
    extra = ["--p", "1"] if system in ("jpsw", "envelope", "split") else []
    code, out, err = run(["check", "--system", system, "--servers", "3", *extra, "--d", "2",
                          *QUICK], capsys)
    assert code == 2 and out == ""
    assert len(err) == 1 and f"--d applies only to --system leastofd, not to {system}" in err[0]


def test_leastofd_d_defaults_to_two_and_can_be_given(capsys):
    assert check_json(["--system", "leastofd", "--servers", "3"], capsys)["system"] \
        == "LeastOfD(servers=3, d=2)"
    assert check_json(["--system", "leastofd", "--servers", "3", "--d", "3"], capsys)["system"] \
        == "LeastOfD(servers=3, d=3)"


@pytest.mark.parametrize(("system", "name"), [
    ("jsw", "JSW(servers=3)"),
    ("loss", "Loss(servers=3)"),
    ("jiq", "JIQ(servers=3"),
    ("random", "RandomRouting(servers=3)"),
])
def test_systems_without_parameters_still_run(system, name, capsys):
    assert check_json(["--system", system, "--servers", "3"], capsys)["system"].startswith(name)


def test_version(capsys):
    code, out, err = run(["--version"], capsys)
    assert code == 0 and err == []
    assert out.strip() == f"python -m loynes (queue-recursions) {rc.__version__}"


def test_module_negative_seed_and_version_in_a_subprocess():
    cmd = [sys.executable, "-m", "loynes"]
    res = subprocess.run([*cmd, "check", "--system", "jsw", "--servers", "2",
                          "--arrival-rate", "1", "--seed", "-1"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.splitlines() == ["python -m loynes: error: --seed must be >= 0, got -1"]
    res = subprocess.run([*cmd, "--version"], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0 and res.stdout.split()[-1] == rc.__version__


def test_alpha_sets_the_level_and_is_validated(capsys):
    args = ["check", "--system", "jpsw", "--servers", "2", "--p", "1", "--arrival-rate", "1.9",
            "--steps", "4096", "--json"]
    code, out, _ = run([*args, "--alpha", "0.01"], capsys)
    rep = json.loads(out)
    assert code == 0 and rep["alpha"] == 0.01
    assert rep["evidence"]["growth test level"] == 0.01
    code, out, err = run([*args, "--alpha", "0.9"], capsys)
    assert code == 2 and len(err) == 1 and "--alpha must be in (0, 0.5)" in err[0]


def test_report_names_what_decided(capsys):
    rep = check_json(["--system", "jsw", "--servers", "3"], capsys)
    assert rep["decided_by"] == {"kind": "theorem", "name": "condition-3", "error": 0.0,
                                 "detail": rep["reason"]}
