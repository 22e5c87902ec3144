#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Render bench/results/timelock.json (records of `rnsc timelock calibrate`) as Markdown.

usage: timelock_md.py RESULTS.json > RESULTS.md
The JSON holds one calibration record per mode: {"full": {...}, "light": {...}}.
"""
import json
import sys


def table(rec):
    out = ["| set | impl | algo | pages | THP MiB | JIT | AES | fetch | init threads | cache s "
           "| dataset s | H/s median | min | max |",
           "| ---: | --- | --- | --- | ---: | --- | --- | --- | ---: | ---: | ---: | ---: | ---: "
           "| ---: |"]
    for r in rec["runs"]:
        if not r["ok"]:
            out.append(f"| {r.get('group', 0) + 1} | {r['impl']} | {r['algo']} | (failed) "
                       "| | | | | | | | | | |")
            continue
        out.append(f"| {r.get('group', 0) + 1} | {r['impl']} ({r['impl_version']}) | {r['algo']} "
                   f"| {r['pages']} | "
                   f"{r['thp_mib']:.0f} | {r['jit']} | {r['aes']} | {r.get('prefetch', 'hint')} | "
                   f"{r['init_threads']:.0f} | "
                   f"{r['cache_init_s']:.2f} | {r['dataset_init_s']:.2f} | "
                   f"**{r['hs_median']:.1f}** | {r['hs_min']:.1f} | {r['hs_max']:.1f} |")
    return "\n".join(out)


def main():
    data = json.load(open(sys.argv[1]))
    first = next(iter(data.values()))
    env = first["environment"]
    print("<!-- SPDX-License-Identifier: MIT -->")
    print("# RandomX timelock calibration\n")
    print("Produced by `make bench-timelock` (`rnsc timelock calibrate`); the raw records are in "
          "`timelock.json`. Strict sequential chain: every hash input is the previous 32-byte "
          "result, a 4-byte little-endian step counter and a 32-byte per-run context; one worker, "
          "no pipelining; RandomX key and seed random per run; cache and dataset initialisation "
          "timed separately and not part of H/s. All machines of a set (column `set`) exist "
          "together and their samples are taken round-robin, so background load weighs on every "
          "configuration of a set alike; every target pairs runs of one set (the huge-page set "
          "also carries a 4 KiB librandomx machine for the v2 target).\n")
    print("## Environment\n")
    print(f"- CPU: {env['cpu_model']} ({env['cores_online']} cores online); flags: {env['cpu_flags']}")
    print(f"- kernel: {env['kernel']}; base page {env['page_size']} B; THP enabled "
          f"`[{env['thp_enabled']}]`, defrag `[{env['thp_defrag']}]`; reserved huge pages: "
          f"{env['hugetlb_pages_total']} total, {env['hugetlb_pages_free']} free "
          f"({env['hugepage_kb']} kB)")
    print(f"- compiler: {env['compiler']}; rnsc {first['rnsc_version']}; librandomx "
          f"{env['librandomx_version']}")
    print(f"- JIT: see the JIT column (on = x86-64 JIT for both implementations)")
    print("- fetch: how a full-memory machine gets each dataset item ahead of its use: `spec` = "
          "a speculative load that starts the TLB walk, then a prefetch an iteration later "
          "(rnsc's v2 JIT default), `hint` = a prefetch instruction (upstream's and librandomx's "
          "way), `none` = light mode\n")
    for mode, rec in data.items():
        e = rec["environment"]
        print(f"## {mode} mode ({rec['date']})\n")
        built = (f"dataset built with {rec['init_threads']} threads" if rec["mode"] == "full"
                 else "no dataset (256 MiB cache only)")
        print(f"{rec['samples']} samples of {rec['hashes_per_sample']} chain steps per "
              f"configuration; {built}. 1-minute load "
              f"average {e['loadavg_1min_before']:.2f} before, {e['loadavg_1min_after']:.2f} "
              f"after, on {e['cores_online']} cores.\n")
        print(table(rec) + "\n")
        if rec["targets"]:
            print("| target | ratio | goal | met |")
            print("| --- | ---: | ---: | --- |")
            for t in rec["targets"]:
                print(f"| {t['target']} | {t['ratio']:.3f} | >= {t['goal']:.2f} | "
                      f"{'yes' if t['met'] else '**no**'} |")
            print()


if __name__ == "__main__":
    main()
