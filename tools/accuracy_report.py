#!/usr/bin/python3
"""Writes the timer accuracy report (REPORT.md + SVG plots) from the raw data
of tests/accuracy/timer_accuracy (summary.json, fires.csv[.gz], wakeups.csv).

Why a separate script: the measurement is C++ and knows nothing about plots;
this only reads its files, so a report can be redrawn from committed data
without re-measuring. Every number in the report comes from those files; the
script holds no measured values, only the wording and the layout.

Needs Debian's python3-matplotlib (Agg backend, no network). Usage:

  /usr/bin/python3 tools/accuracy_report.py --data DIR/data --out DIR \
      [--command "tools/accuracy_report.sh"]

tools/accuracy_report.sh runs the whole thing (build, measure, report).
"""

import argparse
import csv
import gzip
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
import numpy as np  # noqa: E402

# Plot size and SVG output: text stays text (small files, selectable), no
# timestamps or random ids (a re-run with the same data gives the same file).
plt.rcParams.update({
    "svg.fonttype": "none",
    "svg.hashsalt": "timer-accuracy",
    "figure.figsize": (8.0, 4.2),
    "figure.dpi": 100,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "font.size": 9,
    "legend.fontsize": 8,
})
SVG_METADATA = {"Date": None, "Creator": None}
# At most this many points per line in a time plot; longer series are drawn
# as the per-bucket minimum, median and maximum instead.
MAX_LINE_POINTS = 1500
TIMER_COLOR = "tab:blue"
PAST_TICK_COLOR = "tab:green"
FLOOR_COLOR = "tab:orange"


# --- Reading the raw data ---------------------------------------------------

class Series:
    """The fires of one scenario from one source (timer or floor)."""

    def __init__(self, rows):
        def col(name, kind=float):
            return np.array([kind(r[name]) if r[name] != "" else np.nan
                             for r in rows])
        self.index = col("index", int)
        self.expected_us = col("expected_us")
        self.actual_us = col("actual_us")
        self.lateness_us = col("lateness_us")
        self.past_tick_us = col("past_tick_us")
        self.missed_before = col("missed_before", int)

    def __len__(self):
        return len(self.index)


def read_fires(data_dir):
    path = os.path.join(data_dir, "fires.csv")
    opener = open
    if not os.path.exists(path):
        path += ".gz"
        opener = gzip.open
    groups = {}
    with opener(path, "rt", newline="") as f:
        for row in csv.DictReader(f):
            groups.setdefault((row["scenario"], row["source"]), []).append(row)
    return {key: Series(rows) for key, rows in groups.items()}


def fires_of(fires, scenario, source):
    """The series, empty if the scenario recorded none (a failed run)."""
    return fires.get((scenario["id"], source)) or Series([])


def read_wakeups(data_dir):
    series = {}
    with open(os.path.join(data_dir, "wakeups.csv"), newline="") as f:
        for row in csv.DictReader(f):
            s = series.setdefault(row["scenario"],
                                  {"start": [], "length": [], "per_s": []})
            s["start"].append(float(row["start_s"]))
            s["length"].append(float(row["length_s"]))
            s["per_s"].append(float(row["per_s"]))
    return series


# --- Formatting ---------------------------------------------------------------

def us(value):
    """A duration in microseconds, to a sensible precision."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if abs(value) >= 10000:
        return f"{value / 1000:.1f} ms"
    if abs(value) >= 100:
        return f"{value:.0f} µs"
    return f"{value:.1f} µs"


def ms(value_us):
    """A period or tick (given in microseconds) in milliseconds."""
    return f"{value_us / 1000:g} ms"


def pct(value):
    """A share of one core, in percent; '-' if not measured."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.1f}%" if abs(value) >= 10 else f"{value:.2f}%"


def cpu_cells(s):
    """The summary table's CPU columns of one scenario (summary.json "cpu";
    data from before it was measured has none)."""
    cpu = s.get("cpu") or {}
    return [pct(cpu.get(key)) for key in
            ("tick_pct", "processors_pct", "process_pct", "floor_pct")] + [
                timer_over_floor(cpu)]


def timer_over_floor(cpu):
    """(tick + processors) / floor: the timer system's own threads against
    the bare thread that keeps the same schedule; '-' if not measured."""
    try:
        ratio = (cpu["tick_pct"] + cpu["processors_pct"]) / cpu["floor_pct"]
    except (KeyError, TypeError, ZeroDivisionError):
        return "-"
    return "-" if math.isnan(ratio) else f"{ratio:.1f}x"


CPU_HEADER = ["tick CPU", "processors CPU", "process CPU", "floor CPU",
              "timer / floor CPU"]


def cpu_sentence(summary):
    """What the CPU columns include, under the summary table."""
    names = summary["config"].get("cpu", {})
    threads = max((s["cpu"]["processor_threads"] for s in summary["scenarios"]
                   if s.get("cpu")), default=0)
    prefixes = ", ".join(f"`{p}*`" for p in names.get("processor_prefixes",
                                                       [])) or "-"
    whose = ("the scheduler's processors"
             if summary["config"]["dispatcher"] == "scheduler"
             else f"the {summary['config']['dispatcher']}'s workers")
    resolution = names.get("thread_resolution_s")
    duration = summary["config"]["duration_s"]
    precision = (f" Per-thread figures count whole {resolution * 1000:g} ms "
                 "clock ticks (/proc/self/task/*/stat), one tick being "
                 f"{100 * resolution / duration:.2g} points of a "
                 f"{duration:g} s scenario; process CPU counts microseconds."
                 if resolution and duration else "")
    return ("*tick CPU*, *processors CPU*, *process CPU*, *floor CPU*: user + "
            "system CPU time during the scenario as % of one core, of the "
            f"tick thread (`{names.get('tick_thread', '?')}`), of the "
            f"dispatcher's threads together ({whose}, {prefixes}, "
            f"{plural(threads, 'thread')}), of the whole process (getrusage: "
            "also the floor thread, the wake-up sampler and the tool's own "
            "thread) and of the floor thread alone, so process − floor is "
            "what the timer system and the tool cost; with the early "
            "hand-over a processor sleeps on its own timer until a call's "
            "instant (no spinning), and those timed wake-ups are in "
            "*processors CPU*. *timer / floor CPU* = (tick + processors) / "
            "floor: what the timer system's own threads spend against the "
            "bare thread keeping the same schedule (process CPU also holds "
            "the floor thread itself and the tool's threads, so it is not "
            "compared)." + precision)


def plural(n, word):
    return f"{n} {word}" + ("" if n == 1 else "s")


def signed_us(value):
    return ("+" if value >= 0 else "−") + us(abs(value))


def ratio(a, b):
    return f"{a / b:.2f}×" if b > 0 else "-"


def table(header, rows, align=None):
    align = align or ["---"] + ["---:"] * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def lateness_row(name, s):
    return [name, s["count"], us(s["p50_us"]), us(s["p90_us"]),
            us(s["p99_us"]), us(s["p999_us"]), us(s["max_us"]), s["early"]]


LATENESS_HEADER = ["", "samples", "p50", "p90", "p99", "p99.9", "max", "early"]


# --- Issue 24: precision and targets ---------------------------------------

def precision_of(s):
    """A oneshot's TimerOptions::precision; '-' for the other kinds (and for
    data from before the field existed, where every oneshot was kTick)."""
    if s.get("precision"):
        return s["precision"]
    return "kTick" if s["kind"] == "oneshot" and "precision" not in s else "-"


def target_figures(s):
    """(basis, p50 over floor in µs, p99 / floor p99) of a scenario: from
    summary.json "target", or for data from before it, past the tick."""
    t = s.get("target")
    if t is not None:
        return (t["basis"], t.get("p50_over_floor_us"),
                t.get("p99_over_floor_ratio"))
    if s["kind"] == "idle":
        return ("lateness", None, None)
    p, f = s["timer_past_tick"], s["floor"]
    return ("past_tick", p["p50_us"] - f["p50_us"],
            p["p99_us"] / f["p99_us"] if f["p99_us"] > 0 else None)


def target_cells(s):
    """The summary table's p50 over floor, p99 / floor p99 and target."""
    basis, p50_over, p99_ratio = target_figures(s)
    mark = " (past tick)" if basis == "past_tick" else ""
    t = s.get("target") or {}
    verdict = t.get("verdict", "-")
    cell = {"meets": "meets", "misses": "**misses**",
            "refused": "**refused**", "failed": "**failed**"}.get(verdict,
                                                                  verdict)
    if t.get("why"):
        cell += f" ({t['why']})"
    return [signed_us(p50_over) + mark if p50_over is not None else "-",
            f"{p99_ratio:.2f}×{mark}" if p99_ratio is not None else "-",
            cell]


TARGET_HEADER = ["p50 over floor", "p99 / floor p99", "target"]


def targets_section(summary):
    """The issue-24 targets and how the run did against them."""
    scenarios = [s for s in summary["scenarios"] if s.get("target")]
    if not scenarios:
        return []
    p50_us = summary.get("target_p50_over_floor_us", 10)
    p99 = summary.get("target_p99_over_floor_ratio", 1.2)
    md = ["## Targets (issue 24)", ""]
    md.append(
        "Against the floor of the same run: periodic timers of any period, "
        f"default settings: lateness p50 <= floor p50 + {p50_us:g} µs and "
        f"p99 <= {p99:g}× the floor's p99; oneshots with "
        f"`TimerPrecision::kExact`: lateness p50 <= floor p50 + {p50_us:g} "
        "µs. A periodic call is due at start + k·period and an exact oneshot "
        "at its deadline, so their lateness is compared as is (no tick "
        "rounding taken out). `kTick` oneshots wait for the tick after "
        "their deadline by design and have no target; the overrun and idle "
        "scenarios neither.")
    md.append("")
    by_verdict = {}
    for s in scenarios:
        by_verdict.setdefault(s["target"]["verdict"], []).append(s)
    judged = [s for s in scenarios if s["target"].get("rule")]
    meets = by_verdict.get("meets", [])
    md.append(f"- **{len(meets)} of {len(judged)}** scenarios with a target "
              "meet it" + (": " + ", ".join(s["id"] for s in meets)
                           if meets else "") + ".")
    for s in by_verdict.get("misses", []):
        md.append(f"- {s['id']} misses: {s['target']['why']}.")
    for verdict in ("refused", "failed"):
        for s in by_verdict.get(verdict, []):
            md.append(f"- {s['id']} {verdict}: {s['error'] or '(no error)'}"
                      + ("" if s["target"].get("rule") else
                         " (no target: not counted above)"))
    md.append("")
    return md


# --- Plots ------------------------------------------------------------------

# Set by --png: a directory for PNG copies of the plots (to look at them
# where no SVG viewer is at hand).
PNG_DIR = None


def save(fig, out_dir, name):
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, name), format="svg",
                metadata=SVG_METADATA)
    if PNG_DIR:
        fig.savefig(os.path.join(PNG_DIR, name[:-len(".svg")] + ".png"),
                    format="png", dpi=100)
    plt.close(fig)
    return name


def plot_lateness_histogram(scenario, timer, floor, out_dir):
    """Lateness distributions of timer (and past tick) vs floor, log-log."""
    series = [("timer", timer.lateness_us, TIMER_COLOR)]
    if served_on_tick(timer).any():  # deadlines were rounded up
        series.append(("timer past tick", timer.past_tick_us,
                       PAST_TICK_COLOR))
    series.append(("floor (clock_nanosleep)", floor.lateness_us, FLOOR_COLOR))
    series = [(label, v[~np.isnan(v)], color) for label, v, color in series]
    series = [(label, v, color) for label, v, color in series if len(v)]
    values = np.concatenate([v for _, v, _ in series] or [np.zeros(0)])
    positive = values[values > 0]
    lo = max(np.min(positive), 1.0) if len(positive) else 1.0
    hi = max(np.max(values, initial=0), lo * 10)
    bins = np.geomspace(lo / 1.05, hi * 1.05, 90)
    fig, ax = plt.subplots()
    for label, v, color in series:
        p50, p99 = np.percentile(v, [50, 99], method="inverted_cdf")
        ax.hist(np.clip(v, bins[0], None), bins=bins, histtype="step",
                linewidth=1.3, color=color,
                label=f"{label}: p50 {us(p50)}, p99 {us(p99)}, "
                      f"max {us(np.max(v))}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("lateness: actual − expected (µs, log scale)")
    ax.set_ylabel("calls / wake-ups (log scale)")
    ax.set_title(f"Lateness, {scenario['title']}")
    ax.legend(loc="upper right")
    return save(fig, out_dir, f"lateness_{scenario['id']}.svg")


def envelope(t, y, buckets):
    """Per time bucket: centre, min, median, max of y."""
    edges = np.linspace(t[0], t[-1], buckets + 1)
    which = np.clip(np.searchsorted(edges, t, side="right") - 1, 0,
                    buckets - 1)
    centre, lo, mid, hi = [], [], [], []
    for b in range(buckets):
        sel = y[which == b]
        if len(sel) == 0:
            continue
        centre.append((edges[b] + edges[b + 1]) / 2)
        lo.append(np.min(sel))
        mid.append(np.median(sel))
        hi.append(np.max(sel))
    return map(np.array, (centre, lo, mid, hi))


def with_gaps(index, t, y):
    """Inserts a break (NaN) where the schedule index jumps by more than its
    usual step, so that a line does not bridge skipped periods."""
    if len(index) < 2:
        return t, y
    step = np.median(np.diff(index))
    breaks = np.nonzero(np.diff(index) > step)[0] + 1
    return (np.insert(t.astype(float), breaks, np.nan),
            np.insert(y.astype(float), breaks, np.nan))


def draw_phase(ax, index, t, y, label, color):
    """One phase-error series: a line, or for long series the min–max band
    and median per time bucket (so the SVG stays small)."""
    if len(t) == 0:
        return
    y = np.maximum(y, 0.1)  # log axis; early calls are counted elsewhere
    if len(t) <= MAX_LINE_POINTS:
        gt, gy = with_gaps(index, t, y)
        ax.plot(gt, gy, color=color, linewidth=0.7, label=label)
        return
    centre, lo, mid, hi = envelope(t, y, MAX_LINE_POINTS // 2)
    ax.fill_between(centre, lo, hi, color=color, alpha=0.3, linewidth=0,
                    label=f"{label}: min–max per {t[-1] / len(centre):.2f} s")
    ax.plot(centre, mid, color=color, linewidth=0.8,
            label=f"{label}: median")


def plot_phase_error(scenario, timer, floor, out_dir):
    """Phase error (actual − origin − k·period) over the run."""
    overrun = scenario.get("overrun")
    rows = 2 if overrun and overrun["calls"] else 1
    fig, axes = plt.subplots(rows, 1, figsize=(8.0, 4.2 * rows),
                             squeeze=False)
    ax = axes[0][0]
    t = timer.expected_us / 1e6
    rounded = served_on_tick(timer)
    if rounded.any():  # calls due between ticks form a band of their own
        draw_phase(ax, timer.index[~rounded], t[~rounded],
                   timer.lateness_us[~rounded], "timer, due on a tick",
                   TIMER_COLOR)
        draw_phase(ax, timer.index[rounded], t[rounded],
                   timer.lateness_us[rounded],
                   "timer, due between ticks (served on the next)",
                   PAST_TICK_COLOR)
    else:
        draw_phase(ax, timer.index, t, timer.lateness_us, "timer",
                   TIMER_COLOR)
    draw_phase(ax, floor.index, floor.expected_us / 1e6, floor.lateness_us,
               "floor (half a period later)", FLOOR_COLOR)
    ax.set_yscale("log")
    ax.set_xlabel("expected time since the schedule's origin (s)")
    ax.set_ylabel("phase error (µs, log scale)")
    ax.set_title(f"Phase error over time, {scenario['title']}")
    if rows == 2:
        draw_overrun(axes[1][0], ax, scenario, timer, floor)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    return save(fig, out_dir, f"phase_{scenario['id']}.svg")


def draw_overrun(zoom, whole, scenario, timer, floor):
    """Marks the overrun on the whole-run plot and zooms in around it."""
    overrun = scenario["overrun"]
    period_s = scenario["period_us"] / 1e6
    blocked_s = overrun["planned_us"] / 1e6
    first = overrun["calls"][0]
    start = first["expected_s"] + first["lateness_us"] / 1e6
    whole.axvspan(start, start + blocked_s, color="tab:red", alpha=0.15,
                  label="callback blocked")
    zoom.axvspan(0, blocked_s * 1e3, color="tab:red", alpha=0.15,
                 label="callback blocked")
    late = overrun["calls"][1] if len(overrun["calls"]) > 1 else None
    if late is not None:
        whole.annotate(f"{late['missed_before']} periods skipped,\n"
                       f"late call {signed_us(late['lateness_us'])}",
                       xy=(late["expected_s"], max(late["lateness_us"], 0.1)),
                       xytext=(10, 10), textcoords="offset points",
                       fontsize=8, color="tab:red")
    lo_s = start - 8 * period_s
    hi_s = start + blocked_s + 8 * period_s
    for series, label, color, marker in (
            (timer, "timer call", TIMER_COLOR, "o"),
            (floor, "floor wake-up", FLOOR_COLOR, "s")):
        t = series.expected_us / 1e6
        sel = (t >= lo_s) & (t <= hi_s)
        zoom.plot((t[sel] - start) * 1e3,
                  np.maximum(series.lateness_us[sel], 0.1), linestyle="none",
                  marker=marker, markersize=3.5, color=color, label=label)
    # Periods the timer skipped: expected times with no call.
    called = set(timer.index.tolist())
    k0 = first["index"]
    skipped = [k for k in range(k0, k0 + int(blocked_s / period_s) + 2)
               if k not in called]
    if skipped:
        t_skip = [(first["expected_s"] + (k - k0) * period_s - start) * 1e3
                  for k in skipped]
        zoom.plot(t_skip, [1.0] * len(t_skip), linestyle="none", marker="x",
                  color="tab:red", label="skipped period (no call)")
    zoom.set_xlim((lo_s - start) * 1e3, (hi_s - start) * 1e3)
    zoom.set_yscale("log")
    zoom.set_xlabel("time since the overrunning call started (ms)")
    zoom.set_ylabel("phase error (µs, log scale)")
    zoom.set_title("Around the overrun")
    zoom.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=4)


def plot_wakeups(summary, wakeups, out_dir):
    """Tick-thread wake-ups per second: over time, and mean vs calls/s."""
    scenarios = [s for s in summary["scenarios"] if s["id"] in wakeups]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10.0, 4.4),
                                      gridspec_kw={"width_ratios": [3, 2]})
    tick_ms = summary["config"]["tick_us"] / 1000
    ticking = 1000 / tick_ms
    full = summary["config"]["wakeup_interval_s"] / 2
    left.axhline(ticking, color="gray", linestyle="--", linewidth=1.0,
                 zorder=1, label=f"a wheel ticking every {tick_ms:g} ms")
    # More scenarios than the default colour cycle has colours (10).
    colors = plt.cm.tab20(np.linspace(0, 1, 20))
    for n, s in enumerate(scenarios):
        w = wakeups[s["id"]]
        # Whole intervals only: the last, shorter one gives a noisy rate.
        keep = [i for i, length in enumerate(w["length"]) if length >= full]
        if not keep:
            continue
        x = [w["start"][i] for i in keep]
        y = [w["per_s"][i] for i in keep]
        x.append(w["start"][keep[-1]] + w["length"][keep[-1]])
        y.append(y[-1])
        left.step(x, y, where="post", linewidth=1.2, zorder=2, label=s["id"],
                  color=colors[n % len(colors)])
    left.set_yscale("symlog", linthresh=1.0)
    left.set_ylim(bottom=0)
    left.set_xlabel("time since the scenario started (s)")
    left.set_ylabel("tick-thread wake-ups per second (symlog)")
    left.set_title("Wake-ups per second, per sampling interval")
    left.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)

    names = [s["id"] for s in scenarios]
    woke = [s["wakeups"]["per_s"] for s in scenarios]
    calls = [calls_per_second(s) for s in scenarios]
    x = np.arange(len(names))
    right.bar(x - 0.2, woke, width=0.4, color=TIMER_COLOR,
              label="tick-thread wake-ups/s")
    right.bar(x + 0.2, calls, width=0.4, color=PAST_TICK_COLOR,
              label="timer calls/s")
    right.axhline(ticking, color="gray", linestyle="--", linewidth=1.0)
    right.set_yscale("symlog", linthresh=1.0)
    right.set_ylim(bottom=0)
    right.set_xticks(x)
    right.set_xticklabels(names, rotation=35, ha="right", fontsize=7)
    right.set_title("Mean over each scenario")
    right.legend(loc="upper right", fontsize=7)
    return save(fig, out_dir, "wakeups.svg")


# --- Numbers for the text ------------------------------------------------------

def calls_per_second(s):
    if s["kind"] == "idle" or s["elapsed_s"] <= 0:
        return 0.0
    return s["counters"]["fires"] / s["elapsed_s"]


def served_on_tick(timer):
    """Per call: due between ticks and served at or after the next tick (the
    wheel rounded it up). A call before that tick was not rounded (an exact
    call, issue 24), however far its deadline was from a tick."""
    r = timer.lateness_us - timer.past_tick_us
    return (r > 1.0) & (timer.past_tick_us >= 0)


def rounding_share(timer):
    """Fraction of calls whose deadline was rounded up to a later tick, and
    the mean rounding of those."""
    r = timer.lateness_us - timer.past_tick_us
    rounded = r[served_on_tick(timer)]
    share = len(rounded) / len(r) if len(r) else 0.0
    return share, (float(np.mean(rounded)) if len(rounded) else 0.0)


def load_range(summary):
    loads = [s[k]["one"] for s in summary["scenarios"]
             for k in ("load_before", "load_after") if s.get(k)]
    return (min(loads), max(loads)) if loads else None


def comparison_sentence(s):
    """Timer past its tick vs the floor, at p50 and p99."""
    t, f = s["timer_past_tick"], s["floor"]
    return (f"past its tick the timer's median is {us(t['p50_us'])} against "
            f"the floor's {us(f['p50_us'])} "
            f"({signed_us(t['p50_us'] - f['p50_us'])}), its p99 "
            f"{us(t['p99_us'])} against {us(f['p99_us'])} "
            f"({ratio(t['p99_us'], f['p99_us'])})")


def target_sentence(s):
    """The figures issue 24's target is about, and the verdict."""
    basis, p50_over, p99_ratio = target_figures(s)
    what = "past its tick" if basis == "past_tick" else "lateness"
    t, f = s["timer"], s["floor"]
    if basis == "past_tick":
        t = s["timer_past_tick"]
    out = (f"{what}: median {us(t['p50_us'])} against the floor's "
           f"{us(f['p50_us'])} ("
           + (signed_us(p50_over) if p50_over is not None else "-")
           + f"), p99 {us(t['p99_us'])} against {us(f['p99_us'])} ("
           + (f"{p99_ratio:.2f}×" if p99_ratio is not None else "-") + ")")
    target = s.get("target") or {}
    if target.get("rule"):
        out += (f"; target {target['rule'].replace('<=', '≤')}: "
                f"**{target['verdict']}**")
        if target.get("why"):
            out += f" ({target['why']})"
    return out[0].upper() + out[1:]


def cpu_phrase(s):
    """The scenario's CPU cost in a few words."""
    cpu = s.get("cpu")
    if not cpu:
        return "not measured"
    return (f"tick thread {pct(cpu.get('tick_pct'))}, processors "
            f"{pct(cpu.get('processors_pct'))}, process "
            f"{pct(cpu.get('process_pct'))} of a core (the floor thread "
            f"{pct(cpu.get('floor_pct'))})")


def drift_sentence(s):
    """Phase at the start vs the end of the run, from the window medians."""
    d, f = s["timer_drift"], s["floor"]
    if d is None:
        return "no calls recorded"
    change = d["tail_median_us"] - d["head_median_us"]
    basis = ("past the tick" if d["basis"] == "past_tick" else "")
    periods = d["last_index"] - d["first_index"]
    if abs(change) < f["p50_us"]:
        verdict = ("no accumulated drift: the phase moved less than the "
                   f"floor's median wake-up latency ({us(f['p50_us'])})")
    else:
        verdict = ("the phase moved by more than the floor's median wake-up "
                   f"latency ({us(f['p50_us'])}): look at the plot")
    return (f"median phase error {basis} of the first "
            f"{d['window_calls']} calls {us(d['head_median_us'])}, of the "
            f"last {d['window_calls']} {us(d['tail_median_us'])}, "
            f"{periods} periods ({d['span_s']:.1f} s) later "
            f"({signed_us(change)}); {verdict}. A loop that slept one period "
            "from each wake-up instead of to origin + k·period would have "
            "fallen behind by at least its wake-up latency every period: "
            f"{periods} × the floor's median {us(f['p50_us'])} = "
            f"{us(periods * f['p50_us'])} by then")


def skipped_sentence(s):
    """Why the p99 of a timer that skipped periods is not comparable."""
    missed = s["counters"]["missed_periods"]
    if missed == 0 or s.get("overrun"):
        return None
    return (f"- The timer skipped {plural(missed, 'period')} "
            f"({s['counters']['overruns']} late runs): after a stall of the "
            "machine kSkip makes one late call and resumes the phase, while "
            "the floor sleeps to every deadline and wakes late for each one "
            "a stall covers. The floor's upper percentiles count a stall "
            "many times, the timer's once, so their p99 ratio understates "
            "the timer's tail here; the medians and the phase plot compare "
            "fairly.")


# What each overrun policy promises (timer/timer_options.h), to set next to
# what was measured.
POLICY_CONTRACT = {
    "kSkip": "one late call for the latest missed period as soon as the "
             "wheel can make it, the other missed periods skipped and "
             "counted, then back on the original phase; never two calls "
             "closer than half a period",
    "kBurst": "back-to-back calls for the missed periods (at most max_burst, "
              "older ones skipped and counted), then back on phase",
}


def overrun_sentences(s, timer):
    o = s["overrun"]
    calls = o["calls"]
    policy = s["overrun_policy"]
    out = []
    if policy in POLICY_CONTRACT:
        out.append(f"Contract of {policy}: {POLICY_CONTRACT[policy]}.")
    if not calls:
        return out + ["The overrunning call was not recorded (see the "
                      "error)."]
    first = calls[0]
    out.append(
        f"Call {first['index']} (due {first['expected_s']:.3f} s after the "
        f"origin, started {signed_us(first['lateness_us'])} late) blocked "
        f"for {ms(o['planned_us'])}, "
        f"{o['planned_us'] / s['period_us']:g} periods.")
    if len(calls) > 1:
        late = calls[1]
        blocked_end_us = (first["expected_s"] * 1e6 + first["lateness_us"] +
                          o["planned_us"])
        late_start_us = late["expected_s"] * 1e6 + late["lateness_us"]
        out.append(
            f"Measured: the next call was for period {late['index']} "
            f"({plural(late['missed_before'], 'period')} skipped in between;"
            f" {s['counters']['missed_periods']} in the whole run), due "
            f"{late['expected_s']:.3f} s, and started "
            f"{signed_us(late['lateness_us'])} after that, "
            f"{us(late_start_us - blocked_end_us)} after the blocked call's "
            f"{ms(o['planned_us'])} were up.")
    if len(calls) > 2:
        after = calls[2:]
        before = timer.lateness_us[timer.index < first["index"]]
        if len(before) == 0:
            return out
        p90_before = float(np.percentile(before, 90, method="inverted_cdf"))
        on_phase = all(c["lateness_us"] <= p90_before for c in after)
        out.append(
            f"The following calls ({', '.join(str(c['index']) for c in after)})"
            f" were {', '.join(us(c['lateness_us']) for c in after)} late, "
            f"against a median of {us(float(np.median(before)))} and a p90 of "
            f"{us(p90_before)} before the overrun: "
            + ("back on the original phase at once." if on_phase else
               "not all within the earlier p90; see the plot.")
            + f" The timer counted {plural(s['counters']['overruns'], 'overrun')}.")
    return out


# --- The report -----------------------------------------------------------

def write_report(summary, fires, wakeups, data_dir, out_dir, command):
    cfg, machine = summary["config"], summary["machine"]
    data_link = os.path.relpath(data_dir, out_dir)
    data_files = ", ".join(f"`{name}`" for name in sorted(os.listdir(data_dir)))
    by_kind = {}
    for s in summary["scenarios"]:
        kind = "overrun" if s.get("overrun") else s["kind"]
        by_kind.setdefault(kind, []).append(s)
    md = ["# Timer accuracy on the real clock", ""]
    md.append(
        f"Generated by `{command}` on {summary['date_utc']} "
        f"(run time {summary['elapsed_s']:.0f} s). Raw data in "
        f"[`{data_link}/`]({data_link}/) ({data_files}: every call and floor "
        "wake-up, the wake-up samples, the summary). Every number below is "
        "computed from them by `tools/accuracy_report.py`.")
    md.append("")
    if not summary["complete"] or summary["timer_early_calls"]:
        md.append(f"**Run not clean:** complete = {summary['complete']}, "
                  f"early timer calls = {summary['timer_early_calls']}; "
                  "errors are listed per scenario below.")
        md.append("")

    md += ["## Machine and method", ""]
    loads = load_range(summary)
    rows = [
        ["CPU", f"{machine['cpu_model']}, {machine['online_cpus']} CPUs online"],
        ["kernel", machine["kernel"]],
        ["clocksource", machine["clocksource"]],
        ["timer slack of the process", us(machine["timer_slack_us"])],
        ["load average (1 min) around the scenarios",
         f"{loads[0]:.2f} – {loads[1]:.2f}" if loads else "-"],
        ["tick", ms(cfg["tick_us"])],
        ["callbacks run on", f"{cfg['dispatcher']} "
         f"({cfg['dispatcher_threads']} threads)"],
        ["periodic and idle scenarios", f"{cfg['duration_s']:g} s each"],
        ["oneshot scenarios", f"{cfg['oneshots']} timers each at random "
         "delays" + (f", {cfg['short_oneshots']} each at a short fixed delay"
                     if "short_oneshots" in cfg else "")],
        ["floor", cfg["floor"]],
        ["tool command line", f"`{summary['command_line']}`"],
    ]
    md += [table(["", ""], rows, ["---", "---"]), ""]
    md += [
        "- **lateness** = when the callback started − its expected time "
        "(what the call waits for after its instant: with the early "
        "hand-over, the tick thread processes the event up to "
        "`timer_handoff_lead` before it and a processor sleeping on its own "
        "timer begins the call, so this is mostly that processor's wake-up; "
        "without it, the tick thread's wake-up plus the hand-off). "
        "Percentiles are exact (nearest rank over every call).",
        "- **past tick** = when it started − the wheel tick its deadline "
        "rounds up to. Deadlines that are not on a tick wait for the next "
        "one by design (never early); past tick removes that rounding and is "
        "the figure to hold against the floor.",
        "- **floor** = a bare thread sleeping with `clock_nanosleep` to the "
        "same deadlines during the same seconds: the best this machine did.",
        "- **early** = calls before their expected time: must be 0.",
        "- **precision** = a oneshot's `TimerOptions::precision`: `kTick` "
        "(the default) serves it on the first tick at or after its "
        "deadline, `kExact` at the deadline. Periodic timers have no "
        "choice: call k is due at start + k·period (\"-\" in the tables).",
        "- **refused** = the timer system refused the scenario's timer "
        "(`Schedule()` returned the error shown): nothing was measured.",
    ]
    if loads and loads[1] > 0.5 * machine["online_cpus"]:
        md.append(
            f"- The machine was shared (load up to {loads[1]:.2f} on "
            f"{machine['online_cpus']} CPUs): maxima and p99.9 can come from "
            "other processes. Compare timer and floor within a row.")
    md.append("")

    md += ["## Summary", ""]
    with_cpu = any(s.get("cpu") for s in summary["scenarios"])
    rows = []
    for s in summary["scenarios"]:
        if s["kind"] == "idle":
            if s.get("cpu"):  # no lateness, but the CPU of doing nothing
                rows.append([f"{s['id']} ({s['title']})"] + ["-"] * 12 +
                            [target_cells(s)[2],
                             f"{s['wakeups']['per_s']:.1f}"] + cpu_cells(s))
            continue
        t, p, f = s["timer"], s["timer_past_tick"], s["floor"]
        if s.get("refused"):
            rows.append([s["title"], precision_of(s)] + ["-"] * 9 +
                        target_cells(s) + ["-"] +
                        (["-"] * len(CPU_HEADER) if with_cpu else []))
            continue
        rows.append([s["title"], precision_of(s), us(t["p50_us"]),
                     us(t["p99_us"]), us(t["max_us"]),
                     us(p["p50_us"]) if p["count"] else "-",
                     us(p["p99_us"]) if p["count"] else "-",
                     us(f["p50_us"]), us(f["p99_us"]), t["early"],
                     s["counters"]["missed_periods"]] + target_cells(s) +
                    [f"{s['wakeups']['per_s']:.1f}"] +
                    (cpu_cells(s) if with_cpu else []))
    md.append(table(["scenario", "precision", "timer p50", "timer p99",
                     "timer max", "past tick p50", "past tick p99",
                     "floor p50", "floor p99", "early", "skipped"] +
                    TARGET_HEADER + ["wake-ups/s"] +
                    (CPU_HEADER if with_cpu else []), rows,
                    ["---", "---"] + ["---:"] * 11 + ["---"] + ["---:"] *
                    (1 + (len(CPU_HEADER) if with_cpu else 0))))
    md.append("")
    md.append("*skipped*: periods the timer skipped (its overrun policy); "
              "*p50 over floor*: timer p50 − floor p50; *p99 / floor p99*: "
              "timer p99 / floor p99; both on lateness, or past the tick "
              "where marked (`kTick` oneshots, whose rounding up to the tick "
              "is by design); *target*: the verdict against issue 24's "
              "target (next section); *wake-ups/s*: of the tick thread.")
    md.append("")
    if with_cpu:
        md += [cpu_sentence(summary), ""]
    for s in by_kind.get("idle", []):
        md.append(f"Idle: {plural(s['wakeups']['total'], 'tick-thread wake-up')}"
                  f" in {s['wakeups']['seconds']:.1f} s with no timer armed.")
        md.append("")
    md += targets_section(summary)

    if by_kind.get("oneshot"):
        md += ["## Oneshot timers", ""]
        md.append(
            "Each scenario launches its timers at random gaps of 1–7 ms (not "
            "aligned to the tick), once with `kTick` and once with `kExact` "
            "on the same plan. At random delays about a dozen are in flight; "
            "at a short fixed delay (1 ms is below a tick, 3 and 5 ms fall "
            "between ticks) about one.")
        md.append("")
        rows = []
        for s in by_kind["oneshot"]:
            if s.get("refused"):
                continue
            rows.append(lateness_row(f"timer {s['id']}", s["timer"]))
            if precision_of(s) == "kTick" and s["timer_past_tick"]["count"]:
                rows.append(lateness_row(f"timer {s['id']} past tick",
                                         s["timer_past_tick"]))
            rows.append(lateness_row(f"floor {s['id']}", s["floor"]))
        if rows:
            md += [table(LATENESS_HEADER, rows), ""]
        for s in by_kind["oneshot"]:
            md += [f"### {s['title']}", ""]
            if s.get("refused"):
                md += [f"- **Refused** by the timer system: {s['error']}", ""]
                continue
            t = s["timer"]
            timer, floor = fires_of(fires, s, "timer"), fires_of(fires, s, "floor")
            share, mean_round = rounding_share(timer)
            if precision_of(s) == "kTick":
                md.append(
                    f"- A oneshot's deadline (Schedule() + delay) lands "
                    f"anywhere in a tick and is served on the next one: "
                    f"{share:.0%} of them were rounded, by {us(mean_round)} "
                    f"on average (half a tick is {ms(cfg['tick_us'] / 2)}); "
                    "that rounding is most of the timer's lateness (mean "
                    f"{us(t['mean_us'])}).")
                md.append(f"- {comparison_sentence(s).capitalize()}.")
            else:
                if share > 0.05:
                    md.append(
                        f"- `kExact` was asked for, yet {share:.0%} of the "
                        "calls were served on the tick after their deadline "
                        f"(by {us(mean_round)} on average): exact oneshots "
                        "are not served at their deadline by this build.")
                else:
                    md.append(
                        f"- Served at the deadline, not on the tick: "
                        f"{1 - share:.0%} of the calls ran before the tick "
                        "their deadline would round up to (or had a deadline "
                        "on a tick).")
                md.append(f"- {target_sentence(s)}.")
            md.append(f"- Wake-ups: {s['wakeups']['per_s']:.1f}/s for "
                      f"{calls_per_second(s):.1f} calls/s (timers due on the "
                      "same tick share a wake-up; an arm earlier than the "
                      "planned wake adds one); CPU: "
                      f"{cpu_phrase(s)}.")
            md.append(error_line(s))
            if len(timer):
                md += ["", f"![lateness histogram, {s['id']}]"
                       f"({plot_lateness_histogram(s, timer, floor, out_dir)})"]
            md.append("")

    if by_kind.get("periodic"):
        md += ["## Periodic timers", ""]
        rows = []
        for s in by_kind["periodic"]:
            if s.get("refused"):
                continue
            rows.append(lateness_row(f"timer {s['id']}", s["timer"]))
            if s["timer_past_tick"]["p50_us"] != s["timer"]["p50_us"]:
                rows.append(lateness_row(f"timer {s['id']} past tick",
                                         s["timer_past_tick"]))
            rows.append(lateness_row(f"floor {s['id']}", s["floor"]))
        md += [table(LATENESS_HEADER, rows), ""]
        for s in by_kind["periodic"]:
            timer, floor = fires_of(fires, s, "timer"), fires_of(fires, s, "floor")
            md += [f"### {s['title']}", ""]
            if s.get("refused"):
                md += [f"- **Refused** by the timer system: {s['error']}", ""]
                continue
            share, mean_round = rounding_share(timer)
            if share > 0:
                md.append(
                    f"- {ms(s['period_us'])} is not a whole number of "
                    f"{ms(cfg['tick_us'])} ticks: {share:.0%} of the calls "
                    f"were due between ticks and waited {us(mean_round)} on "
                    "average for the next one (the schedule itself stays "
                    "origin + k·period, so this does not accumulate).")
            md.append(f"- {target_sentence(s)}.")
            if share > 0:
                md.append(f"- {comparison_sentence(s).capitalize()}.")
            md.append(f"- Max {us(s['timer']['max_us'])} against the "
                      f"floor's {us(s['floor']['max_us'])}; CPU: "
                      f"{cpu_phrase(s)}.")
            md.append(f"- Drift: {drift_sentence(s)}.")
            md.append(skipped_sentence(s))
            md.append(f"- {s['timer']['count']} calls recorded of "
                      f"{s['planned_calls']} planned; periods skipped: "
                      f"{s['counters']['missed_periods']}, overruns: "
                      f"{s['counters']['overruns']}; wake-ups "
                      f"{s['wakeups']['per_s']:.1f}/s.")
            md.append(error_line(s))
            if len(timer):
                md += ["",
                       f"![lateness histogram, {s['id']}]"
                       f"({plot_lateness_histogram(s, timer, floor, out_dir)})",
                       "",
                       f"![phase error, {s['id']}]"
                       f"({plot_phase_error(s, timer, floor, out_dir)})"]
            md.append("")

    for s in by_kind.get("overrun", []):
        timer, floor = fires_of(fires, s, "timer"), fires_of(fires, s, "floor")
        md += [f"## Overrun: {s['title']}", ""]
        md.append(table(LATENESS_HEADER, [
            lateness_row("timer", s["timer"]),
            lateness_row("floor (no overrun)", s["floor"])]))
        md.append("")
        md += [f"- {line}" for line in overrun_sentences(s, timer)]
        md.append(f"- Drift across the whole run: {drift_sentence(s)}.")
        md.append("- The blocked call sleeps (clock_nanosleep) rather than "
                  "spinning, so it takes no CPU from the floor thread; the "
                  "floor does not overrun.")
        md.append(error_line(s))
        md += ["",
               f"![phase error, {s['id']}]"
               f"({plot_phase_error(s, timer, floor, out_dir)})",
               "",
               f"![lateness histogram, {s['id']}]"
               f"({plot_lateness_histogram(s, timer, floor, out_dir)})", ""]

    md += ["## Tick-thread wake-ups per second", ""]
    rows = []
    for s in summary["scenarios"]:
        calls = calls_per_second(s)
        per_call = (f"{s['wakeups']['per_s'] / calls:.2f}" if calls > 0
                    else "-")
        rows.append([s["id"], s["wakeups"]["total"],
                     f"{s['wakeups']['seconds']:.1f}",
                     f"{s['wakeups']['per_s']:.2f}", f"{calls:.1f}", per_call])
    md += [table(["scenario", "wake-ups", "seconds", "wake-ups/s", "calls/s",
                  "wake-ups per call"], rows), ""]
    ticking = 1e6 / cfg["tick_us"]
    md.append(f"- The tick thread is tickless: a wheel that ticked every "
              f"{ms(cfg['tick_us'])} would wake {ticking:.0f} times a second "
              "in every row.")
    for s in by_kind.get("idle", []):
        line = (f"- Idle: {plural(s['wakeups']['total'], 'wake-up')} in "
                f"{s['wakeups']['seconds']:.1f} s "
                f"({s['wakeups']['per_s']:.2f}/s)")
        planned = s.get("planned_wake_at_start_s")
        if planned is not None:
            line += (f"; at the start the tick thread still planned one "
                     f"wake-up {planned * 1000:.1f} ms later, the deadline "
                     "of the previous scenario's timer (cancelling a timer "
                     "does not re-plan the sleep), after which nothing "
                     "is armed and it blocks")
        md.append(line + ".")
        md.append(error_line(s))
    md += ["", f"![wake-ups per second]"
           f"({plot_wakeups(summary, wakeups, out_dir)})", ""]

    text = "\n".join(line for line in md if line is not None) + "\n"
    with open(os.path.join(out_dir, "REPORT.md"), "w") as f:
        f.write(text)


def error_line(s):
    return f"- **Error:** {s['error']}" if s["error"] else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True,
                        help="directory with summary.json, fires.csv[.gz], "
                             "wakeups.csv")
    parser.add_argument("--out", required=True,
                        help="directory for REPORT.md and the SVG files")
    parser.add_argument("--command", default="tools/accuracy_report.sh",
                        help="the command to name in the report")
    parser.add_argument("--png", metavar="DIR",
                        help="also write PNG copies of the plots into DIR")
    args = parser.parse_args()
    global PNG_DIR
    PNG_DIR = args.png
    if PNG_DIR:
        os.makedirs(PNG_DIR, exist_ok=True)
    with open(os.path.join(args.data, "summary.json")) as f:
        summary = json.load(f)
    fires = read_fires(args.data)
    wakeups = read_wakeups(args.data)
    os.makedirs(args.out, exist_ok=True)
    write_report(summary, fires, wakeups, args.data, args.out, args.command)
    print(f"accuracy_report: wrote {os.path.join(args.out, 'REPORT.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
