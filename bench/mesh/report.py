# SPDX-License-Identifier: MIT
"""Reports for `rnsc bench mesh`: path-table agreement between runs, Markdown, JSON, SVG."""
import json
import math
import os

# Reticulum.ANNOUNCE_CAP (2 %) of TCPInterface/UDPInterface BITRATE_GUESS (10 Mbit/s), in B/s
ANNOUNCE_CAP_BPS = 25000
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def compare(out):
    """Runs of the same shape (same node and link count) must end with the same paths: every
    node reaching the same (origin node, destination index) set. Hop counts may differ: a
    transport node takes the first copy of an announce it hears and drops later copies with
    the same random blob even over fewer hops (the reference's rule, kept by rnsc), so which
    copy wins depends on rebroadcast timing; the differences are reported, not judged."""
    runs = [r for r in out["runs"] if r.get("tables")]
    diffs = []
    for i, a in enumerate(runs):
        for b in runs[i + 1:]:
            if (a["nodes"], a["links"]) != (b["nodes"], b["links"]):
                continue
            missing = hops = 0
            for node in set(a["tables"]) | set(b["tables"]):
                ta, tb = a["tables"].get(node, {}), b["tables"].get(node, {})
                missing += len(set(ta) ^ set(tb))
                hops += sum(1 for k in set(ta) & set(tb) if ta[k] != tb[k])
            common = sum(len(set(a["tables"].get(x, {})) & set(b["tables"].get(x, {})))
                         for x in set(a["tables"]) | set(b["tables"]))
            diffs.append({"a": a["label"], "b": b["label"], "differing_paths": missing,
                          "differing_hop_counts": hops, "common_paths": common,
                          "same_hop_counts": missing == 0 and hops == 0})
    out["table_comparisons"] = diffs
    out["tables_agree"] = all(d["differing_paths"] == 0 for d in diffs)
    # The target, stated explicitly: a mixed mesh ends with the same path tables as
    # the all-reference mesh of the same shape, judged against the reference's own spread.
    kind = {r["label"]: run_kind(r) for r in runs}
    mvr = [d for d in diffs if {kind[d["a"]], kind[d["b"]]} == {"mixed", "ref"}]
    if mvr:
        byl = {r["label"]: r for r in runs}

        def excess(r):  # share of entries longer than the shortest path
            tot = sum(len(t) for t in r["tables"].values())
            return round(r.get("non_shortest_entries", 0) / tot, 4) if tot else None
        out["mixed_vs_reference"] = {
            "compared": len(mvr),
            "longer_than_shortest_share": {lb: excess(byl[lb]) for d in mvr for lb in (d["a"], d["b"])},
            "same_hop_counts": all(d["same_hop_counts"] for d in mvr),
            "differing_paths": sum(d["differing_paths"] for d in mvr),
            "differing_hop_counts": sum(d["differing_hop_counts"] for d in mvr)}
        out["mixed_vs_reference"].update(equivalence(runs, "mixed"))
    if any(kind[r["label"]] == "rnsc" for r in runs) and any(kind[r["label"]] == "ref" for r in runs):
        out["rnsc_vs_reference"] = equivalence(runs, "rnsc")


def run_kind(r):
    return ("ref" if r["impls"].get("rnsc", 0) == 0 else
            "rnsc" if r["impls"].get("ref", 0) == 0 else "mixed")


CRITERION = (
    "A run R of kind K (mixed or rnsc) is equivalent to the all-reference runs A1..Ak (k >= 2) "
    "of the same shape when (1) every node has the same set of destinations in R as in every "
    "Ai; (2) every hop count h in R lies within [s, s + e], s the entry's shortest path "
    "(topology hops + 1 for the announcer) and e the largest excess over the shortest path "
    "seen for any entry in any Ai (the reference's own detours: it keeps the first copy of an "
    "announce it hears and delays rebroadcasts randomly); (3) the number of entries in which R "
    "differs from each Ai (missing on one side or another hop count) is at most "
    "d + ceil(3 * sqrt(max(d, 1))), d the largest number of entries in which two Ai differ from "
    "each other (a 3-sigma Poisson margin on one sample of the reference's own spread). "
    "'strict' reports (3) without the margin. With a single all-reference run, a run "
    "identical to it passes, one failing (1) or (2) fails, any other is not judged.")


def _table_diff(ta, tb):
    """Entries (node, destination) missing on one side or with other hop counts."""
    n = 0
    for node in set(ta) | set(tb):
        a, b = ta.get(node, {}), tb.get(node, {})
        n += len(set(a) ^ set(b)) + sum(1 for k in set(a) & set(b) if a[k] != b[k])
    return n


def _shortest(r):
    import topology as topo_mod
    hops = topo_mod.parse(r["description"]).hops()
    return lambda node, entry: hops[int(node)][int(entry.split(".")[0])] + 1


def equivalence(runs, want):
    """The criterion above for every run of kind `want` against the all-reference runs of
    the same shape; {"criterion", "pass", "runs": [...]}. With one reference run only (1), (2)
    and identity can be judged; a run that differs from it is not judged (pass None)."""
    res = {"criterion": CRITERION, "runs": []}
    verdicts = []
    for r in runs:
        if run_kind(r) != want:
            continue
        refs = [a for a in runs if run_kind(a) == "ref" and
                (a["nodes"], a["links"]) == (r["nodes"], r["links"]) and a.get("tables")]
        row = {"label": r["label"], "reference_runs": [a["label"] for a in refs]}
        if not refs:
            continue
        sp = _shortest(r)
        excess = [h - sp(node, k) for a in refs for node, t in a["tables"].items()
                  for k, h in t.items()]
        e = max(excess + [0])
        row["reference_max_excess"] = e
        row["same_entry_set"] = all(
            set(r["tables"]) == set(a["tables"]) and
            all(set(r["tables"][x]) == set(a["tables"].get(x, {})) for x in r["tables"])
            for a in refs)
        row["out_of_bounds"] = sum(1 for node, t in r["tables"].items() for k, h in t.items()
                                   if not sp(node, k) <= h <= sp(node, k) + e)
        # informative: entries longer than any reference run had them
        row["above_reference_per_entry"] = sum(
            1 for node, t in r["tables"].items() for k, h in t.items()
            if h > max([a["tables"].get(node, {}).get(k, 0) for a in refs]))
        row["entries"] = sum(len(t) for t in r["tables"].values())
        row["differing_vs_reference"] = {a["label"]: _table_diff(r["tables"], a["tables"]) for a in refs}
        if not row["same_entry_set"] or row["out_of_bounds"]:
            row["pass"] = row["strict"] = False  # (1) or (2) fails whatever the spread
            verdicts.append(False)
        elif len(refs) >= 2:
            d = max(_table_diff(a["tables"], b["tables"]) for i, a in enumerate(refs) for b in refs[i + 1:])
            allowed = d + math.ceil(3 * math.sqrt(max(d, 1)))
            worst = max(row["differing_vs_reference"].values())
            row.update({"reference_pair_differing": d, "allowed_differing": allowed,
                        "strict": row["same_entry_set"] and row["out_of_bounds"] == 0 and worst <= d,
                        "pass": row["same_entry_set"] and row["out_of_bounds"] == 0 and worst <= allowed})
            verdicts.append(row["pass"])
        elif not any(row["differing_vs_reference"].values()):
            row["pass"] = row["strict"] = True  # identical tables need no spread
            row["note"] = "identical to the all-reference run"
            verdicts.append(True)
        else:
            row["pass"] = None
            row["note"] = "one all-reference run: the reference's own spread is unknown (run ref twice)"
        res["runs"].append(row)
    res["pass"] = all(verdicts) if verdicts and len(verdicts) == len(res["runs"]) else None
    return res


def _mib(k):
    return "" if k is None else f"{k / 1024:.1f}"


def markdown(out):
    env = out["environment"]
    L = ["# Mesh benchmark (`rnsc bench mesh`)", "",
         f"{env.get('date', '')} · {env.get('cpu', '?')} ({env.get('cpus', '?')} CPUs) · "
         f"kernel {env.get('kernel', '?')} · reference rns {env.get('reference', '?')} · "
         f"{env.get('rnsc', 'rnsc')} · load before {env.get('load_before', '?')}", "",
         "Each node: one daemon in its own network namespace (transport on) plus the same "
         "workload process (the reference's API, announcing the node's destinations) attached "
         "over local TCP; links are veth pairs. Convergence = every daemon has a path to every "
         "destination, polled every "
         f"{out['settings'].get('poll')} s.", "",
         "| run | topology | nodes (rnsc/ref) | links | destinations | converged | convergence s | "
         "max RSS MiB rnsc | max RSS MiB ref | mesh bytes/node/min rnsc | ref | "
         "longer than shortest | ok |",
         "| --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in out["runs"]:
        per = r.get("per_node", [])

        def agg(impl, key, f):
            v = [p[key] for p in per if p["impl"] == impl and p.get(key) is not None]
            return f(v) if v else None
        mx = {i: agg(i, "hwm_kib", max) for i in ("rnsc", "ref")}
        bpm = {i: agg(i, "bytes_per_min", lambda v: sum(v) / len(v)) for i in ("rnsc", "ref")}
        L.append(f"| {r['label']} | {r['topology']} | {r['impls']['rnsc']}/{r['impls']['ref']} | "
                 f"{r['links']} | {r['nodes'] * r['destinations_per_node']} | "
                 f"{'yes' if r.get('converged') else '**no**'} | "
                 f"{r.get('convergence_s') if r.get('convergence_s') is not None else '—'} | "
                 f"{_mib(mx['rnsc'])} | {_mib(mx['ref'])} | "
                 f"{'' if bpm['rnsc'] is None else round(bpm['rnsc'])} | "
                 f"{'' if bpm['ref'] is None else round(bpm['ref'])} | "
                 f"{r.get('non_shortest_entries', '—')} | {'yes' if r['ok'] else '**no**'} |")
    L.append("")
    for d in out.get("table_comparisons", []):
        L.append(f"- path tables {d['a']} vs {d['b']}: {d['differing_paths']} paths differ, "
                 f"{d['differing_hop_counts']} common paths have another hop count")
    for r in out["runs"]:
        per = r.get("per_node", [])
        w = [p["max_iface_tx_Bps"] for p in per if p.get("max_iface_tx_Bps") is not None]
        c = [p["max_iface_tx_Bps_to_convergence"] for p in per
             if p.get("max_iface_tx_Bps_to_convergence") is not None]
        if w:
            L.append(f"- {r['label']}: busiest mesh interface sent {max(w):.0f} B/s averaged over "
                     f"the traffic window" + (f", {max(c):.0f} B/s from the announce to convergence"
                                              if c else "")
                     + f"; the reference's announce cap is {ANNOUNCE_CAP_BPS} B/s per interface "
                     "(announce_cap 2 % of the TCP/UDP interfaces' 10 Mbit/s bitrate guess): "
                     f"{'within' if max(w + c) <= ANNOUNCE_CAP_BPS else '**above**'} it "
                     f"({max(w + c) / ANNOUNCE_CAP_BPS * 100:.1f} %)")
    m = out.get("mixed_vs_reference")
    if m:
        L.append(f"- **mixed vs all-reference mesh of the same shape: "
                 f"{'same path tables, hop count for hop count' if m['same_hop_counts'] else 'tables differ'}**"
                 f" ({m['differing_paths']} paths missing on one side, {m['differing_hop_counts']} "
                 "hop counts differ; share of entries longer than the shortest path: "
                 + ", ".join(f"{k} {v * 100:.1f} %" for k, v in m["longer_than_shortest_share"].items()
                             if v is not None) + ")")
    for key, what in (("mixed_vs_reference", "mixed"), ("rnsc_vs_reference", "all-rnsc")):
        eq = out.get(key)
        for row in (eq or {}).get("runs", []):
            v = row.get("pass")
            L.append(f"- equivalence of {what} run {row['label']} with the all-reference runs "
                     f"({', '.join(row['reference_runs'])}): "
                     + ("**pass**" if v else "**fail**" if v is False else "not judged") + ": "
                     f"same destinations on every node: {'yes' if row['same_entry_set'] else 'no'}; "
                     f"hop counts outside [shortest, shortest + {row['reference_max_excess']}]: "
                     f"{row['out_of_bounds']}; entries differing from each reference run: "
                     + ", ".join(f"{k} {v}" for k, v in row["differing_vs_reference"].items())
                     + f" of {row['entries']}"
                     + (f" (allowed {row['allowed_differing']}: the reference runs differ from each "
                        f"other in {row['reference_pair_differing']}; strict, without the margin: "
                        f"{'pass' if row['strict'] else 'fail'})" if "allowed_differing" in row
                        else f" ({row.get('note')})"))
    if out.get("mixed_vs_reference", {}).get("criterion"):
        L.append(f"- the equivalence criterion: {out['mixed_vs_reference']['criterion']}")
    for r in out["runs"]:
        sm = r.get("storm")
        if not sm:
            continue
        L.append(f"- {r['label']}: path-request storm: {len(sm['requesters'])} requesters "
                 f"(a maximal independent set) dropped {sm.get('paths_dropped')} paths and asked "
                 f"for {sm['requests']} at once ({sm['per_requester']} farthest each); "
                 f"answered {sm.get('answered')}/{sm['requests']}"
                 + (f", all within {sm['all_answered_s']} s" if sm.get("all_answered_s") is not None
                    else f", {sm.get('unanswered')} unanswered after {sm.get('answer_phase_s')} s")
                 + f" (median {sm.get('answer_median_s')} s, 90 % {sm.get('answer_p90_s')} s); "
                 f"{sm.get('total_ptxc')} path requests ({sm.get('total_ptxb')} B) sent on mesh "
                 f"interfaces, {sm.get('total_atxc')} announces ({sm.get('total_atxb')} B) sent back; "
                 f"path-request ingress limiting active on {sm.get('pr_burst_ifaces')} mesh interfaces "
                 f"at the end; drops: "
                 + (", ".join(f"{k} {v}" for k, v in sorted(sm.get("drops", {}).items())) or "none")
                 + (f"; unanswered: {', '.join(sm['unanswered_list'][:12])}"
                    + (" …" if len(sm["unanswered_list"]) > 12 else "") if sm.get("unanswered_list") else "")
                 + (f"; after a re-announce every path was known again in "
                    f"{sm['reconverged_after_reannounce_s']} s" if "reconverged_after_reannounce_s" in sm else "")
                 + (f" — {sm['error']}" if sm.get("error") else ""))
    for r in out["runs"]:
        rc = r.get("recovery")
        if rc:
            L.append(f"- {r['label']}: centre node {rc['centre']} killed and restarted: links back in "
                     f"{rc.get('links_s', '—')} s, probe {rc.get('from')} -> {rc.get('to')} "
                     f"({rc.get('hops')} hops) through it answered {rc.get('probe_s', '—')} s after the restart "
                     "(the workload re-announces once the links are back), every path known again "
                     f"after {rc.get('reconverged_s', '—')} s"
                     + (f" — {rc['error']}" if rc.get("error") else ""))
    for r in out["runs"]:
        pt = r.get("partition")
        if pt:
            L.append(f"- {r['label']}: partition: {pt['cut_links']} links cut for {pt['partition_s']} s "
                     f"(every workload re-announced while cut; probe across during the cut "
                     f"{'answered (wrong)' if pt.get('probe_during_cut') else 'failed, as it must'}); "
                     f"after the heal a probe {pt.get('from')} -> {pt.get('to')} ({pt.get('hops')} hops) "
                     f"answered after {pt.get('probe_s', '—')} s"
                     f"{' (only after every workload re-announced: the connections had timed out and their paths gone)' if pt.get('reannounced') else ' (no re-announce needed)'}"
                     f", all links established after "
                     f"{pt.get('links_s', '—')} s" + (f" — {pt['error']}" if pt.get("error") else ""))
    for r in out["runs"]:
        if r.get("error"):
            L.append(f"- run {r['label']} failed: {r['error']}")
    xs = [(r["label"], x) for r in out["runs"] for x in r.get("transfers", [])]
    if xs:
        L += ["", f"Links and resource transfers between far-apart pairs (after convergence, one "
              f"at a time; {out['settings'].get('xfer_size')} bytes of random data, uncompressed; "
              "node hops = daemons crossed - 1, the path table adds the announcer's local hop; "
              "link = link request to established, as seen by the sender; goodput = size over "
              "resource offered to proved complete; SHA-256 compared with what the receiver logged):", "",
              "| run | from | to | node hops | path hops | path s | link s | RTT ms | transfer s | goodput KiB/s | SHA-256 equal | ok |",
              "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
        for lb, x in sorted(xs, key=lambda t: (t[0], -t[1]["node_hops"])):
            L.append(f"| {lb} | {x['from']} ({x['from_impl']}) | {x['to']} ({x['to_impl']}) | "
                     f"{x['node_hops']} | {x.get('hops', '—')} | {x.get('path_s', '—')} | "
                     f"{x.get('link_s', '—')} | "
                     f"{'—' if x.get('rtt_s') is None else round(x['rtt_s'] * 1000, 1)} | "
                     f"{x.get('transfer_s', '—')} | "
                     f"{'—' if not x.get('goodput_Bps') else round(x['goodput_Bps'] / 1024, 1)} | "
                     f"{'yes' if x.get('sha256_equal') else 'no'} | "
                     f"{'yes' if x['ok'] else '**no**: ' + str(x.get('error'))} |")
    for r in out["runs"]:
        sm = r.get("storm")
        if not sm or not sm.get("per_node"):
            continue
        L += ["", f"Path-request storm, {r['label']}: per node over the {sm.get('window_s')} s from "
              "the requests to the last answer plus the settle time (mesh interfaces only; "
              "pr = path requests, rx/tx packets and bytes; ann tx = announces sent, i.e. path "
              "responses; answered = at the requesting client):", "",
              "| node | impl | requester | pr rx | pr tx | pr bytes rx+tx | pr bytes/min | pr packets/min | ann tx | answered | slowest answer s | drops |",
              "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
        for p in sm["per_node"]:
            L.append(f"| {p['name']} | {p['impl']} | {'yes' if p['requester'] else ''} | "
                     f"{p.get('prxc', '')} | {p.get('ptxc', '')} | "
                     f"{'' if 'prxb' not in p else p['prxb'] + p['ptxb']} | {p.get('pr_bytes_per_min', '')} | "
                     f"{p.get('pr_packets_per_min', '')} | {p.get('atxc', '')} | "
                     f"{'' if not p['requester'] else str(p.get('answered')) + '/' + str(p.get('requested'))} | "
                     f"{p.get('answer_max_s') if p.get('answer_max_s') is not None else ''} | "
                     + (", ".join(f"{k} {v}" for k, v in sorted(p.get("drops", {}).items())) or "")
                     + " |")
    L += ["", "Per node (peak RSS from VmHWM; traffic = bytes in and out on the mesh interfaces "
          f"over the {out['settings'].get('window')} s after the announce, or until convergence "
          "plus the settle time if later; the rate is bytes over that window):", ""]
    for r in out["runs"]:
        L += [f"### {r['label']}: {r['topology']}", "",
              "| node | impl | paths | peak RSS MiB | rx bytes | tx bytes | bytes/min |",
              "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
        for p in r.get("per_node", []):
            L.append(f"| {p['name']} | {p['impl']} | {p.get('table_entries', p['known'])}/{p['expected']} | "
                     f"{_mib(p.get('hwm_kib'))} | {p.get('rx_bytes', '')} | {p.get('tx_bytes', '')} | "
                     f"{p.get('bytes_per_min', '')} |")
        L.append("")
    return "\n".join(L)


def _svg_curves(out):
    W, H, ml, mb = 640, 320, 50, 40
    runs = [r for r in out["runs"] if r.get("curve")]
    tmax = max([c[0] for r in runs for c in r["curve"]] + [1.0])
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
         f'<text x="{W / 2}" y="14" text-anchor="middle" font-size="13">Convergence: share of (node, destination) paths known</text>',
         f'<line x1="{ml}" y1="{H - mb}" x2="{W - 10}" y2="{H - mb}" stroke="black"/>',
         f'<line x1="{ml}" y1="{H - mb}" x2="{ml}" y2="24" stroke="black"/>',
         f'<text x="{W / 2}" y="{H - 8}" text-anchor="middle">seconds after the announce (max {tmax:.2f})</text>']
    for f in (0, 0.5, 1):
        y = H - mb - f * (H - mb - 30)
        s.append(f'<text x="{ml - 4}" y="{y + 4}" text-anchor="end">{int(f * 100)}%</text>')
    for i, r in enumerate(runs):
        pts = " ".join(f"{ml + c[0] / tmax * (W - ml - 20):.1f},{H - mb - c[1] * (H - mb - 30):.1f}"
                       for c in r["curve"])
        col = COLORS[i % len(COLORS)]
        s.append(f'<polyline fill="none" stroke="{col}" stroke-width="2" points="{pts}"/>')
        s.append(f'<text x="{W - 150}" y="{40 + 14 * i}" fill="{col}">{r["label"]}: {r["topology"]}</text>')
    s.append("</svg>")
    return "\n".join(s)


def _svg_bars(out, key, title, scale, unit):
    rows = [(r["label"], p) for r in out["runs"] for p in r.get("per_node", [])
            if p.get(key) is not None]
    W, bw, H, mb = max(640, 60 + 14 * len(rows)), 12, 300, 60
    vmax = max([p[key] * scale for _, p in rows] + [1e-9])
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="10">',
         f'<text x="{W / 2}" y="14" text-anchor="middle" font-size="13">{title}</text>',
         f'<text x="4" y="30">{vmax:.1f} {unit}</text>']
    labels = sorted({lb for lb, _ in rows}, key=[r["label"] for r in out["runs"]].index)
    for i, (lb, p) in enumerate(rows):
        h = p[key] * scale / vmax * (H - mb - 40)
        x = 50 + 14 * i
        col = "#1f77b4" if p["impl"] == "rnsc" else "#d62728"
        s.append(f'<rect x="{x}" y="{H - mb - h:.1f}" width="{bw}" height="{h:.1f}" fill="{col}">'
                 f'<title>{lb} {p["name"]} ({p["impl"]}): {p[key] * scale:.2f} {unit}</title></rect>')
        s.append(f'<text x="{x + 6}" y="{H - mb + 10}" text-anchor="end" transform="rotate(-60 {x + 6},{H - mb + 10})">{lb}/{p["name"]}</text>')
    s.append(f'<text x="{W - 200}" y="30" fill="#1f77b4">rnsc daemon</text>')
    s.append(f'<text x="{W - 200}" y="44" fill="#d62728">reference rnsd</text>')
    del labels
    s.append("</svg>")
    return "\n".join(s)


def write(out, d):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "mesh.json"), "w") as f:
        json.dump(out, f, indent=1)
    with open(os.path.join(d, "mesh.md"), "w") as f:
        f.write("<!-- SPDX-License-Identifier: MIT -->\n" + markdown(out) + "\n")
    with open(os.path.join(d, "mesh-convergence.svg"), "w") as f:
        f.write(_svg_curves(out))
    with open(os.path.join(d, "mesh-rss.svg"), "w") as f:
        f.write(_svg_bars(out, "hwm_kib", "Peak RSS per daemon", 1 / 1024, "MiB"))
    with open(os.path.join(d, "mesh-traffic.svg"), "w") as f:
        f.write(_svg_bars(out, "bytes_per_min", "Mesh traffic per node (in + out)", 1 / 1024, "KiB/min"))
