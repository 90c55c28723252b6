import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    deadline=None,
    max_examples=150,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# A thread left blocked at the end of the session (not a daemon) would keep the interpreter
# from exiting after every test passed: a clean-clone `make test` once hung there, with two
# worker threads waiting on a lock forever (cause not found yet). Say which threads and where
# they wait, and end the process with the session's status instead of hanging.
_LEFTOVER: dict[str, int] = {}


def pytest_sessionfinish(session: object, exitstatus: int) -> None:
    import sys
    import threading
    import traceback

    stuck = [t for t in threading.enumerate()
             if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    if not stuck:
        return
    frames = sys._current_frames()
    lines = ["", f"{len(stuck)} non-daemon thread(s) still running at the end of the session:"]
    for t in stuck:
        lines.append(f"--- {t.name} (ident {t.ident})")
        frame = frames.get(t.ident) if t.ident is not None else None
        if frame is not None:
            lines.extend(s.rstrip() for s in traceback.format_stack(frame))
    sys.stderr.write("\n".join(lines) + "\n")
    _LEFTOVER["status"] = int(exitstatus)


def pytest_unconfigure(config: object) -> None:
    if "status" in _LEFTOVER:
        import sys

        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_LEFTOVER["status"])
