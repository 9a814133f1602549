#!/usr/bin/env python3
"""Draws the figure of a `kvbench reload -f csv` file: recompute or reload.

One file, named <csv stem>-reload.<format>: time against prefix length P, log-log, one colour
per model. The measured prefill (recomputing the prefix) is a solid line; the predicted reload
from the tier is dashed, one marker per KV element type. Where a model's dashed line falls below
its solid one, reloading is faster; the crossing is the break-even P.

Needs only Python 3 and Debian's python3-matplotlib; run it as plots/reload_plot.py or with
/usr/bin/python3. Exit status: 0 done, 1 matplotlib missing, 2 bad input (then no figure is
created).

Example: kvbench reload --model llama-3-8b --kv-dtype f16,int8 --tier-bw 2GB/s -f csv -o reload.csv
         plots/reload_plot.py reload.csv -o plots/
"""
import argparse
import csv
import sys
from pathlib import Path

COLUMNS = ("model", "kv_dtype", "prefix_tokens", "reload_ms", "prefill_ms", "tier_gb_per_s")
MARKERS = "os^vDx*+"


class BadInput(Exception):
    pass


def read_rows(path):
    try:
        with open(path, newline="") as file:
            reader = csv.DictReader(file)
            missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise BadInput(f"{path}: not a `kvbench reload -f csv` file (no column {', '.join(missing)})")
            rows = list(reader)
    except OSError as error:
        raise BadInput(f"{path}: {error.strerror}") from error
    if not rows:
        raise BadInput(f"{path}: no rows")
    return rows


def draw(rows, out_path):
    try:
        import matplotlib
    except ImportError:
        print(f"reload_plot: error: matplotlib is missing for {sys.executable}: install Debian's "
              "python3-matplotlib and run the script with /usr/bin/python3", file=sys.stderr)
        return 1
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = list(dict.fromkeys(r["model"] for r in rows))
    kv_dtypes = list(dict.fromkeys(r["kv_dtype"] for r in rows))
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for i, model in enumerate(models):
        colour = f"C{i % 10}"
        mine = [r for r in rows if r["model"] == model]
        prefill = sorted({(int(r["prefix_tokens"]), float(r["prefill_ms"])) for r in mine})
        ax.plot(*zip(*prefill), color=colour, linestyle="-", marker="o", label=f"{model} prefill (measured)")
        for j, kv_dtype in enumerate(kv_dtypes):
            reload = sorted((int(r["prefix_tokens"]), float(r["reload_ms"])) for r in mine if r["kv_dtype"] == kv_dtype)
            if reload:
                ax.plot(*zip(*reload), color=colour, linestyle="--", marker=MARKERS[j % len(MARKERS)],
                        label=f"{model} {kv_dtype} reload (predicted)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("prefix P (tokens)")
    ax.set_ylabel("time (ms)")
    tiers = sorted({float(r["tier_gb_per_s"]) for r in rows})
    ax.set_title("Recompute or reload, tier " + ", ".join(f"{t:.3g} GB/s" for t in tiers))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.02, 0.5))
    fig.tight_layout()
    fig.savefig(out_path, bbox_inches="tight")
    plt.close(fig)
    print(f"{out_path}: {len(models)} models, {len(kv_dtypes)} KV types")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", help="a `kvbench reload -f csv` file")
    parser.add_argument("-o", "--output-dir", help="folder for the figure (default: beside the CSV)")
    parser.add_argument("--format", choices=("png", "svg", "pdf"), default="png")
    args = parser.parse_args(argv)
    try:
        rows = read_rows(args.csv)
    except BadInput as error:
        print(f"reload_plot: error: {error}", file=sys.stderr)
        return 2
    folder = Path(args.output_dir) if args.output_dir else Path(args.csv).parent
    folder.mkdir(parents=True, exist_ok=True)
    return draw(rows, folder / f"{Path(args.csv).stem}-reload.{args.format}")


if __name__ == "__main__":
    sys.exit(main())
