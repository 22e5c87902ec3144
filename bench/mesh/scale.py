# SPDX-License-Identifier: MIT
"""Fits the mesh scale model from `rnsc bench mesh` JSON results (bench/results/mesh/).

usage: scale.py RESULT.json... > fit.md

For every run it takes D = nodes x destinations per node (the paths every daemon ends up
holding), N = nodes, and per daemon: peak RSS (VmHWM) and the bytes it sent on its mesh
interfaces over the traffic window (one announce of every destination, no re-announce).
It fits, per implementation, by least squares:

  peak RSS (KiB)            = m0 + m1 * D          (max over the run's daemons)
  sent bytes per interface  = t1 * D               (per daemon: tx / mesh interfaces, mean)

and prints the points, the fits and their extrapolation to D = 10,000.
"""
import json
import sys


def degrees(desc):
    deg = {}
    for ln in desc.splitlines():
        w = ln.split()
        if len(w) >= 3 and w[0] == "link":
            for x in w[1:3]:
                deg[x] = deg.get(x, 0) + 1
    return deg


def lsq(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return my, 0.0
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return my - b * mx, b


def through0(xs, ys):
    return sum(x * y for x, y in zip(xs, ys)) / sum(x * x for x in xs)


def main(paths):
    pts = []
    for p in paths:
        d = json.load(open(p))
        for r in d["runs"]:
            if not r.get("converged") or not r.get("per_node"):
                continue
            deg = degrees(r["description"])
            D = r["nodes"] * r["destinations_per_node"]
            for impl in ("rnsc", "ref"):
                per = [x for x in r["per_node"] if x["impl"] == impl and x.get("hwm_kib")]
                if not per or r["impls"].get("rnsc") and r["impls"].get("ref"):
                    continue  # mixed runs are left out of the per-implementation fit
                txi = [x["tx_bytes"] / deg[x["name"]] for x in per if x.get("tx_bytes") is not None]
                pts.append({"file": p.split("/")[-2] if "/" in p else p, "impl": impl,
                            "topology": r["topology"], "N": r["nodes"], "D": D,
                            "hwm_max_kib": max(x["hwm_kib"] for x in per),
                            "hwm_mean_kib": sum(x["hwm_kib"] for x in per) / len(per),
                            "tx_per_iface": sum(txi) / len(txi) if txi else None,
                            "private_max_kib": max([x.get("private_kib") or 0 for x in per]) or None,
                            "cpu_mean_s": (sum(x["cpu_s"] for x in per) / len(per)
                                           if all(x.get("cpu_s") is not None for x in per) else None),
                            "convergence_s": r["convergence_s"]})
    L = ["<!-- SPDX-License-Identifier: MIT -->", "# Scale fit (bench/mesh/scale.py)", "",
         "| impl | topology | N | D | convergence s | peak RSS max MiB | mean MiB | private MiB (max, at the end) | sent B per interface | per destination | daemon CPU s (mean) |",
         "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for q in sorted(pts, key=lambda q: (q["impl"], q["D"], q["N"])):
        L.append(f"| {q['impl']} | {q['topology']} | {q['N']} | {q['D']} | {q['convergence_s']} | "
                 f"{q['hwm_max_kib'] / 1024:.2f} | {q['hwm_mean_kib'] / 1024:.2f} | "
                 f"{'—' if not q['private_max_kib'] else format(q['private_max_kib'] / 1024, '.2f')} | "
                 f"{q['tx_per_iface']:.0f} | {q['tx_per_iface'] / q['D']:.1f} | "
                 f"{'—' if q['cpu_mean_s'] is None else format(q['cpu_mean_s'], '.2f')} |")
    L.append("")
    fits = {}
    for impl in ("rnsc", "ref"):
        qs = [q for q in pts if q["impl"] == impl]
        if len({q["D"] for q in qs}) < 2:
            continue
        m0, m1 = lsq([q["D"] for q in qs], [q["hwm_max_kib"] for q in qs])
        pq = [q for q in qs if q["private_max_kib"]]
        if len({q["D"] for q in pq}) >= 2:
            p0, p1 = lsq([q["D"] for q in pq], [q["private_max_kib"] for q in pq])
            fits.setdefault(impl, {}).update({"private0_kib": p0, "private_kib_per_dest": p1})
            L.append(f"- {impl}: private memory = {p0 / 1024:.2f} MiB + {p1 * 1024:.0f} B x D "
                     f"(fitted on {len(pq)} runs); at D = 10,000: {(p0 + p1 * 10000) / 1024:.1f} MiB")
        t1 = through0([q["D"] for q in qs], [q["tx_per_iface"] for q in qs])
        fits.setdefault(impl, {}).update({"m0_kib": m0, "m1_kib_per_dest": m1, "t1_bytes_per_dest_iface": t1,
                      "rss_10k_mib": (m0 + m1 * 10000) / 1024,
                      "tx_10k_per_iface_bytes": t1 * 10000})
        L.append(f"- {impl}: peak RSS = {m0 / 1024:.2f} MiB + {m1 * 1024:.0f} B x D "
                 f"(fitted on {len(qs)} runs); sent per mesh interface per announce round = "
                 f"{t1:.0f} B x D; at D = 10,000: {fits[impl]['rss_10k_mib']:.1f} MiB, "
                 f"{t1 * 10000 / 1e6:.2f} MB per interface per round")
    print("\n".join(L))
    print("\n```json\n" + json.dumps({"points": pts, "fits": fits}, indent=1) + "\n```")


if __name__ == "__main__":
    main(sys.argv[1:])
