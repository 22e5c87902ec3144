# SPDX-License-Identifier: MIT
"""Mesh topologies for `rnsc bench mesh`: a small description format and generators.

Description file (one statement per line, '#' starts a comment):

    node NAME IMPL            IMPL is rnsc or ref (the reference's rnsd)
    link A B [KEY=VALUE ...]  an undirected link; A runs the server end
                              iface=tcp (default) or udp
                              delay=20ms  loss=1%  rate=1mbit   (tc netem, both ends)

Generators (--topology): line:N, ring:N, star:N (node 0 is the hub), grid:RxC,
random:N[:EXTRA] (a seeded random spanning tree plus EXTRA chords). The implementation of
each generated node comes from --mix: rnsc, ref, or mixed (alternating, starting with rnsc).
"""
import random
import re

IMPLS = ("rnsc", "ref")
IFACES = ("tcp", "udp")
_NETEM = {"delay": r"\d+(\.\d+)?(us|ms|s)", "loss": r"\d+(\.\d+)?%", "rate": r"\d+(k|m|g)?bit"}


class TopologyError(ValueError):
    pass


class Topology:
    def __init__(self, name):
        self.name = name
        self.nodes = []  # [(name, impl)]
        self.links = []  # [(a_index, b_index, {"iface":..., "delay":...})]

    def add_node(self, name, impl):
        if impl not in IMPLS:
            raise TopologyError(f"node {name}: implementation must be one of {', '.join(IMPLS)}, not '{impl}'")
        if any(n == name for n, _ in self.nodes):
            raise TopologyError(f"node {name} declared twice")
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,24}", name):
            raise TopologyError(f"node name '{name}': use 1-24 letters, digits, '_' or '-'")
        self.nodes.append((name, impl))

    def index(self, name):
        for i, (n, _) in enumerate(self.nodes):
            if n == name:
                return i
        raise TopologyError(f"link names an undeclared node '{name}'")

    def add_link(self, a, b, opts=None):
        opts = dict(opts or {})
        opts.setdefault("iface", "tcp")
        if opts["iface"] not in IFACES:
            raise TopologyError(f"link {a}-{b}: iface must be one of {', '.join(IFACES)}")
        for k, v in opts.items():
            if k == "iface":
                continue
            if k not in _NETEM:
                raise TopologyError(f"link {a}-{b}: unknown option '{k}' (iface, delay, loss, rate)")
            if not re.fullmatch(_NETEM[k], v):
                raise TopologyError(f"link {a}-{b}: bad {k} '{v}'")
        ia, ib = (a, b) if isinstance(a, int) else (self.index(a), self.index(b))
        if ia == ib:
            raise TopologyError(f"link {a}-{b}: a node cannot link to itself")
        if any({ia, ib} == {x, y} for x, y, _ in self.links):
            raise TopologyError(f"link {a}-{b} declared twice")
        self.links.append((ia, ib, opts))

    def degree(self, i):
        return sum(1 for a, b, _ in self.links if i in (a, b))

    def check(self):
        if len(self.nodes) < 2:
            raise TopologyError("a topology needs at least two nodes")
        # connected?
        seen, todo = {0}, [0]
        while todo:
            i = todo.pop()
            for a, b, _ in self.links:
                for x, y in ((a, b), (b, a)):
                    if x == i and y not in seen:
                        seen.add(y)
                        todo.append(y)
        if len(seen) != len(self.nodes):
            raise TopologyError("the topology is not connected")

    def hops(self):
        """All-pairs shortest hop counts (BFS), hops[i][j]."""
        n = len(self.nodes)
        adj = [[] for _ in range(n)]
        for a, b, _ in self.links:
            adj[a].append(b)
            adj[b].append(a)
        out = []
        for s in range(n):
            d = [None] * n
            d[s] = 0
            q = [s]
            for i in q:
                for j in adj[i]:
                    if d[j] is None:
                        d[j] = d[i] + 1
                        q.append(j)
            out.append(d)
        return out

    def describe(self):
        lines = [f"# {self.name}"]
        lines += [f"node {n} {impl}" for n, impl in self.nodes]
        for a, b, o in self.links:
            extra = " ".join(f"{k}={v}" for k, v in o.items())
            lines.append(f"link {self.nodes[a][0]} {self.nodes[b][0]} {extra}".rstrip())
        return "\n".join(lines) + "\n"


def parse(text, name="file"):
    t = Topology(name)
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        w = line.split()
        try:
            if w[0] == "node" and len(w) == 3:
                t.add_node(w[1], w[2])
            elif w[0] == "link" and len(w) >= 3:
                opts = {}
                for kv in w[3:]:
                    if "=" not in kv:
                        raise TopologyError(f"link option '{kv}' is not KEY=VALUE")
                    k, v = kv.split("=", 1)
                    opts[k] = v
                t.add_link(w[1], w[2], opts)
            else:
                raise TopologyError(f"cannot read '{line}' (node NAME IMPL | link A B [KEY=VALUE ...])")
        except TopologyError as e:
            raise TopologyError(f"{name}:{no}: {e}") from None
    t.check()
    return t


def _impl(mix, i):
    if mix == "mixed":
        return IMPLS[i % 2]
    return mix


def generate(spec, mix="rnsc", seed=1, iface="tcp"):
    """spec: line:N ring:N star:N grid:RxC random:N[:EXTRA]."""
    kind, _, arg = spec.partition(":")
    if mix not in ("rnsc", "ref", "mixed"):
        raise TopologyError(f"--mix must be rnsc, ref or mixed, not '{mix}'")
    try:
        if kind == "grid":
            r, c = (int(x) for x in arg.lower().split("x"))
            n = r * c
        elif kind == "random":
            parts = arg.split(":")
            n, extra = int(parts[0]), int(parts[1]) if len(parts) > 1 else None
        else:
            n = int(arg)
    except ValueError:
        raise TopologyError(f"bad topology '{spec}' (line:N ring:N star:N grid:RxC random:N[:EXTRA])") from None
    if kind not in ("line", "ring", "star", "grid", "random"):
        raise TopologyError(f"unknown topology kind '{kind}' (line, ring, star, grid, random)")
    if n < 2 or n > 400:
        raise TopologyError(f"{spec}: between 2 and 400 nodes")
    t = Topology(f"{spec} {mix}" + (f" seed {seed}" if kind == "random" else ""))
    for i in range(n):
        t.add_node(f"n{i}", _impl(mix, i))
    o = {"iface": iface}
    if kind == "line":
        for i in range(n - 1):
            t.add_link(i, i + 1, o)
    elif kind == "ring":
        for i in range(n):
            if n > 2 or i == 0:
                t.add_link(i, (i + 1) % n, o)
    elif kind == "star":
        for i in range(1, n):
            t.add_link(0, i, o)
    elif kind == "grid":
        for y in range(r):
            for x in range(c):
                i = y * c + x
                if x + 1 < c:
                    t.add_link(i, i + 1, o)
                if y + 1 < r:
                    t.add_link(i, i + c, o)
    else:
        rng = random.Random(seed)
        for i in range(1, n):
            t.add_link(rng.randrange(i), i, o)
        extra = n // 4 if extra is None else extra
        tries = 0
        while extra > 0 and tries < 100 * n:
            tries += 1
            a, b = rng.randrange(n), rng.randrange(n)
            if a != b and not any({a, b} == {x, y} for x, y, _ in t.links):
                t.add_link(a, b, o)
                extra -= 1
    t.check()
    return t
