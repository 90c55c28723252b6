"""Slow pure-Python twins of every compiled map, written from the formulas of docs/theory/.

Each function takes a workload vector (any sequence), returns ``(new_vector, found)`` where
``found`` is the workload at the joined server, or ``-1.0`` when the customer is lost.
"""

from __future__ import annotations

LOST = -1.0


def _drain(v, tau):
    return [max(x - tau, 0.0) for x in v]


def _join(w, r, sigma):
    v = list(map(float, w))
    found = v[r]
    v[r] += sigma
    return sorted(v), found


def jsw(w, sigma, tau):
    """G(w) = R[(w + sigma e_1 - tau 1)^+]."""
    v, found = _join(w, 0, sigma)
    return _drain(v, tau), found


def jpsw(w, sigma, tau, p):
    """G^p(w): idle server if w(1) = 0, else rank p + 1 (1-based)."""
    r = 0 if w[0] == 0 else p
    v, found = _join(w, r, sigma)
    return _drain(v, tau), found


def loss(w, sigma, tau):
    """L(u): join server 1 when idle, else lost."""
    if w[0] == 0:
        v, found = _join(w, 0, sigma)
    else:
        v, found = list(map(float, w)), LOST
    return _drain(v, tau), found


def random_rank(u, s):
    return min(int(u * s), s - 1)


def random_routing(w, sigma, tau, u):
    v, found = _join(w, random_rank(u, len(w)), sigma)
    return _drain(v, tau), found


def jiq(w, sigma, tau, u):
    r = 0 if w[0] == 0 else random_rank(u, len(w))
    v, found = _join(w, r, sigma)
    return _drain(v, tau), found


def least_of_d_rank(u, d, s):
    """Least r with P(min of d distinct ranks <= r) > u.

    P(min > r) = C(s-r-1, d) / C(s, d) is built as the running product
    prod_{i<=r} (s-i-d)/(s-i) in floating point, as the kernel does, so that both land on the
    same side of u at the boundaries; the exact law is checked in test_least_of_d_rank_law.
    """
    q = 1.0
    for r in range(s):
        q = q * ((s - r - d) / (s - r))
        if 1.0 - q > u:
            return r
    return s - d


def least_of_d(w, sigma, tau, u, d):
    v, found = _join(w, least_of_d_rank(u, d, len(w)), sigma)
    return _drain(v, tau), found


def envelope(w, sigma, tau, r):
    """[R(w + sigma e_r) v R(w - w(1) e_1 + sigma e_1) - tau 1]^+ (first term w if r < 0)."""
    w = list(map(float, w))
    if r >= 0:
        a = list(w)
        a[r] += sigma
        a = sorted(a)
    else:
        a = list(w)
    b = sorted([sigma, *w[1:]])
    out = [max(x, y) for x, y in zip(a, b, strict=True)]
    if w[0] == 0:
        found = 0.0
    elif r >= 0:
        found = w[r]
    else:
        found = LOST
    return _drain(out, tau), found


def split(w, sigma, tau, p):
    """Loss block w[:p] and JSW block w[p:]."""
    u, v = list(map(float, w[:p])), list(map(float, w[p:]))
    if p > 0 and u[0] == 0:
        found = u[0]
        u[0] += sigma
        u.sort()
    else:
        found = v[0]
        v[0] += sigma
        v.sort()
    return _drain(u + v, tau), found


def floyd(u, d, s):
    """Floyd's algorithm: d distinct ranks of 0..s-1 from d uniforms."""
    out = []
    for q in range(d):
        top = s - d + q
        c = min(int(u[q] * (top + 1)), top)
        if c in out:
            c = top
        out.append(c)
    return out


def kth_smallest(x, n, k):
    """The ``k``-th smallest of ``x[:n]``, by sorting a list."""
    return sorted(float(v) for v in x[:n])[k - 1]


def redundancy(w, tau, u, classes, frame):
    """Cancel-on-completion redundancy (docs/theory/redundancy.md); returns (new w, time T).

    ``classes``: list of (d, k, cumulative probability); ``u``: [class uniform, dmax routing
    uniforms, dmax sizes].
    """
    dmax = max(c[0] for c in classes)
    j = next((i for i, c in enumerate(classes[:-1]) if u[0] < c[2]), len(classes) - 1)
    d, k = classes[j][0], classes[j][1]
    v = list(map(float, w))
    ranks = floyd(u[1:1 + d], d, len(v))
    done = [v[r] + u[1 + dmax + q] for q, r in enumerate(ranks)]
    t = sorted(done)[k - 1]
    for q, r in enumerate(ranks):
        v[r] = min(done[q], max(v[r], t))
    v = sorted(min(x, frame) for x in v)
    return _drain(v, tau), t


def apply(name, params, w, sigma, tau, u):
    """Dispatch by system class name (u: the list of routing uniforms)."""
    if name == "JSW":
        return jsw(w, sigma, tau)
    if name == "JpSW":
        return jpsw(w, sigma, tau, params["p"])
    if name == "Loss":
        return loss(w, sigma, tau)
    if name == "RandomRouting":
        return random_routing(w, sigma, tau, u[0])
    if name == "JIQ":
        return jiq(w, sigma, tau, u[0])
    if name == "LeastOfD":
        return least_of_d(w, sigma, tau, u[0], params["d"])
    if name == "SplitBound":
        return split(w, sigma, tau, params["p"])
    if name == "Envelope":
        base = params["base"]
        if base == "JpSW":
            r = params["p"]
        elif base == "JIQ":
            r = random_rank(u[0], len(w))
        elif base == "Loss":
            r = -1
        else:  # monotone systems are their own envelope
            return apply(base, params, w, sigma, tau, u)
        return envelope(w, sigma, tau, r)
    if name == "Redundancy":
        return redundancy(w, tau, u, params["classes"], params["frame"])
    raise KeyError(name)


def describe(system):
    """(name, params) of a recursions system, for :func:`apply`."""
    name = type(system).__name__
    params = {}
    if name in ("JpSW", "SplitBound"):
        params["p"] = system.p
    if name == "LeastOfD":
        params["d"] = system.d
    if name == "Redundancy":
        cum = [float(x) for x in system.params[5::3]]
        params["classes"] = [(c.d, c.k, cum[j]) for j, c in enumerate(system.classes)]
        params["frame"] = system.frame
    if name == "Envelope":
        inner_name, inner = describe(system.system)
        params = dict(inner, base=inner_name)
    return name, params


def run(system, w0, sigma, tau, u):
    """Iterate the naive map; return the states seen by each arrival and what each found."""
    name, params = describe(system)
    w = list(map(float, w0))
    states, founds = [], []
    for k in range(len(sigma)):
        states.append(list(w))
        w, f = apply(name, params, w, float(sigma[k]), float(tau[k]), list(u[k]))
        founds.append(f)
    return states, founds, w


def ra_known_from(u, s, t, n, bound):
    """Twin of :func:`coupling._ra_walk_kernels.ra_known_from`: per-server Lindley from -n."""
    S = len(bound)
    w = [float(b) for b in bound]
    known = [-1] * S
    for k in range(n, 0, -1):  # customer -k arrives
        for i in range(S):
            if known[i] < 0 and w[i] <= 0.0:
                known[i] = k
        w[int(u[k - 1])] += float(s[k - 1])
        w = [max(x - float(t[k - 1]), 0.0) for x in w]
    return [0 if (known[i] < 0 and w[i] <= 0.0) else known[i] for i in range(S)]


def ra_walk_rises(gen, servers, service, interarrival, margins, reps, horizon, phase=None,
                  k0=0):
    """Brute force for the random-assignment walk: does some coordinate ever rise above
    its margin (within ``horizon`` steps), and at which step. Returns (rose, step).

    With a ``phase`` the routing is cyclic: step ``k0 + k`` goes to ``(phase - k0 - k) % S``.

    Vectorised over replications (numpy) but step by step, with no tilting."""
    import numpy as np

    S = servers
    rose = np.zeros(reps, dtype=bool)
    step = np.full(reps, -1)
    pos = np.zeros((reps, S))
    margins = np.asarray(margins, dtype=float)
    for k in range(horizon):
        if phase is None:
            u = gen.integers(0, S, reps)
        else:
            u = np.full(reps, (phase - k0 - k - 1) % S)
        sig = np.asarray(service.sample(gen, reps))
        tau = np.asarray(interarrival.sample(gen, reps))
        pos -= tau[:, None]
        pos[np.arange(reps), u] += sig
        new = (~rose) & (pos > margins).any(axis=1)
        step[new] = k + 1
        rose |= new
    return rose, step


def _walk_steps(u, s, t, i0, S):
    pos = [0.0] * S
    for k in range(i0, len(u)):
        pos = [x - float(t[k]) for x in pos]
        pos[int(u[k])] += float(s[k])
        yield k, pos


def walk_to_rise(u, s, t, i0, margins):
    """Twin of ``ra_walk_kernels.walk_to_rise``: (end index, displacement) or (-1, None)."""
    for k, pos in _walk_steps(u, s, t, i0, len(margins)):
        if any(p > m for p, m in zip(pos, margins, strict=True)):
            return k + 1, pos
    return -1, None


def walk_to_descend(u, s, t, i0, room, a):
    """Twin of ``ra_walk_kernels.walk_to_descend``: (status, end, displacement)."""
    for k, pos in _walk_steps(u, s, t, i0, len(room)):
        if any(p > r for p, r in zip(pos, room, strict=True)):
            return 0, k + 1, pos
        if all(p <= r - a for p, r in zip(pos, room, strict=True)):
            return 1, k + 1, pos
    return -1, i0, None


def path_exceeds(u, s, t, room):
    """Twin of ``ra_walk_kernels.path_exceeds``."""
    return any(any(p > r for p, r in zip(pos, room, strict=True))
               for _, pos in _walk_steps(u, s, t, 0, len(room)))


def cyclic_to_rise(tt, it, st, ist, sp, isp, j, phase, k0, margins):
    """Twin of ``ra_walk_kernels.cyclic_to_rise`` (returns -1/-2/-3 for an exhausted stream)."""
    S = len(margins)
    pos = [0.0] * S
    n = 0
    while True:
        if it >= len(tt):
            return -1, it, ist, isp, None
        srv = (phase - (k0 + n + 1)) % S
        if srv == j:
            if ist >= len(st):
                return -2, it, ist, isp, None
            x, ist = float(st[ist]), ist + 1
        else:
            if isp >= len(sp):
                return -3, it, ist, isp, None
            x, isp = float(sp[isp]), isp + 1
        pos = [p - float(tt[it]) for p in pos]
        it += 1
        pos[srv] += x
        n += 1
        if any(p > m for p, m in zip(pos, margins, strict=True)):
            return n, it, ist, isp, pos


def cyclic_to_descend(tp, itp, sp, isp, phase, k0, room, a):
    """Twin of ``ra_walk_kernels.cyclic_to_descend``: (status, steps, itp, isp, displacement)."""
    S = len(room)
    pos = [0.0] * S
    n = 0
    while True:
        if itp >= len(tp):
            return -1, 0, None, None, None
        if isp >= len(sp):
            return -2, 0, None, None, None
        srv = (phase - (k0 + n + 1)) % S
        pos = [p - float(tp[itp]) for p in pos]
        pos[srv] += float(sp[isp])
        itp, isp, n = itp + 1, isp + 1, n + 1
        if any(p > r for p, r in zip(pos, room, strict=True)):
            return 0, n, itp, isp, pos
        if all(p <= r - a for p, r in zip(pos, room, strict=True)):
            return 1, n, itp, isp, pos


def pick_tilt(margins, theta, uniform):
    """Twin of ``ra_walk_kernels.pick_tilt``: weights exp(-theta y_i), inverse-cdf pick."""
    import math

    w = [math.exp(-theta * (y - min(margins))) for y in margins]
    tot = sum(w)
    logpi = [math.log(x / tot) for x in w]
    acc = 0.0
    for j, x in enumerate(w):
        acc += x / tot
        if uniform < acc:
            return logpi, j
    return logpi, len(w) - 1


def log_lr(logpi, theta, end):
    """Twin of ``ra_walk_kernels.log_lr``: -log sum_i pi_i exp(theta D_i)."""
    import math

    return -math.log(sum(math.exp(lp + theta * d) for lp, d in zip(logpi, end, strict=True)))


def replay_trace(system, times, services, u):
    """Each job of a trace once, in order, from empty servers: its wait (``nan`` if lost).

    ``u`` holds each job's routing uniforms. The gap after the last job is 0 (none follows).
    """
    gaps = [float(times[k + 1] - times[k]) for k in range(len(times) - 1)] + [0.0]
    _, founds, last = run(system, [0.0] * system.servers, services, gaps, u)
    return [float("nan") if f == LOST else f for f in founds], last
