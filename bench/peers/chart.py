"""The runner's chart: the speed ratio of every row that has one.

Usage: chart.py ROWS_JSON OUT.svg (or OUT.png)

ROWS_JSON is what bench/runner writes next to its report:

    {"title": "...", "rows": [{"suite": "...", "name": "...", "ratio": 1.5}, ...]}

where ratio is lakelog's rate over the peer's (above 1: lakelog faster). The
chart is one horizontal bar per row on a log-scale axis, from the 1x line
to the ratio, rows
grouped under their suite's name in the report's order. Text stays text in
the SVG (svg.fonttype none), so the labels can be searched.
"""

import json
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.fonttype"] = "none"
matplotlib.rcParams["svg.hashsalt"] = "lakelog"  # stable ids: reruns diff cleanly

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

WRAP = 62


def short(name):
    """The row's name on at most two lines of WRAP characters: the ends of
    names tell rows apart (which engine wrote the table, which read path),
    so they are wrapped, and only a third line's worth is cut."""
    lines = textwrap.wrap(name, WRAP)
    if len(lines) > 2:
        lines = [lines[0], textwrap.shorten(" ".join(lines[1:]), WRAP, placeholder="…")]
    return "\n".join(lines)


def main(argv):
    if len(argv) != 3:
        print("usage: chart.py ROWS_JSON OUT.svg", file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        doc = json.load(f)
    rows = [r for r in doc.get("rows", []) if r.get("ratio", 0) > 0]
    if not rows:
        print(f"chart.py: {argv[1]}: no row has a speed ratio", file=sys.stderr)
        return 1
    # Top to bottom: a suite heading line, then its rows.
    labels, ratios, heads = [], [], []
    suite = None
    for r in rows:
        if r["suite"] != suite:
            suite = r["suite"]
            heads.append(len(labels))
            labels.append(suite)
            ratios.append(None)
        labels.append(short(r["name"]))
        ratios.append(r["ratio"])
    n = len(labels)
    fig, ax = plt.subplots(figsize=(11, 0.3 * n + 1.4))
    ys = list(range(n))
    for y, ratio in zip(ys, ratios):
        if ratio is None:
            continue
        colour = "#2a7ab0" if ratio >= 1 else "#d0632b"
        ax.barh(y, ratio - 1, left=1, color=colour, height=0.7)  # from the 1× line
        if ratio >= 1:
            ax.text(ratio * 1.04, y, f"{ratio:.2f}×", va="center", fontsize=7)
        else:
            ax.text(ratio / 1.04, y, f"{ratio:.2f}×", va="center", ha="right", fontsize=7)
    ax.set_xscale("log")
    lo = min(r for r in ratios if r is not None)
    hi = max(r for r in ratios if r is not None)
    ax.set_xlim(min(lo, 1) / 2, max(hi, 1) * 3)
    ax.axvline(1, color="black", linewidth=1)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}×"))
    ax.text(1, -1.2, "1× (same speed)", ha="center", fontsize=8)
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=7)
    for i in heads:
        t = ax.get_yticklabels()[i]
        t.set_fontweight("bold")
        t.set_fontsize(8)
    ax.set_ylim(n - 0.5, -1.6)
    ax.set_xlabel("speed ratio: lakelog rate ÷ peer rate (log scale; right of 1×: lakelog faster)")
    ax.set_title(doc.get("title", "lakelog vs delta-rs"), fontsize=10)
    ax.grid(axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(argv[2])  # the format from the name: .svg (the runner), .png
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
