"""``python -m loynes check``: flags that apply to some systems only, the seed, --version."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import recursions as rc
from loynes._cli import CliError, main, parse_law

ROOT = Path(__file__).resolve().parents[2]
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


# --------------------------------------------------------------------------------------------
# the law syntax: NAME:KEY=VALUE,... with the keywords of recursions.dists, or the old
# positional NAME:VALUE,...
# --------------------------------------------------------------------------------------------

D = rc.dists


@pytest.mark.parametrize(
    ("spec", "law"),
    [
        ("exponential:rate=2", D.Exponential(rate=2.0)),
        ("exponential:mean=0.5", D.Exponential(rate=2.0)),
        ("exponential:2", D.Exponential(rate=2.0)),
        ("exp:mean=4", D.Exponential(rate=0.25)),
        ("deterministic:value=1.5", D.Deterministic(1.5)),
        ("deterministic:mean=1.5", D.Deterministic(1.5)),
        ("det:1.5", D.Deterministic(1.5)),
        ("erlang:k=3,rate=6", D.Erlang(3, 6.0)),
        ("erlang:k=3,mean=0.5", D.Erlang(3, 6.0)),
        ("erlang:3,6", D.Erlang(3, 6.0)),
        ("erlang:3,mean=0.5", D.Erlang(3, 6.0)),  # values first, then keywords
        ("erlang: mean = 0.5 , k = 3", D.Erlang(3, 6.0)),  # any order, spaces allowed
        ("hyperexponential:mean=1,scv=4", D.HyperExponential.balanced(1.0, 4.0)),
        ("h2:1,4", D.HyperExponential.balanced(1.0, 4.0)),
        ("lognormal:mean=1,scv=4", D.LogNormal(1.0, 4.0)),
        ("LogNormal:scv=4,mean=1", D.LogNormal(1.0, 4.0)),
        ("lognormal:1,4", D.LogNormal(1.0, 4.0)),
        ("lomax:shape=3,scale=2", D.Lomax(3.0, 2.0)),
        ("lomax:shape=3,mean=1", D.Lomax(3.0, 2.0)),
        ("pareto:3,2", D.Lomax(3.0, 2.0)),
        ("uniform:low=0.5,high=2", D.Uniform(0.5, 2.0)),
        ("uniform:0.5,2", D.Uniform(0.5, 2.0)),
    ],
)
def test_law_forms(spec, law):
    assert parse_law(spec, "--service") == law


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("weibull:1", "unknown law 'weibull'"),
        ("exponential", "no parameters given"),
        ("exponential:rate=2,mean=0.5", "rate=, mean= fits none of its forms"),
        ("erlang:3", "erlang takes K,RATE (2 values without keywords), got 1"),
        ("erlang:k=2.5,rate=1", "k must be a whole number of phases, got 2.5"),
        ("lognormal:mean=1", "mean= fits none of its forms"),
        ("lomax:mean=1,3", "without a keyword follows a KEY=VALUE"),
        ("uniform:low=0,hi=2", "uniform takes no hi="),
        ("uniform:0,x", "high must be a number, got 'x'"),
        ("exponential:1,2", "takes at most 1 value without a keyword, got 2"),
        ("exponential:2,rate=2", "rate is given twice"),
        ("exponential:mean=-1", "mean must be a finite number > 0"),
        ("lomax:shape=1,mean=2", "infinite mean"),
        ("h2:mean=1,scv=0.5", "scv must be a finite number >= 1"),
    ],
)
def test_bad_law_names_the_accepted_forms(spec, why, capsys):
    with pytest.raises(CliError) as info:
        parse_law(spec, "--service")
    msg = str(info.value)
    assert msg.startswith("--service: ") and why in msg
    name = spec.partition(":")[0].strip().lower()
    if why.startswith("unknown"):  # every law's forms
        for form in ("exponential:rate=RATE", "lognormal:mean=MEAN,scv=SCV", "uniform:LOW,HIGH"):
            assert form in msg
    else:  # the forms of this law, keywords and positional
        name = {"exp": "exponential", "h2": "hyperexponential"}.get(name, name)
        assert f"{name} is written {name}:" in msg
    # and on the command line: one line on stderr, exit status 2, nothing on stdout
    code, out, err = run(
        ["check", "--system", "jsw", "--servers", "2", *QUICK, "--service", spec], capsys
    )
    assert code == 2 and out == "" and len(err) == 1
    assert err[0] == f"python -m loynes: error: {msg}"


def test_interarrival_law_errors_name_the_flag(capsys):
    code, out, err = run(
        ["check", "--system", "jsw", "--servers", "2", "--interarrival", "erlang:k=2",
         "--steps", "1024", "--horizon", "1024"],
        capsys,
    )
    assert code == 2 and out == ""
    assert err[0].startswith("python -m loynes: error: --interarrival: bad law 'erlang:k=2'")


@pytest.mark.parametrize("command", ["check", "sweep"])
def test_help_documents_the_law_syntax(command, capsys):
    code, out, _ = run([command, "--help"], capsys)
    assert code == 0
    for form in (
        "exponential:rate=RATE | exponential:mean=MEAN | exponential:RATE",
        "erlang:k=K,rate=RATE | erlang:k=K,mean=MEAN | erlang:K,RATE",
        "lognormal:mean=MEAN,scv=SCV | lognormal:MEAN,SCV",
        "lomax:shape=SHAPE,scale=SCALE | lomax:shape=SHAPE,mean=MEAN",
        "uniform:low=LOW,high=HIGH",
        "deterministic:value=VALUE | deterministic:mean=MEAN",
        "hyperexponential:mean=MEAN,scv=SCV",
        "--service lognormal:mean=1,scv=4",
    ):
        assert form in out, form
    # the keywords are the constructors' own
    assert parse_law("exponential:rate=2", "--service") == rc.dists.Exponential(rate=2)
    assert parse_law("lognormal:mean=1,scv=4", "--service") == rc.dists.LogNormal(mean=1, scv=4)


def test_keyword_and_positional_laws_give_the_same_report(capsys):
    base = ["--system", "jsw", "--servers", "2"]
    a = check_json([*base, "--service", "lognormal:mean=1,scv=2"], capsys)
    b = check_json([*base, "--service", "lognormal:1,2"], capsys)
    assert a == b
    assert a["input"] == repr(rc.Poisson(1.0, rc.dists.LogNormal(1.0, 2.0)))
    c = check_json(["--system", "jsw", "--servers", "2", "--service", "exponential:mean=0.5"],
                   capsys)
    assert c["input"] == repr(rc.Poisson(1.0, rc.dists.Exponential(2.0)))


def test_a_periodic_input_refuses_the_flags_it_would_ignore(capsys):
    # these used to be dropped silently (STABLE at load 0.5 whatever the rate given)
    args = ["check", "--system", "jsw", "--servers", "2", "--periodic-sigma", "1,1",
            "--periodic-tau", "1,1", "--arrival-rate", "50", "--service", "lognormal:1,4"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "drop --arrival-rate, --service" in err[0]
    assert main(args[:-4]) == 0  # the periodic input alone runs
