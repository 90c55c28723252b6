"""Exact stationary values of the FCFS G/G/S queue, seen by an arriving customer.

The coverage benchmark (``coverage.py``) checks the library's confidence intervals against
these numbers, so they are computed here from queueing theory with numpy and scipy only,
independently of the code under test (no ``recursions``, ``coupling`` or ``loynes``). Service
has mean ``1 / mu``; the three statistics are those of :class:`recursions.SimulationResult`
under ``rc.JSW(S)`` (Kiefer-Wolfowitz FCFS on ``S`` servers):

* ``p_wait``: P(an arrival waits);
* ``mean_wait``: E[its wait];
* ``mean_workload``: E[total remaining work in the system found by an arrival], the sum of
  the ``S`` coordinates of the Kiefer-Wolfowitz workload vector (jobs in service and queued).

Models (each function returns a dict with the three keys):

* :func:`mm_s`: M/M/S. Erlang C (through the stable Erlang B recursion); ``E[W] = C / (S mu -
  lambda)``; every job present has an Exp(mu) remaining work (memorylessness), so by PASTA
  ``E[work] = E[N] / mu``.
* :func:`md_s`: M/D/S (Crommelin). The number in system at times ``t, t + d, ...`` is the chain
  ``Q' = (Q - S)^+ + Poisson(lambda d)``, whose generating function has the ``S - 1`` roots
  ``z_j`` of ``z^S = exp(a (z - 1))`` inside the unit disk (``z_j = -(S / a) W_0(-(a / S)
  e^(-a / S) w^j)``, ``w = exp(2 pi i / S)``, Lambert W). With ``a = lambda d``:
  ``P(Q < S) = (S - a) / prod_j (1 - z_j)``, and
  ``E[Q] - a = sum_j 1 / (1 - z_j) + (a^2 - S (S - 1)) / (2 (S - a))`` is ``E[Q_queue]``; PASTA
  and Little give ``p_wait = 1 - P(Q < S)`` and ``E[W] = E[Q_queue] / lambda``.
* :func:`e2m_s`: E2/M/S (GI/M/c, Takacs). The number in system seen by arrivals is geometric
  above ``S - 1`` with ratio ``sigma``, the root in (0, 1) of ``sigma = A*(S mu (1 - sigma))``
  (``A*`` the Laplace transform of the interarrival law); the wait of a delayed customer is
  exponential with rate ``S mu (1 - sigma)``, so ``E[W] = p_wait / (S mu (1 - sigma))``. The
  boundary law (which fixes ``p_wait``) comes from the continuous-time chain (number in
  system, arrival phase), solved by linear level reduction with its matrix-geometric tail;
  arrivals happen at the end of the second arrival phase, so the law seen by arrivals is the
  time-stationary law of the number in system in phase 2, renormalised. ``E[work] =
  E[N_arrival] / mu`` (memorylessness).
* :func:`mh2_s`: M/H2/S, the balanced-means two-phase hyperexponential service
  (:func:`h2_balanced`). The chain (number in system ``n``, number ``k`` of busy servers whose
  job is of phase 1) is a quasi-birth-death process, level-independent from level ``S`` on;
  ``R`` comes from logarithmic reduction (Latouche-Ramaswami) to ``1e-14``, the levels
  ``0..S`` from linear level reduction. PASTA: ``p_wait = P(N >= S)``; Little: ``E[W] =
  E[N_queue] / lambda``; ``E[work] = E[N_queue] E[sigma] + E[sum over jobs in service of
  1 / mu_phase]``.

For Poisson arrivals the time-average work also follows from ``H = lambda G``:
``E[work] = lambda (E[W] E[sigma] + E[sigma^2] / 2)`` (:func:`mg_s_mean_workload`), which the
tests use as a cross-check of the chains above.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import optimize, special

__all__ = ["e2m_s", "h2_balanced", "md_s", "mg_s_mean_workload", "mh2_s", "mm_s", "qbd"]

Stats = dict[str, Any]


def _check(S: int, a: float) -> None:
    if S < 1 or not 0 < a < S:
        raise ValueError(f"need S >= 1 and 0 < offered load < S, got S={S}, a={a}")


def erlang_c(S: int, a: float) -> float:
    """Erlang C: P(wait) in M/M/S with offered load ``a = lambda / mu < S``."""
    _check(S, a)
    b = 1.0
    for k in range(1, S + 1):
        b = a * b / (k + a * b)
    return S * b / (S - a * (1.0 - b))


def mm_s(S: int, lam: float, mu: float = 1.0) -> Stats:
    """M/M/S: Erlang C, ``E[W] = C / (S mu - lambda)``, ``E[work] = E[N] / mu``."""
    a = lam / mu
    c = erlang_c(S, a)
    w = c / (S * mu - lam)
    n = a + lam * w  # E[N] = E[in service] + E[queue] (Little)
    return {"p_wait": c, "mean_wait": w, "mean_workload": n / mu}


def mm1_wait_sigma(rho: float, mu: float = 1.0) -> float:
    """M/M/1: the asymptotic standard deviation of the mean of ``n`` successive waits.

    ``n Var(mean of W_1..W_n) -> rho (2 + 5 rho - 4 rho^2 + rho^3) / (mu^2 (1 - rho)^4)``, the
    sum of the stationary waits' autocovariances (Blomqvist's covariance function of M/G/1,
    for exponential service). Its limit ``4 / (1 - rho)^4`` as ``rho -> 1`` is that of the
    time average of reflected Brownian motion. (Checked against the Poisson equation of the
    Lindley chain on a grid of step 0.025: 29.0013 against 29 at ``rho = 0.5``.)
    """
    _check(1, rho)
    return math.sqrt(rho * (2 + 5 * rho - 4 * rho**2 + rho**3)) / (mu * (1 - rho) ** 2)


def mg_s_mean_workload(lam: float, mean_wait: float, m1: float, m2: float) -> float:
    """Time-average total work of a FCFS M/G/S queue (so, by PASTA, what arrivals find).

    ``H = lambda G``: a queued job holds its whole service ``sigma`` during its wait (``G =
    E[W] m1``, the wait independent of its own service), a job in service ``sigma - u`` during
    ``u in [0, sigma]`` (``G = m2 / 2``).
    """
    return lam * (mean_wait * m1 + m2 / 2.0)


def md_s(S: int, lam: float, d: float = 1.0) -> Stats:
    """M/D/S with service time ``d`` (Crommelin; the roots of ``z^S = exp(a (z - 1))``)."""
    a = lam * d
    _check(S, a)
    j = np.arange(1, S)
    x = -(a / S) * math.exp(-a / S) * np.exp(2j * np.pi * j / S)
    z = -(S / a) * special.lambertw(x, 0, tol=1e-15)
    if z.size and not np.all(np.abs(z) < 1):
        raise ArithmeticError("a root of z^S = exp(a (z - 1)) fell outside the unit disk")
    p_below = (S - a) / np.exp(np.sum(np.log(1.0 - z))).real
    lq = float(np.sum(1.0 / (1.0 - z)).real) + (a * a - S * (S - 1)) / (2.0 * (S - a))
    w = lq / lam
    return {"p_wait": 1.0 - float(p_below), "mean_wait": w,
            "mean_workload": mg_s_mean_workload(lam, w, d, d * d)}


# -- quasi-birth-death processes ------------------------------------------------------------


def _log_reduction_g(a0: np.ndarray, a1: np.ndarray, a2: np.ndarray,
                     tol: float = 1e-14, max_iter: int = 200) -> np.ndarray:
    """The minimal solution ``G`` of ``A2 + A1 G + A0 G^2 = 0`` (logarithmic reduction).

    ``A0`` raises the level, ``A1`` keeps it, ``A2`` lowers it; for a positive recurrent
    process ``G`` is stochastic. The iteration stops when its row sums are within ``tol`` of
    1 or its increments fall below rounding; a few steps of the natural iteration
    ``G = (-A1 - A0 G)^-1 A2`` then polish it, and its row sums must be within ``1e-10`` (they
    reach about ``1e-12`` at 100 servers and load 0.99, the floor set by rounding).
    """
    m = a1.shape[0]
    eye = np.eye(m)
    inv = np.linalg.inv(-a1)
    b0, b2 = inv @ a0, inv @ a2
    g, t = b2.copy(), b0.copy()
    for _ in range(max_iter):
        u = b0 @ b2 + b2 @ b0
        inv = np.linalg.inv(eye - u)
        b0, b2 = inv @ (b0 @ b0), inv @ (b2 @ b2)
        step = t @ b2
        g = g + step
        t = t @ b0
        if (np.max(np.abs(1.0 - g.sum(axis=1))) < tol
                or np.max(np.abs(step)) <= 1e-17 * np.max(np.abs(g))):
            break
    for _ in range(3):
        g = np.linalg.solve(-a1 - a0 @ g, a2)
    if not np.max(np.abs(1.0 - g.sum(axis=1))) < 1e-10:
        raise ArithmeticError("logarithmic reduction did not converge (is the queue stable?)")
    return g


def qbd(up: list[np.ndarray], local: list[np.ndarray], down: list[np.ndarray],
        a0: np.ndarray, a1: np.ndarray, a2: np.ndarray
        ) -> tuple[list[np.ndarray], np.ndarray]:
    """Stationary law of a level-dependent QBD that repeats from level ``top = len(up)`` on.

    Parameters
    ----------
    up : list of arrays
        ``up[n]``: rates from level ``n`` to ``n + 1``, ``n = 0..top - 1``.
    local : list of arrays
        ``local[n]``: the generator block within level ``n`` (diagonal included),
        ``n = 0..top``.
    down : list of arrays
        ``down[n - 1]``: rates from level ``n`` to ``n - 1``, ``n = 1..top``.
    a0, a1, a2 : arrays
        The repeating blocks: up from every level ``>= top``, within levels ``> top``, down
        from levels ``> top``.

    Returns
    -------
    (list of arrays, array)
        ``pi[n]`` for ``n = 0..top``, normalised with the tail ``pi[top + k] = pi[top] R^k``,
        and ``R``.
    """
    top = len(up)
    g = _log_reduction_g(a0, a1, a2)
    r = a0 @ np.linalg.inv(-(a1 + a0 @ g))
    # linear level reduction: pi[n + 1] = pi[n] R_n, from the top down
    rn: list[np.ndarray] = [np.empty(0)] * top
    u = local[top] + r @ a2
    for n in range(top - 1, -1, -1):
        rn[n] = -up[n] @ np.linalg.inv(u)
        u = local[n] + rn[n] @ down[n]
    # level 0: pi_0 U = 0 (U singular): the left null vector
    _, _, vh = np.linalg.svd(u.T)
    pi0 = np.abs(vh[-1])
    pis = [pi0]
    for n in range(top):
        pis.append(pis[-1] @ rn[n])
    eye = np.eye(a1.shape[0])
    total = sum(float(p.sum()) for p in pis[:-1]) + float(
        (pis[-1] @ np.linalg.inv(eye - r)).sum())
    return [p / total for p in pis], r


def _tail_sums(pi_top: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``sum_{k>=0} pi_top R^k`` and ``sum_{k>=0} k pi_top R^k`` (phase vectors)."""
    inv = np.linalg.inv(np.eye(r.shape[0]) - r)
    return pi_top @ inv, pi_top @ r @ inv @ inv


def _e2_sigma(S: int, lam: float, mu: float) -> float:
    """Root in (0, 1) of ``sigma = A*(S mu (1 - sigma))`` for Erlang(2, 2 lam) arrivals."""
    def f(s: float) -> float:
        return (2 * lam / (2 * lam + S * mu * (1 - s))) ** 2 - s

    # f > 0 at 0, f(1) = 0 with f'(1) = 1 / rho - 1 > 0 and f convex: f < 0 on (sigma, 1)
    return optimize.brentq(f, 0.0, 1.0 - 1e-9, xtol=1e-17, rtol=4 * np.finfo(float).eps)


def e2m_s(S: int, lam: float, mu: float = 1.0, *, details: bool = False) -> Stats:
    """E2/M/S (Erlang-2 interarrivals of mean ``1 / lam``, Exp(mu) service).

    With ``details=True`` the dict also holds ``sigma`` (Takacs' root), ``spectral_r`` (the
    spectral radius of ``R``, which must equal it), ``arrival_law`` (the law of the number
    in system seen by arrivals, at ``0..2 S + 20``) and ``mean_wait_qbd`` (``E[W]`` summed
    from the chain, which must equal the Takacs form).
    """
    _check(S, lam / mu)
    b = 2.0 * lam  # rate of each arrival phase
    # phases: 0 = first arrival phase, 1 = second; an arrival ends phase 1
    up_blk = np.array([[0.0, 0.0], [b, 0.0]])
    within = np.array([[-b, b], [0.0, -b]])
    up = [up_blk] * S
    local = [within - min(n, S) * mu * np.eye(2) for n in range(S + 1)]
    down = [n * mu * np.eye(2) for n in range(1, S + 1)]
    pis, r = qbd(up, local, down, up_blk, within - S * mu * np.eye(2), S * mu * np.eye(2))
    tail, ktail = _tail_sums(pis[S], r)
    # law seen by arrivals: proportional to the phase-1 (second phase) probabilities
    mass = sum(float(p[1]) for p in pis[:S]) + float(tail[1])
    p_wait = float(tail[1]) / mass
    mean_n = (sum(n * float(p[1]) for n, p in enumerate(pis[:S]))
              + S * float(tail[1]) + float(ktail[1])) / mass
    sigma = _e2_sigma(S, lam, mu)
    out: dict[str, Any] = {"p_wait": p_wait, "mean_wait": p_wait / (S * mu * (1 - sigma)),
           "mean_workload": mean_n / mu}
    if details:
        law = [float(p[1]) / mass for p in pis[:S]]
        pk = pis[S]
        for _ in range(S + 21):
            law.append(float(pk[1]) / mass)
            pk = pk @ r
        out.update(sigma=sigma, spectral_r=float(max(abs(np.linalg.eigvals(r)))),
                   arrival_law=np.array(law),
                   mean_wait_qbd=(float(tail[1]) + float(ktail[1])) / mass / (S * mu))
    return out


def h2_balanced(scv: float, mean: float = 1.0) -> tuple[float, float, float]:
    """Balanced-means H2 with the given mean and scv >= 1: ``(p1, mu1, mu2)``.

    ``p1 = (1 + sqrt((scv - 1) / (scv + 1))) / 2``, ``mu1 = 2 p1 / mean``,
    ``mu2 = 2 (1 - p1) / mean``.
    """
    p1 = 0.5 * (1.0 + math.sqrt((scv - 1.0) / (scv + 1.0)))
    return p1, 2.0 * p1 / mean, 2.0 * (1.0 - p1) / mean


def mh2_s(S: int, lam: float, scv: float = 4.0, *, details: bool = False) -> Stats:
    """M/H2/S with balanced-means H2 service of mean 1 and the given scv (QBD).

    Level ``n`` = number in system; phase ``k`` = number of busy servers whose job is of
    phase 1 (``0..min(n, S)``). With ``details=True`` the dict also holds ``in_service_work``
    (``E[sum over jobs in service of 1 / mu_phase]``) and ``residual`` (the largest entry of
    ``A0 + R A1 + R^2 A2``).
    """
    _check(S, lam)
    p1, m1, m2 = h2_balanced(scv)
    p2 = 1.0 - p1

    def width(n: int) -> int:
        return min(n, S) + 1

    def local_blk(n: int) -> np.ndarray:
        k = np.arange(width(n))
        return -np.diag(lam + k * m1 + (min(n, S) - k) * m2)

    def up_blk(n: int) -> np.ndarray:
        a = np.zeros((width(n), width(n + 1)))
        for k in range(width(n)):
            if n < S:  # the arrival starts service at once
                a[k, k + 1] += lam * p1
                a[k, k] += lam * p2
            else:
                a[k, k] = lam
        return a

    def down_blk(n: int) -> np.ndarray:  # from level n to n - 1
        a = np.zeros((width(n), width(n - 1)))
        busy = min(n, S)
        for k in range(width(n)):
            d1, d2 = k * m1, (busy - k) * m2
            if n <= S:
                if k > 0:
                    a[k, k - 1] += d1
                if busy - k > 0:
                    a[k, k] += d2
            else:  # the first queued job starts: phase 1 w.p. p1
                if k > 0:
                    a[k, k] += d1 * p1
                    a[k, k - 1] += d1 * p2
                if busy - k > 0:
                    a[k, k + 1] += d2 * p1
                    a[k, k] += d2 * p2
        return a

    up = [up_blk(n) for n in range(S)]
    local = [local_blk(n) for n in range(S + 1)]
    down = [down_blk(n) for n in range(1, S + 1)]
    a0, a1, a2 = up_blk(S), local_blk(S + 1), down_blk(S + 1)
    pis, r = qbd(up, local, down, a0, a1, a2)
    tail, ktail = _tail_sums(pis[S], r)
    p_wait = float(tail.sum())
    nq = float(ktail.sum())
    in_service = sum(float(p @ (np.arange(width(n)) / m1 + (n - np.arange(width(n))) / m2))
                     for n, p in enumerate(pis[:S]))
    k = np.arange(S + 1)
    in_service += float(tail @ (k / m1 + (S - k) / m2))
    mean_sigma = p1 / m1 + p2 / m2
    out: dict[str, Any] = {"p_wait": p_wait, "mean_wait": nq / lam,
           "mean_workload": nq * mean_sigma + in_service}
    if details:
        out.update(in_service_work=in_service,
                   residual=float(np.max(np.abs(a0 + r @ a1 + r @ r @ a2))))
    return out
