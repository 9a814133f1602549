#!/usr/bin/env python3
"""Draws the figure of a `kvbench reload -f csv` file: recompute or reload.

One figure per CSV, named <csv stem>.<format>: time against prefix length P,
log-log, one colour per model. The measured prefill (recomputing the prefix)
is a solid line; the predicted reload from the tier is dashed, one marker per
KV element type. Where a model's dashed line falls below its solid one,
reloading is faster; the crossing is the break-even P. It reads the CSV's
model, kv_dtype, prefix_tokens, reload_ms, prefill_ms and tier_gb_per_s, and
names the threads and measured_layers under the title where every row shares
them (docs/planning.md#recompute-or-reload).

Needs only Python 3 and Debian's python3-matplotlib; run it as
plots/reload_plot.py or with /usr/bin/python3. Exit status: 0 done,
1 matplotlib missing, 2 bad input (then no folder or figure is created).

Examples, from the source tree (the second draws the stored reference figure):
  kvbench reload --model llama-3-8b --kv-dtype f16,int8 --tier-bw 2GB/s \\
      -o reload.csv && /usr/bin/python3 plots/reload_plot.py reload.csv
  /usr/bin/python3 plots/reload_plot.py results/reference-reload-*.csv -o plots/
"""
import math
import sys
from pathlib import Path

from plot_input import BadInput, Parser, check_fields, check_output_dir, csv_rows, json_kind, read_text, save

COLUMNS = ("model", "kv_dtype", "prefix_tokens", "reload_ms", "prefill_ms", "tier_gb_per_s")
# Drawn on log axes: each must be a number above 0.
POSITIVE_COLUMNS = ("reload_ms", "prefill_ms", "tier_gb_per_s")
# The measured prefill is drawn with its own marker, none of the reloads' (one per KV type).
PREFILL_MARKER = "o"
MARKERS = "s^vDx*+P"
def read_rows(path):
    """The rows of a reload CSV, every one checked before anything is drawn."""
    text = read_text(path)
    if json_kind(text) is not None:
        raise BadInput(f"{path} is JSON; reload_plot reads CSV (kvbench reload ... -f csv, -o FILE.csv, "
                       "or --export csv:FILE)")
    header, numbered = csv_rows(path, text)
    missing = [c for c in COLUMNS if c not in header]
    if missing and "path" in header and "latency_us_median" in header:
        raise BadInput(f"{path} is a kvbench sweep or generate CSV: draw it with plots/kvbench_plot.py")
    if missing:
        raise BadInput(f"{path}: not a `kvbench reload -f csv` file (no column {', '.join(missing)})")
    if not numbered:
        raise BadInput(f"{path}: no rows")
    check_fields(path, header, numbered)
    for line, row in numbered:
        for column in ("prefix_tokens",) + POSITIVE_COLUMNS:
            value = row[column]
            try:
                number = int(value) if column == "prefix_tokens" else float(value)
            except ValueError:
                raise BadInput(f"{path}, line {line}: {column} is " +
                               ("empty" if value == "" else f"'{value}', not a number")) from None
            if not (number > 0 and math.isfinite(number)):
                raise BadInput(f"{path}, line {line}: {column} is {value}; a log axis needs it above 0")
    return [row for _, row in numbered]


def plural(n, word):
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def measured_setup(rows):
    """How the prefills were measured, from the columns every row shares; '' when they differ
    or the CSV has none of them: a prefill time means little without its threads and layers."""
    parts = []
    threads = {r.get("threads", "") for r in rows}
    if len(threads) == 1 and "" not in threads:
        count = threads.pop()
        parts.append(f"{count} thread{'' if count == '1' else 's'}")
    layers = {r.get("measured_layers", "") for r in rows}
    if len(layers) == 1 and "" not in layers:
        count = layers.pop()
        parts.append(f"{count} layer{'' if count == '1' else 's'} timed, times the model's layers")
    return "prefill measured on " + ", ".join(parts) if parts else ""


def draw(plt, rows, out_path):
    models = list(dict.fromkeys(r["model"] for r in rows))
    kv_dtypes = list(dict.fromkeys(r["kv_dtype"] for r in rows))
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for i, model in enumerate(models):
        colour = f"C{i % 10}"
        mine = [r for r in rows if r["model"] == model]
        prefill = sorted({(int(r["prefix_tokens"]), float(r["prefill_ms"])) for r in mine})
        ax.plot(*zip(*prefill), color=colour, linestyle="-", marker=PREFILL_MARKER, label=f"{model} prefill (measured)")
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
    title = "Recompute or reload, tier " + ", ".join(f"{t:.3g} GB/s" for t in tiers)
    setup = measured_setup(rows)
    ax.set_title(f"{title}\n{setup}" if setup else title, fontsize="medium")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.02, 0.5))
    fig.tight_layout()
    save(plt, fig, out_path, bbox_inches="tight")
    print(f"wrote {out_path}: {plural(len(models), 'model')}, {plural(len(kv_dtypes), 'KV type')}")


def main(argv=None):
    parser = Parser(prog="reload_plot.py", description=__doc__.split("\n\n")[0],
                    epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("csv", nargs="+", type=Path, help="`kvbench reload -f csv` files")
    parser.add_argument("-o", "--output-dir", type=Path,
                        help="folder for the figures (default: beside each CSV); created if missing")
    parser.add_argument("--format", choices=("png", "svg", "pdf"), default="png",
                        help="image format (default: png)")
    args = parser.parse_args(argv)
    try:
        # Everything read and checked before the first figure: bad input leaves nothing behind.
        check_output_dir(args.output_dir, "<csv stem>.<format>")
        inputs = [(path, read_rows(path)) for path in args.csv]
    except BadInput as error:
        print(f"reload_plot: error: {error}", file=sys.stderr)
        return 2
    try:
        import matplotlib
    except ImportError:
        print(f"reload_plot: error: matplotlib is missing for {sys.executable}: install Debian's "
              "python3-matplotlib and run the script with /usr/bin/python3", file=sys.stderr)
        return 1
    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt
    try:
        for path, rows in inputs:
            draw(plt, rows, (args.output_dir or path.parent) / f"{path.stem}.{args.format}")
    except BadInput as error:
        print(f"reload_plot: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
