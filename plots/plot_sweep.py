#!/usr/bin/python3
"""Plots a kvbench sweep CSV: latency, speedup of the cache and KV memory against context length.

Usage: plots/plot_sweep.py results/default-sweep.csv [-o plots/default-sweep.png]
Needs Debian's python3-matplotlib (apt-get install python3-matplotlib); run it with /usr/bin/python3.
One line per grouping (MHA, GQA-g, MQA) and batch size; the C++ tool never calls this script.
"""
import argparse
import collections
import csv
import pathlib

import matplotlib

matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def series(rows, path, y_of):
    """{(grouping, batch, dim, layers): [(seq, y), ...]} for one decode path."""
    lines = collections.defaultdict(list)
    for r in rows:
        if r["path"] != path:
            continue
        y = y_of(r)
        if y is None:
            continue
        key = (r["grouping"], int(r["batch"]), int(r["dim"]), int(r["layers"]))
        lines[key].append((int(r["seq"]), y))
    return {k: sorted(v) for k, v in sorted(lines.items())}


def label(key):
    grouping, batch, dim, layers = key
    return f"{grouping} B={batch} D={dim} L={layers}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", type=pathlib.Path)
    parser.add_argument("-o", "--output", type=pathlib.Path, help="PNG to write (default: beside the CSV in plots/)")
    args = parser.parse_args()
    rows = read_rows(args.csv)
    output = args.output or pathlib.Path(__file__).parent / (args.csv.stem + ".png")

    fig, axes = plt.subplots(1, 3, figsize=(17, 5))
    ax = axes[0]
    for path, style in (("cached", "-o"), ("uncached", "--s")):
        for key, points in series(rows, path, lambda r: float(r["latency_us_median"]) / 1000).items():
            ax.plot(*zip(*points), style, label=f"{path} {label(key)}")
    ax.set(xscale="log", yscale="log", xlabel="context N", ylabel="median step latency (ms)",
           title="Latency of one decode step")
    ax.legend(fontsize=7)

    ax = axes[1]
    for key, points in series(rows, "cached", lambda r: float(r["speedup"]) if r["speedup"] else None).items():
        ax.plot(*zip(*points), "-o", label=label(key))
    ax.set(xscale="log", yscale="log", xlabel="context N", ylabel="uncached / cached latency",
           title="What the KV cache saves")
    ax.legend(fontsize=7)

    ax = axes[2]
    kv = series(rows, "cached", lambda r: int(r["kv_bytes"]) / 2**20) or series(
        rows, "uncached", lambda r: int(r["kv_bytes"]) / 2**20)
    for key, points in kv.items():
        ax.plot(*zip(*points), "-o", label=label(key))
    ax.set(xscale="log", yscale="log", xlabel="context N", ylabel="KV cache (MiB)",
           title="What the KV cache costs")
    ax.legend(fontsize=7)

    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.grid(True, which="major", alpha=0.3)

    first = rows[0]
    fig.suptitle(f"kvbench {first['tool_version']} ({first['git_commit']}) on {first['cpu_model']}, "
                 f"{first['threads']} threads, {first['cache_state']} cache", fontsize=10)
    fig.tight_layout()
    fig.savefig(output, dpi=110)
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
