"""Checkpoint files of sweeps: each finished task appended as it finishes, read back on a rerun.

A checkpoint is a text file of JSON lines. The first line names the sweep that wrote it (its
function, grid, replications and root seed, with a hash of them); every later line is one
finished task: ``{"k": task, "values": {...}, "error": null}``. Lines are appended and flushed
as tasks finish, so a sweep killed at any moment (Ctrl-C, a lost cluster, a power cut) leaves a
file that a rerun with the same arguments reads back: it skips the finished tasks and returns a
table identical to an uninterrupted run. A half-written last line is ignored. Tasks that raised
are written too (for the record) but run again on a rerun.

Values are scalars (``func`` returns scalars): numbers, strings, booleans, ``None``; floats
round-trip exactly (``NaN`` and ``inf`` included), complex numbers are written as pairs.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["PART_NAMES", "Checkpoint", "CheckpointMismatch"]

FORMAT = "queue-recursions sweep checkpoint 1"
HEAD = '{"format": "' + FORMAT + '"'
"""How the first line of every checkpoint begins."""

Results = dict[int, tuple[dict[str, Any] | None, str | None]]


class CheckpointMismatch(ValueError):
    """The checkpoint file was written by a sweep with other arguments.

    Its message names each part of the sweep's identity that differs (:data:`PART_NAMES`).
    """


PART_NAMES = {"function": "the function (its name)", "code": "the function's code",
              "closure": "its closure (defaults, closure values, a partial's arguments)",
              "grid": "the grid", "replications": "replications", "seed": "the seed",
              "extra": "the systems or inputs of the map", "version": "the library's version"}
"""The parts of a sweep's identity, in the words a mismatch uses, in that order."""


def _encode(v: Any) -> Any:
    if isinstance(v, complex):
        return {"complex": [v.real, v.imag]}
    return v


def _decode(v: Any) -> Any:
    if isinstance(v, dict) and set(v) == {"complex"}:
        re, im = v["complex"]
        return complex(re, im)
    return v


def identity(**parts: Any) -> dict[str, Any]:
    """The sweep's identity: the parts (JSON-able) and a hash of them.

    Examples
    --------
    >>> identity(func="f", grid="[1]")["hash"] == identity(grid="[1]", func="f")["hash"]
    True
    """
    text = json.dumps(parts, sort_keys=True, default=repr)
    return {"parts": parts, "hash": hashlib.sha256(text.encode()).hexdigest()[:32]}


class Checkpoint:
    """A sweep's checkpoint file.

    Parameters
    ----------
    path : str or os.PathLike
        The file (created with its folder when missing).
    ident : dict
        :func:`identity` of the sweep; a file written by another sweep is refused.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.jsonl"
    >>> ck = Checkpoint(path, identity(func="f"))
    >>> ck.load()
    {}
    >>> ck.append(0, {"x": 1.5}, None); ck.close()
    >>> again = Checkpoint(path, identity(func="f"))
    >>> again.load()
    {0: ({'x': 1.5}, None)}
    >>> again.close()
    """

    def __init__(self, path: str | os.PathLike[str], ident: Mapping[str, Any]) -> None:
        self.path = Path(path)
        self.ident = dict(ident)
        self._fh: Any = None
        self._done: Results = {}

    def open(self) -> None:
        """Open the file for this run, locked against other sweeps, and read what it holds.

        Creates the file (and its folder) with the sweep's head line when it is new; cuts off a
        line left half-written by a killed run.

        Raises
        ------
        ValueError
            When the file cannot be opened, or another running sweep holds it.
        CheckpointMismatch
            When it was written by a sweep with other arguments, or is not a checkpoint.
        """
        if self._fh is not None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fh = self.path.open("a+")
        except OSError as exc:
            raise ValueError(f"checkpoint: cannot open {str(self.path)!r} for writing "
                             f"({exc.strerror}): give a file path in a writable folder") from None
        try:
            import fcntl

            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # pragma: no cover - not POSIX: no lock
            pass
        except OSError:
            fh.close()
            raise ValueError(f"checkpoint {str(self.path)!r} is in use by another running "
                             "sweep: wait for it to finish, or give another path") from None
        try:
            self._done = self._read(fh)
        except BaseException:
            fh.close()
            raise
        self._fh = fh

    def _read(self, fh: Any) -> Results:
        fh.seek(0)
        text = fh.read()
        if text and not text.startswith(HEAD):
            raise CheckpointMismatch(f"checkpoint {str(self.path)!r} is not a sweep checkpoint: "
                                     "give another path, or delete the file")
        if text and not text.endswith("\n"):  # a line cut short when the run was killed
            text = text[: text.rfind("\n") + 1]
            fh.truncate(len(text.encode()))
        fh.seek(0, os.SEEK_END)
        if not text:
            self._fh = fh
            self._write({"format": FORMAT, **self.ident})
            return {}
        return self._parse(text.splitlines())

    def _parse(self, lines: list[str]) -> Results:
        head = json.loads(lines[0])
        if head.get("hash") != self.ident["hash"]:
            old, new = head.get("parts", {}), self.ident["parts"]
            differ = [k for k in (*PART_NAMES, *sorted(set(old) | set(new)))
                      if k in set(old) | set(new) and old.get(k) != new.get(k)]
            what = ", ".join(PART_NAMES.get(k, k) for k in dict.fromkeys(differ))
            raise CheckpointMismatch(
                f"checkpoint {str(self.path)!r} was written by a sweep with other arguments: "
                f"{what or 'its hash'} differ: rerun with the same function, grid, "
                "replications and seed to resume it, or give another path (or delete the "
                "file) to start afresh")
        done: Results = {}
        for i, line in enumerate(lines[1:], start=2):
            try:
                rec = json.loads(line)
                k, vals, err = int(rec["k"]), rec["values"], rec["error"]
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                raise CheckpointMismatch(f"checkpoint {str(self.path)!r}: line {i} is "
                                         "damaged; delete the file to start afresh") from None
            if err is None and isinstance(vals, dict):
                done[k] = ({key: _decode(v) for key, v in vals.items()}, None)
        return done

    def load(self) -> Results:
        """The finished tasks of earlier runs (tasks that raised are left out: they rerun).

        Opens the file first when :meth:`open` was not called.
        """
        self.open()
        return dict(self._done)

    def append(self, k: int, vals: Mapping[str, Any] | None, err: str | None) -> None:
        """Append one finished task and flush it to disk."""
        self.open()
        values = None if vals is None else {key: _encode(v) for key, v in vals.items()}
        self._write({"k": int(k), "values": values, "error": err})

    def _write(self, rec: Mapping[str, Any]) -> None:
        self._fh.write(json.dumps(rec, default=repr) + "\n")
        self._fh.flush()

    def close(self) -> None:
        """Close the file and release its lock (appending again reopens it)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None

