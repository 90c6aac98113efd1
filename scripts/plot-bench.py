#!/usr/bin/env python3
"""Draws the plots of `herdr-bench wan` from the results it wrote (.build/bench/wan.json).

    python3 scripts/plot-bench.py [RESULTS.json] [OUTPUT_DIRECTORY]

Writes OUTPUT_DIRECTORY/wan-keystrokes.png (the keystroke echo's distribution per road beside
ssh and mosh, one panel per round trip and loss) and wan-recovery.png (when output reached the
device's screen around a silent path death and a network change, per program). make bench runs
it; docs/benchmarks.md embeds what it drew.
"""

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: files only
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

# One look per program, the same in every plot: ours in colour, the anchors in greys.
STYLE = {
    "ssh-road": ("herdr-remote, SSH road", "tab:blue", "-"),
    "relay-road": ("herdr-remote, relay road", "tab:orange", "-"),
    "home-road": ("herdr-remote, home road", "tab:green", "-"),
    "ssh": ("ssh -tt", "black", "--"),
    "mosh": ("mosh (server echo)", "dimgray", ":"),
    "mosh-predicted": ("mosh (prediction display)", "silver", ":"),
}
ORDER = list(STYLE)


def cells(entries):
    seen = []
    for entry in entries:
        cell = (entry["rtt"], entry["loss"])
        if cell not in seen:
            seen.append(cell)
    return seen


def keystrokes(results, output):
    entries = results["keystrokes"]
    if not entries:
        return None
    rtts = sorted({e["rtt"] for e in entries})
    losses = sorted({e["loss"] for e in entries})
    figure, axes = plt.subplots(
        len(rtts), len(losses), figsize=(4.2 * len(losses), 3.4 * len(rtts)), squeeze=False
    )
    for row, rtt in enumerate(rtts):
        for column, loss in enumerate(losses):
            axis = axes[row][column]
            here = [e for e in entries if e["rtt"] == rtt and e["loss"] == loss]
            # mosh's prediction display shows a key at once (0.2 ms): it would squash the axis,
            # and its tail is the server echo's; the table gives it.
            shown = [e for e in here if e["program"] != "mosh-predicted"]
            if not shown:
                axis.set_visible(False)
                continue
            highest = max(sorted(e["seconds"])[int(0.99 * (len(e["seconds"]) - 1))] for e in shown)
            lowest = min(min(e["seconds"]) for e in shown)
            for entry in sorted(shown, key=lambda e: ORDER.index(e["program"])):
                label, colour, line = STYLE[entry["program"]]
                values = sorted(s * 1000 for s in entry["seconds"])
                fractions = [(i + 1) / len(values) for i in range(len(values))]
                axis.step(values, fractions, where="post", color=colour, linestyle=line, label=label, linewidth=1.6)
            if highest > 2 * lowest:
                # Logarithmic: the bulk near one round trip and the retransmitted tail both show.
                axis.set_xscale("log")
                ticks = [t for t in (50, 60, 80, 100, 150, 200, 300, 500, 700, 1000, 2000)
                         if lowest * 1000 * 0.98 <= t <= highest * 1000 * 1.1]
                axis.xaxis.set_major_locator(matplotlib.ticker.FixedLocator(ticks))
                axis.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}"))
                axis.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
            axis.set_xlim(lowest * 1000 * 0.98, highest * 1000 * 1.1)
            axis.set_ylim(0, 1.01)
            axis.set_title(f"RTT {rtt:.0f} ms, loss {loss:.0f} %", fontsize=10)
            axis.set_xlabel("keystroke → echo on screen (ms)")
            if column == 0:
                axis.set_ylabel("fraction of keystrokes")
            axis.grid(True, alpha=0.3)
    handles, labels = next(a for a in axes.flat if a.get_visible()).get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    figure.suptitle("Keystroke echo through the link emulator (CDF up to each panel's p99; with loss, a log scale)", fontsize=12)
    figure.tight_layout(rect=(0, 0.06, 1, 0.96))
    path = output / "wan-keystrokes.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


KINDS = [
    ("owed", "path dies silently, a key waiting", 2.0),
    ("idle", "path dies silently, idle", 15.0),
    ("change", "wifi down, cellular up", None),
]


def recovery(results, output, limit):
    entries = results["recoveries"]
    if not entries:
        return None
    # Each round trip with its least loss: the clearest view of each program's own behaviour.
    rows = []
    for rtt in sorted({e["rtt"] for e in entries}):
        rows.append((rtt, min(e["loss"] for e in entries if e["rtt"] == rtt)))
    programs = [p for p in ORDER if any(e["program"] == p for e in entries)]
    recovered = [e["seconds"] for e in entries if e.get("seconds") is not None]
    # Up to a little past the slowest recovery: what follows is the session going on.
    right = min(limit, max(max(recovered, default=limit) + 2.5, 16))
    figure, axes = plt.subplots(
        len(rows), len(KINDS), figsize=(5.2 * len(KINDS), (0.5 * len(programs) + 1.3) * len(rows) + 0.8),
        squeeze=False)
    for (rtt, loss), line in zip(rows, axes):
        here = [e for e in entries if e["rtt"] == rtt and e["loss"] == loss]
        for axis, (kind, title, goal) in zip(line, KINDS):
            if kind == "change":
                goal = rtt / 1000 + 0.3
            for row, program in enumerate(programs):
                _, colour, _ = STYLE[program]
                entry = next((e for e in here if e["program"] == program and e["kind"] == kind), None)
                y = len(programs) - 1 - row
                if entry is None:
                    continue
                arrivals = [t for t in entry["arrivals"] if t <= right]
                axis.scatter(arrivals, [y] * len(arrivals), marker="|", s=60, color=colour, linewidths=0.8)
                # Swift's JSONEncoder leaves out what is nil: no next output within the limit.
                seconds = entry.get("seconds")
                if seconds is None:
                    axis.text(right * 0.98, y, f"nothing in {limit:g} s", ha="right", va="center", fontsize=8,
                              color=colour)
                else:
                    axis.scatter([seconds], [y], marker="v", s=50, color=colour, zorder=3)
                    axis.text(seconds, y + 0.3, f"{seconds:.2f} s", ha="left", fontsize=8, color=colour)
            axis.axvline(0, color="red", linewidth=1)
            axis.axvline(goal, color="red", linewidth=1, linestyle="--")
            axis.text(goal, len(programs) - 0.45, f" goal {goal:g} s", color="red", fontsize=8, va="bottom")
            axis.set_yticks(range(len(programs)))
            axis.set_yticklabels([STYLE[p][0] for p in reversed(programs)], fontsize=8)
            axis.set_ylim(-0.6, len(programs) - 0.1)
            axis.set_xlim(-1, right)
            axis.set_xlabel("s after the event (| an output read, ▼ the next output)", fontsize=8)
            axis.set_title(f"{title} (RTT {rtt:.0f} ms, loss {loss:.0f} %)", fontsize=9)
            axis.grid(True, axis="x", alpha=0.3)
    figure.suptitle("Recovery timelines: output on the device's screen around the event (a line every 0.1 s)",
                    fontsize=12)
    figure.tight_layout(rect=(0, 0, 1, 0.96))
    path = output / "wan-recovery.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def main():
    source = Path(sys.argv[1] if len(sys.argv) > 1 else ".build/bench/wan.json")
    output = Path(sys.argv[2] if len(sys.argv) > 2 else "docs")
    results = json.loads(source.read_text())
    output.mkdir(parents=True, exist_ok=True)
    limit = results.get("limit", 30.0)
    for path in (keystrokes(results, output), recovery(results, output, limit)):
        if path:
            print(f"wrote {path}")


if __name__ == "__main__":
    main()
