#!/usr/bin/env python3
"""Markdown tables from lockstep_benchmark's JSON files (one per run).

  python3 tools/lockstep_table.py run1.json run2.json run3.json

Per case: the time per step (or round trip) as the median of every
repetition of every run, with its range; steps (round trips) per second
from that median; the ratio to the bare round trip computed per run (the
run's median step over the same run's median bare round trip), given as
the median of the runs and their range; the process's CPU and context
switches per iteration (medians). Runs with different settings
(dds_intraprocess_delivery, dds_settings) get a table each.
"""
import json
import statistics
import sys
from collections import defaultdict

BARE = "BM_BareRoundTrip"
LABELS = {
    "BM_BareRoundTrip": "bare round trip (2 participants)",
    "BM_RoundTripEchoFromThread": "round trip, echo from a thread",
    "BM_LockstepStep/1": "lockstep, 1 member",
    "BM_LockstepStep/2": "lockstep, 2 members",
    "BM_LockstepStep/4": "lockstep, 4 members",
}


def case_of(name):
    return name.split("/process_time")[0]


def load(path):
    with open(path) as f:
        doc = json.load(f)
    ctx = doc["context"]
    setting = (ctx.get("dds_intraprocess_delivery", "?"), ctx.get("dds_settings", "?"))
    reps = defaultdict(list)
    for b in doc["benchmarks"]:
        if b.get("run_type") != "iteration" or b.get("error_occurred"):
            continue
        reps[case_of(b["name"])].append(b)
    return setting, reps


def us(b):
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b["time_unit"]]
    return b["real_time"] * scale, b["cpu_time"] * scale


def table(runs):
    cases = []
    for _, reps in runs:
        for c in reps:
            if c not in cases:
                cases.append(c)
    print("| case | time per step / round trip | steps/s (round trips/s) | ratio to the bare round trip | CPU | switches |")
    print("|---|---:|---:|---:|---:|---:|")
    for c in cases:
        times = [us(b)[0] for _, reps in runs for b in reps.get(c, [])]
        cpus = [us(b)[1] for _, reps in runs for b in reps.get(c, [])]
        sw = [b.get("ctx_switches", 0.0) for _, reps in runs for b in reps.get(c, [])]
        if not times:
            continue
        med = statistics.median(times)
        ratios = []
        for _, reps in runs:
            if c in reps and BARE in reps:
                ratios.append(statistics.median(us(b)[0] for b in reps[c]) /
                              statistics.median(us(b)[0] for b in reps[BARE]))
        rate = 1e6 / med
        rate_s = f"{rate:,.0f}" if c.startswith("BM_Lockstep") else f"({rate:,.0f})"
        if c == BARE:
            ratio_s = "1"
        elif ratios:
            ratio_s = f"{statistics.median(ratios):.2f}x [{min(ratios):.2f}, {max(ratios):.2f}]"
        else:
            ratio_s = "-"
        print(f"| {LABELS.get(c, c)} | {med:.1f} µs [{min(times):.1f}, {max(times):.1f}] | {rate_s} | "
              f"{ratio_s} | {statistics.median(cpus):.0f} µs | {statistics.median(sw):.1f} |")


def main(paths):
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    by_setting = defaultdict(list)
    for p in paths:
        setting, reps = load(p)
        by_setting[setting].append((p, reps))
    for (intra, settings), runs in by_setting.items():
        n = sum(len(r) for _, reps in runs for r in reps.values()) // max(1, len(runs[0][1]))
        print(f"Intraprocess delivery: {intra}; DDS settings: {settings}; "
              f"{len(runs)} run(s), {n} repetitions per case in all.")
        print()
        table(runs)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
