"""The on-disk caches, kept private and self-repairing: what is trusted, and how to clear it.

Two caches hold code that a later process runs: the generated drivers of
:mod:`recursions.engines._driver_compiler` (``$QUEUE_RECURSIONS_CACHE``, default
``~/.cache/queue-recursions``)
and numba's pickled index (``.nbi``) and compiled (``.nbc``) files (``$NUMBA_CACHE_DIR``, or
``__pycache__`` beside each source file). What is covered:

* The drivers folder is created with mode 0700. It is used only if it, its ``__pycache__``
  and every folder above it are owned by you (or, above it, by root) and not writable by group
  or others (a sticky folder such as ``/tmp`` above it is fine); otherwise a
  :class:`CacheWarning` says why and the drivers are compiled in memory.
* A driver file is run only as the text this version generates: the library compiles its own
  text, never the file's, and a file that differs (edited, truncated, planted) or is not
  yours is rewritten atomically, with a warning naming it, and numba's files for it removed.
* A ``NUMBA_CACHE_DIR`` you set (or numba's config file sets) is checked the same way when
  :mod:`recursions` is imported, with the folders numba made in it; a refused one is replaced,
  for this process and its children, by a private temporary folder (so nothing is unpickled
  from it), with a warning.
* An index or compiled file of numba that fails to load (garbled, truncated, from a crash) is
  removed, with a warning naming it, and the function compiled again; if that fails too, a
  :class:`CacheError` names the folder and how to clear it (:func:`clear_cache`,
  ``python -m loynes cache --clear``).

Not covered: numba's default ``__pycache__`` beside *your* kernel's file (a script in a shared
folder such as ``/tmp`` has its cache there too), kernels decorated before :mod:`recursions`
is imported (their cache folder is fixed at decoration), and systems without POSIX owners
(Windows: no ownership check).
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import sys
import tempfile
import types
import warnings
from pathlib import Path
from typing import Any

__all__ = ["CacheError", "CacheWarning", "cache_folders", "clear_cache"]

_CLEAR_HINT = ("clear the caches with `python -m loynes cache --clear` (or "
               "`recursions.clear_cache()`)")


class CacheWarning(UserWarning):
    """An on-disk cache was refused or repaired: the run goes on without it, or rebuilds it."""


class CacheError(RuntimeError):
    """An on-disk cache cannot be used or repaired; not a fault of the map or system run.

    The message names the folder and how to clear it (:func:`clear_cache`).
    """


_WARNED: set[str] = set()


def _warn(message: str) -> None:
    """Warn once per process with ``message`` (a refused folder is met at every compile)."""
    if message not in _WARNED:
        _WARNED.add(message)
        warnings.warn(message, CacheWarning, stacklevel=3)


def _uid() -> int | None:
    return os.getuid() if hasattr(os, "getuid") else None


def _mode_problem(mode: int) -> str | None:
    loose = [who for who, bit in (("group", stat.S_IWGRP), ("others", stat.S_IWOTH))
             if mode & bit]
    return f"writable by {' and '.join(loose)} (mode {stat.S_IMODE(mode):o})" if loose else None


def _problem(path: Path, *, folder: bool) -> str | None:
    """Why ``path`` (a folder, or a regular file) is not to be trusted, or ``None``."""
    uid = _uid()
    if uid is None:  # pragma: no cover - no POSIX owners (Windows)
        return None
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        if st.st_uid != uid:
            return f"a symbolic link owned by uid {st.st_uid}, not by you (uid {uid})"
        st = os.stat(path)
    kind_ok = stat.S_ISDIR(st.st_mode) if folder else stat.S_ISREG(st.st_mode)
    if not kind_ok:
        return "not a folder" if folder else "not a regular file"
    if st.st_uid != uid:
        return f"owned by uid {st.st_uid}, not by you (uid {uid})"
    return _mode_problem(st.st_mode)


def _parents_problem(path: Path) -> str | None:
    """Why a folder above ``path`` lets someone else swap it, or ``None``."""
    uid = _uid()
    if uid is None:  # pragma: no cover - no POSIX owners (Windows)
        return None
    for parent in path.parents:
        st = os.stat(parent)
        if st.st_uid not in (0, uid):
            return f"the folder above it, {parent}, is owned by uid {st.st_uid}"
        loose = _mode_problem(st.st_mode)
        if loose and not st.st_mode & stat.S_ISVTX:
            return f"the folder above it, {parent}, is {loose} and not sticky"
    return None


def _private_folder(path: Path) -> str | None:
    """Create ``path`` (mode 0700) if missing; why it must not be used, or ``None``."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return _problem(path, folder=True) or _parents_problem(path)


def _refusal(what: str, path: Path, why: str, fallback: str) -> str:
    return (f"{what} {path} is not used: it is {why}, so another user could plant code "
            f"that this process would run; {fallback}. Point it to a folder of your own "
            f"(mode 700), or fix it (chmod go-w, or remove it: {_CLEAR_HINT}).")


def _numba_config() -> Any:
    from numba.core import config

    return config


# -- the drivers folder ---------------------------------------------------------------------
def drivers_root() -> Path:
    """The configured drivers folder (``$QUEUE_RECURSIONS_CACHE``), resolved."""
    env = os.environ.get("QUEUE_RECURSIONS_CACHE")
    root = Path(env).expanduser() if env else Path.home() / ".cache" / "queue-recursions"
    return root.resolve()


def drivers_folder() -> Path | None:
    """The drivers folder if it is private (created mode 0700), else ``None`` (warned)."""
    root = drivers_root()
    try:
        why = _private_folder(root)
        if why is None:
            pycache = root / "__pycache__"  # numba's files for the drivers
            pycache.mkdir(mode=0o700, exist_ok=True)
            why = _problem(pycache, folder=True)
            if why is not None:
                root = pycache
    except OSError as exc:  # cannot be created or read: in memory, as before
        why = f"unusable ({exc.strerror or exc})"
        _warn(f"the drivers cache folder {root} is {why}; the drivers are compiled in memory "
              "(set QUEUE_RECURSIONS_CACHE to a writable folder of your own)")
        return None
    if why is not None:
        _warn(_refusal("the drivers cache folder", root, why,
                       "the drivers are compiled in memory"))
        return None
    return root


def _numba_dir_of(py_file: Path) -> Path:
    """The folder numba keeps the cache of functions defined in ``py_file`` in."""
    from numba.core import caching

    config: Any = _numba_config()

    if config.CACHE_DIR:
        sub = caching._CacheLocator.get_suitable_cache_subpath(str(py_file))
        return Path(config.CACHE_DIR) / sub
    return py_file.parent / "__pycache__"


def temporary_name(path: Path) -> Path:
    """A file next to ``path`` that no other process or thread writes (pid and uuid)."""
    import uuid

    return path.with_name(f"{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, as a file only you can write (mode 0600)."""
    tmp = temporary_name(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def verified_file(path: Path, text: str) -> None:
    """Make ``path`` hold exactly ``text``, a regular file of yours; rewrite it (warned) if not.

    Whatever a differing file held is never run: the caller compiles ``text`` itself. numba's
    cached functions of a rewritten file are removed with it.
    """
    try:
        why = _problem(path, folder=False)
    except FileNotFoundError:
        _write_private(path, text)
        return
    if why is None:
        try:
            same = path.read_text() == text
        except (OSError, UnicodeDecodeError):
            same = False
        if same:
            return
        why = ("not what this version generates (edited, truncated or planted): its text is "
               "not run")
    _warn(f"the cached drivers file {path} is {why}; rewritten")
    path.unlink(missing_ok=True)
    _remove_numba_files(_numba_dir_of(path), path.stem)
    _write_private(path, text)


def _remove_numba_files(folder: Path, stem: str) -> None:
    """Remove numba's index and data files of the functions of module ``stem`` in ``folder``."""
    if folder.is_dir():
        for f in folder.glob(f"{stem}.*"):
            if f.suffix in (".nbi", ".nbc"):
                f.unlink(missing_ok=True)


def load_module(name: str, path: Path, source: str, bound: dict[str, Any]) -> types.ModuleType:
    """Run ``source`` (already checked to be ``path``'s text) as the module ``name`` of ``path``.

    The text given is compiled, not the file (nor a ``.pyc`` of it), so nothing written there
    by anyone else runs; numba sees ``path`` as the functions' file, and caches them for it.
    """
    mod = types.ModuleType(name)
    mod.__file__ = str(path)
    mod.__dict__.update(bound)
    sys.modules[name] = mod
    try:
        exec(compile(source, str(path), "exec"), mod.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return mod


# -- numba's cache ---------------------------------------------------------------------------
_PRIVATE_NUMBA_DIR: list[str] = []


def guard_numba_cache_dir() -> None:
    """Refuse a ``NUMBA_CACHE_DIR`` (or numba config ``cache_dir``) that is not private.

    Run when :mod:`recursions` is imported, before its kernels are decorated (numba picks a
    function's cache folder then). A refused folder is replaced by a private temporary one,
    removed at exit, for this process and (through the environment) its children.
    """
    config = _numba_config()
    configured = config.CACHE_DIR
    if not configured or configured in _PRIVATE_NUMBA_DIR:
        return
    folder = Path(configured).expanduser().resolve()
    try:
        why = _private_folder(folder)
        if why is None:
            for sub in folder.iterdir():  # the folders numba made, one per source folder
                if sub.is_dir() or sub.is_symlink():
                    problem = _problem(sub, folder=True)
                    if problem is not None:
                        why = f"holding {sub.name}, {problem}"
                        break
    except OSError as exc:
        why = f"unusable ({exc.strerror or exc})"
    if why is None:
        return
    private = tempfile.mkdtemp(prefix="queue-recursions-numba-")  # mode 0700
    atexit.register(shutil.rmtree, private, ignore_errors=True)
    _PRIVATE_NUMBA_DIR.append(private)
    _warn(_refusal("NUMBA_CACHE_DIR", folder, why,
                   f"numba caches in the private folder {private} instead, removed at exit"))
    config.CACHE_DIR = private
    os.environ["NUMBA_CACHE_DIR"] = private  # so a reload of numba's config keeps it


def guard_numba_loads() -> None:
    """Make a numba cache file that fails to load be removed and rebuilt, once, with a warning.

    numba unpickles a function's index (``.nbi``) and data (``.nbc``) at its first call and
    lets any error through (a garbled index gives ``UnpicklingError`` on every later run). The
    guard wraps :meth:`numba.core.caching.Cache.load_overload` for every cached function of the
    process: the damaged index and its data files are removed and the function compiled again;
    a second failure raises :class:`CacheError`.
    """
    from numba.core import caching

    original = caching.Cache.load_overload
    if getattr(original, "_queue_recursions_guard", False):
        return

    def load_overload(self: Any, sig: Any, target_context: Any) -> Any:
        try:
            return original(self, sig, target_context)
        except Exception as exc:
            cache_file = getattr(self, "_cache_file", None)
            index = Path(getattr(cache_file, "_index_path", "") or self._cache_path)
            _warn(f"numba's cache file {index} failed to load ({type(exc).__name__}: {exc}); "
                  f"removed, and {self._name} compiled again")
            try:
                _remove_numba_files(index.parent, index.name.split(".py")[0])
                index.unlink(missing_ok=True)
                return original(self, sig, target_context)
            except Exception as again:
                raise CacheError(
                    f"numba's cache file {index} failed to load ({type(exc).__name__}: {exc}) "
                    f"and still fails after it was removed ({type(again).__name__}: {again}): "
                    f"delete the folder {index.parent}, or {_CLEAR_HINT}") from again

    load_overload._queue_recursions_guard = True  # type: ignore[attr-defined]
    caching.Cache.load_overload = load_overload  # type: ignore[method-assign]


def cache_failure(exc: BaseException) -> CacheError | None:
    """The :class:`CacheError` that ``exc`` is, or stands for, or ``None`` (not the cache's).

    An exception is the cache's when it is a :class:`CacheError` or :class:`CacheWarning`
    (raised as an error under a warnings filter), or was raised inside numba's cache code.
    """
    if isinstance(exc, CacheError):
        return exc  # its __cause__ is what failed
    tb = exc.__traceback__
    inside = isinstance(exc, CacheWarning)
    while tb is not None and not inside:
        filename = tb.tb_frame.f_code.co_filename.replace(os.sep, "/")
        inside = filename.endswith(("numba/core/caching.py", "recursions/common/_caches.py"))
        tb = tb.tb_next
    if not inside:
        return None
    error = CacheError(f"an on-disk cache failed to load ({type(exc).__name__}: {exc}); "
                       f"{_CLEAR_HINT}")
    error.__cause__ = exc
    return error


# -- listing and clearing --------------------------------------------------------------------
_PACKAGES = ("recursions", "coupling", "loynes")


def _numba_dirs_of_packages() -> list[Path]:
    """Every folder numba may keep this library's kernels' caches in (existing or not)."""
    import importlib.util

    from numba.misc.appdirs import AppDirs

    user_wide = Path(AppDirs(appname="numba", appauthor=False).user_cache_dir)
    dirs: list[Path] = []
    for name in _PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        for top in spec.submodule_search_locations:
            for here, subdirs, files in os.walk(top):
                subdirs[:] = [d for d in subdirs if d != "__pycache__"]
                if any(f.endswith(".py") for f in files):
                    from numba.core import caching

                    sub = caching._CacheLocator.get_suitable_cache_subpath(
                        os.path.join(here, "x.py"))
                    dirs += [_numba_dir_of(Path(here) / "x.py"), user_wide / sub]
    return dirs


def _targets() -> list[tuple[Path, list[Path]]]:
    """(folder, the cache files in it) for every cache folder of the library that exists."""
    out: list[tuple[Path, list[Path]]] = []
    root = drivers_root()
    if root.is_dir():
        out.append((root, sorted(p for p in root.rglob("*") if p.is_file())))
    numba_dirs = [_numba_dir_of(root / "x.py"), *_numba_dirs_of_packages()]
    seen: set[Path] = {root / "__pycache__"}
    for folder in numba_dirs:
        if folder in seen or not folder.is_dir():
            continue
        seen.add(folder)
        files = sorted(p for p in folder.iterdir() if p.suffix in (".nbi", ".nbc"))
        if files:
            out.append((folder, files))
    return out


def cache_folders() -> dict[Path, int]:
    """The folders holding this library's compiled code, with the bytes of cache files in each.

    The drivers folder (``$QUEUE_RECURSIONS_CACHE``) and the folders where numba keeps the
    kernels of :mod:`recursions`, ``coupling`` and ``loynes`` (``$NUMBA_CACHE_DIR``, or
    ``__pycache__`` beside their sources); only folders that exist and hold cache files.

    Returns
    -------
    dict of Path to int
        Each folder and the total size of its cache files, in bytes.

    Examples
    --------
    >>> import recursions as rc
    >>> all(size >= 0 for size in rc.cache_folders().values())
    True
    """
    return {folder: sum(f.stat().st_size for f in files) for folder, files in _targets()}


def clear_cache() -> list[Path]:
    """Remove this library's on-disk caches; the next run compiles (and caches) again.

    Removes the drivers folder (``$QUEUE_RECURSIONS_CACHE``, default
    ``~/.cache/queue-recursions``) and numba's cache files (``*.nbi``, ``*.nbc``) of the
    kernels of :mod:`recursions`, ``coupling`` and ``loynes`` (see :func:`cache_folders`).
    Files and folders that are not yours are left, with a :class:`CacheWarning`. Your own
    kernels' numba cache (``__pycache__`` beside your file) is not touched. The command line
    does the same: ``python -m loynes cache --clear``.

    Returns
    -------
    list of Path
        The folders it removed files from.

    Examples
    --------
    >>> import recursions as rc
    >>> removed = rc.clear_cache()  # doctest: +SKIP
    """
    uid = _uid()
    cleared: list[Path] = []
    root = drivers_root()
    for folder, files in _targets():
        try:
            owner = os.lstat(folder).st_uid
        except OSError:
            continue
        if uid is not None and owner != uid:
            warnings.warn(f"{folder} is owned by uid {owner}, not by you (uid {uid}): not "
                          "removed; point the cache variable to a folder of your own",
                          CacheWarning, stacklevel=2)
            continue
        if folder == root:
            shutil.rmtree(folder)
        else:
            for f in files:
                f.unlink(missing_ok=True)
        cleared.append(folder)
    _WARNED.clear()
    return cleared
