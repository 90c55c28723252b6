"""What every study shares: its command line, where it writes, and the provenance columns.

A study is a script ``studies/NAME.py`` with a ``main(argv=None)`` that

1. parses its command line with :func:`parse` (``--quick``, ``--scheduler ADDRESS``,
   ``--seed``, ``--workers``, ``--out DIR``),
2. evaluates its grid with :func:`run` (``loynes.sweep``: this process and workers, or the Dask
   cluster at ``--scheduler``), each task returning a dict of columns that includes the
   budget it used (``steps``, ``horizon`` or ``samples``),
3. writes ``DIR/NAME.csv`` with :func:`write` (one row per parameter point, plus the columns
   ``version``, ``seed`` and ``seconds``) and its figure ``DIR/NAME.png`` with :func:`figure_path`.

``--quick`` runs a small grid with small budgets (seconds, for ``make test``) into a
temporary folder unless ``--out`` is given; the full run writes ``studies/results/``, whose
files are committed and shown in the README and the docs.
"""

from __future__ import annotations

import argparse
import csv
import math
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import recursions as rc

RESULTS = Path(__file__).resolve().with_name("results")
PROVENANCE = ("version", "seed", "seconds")


def parse(description: str, argv: Sequence[str] | None = None, *,
          refit: bool = False) -> argparse.Namespace:
    """The command line every study takes.

    ``--quick`` (small grid, small budgets), ``--scheduler ADDRESS`` (a Dask scheduler; by
    default this process, and local processes once they pay), ``--seed`` (root seed, default
    2026), ``--workers`` (local processes; default: chosen by ``loynes.sweep``; 0 runs in
    this process) and ``--out DIR`` (default
    ``studies/results`` for a full run, a temporary folder for ``--quick``). With ``refit``,
    also ``--refit``: run nothing, recompute the fits and the figure from ``DIR/NAME.csv``.
    """
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--quick", action="store_true",
                    help="a small grid with small budgets (seconds; what make test runs)")
    ap.add_argument("--scheduler", metavar="ADDRESS", default=None,
                    help="a Dask scheduler address, e.g. tcp://host:8786 "
                         "(default: this process, and local processes once they pay)")
    ap.add_argument("--seed", type=int, default=2026, help="root seed (default: 2026)")
    ap.add_argument("--workers", type=int, default=None,
                    help="local worker processes (default: this process, and one per core "
                         "once the work pays for them; 0: this process)")
    ap.add_argument("--out", type=Path, default=None,
                    help="folder for NAME.csv and NAME.png (default: studies/results, or a "
                         "temporary folder with --quick)")
    if refit:
        ap.add_argument("--refit", action="store_true",
                        help="run nothing: recompute the fits and the figure from the results "
                             "file in --out")
    args = ap.parse_args(argv)
    if args.out is None:
        if args.quick:
            import tempfile
            args.out = Path(tempfile.mkdtemp(prefix="study-quick-"))
        else:
            args.out = RESULTS
    args.out.mkdir(parents=True, exist_ok=True)
    return args


def run(func: Callable[..., Mapping[str, Any]], grid: Any, args: argparse.Namespace,
        *, name: str, replications: int = 1) -> list[dict[str, Any]]:
    """``loynes.sweep(func, grid)`` with the study's seed and scheduler; rows as dicts.

    Each row gets ``seed`` (the root seed: with the grid it fixes every task's stream) and
    ``seconds`` (the task's own wall time); a task that raised stops the study with its error.
    Finished points go to ``DIR/NAME.checkpoint.jsonl`` as they finish: a study stopped
    midway (Ctrl-C, a lost cluster) and run again with the same options resumes there, with
    the same rows as an uninterrupted run. The file is removed once every point has run.
    """
    import loynes as ly

    def timed(rng: Any = None, **point: Any) -> dict[str, Any]:
        t0 = time.perf_counter()
        out = dict(func(**point, rng=rng))
        out["seconds"] = round(time.perf_counter() - t0, 3)
        return out

    timed.__wrapped__ = func  # type: ignore[attr-defined]  # the checkpoint names the task

    checkpoint = Path(args.out) / f"{name}.checkpoint.jsonl"
    table = ly.sweep(timed, grid, rng=args.seed, client=args.scheduler,
                     max_workers=args.workers, replications=replications, progress=False,
                     checkpoint=checkpoint)
    print(f"{name}: {table.attrs['execution']}")
    out = []
    rows = table.rows()
    if table.attrs["execution"].mode == "interrupted":
        raise SystemExit(f"{name}: interrupted; the finished points are kept in {checkpoint}: "
                         "run the same command again to finish the others")
    for row in rows:
        err = row.pop("error", None)
        if err:
            raise RuntimeError(f"a study task failed at {row}: {err}")
        row["seed"] = args.seed
        out.append(row)
    checkpoint.unlink()
    return out


def write(rows: Sequence[Mapping[str, Any]], columns: Sequence[str], name: str,
          args: argparse.Namespace) -> Path:
    """Write ``DIR/NAME.csv``: the named columns, then ``version``, ``seed``, ``seconds``.

    Every name in ``columns`` must be in every row (a missing column is a bug in the study,
    not something to fill with blanks).
    """
    cols = [c for c in columns if c not in PROVENANCE] + list(PROVENANCE)
    path = Path(args.out) / f"{name}.csv"
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for row in rows:
            full = {"version": rc.__version__, **row}
            missing = [c for c in cols if c not in full]
            if missing:
                raise KeyError(f"{name}: row {dict(row)} lacks the columns {missing}")
            w.writerow(full)
    print(f"{len(rows)} rows written to {path}")
    return path


def figure_path(name: str, args: argparse.Namespace) -> Path:
    """Where the study's figure goes: ``DIR/NAME.png``."""
    return Path(args.out) / f"{name}.png"


def read_rows(path: Path, *, ints: set[str], strings: set[str]) -> list[dict[str, Any]]:
    """The rows of a results file written by :func:`write`, with their numbers as numbers.

    Columns in ``ints`` become ``int``, those in ``strings`` (and ``version``) stay text, a
    ``warned`` column becomes ``bool``, and every other column ``float``.
    """
    out = []
    with Path(path).open() as fh:
        for raw in csv.DictReader(fh):
            row: dict[str, Any] = {}
            for k, v in raw.items():
                if k in strings or k == "version":
                    row[k] = v
                elif k == "warned":
                    row[k] = v == "True"
                else:
                    row[k] = int(v) if k in ints else float(v)
            out.append(row)
    return out


def weighted_line(x: Any, y: Any, w: Any) -> tuple[float, float, float]:
    """Weighted least squares of ``y = a + b x``: ``(b, se(b), chi2 / dof)``.

    ``se(b)`` comes from the weights, multiplied by ``sqrt(chi2 / dof)`` when that exceeds 1
    (the points scatter about the line more than their standard errors allow: the line is
    not the whole story); ``chi2 / dof`` is ``nan`` with two points.
    """
    import numpy as np

    x, y, w = (np.asarray(v, dtype=float) for v in (x, y, w))
    X = np.column_stack([np.ones_like(x), x])
    cov = np.linalg.inv(X.T @ (w[:, None] * X))
    coef = cov @ (X.T @ (w * y))
    dof = x.size - 2
    chi2 = float(np.sum(w * (y - X @ coef) ** 2) / dof) if dof > 0 else math.nan
    scale = math.sqrt(chi2) if chi2 > 1 else 1.0
    return float(coef[1]), float(math.sqrt(cov[1, 1])) * scale, chi2
