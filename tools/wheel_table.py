#!/usr/bin/env python3
"""Turns //timer:timing_wheel_benchmark's JSON output into the wheel table.

Usage: wheel_table.py BENCHMARK.json > table.md

Reads the per-repetition rows (run with --benchmark_repetitions=R and
--benchmark_out_format=json; aggregates in the file are ignored, so the
medians and ranges here come from the same numbers) and prints, as markdown:

  - per operation and N (1e3, 1e6): ns/op of ours (BM_Wheel_*), the floor
    (BM_Floor_*, tests/reference/floor_wheel.h) and the heap (BM_Heap_*),
    each the median with [min, max] over the repetitions, and ours / floor
    against issue 25's target of <= 1.5x (met / not met / within noise, by
    the range), and the best-of-each ratio;
  - two threads arming and cancelling their own timers on one shared wheel
    (BM_Wheel_ArmCancelOnSharedWheel/threads:2), against <= 40 ns/op, with
    the one-thread row beside it;
  - the lower bound of a wheel owned by its tick thread (BM_Posted_*,
    tests/reference/posted_front_end.h): the floor behind a lock-free
    queue, one thread and two (the poster's ns/op and the drainer's CPU
    per command, consumer_ns/op), against the floor and ours.

The value read is each row's "ns/op" counter: the timed operations' total
time over their count (the benchmark's own definition; see its header).
"""

import json
import statistics
import sys
from collections import defaultdict

OPERATIONS = [("Arm", "schedule"), ("ReArm", "re-arm"), ("Cancel", "cancel"),
              ("Expire", "expire")]
SIZES = [1000, 1000000]
RATIO_TARGET = 1.5
TWO_THREAD_TARGET_NS = 40.0
SHARED = "BM_Wheel_ArmCancelOnSharedWheel"


def load(path):
    """{(family, arg): [ns/op per repetition]} and the errors seen."""
    with open(path) as f:
        data = json.load(f)
    values = defaultdict(list)
    extra = defaultdict(lambda: defaultdict(list))  # key -> counter -> values
    errors = []
    for row in data["benchmarks"]:
        if row.get("run_type", "iteration") != "iteration":
            continue
        parts = row.get("run_name", row["name"]).split("/")
        key = (parts[0], parts[1] if len(parts) > 1 else "")
        if row.get("error_occurred"):
            errors.append(f"{row['name']}: {row.get('error_message', '?')}")
            continue
        if "ns/op" in row:
            values[key].append(float(row["ns/op"]))
        for counter in ("cpu/wall", "blocked/kop", "preempted", "consumer_ns/op"):
            if counter in row:
                extra[key][counter].append(float(row[counter]))
    return values, extra, errors, data.get("context", {})


def cell(xs):
    if not xs:
        return "not run"
    med = statistics.median(xs)
    if len(xs) == 1:
        return f"{med:.1f}"
    return f"{med:.1f} [{min(xs):.1f}, {max(xs):.1f}]"


def ratio_cell(ours, other):
    """Ratio of medians, with the widest range the repetitions allow (they
    are not paired: each benchmark's repetitions run apart from the other's).
    Returns the text and (low, high) of that range."""
    if not ours or not other:
        return "-", None
    r = statistics.median(ours) / statistics.median(other)
    low, high = min(ours) / max(other), max(ours) / min(other)
    if len(ours) == 1 and len(other) == 1:
        return f"{r:.2f}x", (low, high)
    return f"{r:.2f}x [{low:.2f}, {high:.2f}]", (low, high)


def verdict(low, high, target):
    """Met only if every repetition meets it, not met only if none does;
    otherwise the noise decides, and the table says so."""
    if high <= target:
        return "met"
    if low > target:
        return "**not met**"
    return "within noise"


def best_ratio(ours, other):
    """Best of the repetitions over best: noise only ever adds time, so the
    fastest repetition of each is its least disturbed one."""
    if not ours or not other:
        return "-"
    return f"{min(ours) / min(other):.2f}x"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    values, extra, errors, context = load(sys.argv[1])
    reps = max((len(v) for v in values.values()), default=0)

    out = []
    out.append(f"ns/op, median [min, max] of {reps} repetition(s); "
               "ratios are of the medians, with [ours min / other max, "
               "ours max / other min] beside them (the repetitions of "
               "two rows are not paired). A target is met if the whole "
               "range meets it, not met if none of it does, and otherwise "
               "within noise. \"Best of each\" is the fastest repetition of "
               "ours over the floor's: noise only adds time, so on a busy "
               "machine it is the steadier ratio.")
    out.append("")
    out.append("| operation | N | ours (TimingWheel) | floor (FloorWheel) | "
               f"ours / floor (target <= {RATIO_TARGET}x) | "
               "ours / floor, best of each | "
               "heap (priority_queue) | ours / heap |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    for op, label in OPERATIONS:
        for n in SIZES:
            ours = values.get((f"BM_Wheel_{op}", str(n)), [])
            floor = values.get((f"BM_Floor_{op}", str(n)), [])
            heap = values.get((f"BM_Heap_{op}", str(n)), [])
            r_floor, r = ratio_cell(ours, floor)
            if r is not None:
                r_floor += " " + verdict(r[0], r[1], RATIO_TARGET)
            r_heap, _ = ratio_cell(ours, heap)
            out.append(f"| {label} | 1e{len(str(n)) - 1} | {cell(ours)} | {cell(floor)} | "
                       f"{r_floor} | {best_ratio(ours, floor)} | "
                       f"{cell(heap)} | {r_heap} |")
    single = [x for (family, arg), counters in extra.items()
              if family != SHARED and not family.endswith("_TwoThreads")
              for x in counters.get("cpu/wall", [])]
    if single:
        out.append("")
        out.append("The timed figures are wall time. The benchmark thread's "
                   "share of a core over the single-threaded rows (cpu/wall: "
                   "its CPU time over the wall time of each row's run): "
                   f"median {statistics.median(single):.2f}, min "
                   f"{min(single):.2f}, max {max(single):.2f}. Where well below 1, "
                   "other work on the machine preempted it and its rows read "
                   "slower than they are (ours, floor and heap alike, but not "
                   "equally: they ran at different moments).")
    out.append("")
    if any(family.startswith("BM_Posted_") for family, _ in values):
        out.append("The lower bound of a wheel owned by its tick thread "
                   "(issue 40's lever 1): the floor behind a lock-free "
                   "queue (tests/reference/posted_front_end.h). One thread: "
                   "post, and drain every 64 commands, all timed. Two "
                   "threads: the poster's time (one state-word "
                   "compare-exchange and one queue exchange per command) "
                   "while a second thread drains every 50 us, and that "
                   "thread's CPU per command.")
        out.append("")
        out.append("| operation | N | floor | ours | posted, one thread | "
                   "posted / floor | posted, two threads: poster | "
                   "drainer CPU | poster + drainer / floor |")
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for op, label in OPERATIONS[:3]:
            for n in SIZES:
                floor = values.get((f"BM_Floor_{op}", str(n)), [])
                ours = values.get((f"BM_Wheel_{op}", str(n)), [])
                posted = values.get((f"BM_Posted_{op}", str(n)), [])
                key2 = (f"BM_Posted_{op}_TwoThreads", str(n))
                poster = values.get(key2, [])
                drainer = extra[key2].get("consumer_ns/op", []) if key2 in extra else []
                both = "-"
                if poster and drainer and floor:
                    both = (f"{(statistics.median(poster) + statistics.median(drainer)) / statistics.median(floor):.2f}x")
                r_posted, _ = ratio_cell(posted, floor)
                out.append(f"| {label} | 1e{len(str(n)) - 1} | {cell(floor)} | {cell(ours)} | "
                           f"{cell(posted)} | {r_posted} | {cell(poster)} | "
                           f"{cell(drainer)} | {both} |")
        out.append("")
    out.append("Threads arming and cancelling their own timers on one shared "
               "TimingWheel (wall time over all their operations):")
    out.append("")
    out.append("| row | ns/op | target | cpu/wall | blocked/kop | preempted |")
    out.append("|---|---:|---|---:|---:|---:|")
    for threads in (1, 2):
        key = (SHARED, f"threads:{threads}")
        xs = values.get(key, [])
        target = "-"
        if threads == 2 and xs:
            target = (f"<= {TWO_THREAD_TARGET_NS:.0f}: "
                      + verdict(min(xs), max(xs), TWO_THREAD_TARGET_NS))
        more = " | ".join(cell(extra[key][c]) if key in extra else "-"
                          for c in ("cpu/wall", "blocked/kop", "preempted"))
        out.append(f"| {SHARED}/threads:{threads} | {cell(xs)} | {target} | "
                   f"{more} |")
    out.append("")
    out.append("cpu/wall: the threads' CPU time over the wall time; "
               "blocked/kop: voluntary context switches (waits for the "
               "wheel's lock) per 1000 operations; preempted: involuntary "
               "switches per iteration. Two threads that really ran side by "
               "side show cpu/wall near 2 (or blocks, if the lock made them "
               "wait); cpu/wall near 1 with many preemptions means they took "
               "turns on one core (other load on the machine) and the ns/op "
               "is closer to the uncontended cost than to the contended one.")
    out.append("")
    if context:
        load_avg = context.get("load_avg")
        load_text = ""
        if load_avg:
            load_text = (", load average when it started "
                         + " / ".join(f"{x:.2f}" for x in load_avg))
        out.append(f"Google Benchmark context: {context.get('num_cpus', '?')} "
                   f"CPUs at {context.get('mhz_per_cpu', '?')} MHz"
                   + load_text + ".")
        out.append("")
    if errors:
        out.append("Errors:")
        out.append("")
        out.extend(f"- {e}" for e in errors)
        out.append("")
    print("\n".join(out))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
