#!/usr/bin/env python3
"""Draws the figures of kvbench CSV files (kvbench sweep, generate, history).

Figures, one file each, named <csv stem>-<figure>.<format>:
  latency     latency of one step vs context N, cached vs uncached, log-log
  speedup     uncached / cached latency vs N: what the KV cache saves
  flops       FLOPs of one step vs N: O(N^2 D) uncached, O(N D) cached
  kv          KV-cache memory vs N for each grouping (and vs batch B when B
              varies)
  roofline    arithmetic intensity vs achieved GFLOP/s, under the machine's
              two roofs
  generation  latency of every step of a generation (`kvbench generate` CSVs)
  formats     each KV format's bytes per token vs its error against f32, with
              its step time, at one point (sweep --kv-dtype f32,q8_0,...)

A CSV that `kvbench history -f csv` wrote gets one figure instead, named
<csv stem>-history:
  history     each chosen point's metric run after run (commits in the order
              they ran), one line per point and machine, the bars spanning
              each run's fastest to slowest repetition

One colour per grouping (MHA, GQA-g, MQA) and one line style per path (cached
solid, uncached dashed), the same in every figure. Series are also keyed on
every other column that varies in the file (threads, batch, dim, layers, ...),
told apart by their marker; the subtitle gives the columns that do not vary
(every line: B=8 D=4096 H=32 L=1 ...), as kvbench's tables do. A figure the
data cannot fill is skipped with a message.

Needs only Python 3 and Debian's python3-matplotlib (an interpreter without
matplotlib gets a one-line error saying so); run it as plots/kvbench_plot.py
or with /usr/bin/python3. Exit status: 0 done, 1 matplotlib missing, 2 bad
input or no figure to draw (then no folder or figure is created).

Examples, from the source tree (a `kvbench reload` CSV is for
plots/reload_plot.py):
  /usr/bin/python3 plots/kvbench_plot.py results/*-sweep-*.csv -o figures/
  kvbench history --db results.sqlite -n 1024 -f csv -o hist.csv
  /usr/bin/python3 plots/kvbench_plot.py hist.csv
"""
import argparse
import collections
import json
import math
import os
import pathlib
import re
import sys

from plot_input import BadInput, Parser, check_fields, check_output_dir, csv_rows, json_kind, read_text, save

# Imported by load_matplotlib(), once the arguments are read: --help and bad input need none.
plt = None
ticker = None

# The report schema kvbench compiles in (docs/csv.md#schema-version): the columns every kvbench
# CSV starts with, and the columns older schemas named otherwise, so an old file plots as
# kvbench itself reads it.
SCHEMA_FILE = pathlib.Path(__file__).resolve().parent.parent / "data" / "report_schema.json"
FIGURES = ["latency", "speedup", "flops", "kv", "roofline", "generation", "formats"]
# Columns that may vary within a file and then distinguish series (with their legend labels).
SERIES_AXES = [("batch", "B"), ("dim", "D"), ("heads", "H"), ("head_dim", "dh"), ("layers", "L"),
               ("threads", "T"), ("kv_dtype", ""), ("cache_state", ""), ("prompt", "P"), ("new_tokens", "new")]
PATH_STYLE = {"cached": "-", "uncached": "--"}
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "*"]
FIXED_COLOURS = {"MHA": "tab:blue", "MQA": "tab:red"}
GQA_COLOURS = ["tab:green", "tab:orange", "tab:purple", "tab:brown", "tab:olive", "tab:cyan", "tab:pink"]


class MissingMatplotlib(Exception):
    """The interpreter running the script has no matplotlib."""


def load_matplotlib():
    global plt, ticker
    try:
        import matplotlib
    except ImportError as error:
        raise MissingMatplotlib(f"matplotlib is missing for {sys.executable}: install Debian's python3-matplotlib "
                                "(apt-get install python3-matplotlib) and run the script with /usr/bin/python3") from error
    matplotlib.use("Agg")  # files only, no display needed
    matplotlib.rcParams["svg.fonttype"] = "none"  # an SVG's text stays text: searchable, and smaller
    import matplotlib.pyplot as pyplot
    import matplotlib.ticker as mticker
    plt, ticker = pyplot, mticker


def grouping_of(row):
    if row.get("grouping"):
        return row["grouping"]
    heads, kv_heads = int(row["heads"]), int(row["kv_heads"])
    return "MHA" if heads == kv_heads else "MQA" if kv_heads == 1 else f"GQA-{kv_heads}"


def load_schema():
    """(contract columns, {old name: its rename}) from kvbench's schema file."""
    try:
        with open(SCHEMA_FILE) as f:
            schema = json.load(f)
        return schema["contract_columns"], {r["old"]: r for r in schema["renamed_columns"]}
    except (OSError, ValueError, KeyError) as error:
        raise BadInput(f"cannot read the report schema {SCHEMA_FILE} ({error}): run the script from the kvbench "
                       "source tree") from error


def current_schema(row, renames):
    """The row with its columns under their current names and units (a schema 1 fraction as a percentage)."""
    current = {}
    for column, value in row.items():
        rename = renames.get(column)
        if rename is None:
            current[column] = value
            continue
        if rename["scale"] != 1 and value not in ("", None):
            try:
                value = f"{float(value) * rename['scale']:g}"
            except ValueError:
                pass
        current[rename["new"]] = value
    return current


# Columns the figures compute with: a cell that is not a number is refused when the file is read,
# so that no figure is half drawn before a bad row turns up.
SHAPE_COLUMNS = ["batch", "seq", "dim", "heads", "kv_heads", "head_dim", "layers", "threads"]
INTEGER_COLUMNS = SHAPE_COLUMNS + ["flops", "bytes", "kv_bytes"]
NUMBER_COLUMNS = ["latency_us_median", "gflops"]
# Empty where nothing was measured or compared (docs/csv.md), a number otherwise.
OPTIONAL_NUMBER_COLUMNS = ["roofline_pct", "speedup", "kv_rel_error"]


def check_numbers(path, line, row, columns, integer=False, optional=False):
    for column in columns:
        value = row.get(column, "")
        if value == "" and optional:
            continue
        if value == "":
            raise BadInput(f"{path}, line {line}: {column} is empty")
        try:
            ok = math.isfinite(int(value) if integer else float(value))
        except ValueError:
            ok = False
        if not ok:
            kind = "an integer" if integer else "a number"
            raise BadInput(f"{path}, line {line}: {column} is '{value}', not {kind}")


def read_rows(path, header, numbered):
    """The rows of a sweep's or generation's CSV under their current names, each checked."""
    contract_columns, renames = load_schema()
    header = [renames[c]["new"] if c in renames else c for c in header]
    missing = [c for c in contract_columns if c not in header]
    if missing:
        raise BadInput(f"{path} lacks the columns {', '.join(missing)}: is it a kvbench CSV "
                       "(kvbench sweep/generate --format csv)?")
    if not numbered:
        raise BadInput(f"{path} has a header but no rows")
    check_fields(path, header, numbered)
    rows = []
    for line, row in numbered:
        row = current_schema(row, renames)
        if row["path"] not in PATH_STYLE:
            raise BadInput(f"{path}, line {line}: path is '{row['path']}', not cached or uncached")
        check_numbers(path, line, row, INTEGER_COLUMNS, integer=True)
        negative = next((c for c in INTEGER_COLUMNS if int(row[c]) < 0), None)
        if negative:
            raise BadInput(f"{path}, line {line}: {negative} is {row[negative]}, where a count is never negative")
        check_numbers(path, line, row, NUMBER_COLUMNS)
        check_numbers(path, line, row, OPTIONAL_NUMBER_COLUMNS, optional=True)
        zero = next((c for c in SHAPE_COLUMNS if int(row[c]) <= 0), None)
        if zero:
            raise BadInput(f"{path}, line {line}: {zero} is {row[zero]}, where a configuration has at least 1")
        if float(row["latency_us_median"]) <= 0:
            raise BadInput(f"{path}, line {line}: latency_us_median is {row['latency_us_median']}: a step takes time")
        if any(not n.isdigit() for n in row.get("seq_lens", "").split()):
            raise BadInput(f"{path}, line {line}: seq_lens is '{row['seq_lens']}', not positions")
        row["grouping"] = grouping_of(row)
        rows.append(row)
    return rows


def grouping_colours(groupings):
    """{grouping: colour}: MHA and MQA fixed, the GQA-g between them in order of g."""
    groupings = sorted(groupings, key=lambda g: (g != "MHA", g == "MQA", g))
    gqa = [g for g in groupings if g not in FIXED_COLOURS]
    return {g: FIXED_COLOURS.get(g) or GQA_COLOURS[gqa.index(g) % len(GQA_COLOURS)] for g in groupings}


class Style:
    """Colour per grouping, line style per path, marker per combination of the other varying axes."""

    def __init__(self, rows):
        self.varying = [(c, short) for c, short in SERIES_AXES
                        if c in rows[0] and len({r[c] for r in rows}) > 1]
        # Words (kv_dtype f32,f16,int8) keep the order the run gave them; numbers sort.
        self.first_seen = {}
        for r in rows:
            for c, _ in self.varying:
                self.first_seen.setdefault((c, r[c]), len(self.first_seen))
        self.colours = grouping_colours({r["grouping"] for r in rows})
        combos = sorted({self.others(r) for r in rows}, key=self.rank)
        self.markers = {k: MARKERS[i % len(MARKERS)] for i, k in enumerate(combos)}

    def others(self, row):
        return tuple(row[c] for c, _ in self.varying)

    def rank(self, others):
        """Sort key of a combination of the varying axes' values: numbers by value, words by first appearance."""
        key = []
        for (column, _), value in zip(self.varying, others):
            try:
                key.append((0, float(value)))
            except ValueError:
                key.append((1, self.first_seen.get((column, value), 0)))
        return key

    def key(self, row):
        return (row["grouping"], row["path"], self.others(row))

    def label(self, key, with_path=True):
        grouping, path, others = key
        parts = [grouping] + ([path] if with_path else [])
        for (column, short), v in zip(self.varying, others):
            if column == "kv_dtype" and path == "uncached":
                parts.append("no cache")  # its kv_dtype reads f32: the uncached forward keeps none
            else:
                parts.append(f"{short}={v}" if short else v)
        return " ".join(parts)

    def plot(self, ax, key, xs, ys, with_path=True, **kwargs):
        grouping, path, others = key
        # A generation has hundreds of points per line: mark a dozen of them, not every one.
        kwargs.setdefault("markevery", max(1, len(xs) // 12))
        ax.plot(xs, ys, PATH_STYLE.get(path, "-"), color=self.colours[grouping], marker=self.markers[others],
                markersize=4, linewidth=1.4, label=self.label(key, with_path), **kwargs)


def series(rows, style, y_of, x_of=lambda r: int(r["seq"])):
    """{key: ([x...], [y...])} sorted by x, for the rows where y_of gives a value."""
    points = collections.defaultdict(list)
    for row in rows:
        y = y_of(row)
        if y is not None:
            points[style.key(row)].append((x_of(row), y))
    ordered = {}
    for key in sorted(points, key=lambda k: (k[0] != "MHA", k[0] == "MQA", k[0], k[1], style.rank(k[2]))):
        xy = sorted(points[key])
        ordered[key] = ([x for x, _ in xy], [y for _, y in xy])
    return ordered


def number(text):
    return float(text) if text not in ("", None) else None


def time_unit(values_us):
    """Scale and name for latencies given in µs: whichever keeps the typical value readable."""
    typical = sorted(values_us)[len(values_us) // 2] if values_us else 1
    for scale, name in ((1e6, "s"), (1e3, "ms")):
        if typical >= scale:
            return scale, name
    return 1.0, "µs"


def log_axis(ax, which, base=10):
    """A log axis whose ticks read as plain numbers (1, 2, 5, 10, 20 ...; 128, 256 ... for base 2)."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log", base=base)
    lo, hi = (ax.get_xlim() if which == "x" else ax.get_ylim())
    decades = math.log10(hi / lo) if lo > 0 and hi > lo else 1
    if base == 2:
        # Under three octaves, the powers of 2 alone leave two or three ticks: add the 1.5× ones.
        subs = (1.0, 1.5) if decades < 0.95 else (1.0,)
        axis.set_major_locator(ticker.LogLocator(base=2, subs=subs, numticks=12 if decades < 3.6 else 7))
    else:
        subs = (1.0, 2.0, 5.0) if decades < 2.5 else (1.0,)
        axis.set_major_locator(ticker.LogLocator(base=10, subs=subs, numticks=15))
    axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(ticker.NullFormatter())


def finish(ax, title, xlabel, ylabel, legend_title=None):
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, title=legend_title, title_fontsize=7)


def layer_of(row):
    """'attn', or the full layer and its MLP ('full F=14336', 'full E=8/2'), as the tables name it."""
    if row.get("block", "attn") != "full":
        return "attn"
    experts = re.search(r"\bE=(\d+/\d+)", row.get("variant", ""))
    return f"full E={experts.group(1)}" if experts else f"full F={row.get('ffn_dim', '?')}"


def contexts_of(row):
    """A ragged batch's contexts as the tables give them, shortest/median/longest; 'uniform' otherwise."""
    contexts = sorted(int(n) for n in row.get("seq_lens", "").split())
    if not contexts:
        return "uniform"
    return f"{contexts[0]}/{contexts[(len(contexts) - 1) // 2]}/{contexts[-1]}"


# The axes a line of the tool's tables may have, in their order there, each with the rows' value
# and when it is worth showing at all (src/report/summary_tables.cpp): name, value of a row, shown.
MODEL_AXES = [
    ("B", lambda r: r["batch"], lambda rows: True),
    ("N", lambda r: r["seq"], lambda rows: True),
    ("D", lambda r: r["dim"], lambda rows: True),
    ("H", lambda r: r["heads"], lambda rows: True),
    ("dh", lambda r: r["head_dim"],
     lambda rows: any(int(r["head_dim"]) * int(r["heads"]) != int(r["dim"]) for r in rows)),
    ("L", lambda r: r["layers"], lambda rows: True),
    ("G", lambda r: f"{r['kv_heads']} ({r['grouping']})", lambda rows: True),
    ("kv", lambda r: "none" if r["path"] == "uncached" else r.get("kv_dtype") or "f32",
     lambda rows: any((r.get("kv_dtype") or "f32") != "f32" for r in rows)),
    ("layer", layer_of, lambda rows: any(r.get("block") == "full" for r in rows)),
    ("w", lambda r: r.get("weight_dtype") or "f32", lambda rows: any((r.get("weight_dtype") or "f32") != "f32"
                                                                     for r in rows)),
    ("N_b", contexts_of, lambda rows: any(r.get("seq_lens") for r in rows)),
    ("Q", lambda r: r.get("query_tokens") or "1", lambda rows: any((r.get("query_tokens") or "1") != "1"
                                                                   for r in rows)),
    ("P", lambda r: r.get("shared_prefix") or "0", lambda rows: any((r.get("shared_prefix") or "0") != "0"
                                                                    for r in rows)),
    ("kv-block", lambda r: "none" if r["path"] == "uncached" else
     "contiguous" if (r.get("kv_block") or "0") == "0" else r["kv_block"],
     lambda rows: any((r.get("kv_block") or "0") != "0" for r in rows)),
]


def configuration(rows):
    """What every row shares, as the tables' caption says it: 'every line: B=8 N=2048 D=4096 H=32 L=1
    G=8 (GQA-8), T=2, cold cache, cached path'; the axes that vary are in the legend instead."""
    def shared(value_of):
        values = {value_of(r) for r in rows}
        return values.pop() if len(values) == 1 else None

    model = []
    for name, value_of, shown in MODEL_AXES:
        value = shown(rows) and shared(value_of)
        if value:
            model.append(f"{name}={value}")
    run = [f"T={shared(lambda r: r['threads'])}"] if shared(lambda r: r["threads"]) else []
    if all(r.get("cache_state") for r in rows) and shared(lambda r: r["cache_state"]):
        run.append(f"{rows[0]['cache_state']} cache")
    if shared(lambda r: r["path"]):
        run.append(f"{rows[0]['path']} path")
    caption = ", ".join(p for p in [" ".join(model)] + run if p)
    return f"every line: {caption}" if caption else ""


def subtitle(fig, rows):
    first = rows[0]
    provenance = (f"kvbench {first.get('tool_version', '?')} ({first.get('git_commit', '?')}) on "
                  f"{first.get('cpu_model', '?')}")
    fig.text(0.5, 0.005, "; ".join(p for p in (configuration(rows), provenance) if p),
             ha="center", va="bottom", fontsize=7, color="0.35")


def paths_title(rows, both, one):
    """A title that says 'cached vs uncached' only of a file that has both paths."""
    paths = {r["path"] for r in rows}
    return both if len(paths) > 1 else one.format(path=paths.pop())


def step_rows(rows):
    """The rows that are single decode steps: a generation's prefill is a different operation."""
    return [r for r in rows if r.get("phase", "decode") != "prefill"]


# Why a decode-step figure of a generation's prefill rows alone would be empty.
NO_STEPS = "the file holds a generation's prefill rows only, no decode step"


def distinct(rows, column):
    return len({r[column] for r in rows})


# ---- the figures: each returns the Figure, or a string saying why it was skipped ----

def figure_latency(rows, style, _args):
    rows = step_rows(rows)
    if not rows:
        return NO_STEPS
    scale, unit = time_unit([float(r["latency_us_median"]) for r in rows])
    lines = series(rows, style, lambda r: float(r["latency_us_median"]) / scale)
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for key, (xs, ys) in lines.items():
        style.plot(ax, key, xs, ys)
    log_axis(ax, "x", base=2)
    log_axis(ax, "y")
    finish(ax, paths_title(rows, "Latency of one decode step: cached vs uncached",
                           "Latency of one decode step: the {path} path"), "context N (positions attended)",
           f"median latency per step ({unit})")
    return fig, lines


def figure_speedup(rows, style, _args):
    steps = step_rows(rows)
    if not steps:
        return NO_STEPS
    cached = [r for r in steps if r["path"] == "cached"]
    if not cached:
        return "the file has no cached rows, only uncached ones (run --paths both)"
    lines = series(cached, style, lambda r: number(r["speedup"]))
    if not lines:
        if any(r["path"] == "uncached" for r in steps):
            return "its cached rows have no speedup column filled"
        return "the file has no uncached rows to compare with (run --paths both)"
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for key, (xs, ys) in lines.items():
        style.plot(ax, key, xs, ys, with_path=False)
    log_axis(ax, "x", base=2)
    log_axis(ax, "y")
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}×"))
    ax.axhline(1, color="0.5", linewidth=0.8)
    finish(ax, "What the KV cache saves: uncached / cached latency", "context N (positions attended)",
           "speedup of the cached step")
    return fig, lines


def figure_flops(rows, style, _args):
    rows = step_rows(rows)
    if not rows:
        return NO_STEPS
    lines = series(rows, style, lambda r: int(r["flops"]) / 1e9)
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for key, (xs, ys) in lines.items():
        style.plot(ax, key, xs, ys)
    log_axis(ax, "x", base=2)
    log_axis(ax, "y")
    formulas = {"uncached": "O(N·D² + N²·D) uncached", "cached": "O(D² + N·D) cached"}
    drawn = ", ".join(formula for path, formula in formulas.items() if any(r["path"] == path for r in rows))
    finish(ax, f"FLOPs of one step: {drawn}",
           "context N (positions attended)", "GFLOP per step (model FLOPs, docs/counting.md)")
    return fig, lines


# Bytes c per cached element of each KV type (docs/counting.md#kv-bytes): int8 adds one f32 scale per vector,
# q8_0 and q4_0 one f16 scale per block of 32.
ELEMENT_BYTES = {"f32": "4", "f16": "2", "bf16": "2", "int8": "1 + 4/dh", "e4m3": "1", "e5m2": "1",
                 "q8_0": "34/32", "q4_0": "18/32"}


def element_bytes(rows):
    """'c = 4 (f32)' or 'c = 2 (f16), 1 + 4/dh (int8)': the element size of each KV type in the rows, in their order.
    Keys and values of their own types (kv_dtype K/V) average the two: 2·c is c_K + c_V (docs/counting.md#bytes)."""
    def size(dtype):
        if "/" in dtype:
            k, v = dtype.split("/", 1)
            return f"({size(k)} + {size(v)})/2"
        return ELEMENT_BYTES.get(dtype, "?")
    dtypes = list(dict.fromkeys(r.get("kv_dtype") or "f32" for r in rows))
    return "c = " + ", ".join(f"{size(d)} ({d})" for d in dtypes)


def figure_kv(rows, style, _args):
    # KV bytes depend on the configuration, not on the timing: one line per configuration, from one
    # path's rows, the cached ones where there are some (an uncached row carries f32's bytes,
    # docs/counting.md#kv-bytes). A generation's prefill rows alone still give the cache at N=P.
    rows = step_rows(rows) or rows
    path = "cached" if any(r["path"] == "cached" for r in rows) else "uncached"
    rows = [r for r in rows if r["path"] == path]
    by_batch = distinct(rows, "batch") > 1
    fig, axes = plt.subplots(1, 2 if by_batch else 1, figsize=(13 if by_batch else 8, 5.5), squeeze=False)
    ax = axes[0][0]
    lines = series(rows, style, lambda r: int(r["kv_bytes"]) / 2**20)
    for key, (xs, ys) in lines.items():
        style.plot(ax, key, xs, ys, with_path=False)
    log_axis(ax, "x", base=2)
    log_axis(ax, "y")
    finish(ax, "KV-cache memory vs context", "context N (positions held)", "K and V of all layers (MiB)")
    if by_batch:
        ax = axes[0][1]
        longest = max(int(r["seq"]) for r in rows)
        at_longest = [r for r in rows if int(r["seq"]) == longest]
        batch_style = Style(at_longest)
        batch_style.varying = [v for v in batch_style.varying if v[0] != "batch"]
        batch_style.markers = collections.defaultdict(lambda: "o")
        batch_lines = series(at_longest, batch_style, lambda r: int(r["kv_bytes"]) / 2**20,
                             x_of=lambda r: int(r["batch"]))
        for key, (xs, ys) in batch_lines.items():
            batch_style.plot(ax, key, xs, ys, with_path=False)
        log_axis(ax, "x", base=2)
        log_axis(ax, "y")
        finish(ax, f"KV-cache memory vs batch, at N={longest}", "batch B (sequences)", "K and V of all layers (MiB)")
    fig.suptitle(f"What the KV cache costs: 2·L·B·N·G·dh·c bytes, {element_bytes(rows)} (MQA holds 1/H of MHA's)",
                 fontsize=10)
    return fig, lines


def peaks(rows, args):
    """(GFLOP/s, GB/s, where they come from), or None when nothing gives them."""
    if args.peak_gflops and args.peak_gbps:
        return args.peak_gflops, args.peak_gbps, "--peak-gflops/--peak-gbps"
    if args.roofline_peaks:
        return (*args.roofline_peaks, f"{args.roofline}")
    # roofline_pct = 100·max(flops/Pf, bytes/Pb)/median, so roofline time t = pct·median/100 and
    # Pb >= bytes/t with equality on memory-bound rows, Pf >= flops/t with equality on compute-bound ones.
    best_f = best_b = 0.0
    for r in rows:
        pct = number(r["roofline_pct"])
        if pct:
            t = pct / 100 * float(r["latency_us_median"]) * 1e-6
            best_f = max(best_f, int(r["flops"]) / t / 1e9)
            best_b = max(best_b, int(r["bytes"]) / t / 1e9)
    if best_f > 0 and best_b > 0:
        return best_f, best_b, "derived from the CSV's roofline_pct"
    return None


def figure_roofline(rows, style, args):
    if not step_rows(rows):
        return NO_STEPS
    rows = [r for r in step_rows(rows) if int(r["bytes"]) > 0 and float(r["gflops"]) > 0]
    if not rows:
        return "no row has bytes and a rate"
    lines = series(rows, style, lambda r: float(r["gflops"]), x_of=lambda r: int(r["flops"]) / int(r["bytes"]))
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for key, (xs, ys) in lines.items():
        grouping, path, others = key
        ax.scatter(xs, ys, color=style.colours[grouping], marker=style.markers[others], s=18,
                   facecolors="none" if path == "uncached" else style.colours[grouping],
                   label=style.label(key))
    machine = peaks(rows, args)
    xs_all = [x for xs, _ in lines.values() for x in xs]
    lo, hi = min(xs_all) / 2, max(xs_all) * 2
    note = None
    if machine:
        peak_f, peak_b, source = machine
        ridge = peak_f / peak_b
        lo, hi = min(lo, ridge / 4), max(hi, ridge * 4)
        grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
        ax.plot(grid, [min(peak_f, x * peak_b) for x in grid], color="black", linewidth=1.2,
                label=f"roofs: {peak_b:.0f} GB/s, {peak_f:.0f} GFLOP/s\n(peaks {source})")
        ax.axvline(ridge, color="0.6", linewidth=0.6, linestyle=":")
        ax.text(ridge, peak_f * 1.08, f" ridge {ridge:.1f} FLOP/B", fontsize=7, color="0.3")
    else:
        note = ("no roofs drawn: the CSV has no roofline_pct; pass --roofline <roofline JSON> or "
                "--peak-gflops/--peak-gbps")
    ax.set_xlim(lo, hi)
    log_axis(ax, "x")
    log_axis(ax, "y")
    finish(ax, paths_title(rows, "Roofline: every measured step (filled cached, hollow uncached)",
                           "Roofline: every measured step of the {path} path"),
           "arithmetic intensity (FLOP per byte of compulsory traffic)", "achieved GFLOP/s")
    return fig, lines, note


def figure_generation(rows, style, _args):
    if "step" not in rows[0]:
        return "not a `kvbench generate` CSV (no step column)"
    if not step_rows(rows):
        return NO_STEPS
    scale, unit = time_unit([float(r["latency_us_median"]) for r in rows])
    # The cached prefill is a star of its own: joined to the decode steps, it would draw a cliff.
    steps = [r for r in rows if not (r["path"] == "cached" and r.get("phase") == "prefill")]
    lines = series(steps, style, lambda r: float(r["latency_us_median"]) / scale)
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for key, (xs, ys) in lines.items():
        style.plot(ax, key, xs, ys)
    prefills = [r for r in rows if r.get("phase") == "prefill" and r["path"] == "cached"]
    for r in prefills:
        ax.scatter([int(r["seq"])], [float(r["latency_us_median"]) / scale], marker="*", s=120,
                   color=style.colours[r["grouping"]], edgecolors="black", linewidths=0.5, zorder=5)
    if prefills:
        ax.scatter([], [], marker="*", s=120, color="0.7", edgecolors="black", linewidths=0.5,
                   label="cached prefill (time to first token)")
    ax.set_yscale("log")
    log_axis(ax, "y")
    first = rows[0]
    finish(ax, f"Latency of every step of a generation: prompt P={first.get('prompt', '?')}, "
               f"{first.get('new_tokens', '?')} new tokens",
           "context N of the step (P for the prefill, P+i for decode step i)", f"step latency ({unit})")
    return fig, lines


# What names a point apart from its cache's types (the formats figure compares those at one point).
POINT_COLUMNS = ["batch", "seq", "dim", "heads", "kv_heads", "head_dim", "layers", "threads", "cache_state",
                 "variant", "block", "ffn_dim", "weight_dtype", "seq_lens", "query_tokens"]


def figure_formats(rows, _style, _args):
    """Issue 39's Pareto figure: at the point with the most KV formats, each format's bytes per token against
    its error against an f32 cache, the step's time written by it; the dominated ones hollow."""
    groups = collections.defaultdict(list)
    for r in step_rows(rows):
        if r["path"] != "cached" or not number(r.get("latency_us_median")):
            continue
        if (r.get("kv_dtype") or "f32") != "f32" and number(r.get("kv_rel_error")) is None:
            continue  # a reduced cache without its error cannot be placed
        groups[tuple(r.get(c, "") for c in POINT_COLUMNS)].append(r)
    best = max(groups.values(), key=len, default=[])
    if len(best) < 2:
        return "no point was measured in two KV formats or more (sweep --kv-dtype f32,q8_0,...)"
    # One point per figure: the others the file holds in several formats are said, not dropped silently.
    others = sum(1 for g in groups.values() if len(g) >= 2 and g is not best)
    if others:
        print(f"formats: drawn at the point with the most formats; {others} other point{'s' if others > 1 else ''} "
              f"measured in two or more {'are' if others > 1 else 'is'} not (sweep one point at a time to draw each)",
              file=sys.stderr)
    entries = []
    for r in best:
        # A ragged batch caches its contexts' sum; older files have no seq_lens.
        contexts = [int(n) for n in (r.get("seq_lens") or "").split()]
        tokens = sum(contexts) if contexts else int(r["batch"]) * int(r["seq"])
        bytes_per_token = int(r["kv_bytes"]) / tokens
        entries.append((r["kv_dtype"] or "f32", bytes_per_token, float(r["latency_us_median"]),
                        number(r.get("kv_rel_error")) or 0.0))

    def dominated(e):
        return any(o[1] <= e[1] and o[2] <= e[2] and o[3] <= e[3] and (o[1], o[2], o[3]) != (e[1], e[2], e[3])
                   for o in entries)

    scale, unit = time_unit([e[2] for e in entries])
    fig, ax = plt.subplots(figsize=(8, 5.5))
    # f32's error is 0: drawn at a floor below the smallest real error, so a log axis holds it.
    errors = [e[3] for e in entries if e[3] > 0]
    floor = min(errors) / 10 if errors else 1e-6
    lines = {}
    for name, bytes_per_token, median_us, error in entries:
        hollow = dominated((name, bytes_per_token, median_us, error))
        y = error if error > 0 else floor
        ax.scatter([bytes_per_token], [y], s=60, facecolors="none" if hollow else "C0", edgecolors="C0",
                   label=None)
        ax.annotate(f"{name} {median_us / scale:.3g} {unit}" + (" (dominated)" if hollow else ""),
                    (bytes_per_token, y), textcoords="offset points", xytext=(6, 4), fontsize=8)
        lines[(name, "cached", ())] = ([bytes_per_token], [y])
    log_axis(ax, "x", base=2)
    log_axis(ax, "y")
    point = best[0]
    ax.set_title(f"KV formats at B={point['batch']} N={point['seq']} D={point['dim']} H={point['heads']} "
                 f"G={point['kv_heads']} L={point['layers']}")
    ax.set_xlabel("bytes per token (K and V of all layers, scales included)")
    ax.set_ylabel("relative error of the step against an f32 cache (f32 at the floor)")
    ax.grid(True, which="major", alpha=0.3)
    fig.suptitle("Each format's bytes, error and step time; hollow: another format is no worse on all three",
                 fontsize=10)
    return fig, lines


DRAW = {"latency": figure_latency, "speedup": figure_speedup, "flops": figure_flops, "kv": figure_kv,
        "roofline": figure_roofline, "generation": figure_generation, "formats": figure_formats}


def positive(kind):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
        if not value > 0 or not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text} is not above 0")
        return value
    return parse


def parse_args(argv):
    parser = Parser(
        prog="kvbench_plot.py", description=__doc__.split("\n\n")[0],
        epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("csv", nargs="+", type=pathlib.Path,
                        help="kvbench CSV files (sweep, generate, or history -f csv)")
    parser.add_argument("-o", "--output-dir", type=pathlib.Path,
                        help="directory for the figures (default: beside each CSV); created if missing")
    parser.add_argument("-f", "--figures", default="all",
                        help=f"comma-separated subset of {','.join(FIGURES)} (default: all)")
    parser.add_argument("--format", choices=["png", "svg", "pdf"], default="png", help="image format (default: png)")
    parser.add_argument("--dpi", type=positive(int), default=120, help="resolution of PNG figures (default: 120)")
    parser.add_argument("--roofline", help="kvbench roofline JSON whose peaks the roofline chart draws")
    parser.add_argument("--peak-gflops", type=positive(float), help="peak GFLOP/s for the roofline chart")
    parser.add_argument("--peak-gbps", type=positive(float), help="peak GB/s for the roofline chart")
    args = parser.parse_args(argv)
    wanted = FIGURES if args.figures == "all" else [f.strip() for f in args.figures.split(",")]
    unknown = [f for f in wanted if f not in FIGURES]
    if unknown:
        parser.error(f"--figures: unknown figure {', '.join(unknown)} (choose from {', '.join(FIGURES)} or all)")
    if (args.peak_gflops is None) != (args.peak_gbps is None):
        parser.error("--peak-gflops and --peak-gbps go together")
    args.figures = wanted
    return args


def json_type(value):
    """The JSON name of a value's type, as kvbench's messages give it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "number")


def load_roofline(path):
    """The peaks of a kvbench roofline JSON, read with the CSVs so that a bad one stops the run before a figure."""
    try:
        saved = json.loads(pathlib.Path(path).read_text())
        peaks = float(saved["peak_gflops"]), float(saved["peak_gbps"])
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
        raise BadInput(f"--roofline {path}: not a kvbench roofline JSON ({error})") from error
    # A peak of another JSON type ("peak_gbps": "20") was written by another tool, though its
    # text reads as a number: refused as kvbench's --roofline and report readers refuse it.
    for key in ("peak_gflops", "peak_gbps"):
        value = saved[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise BadInput(f"--roofline {path}: the key \"{key}\": {json.dumps(value)[:40]} is a JSON "
                           f"{json_type(value)}, not a JSON number as kvbench writes it")
    if not all(p > 0 and math.isfinite(p) for p in peaks):
        raise BadInput(f"--roofline {path}: its peaks {peaks[0]:g} GFLOP/s and {peaks[1]:g} GB/s are not both above 0")
    return peaks


HISTORY_COLUMNS = ["run_id", "started_at", "git_commit", "machine_id", "point", "metric", "unit", "median", "min",
                   "max"]


def read_history(path, header, numbered):
    """The rows of a CSV that `kvbench history -f csv` wrote, each checked."""
    if not numbered:
        raise BadInput(f"{path} has a header but no rows: kvbench history found no matching point")
    check_fields(path, header, numbered)
    for line, row in numbered:
        check_numbers(path, line, row, ["run_id"], integer=True)
        check_numbers(path, line, row, ["median", "min", "max"])
        below = next((c for c in ("median", "min", "max") if float(row[c]) <= 0), None)
        if below:
            raise BadInput(f"{path}, line {line}: {below} is {row[below]}, where every metric history tracks is above 0")
        check_numbers(path, line, row, [c for c in ("heads", "kv_heads") if c in row], integer=True, optional=True)
    return [row for _, row in numbered]


# What a history line's marker tells apart, beside its grouping (colour) and path (line style).
HISTORY_OTHERS = ["batch", "seq", "dim", "heads", "head_dim", "layers", "threads", "kv_dtype", "block", "ffn_dim",
                  "weight_dtype", "variant", "seq_lens", "query_tokens", "shared_prefix", "kv_block", "cache_state",
                  "machine_id"]


def commit_label(commit):
    """The commit as kvbench prints it, 12 digits, with -dirty kept: a build from uncommitted changes."""
    clean = commit.removesuffix("-dirty")
    return clean[:12] + commit[len(clean):]


def figure_history(path, rows):
    """One line per (point, machine) over the runs, ordered by when they ran."""
    runs = sorted({(r["started_at"], int(r["run_id"]), r["git_commit"]) for r in rows})
    x_of = {run_id: x for x, (_, run_id, _) in enumerate(runs)}
    lines = collections.defaultdict(list)
    first = {}
    for r in rows:
        lines[(r["point"], r["machine_id"])].append(
            (x_of[int(r["run_id"])], float(r["median"]), float(r["min"]), float(r["max"])))
        first.setdefault((r["point"], r["machine_id"]), r)
    # Colour per grouping and line style per path, as in the other figures.
    grouping = {k: grouping_of(r) if r.get("heads") and r.get("kv_heads") else "" for k, r in first.items()}
    colours = grouping_colours(set(grouping.values()) - {""})
    others = {k: tuple(r.get(c, "") for c in HISTORY_OTHERS) for k, r in first.items()}
    markers = {o: MARKERS[i % len(MARKERS)] for i, o in enumerate(sorted(set(others.values())))}
    fig, ax = plt.subplots(figsize=(max(6.4, 1.1 * len(runs) + 3), 4.8))
    for key, points in sorted(lines.items()):
        point, machine = key
        points.sort()
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        below = [p[1] - min(p[2], p[3]) for p in points]
        above = [max(p[2], p[3]) - p[1] for p in points]
        ax.errorbar(xs, ys, yerr=[below, above], color=colours.get(grouping[key], "0.3"),
                    linestyle=PATH_STYLE.get(first[key].get("path"), "-"), marker=markers[others[key]],
                    capsize=3, label=f"{point} (m{machine})")
    ax.set_xticks(range(len(runs)))
    ax.set_xticklabels([f"run {run_id}\n{commit_label(commit)}" for _, run_id, commit in runs], fontsize=8)
    metric, unit = rows[0]["metric"], rows[0]["unit"]
    unit = "µs" if unit == "us" else unit  # as the other figures write it
    ys = [float(r["median"]) for r in rows]
    if min(ys) > 0 and max(ys) / min(ys) > 20:
        ax.set_yscale("log")
    finish(ax, f"History of {metric}: each run's median, bars from its min to its max",
           "run (oldest first) and its commit", f"{metric} ({unit})")
    machines = sorted({(r["machine_id"], r.get("cpu_model", "?"), r.get("machine_class", "")) for r in rows})
    fig.text(0.01, 0.01, "; ".join(f"m{m}: {cpu} ({cls})" for m, cpu, cls in machines), fontsize=7, color="0.4")
    return fig, list(lines)


def plot_history(path, rows, args):
    fig, lines = figure_history(path, rows)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    target = (args.output_dir or path.parent) / f"{path.stem}-history.{args.format}"
    save(plt, fig, target, dpi=args.dpi)
    print(f"wrote {target}: {len(lines)} series: {'; '.join(f'{p} (m{m})' for p, m in sorted(lines))}")
    return [target]


def plot_file(path, rows, args):
    style = Style(rows)
    out_dir = args.output_dir or path.parent
    written = []
    for name in args.figures:
        drawn = DRAW[name](rows, style, args)
        if isinstance(drawn, str):
            print(f"{path.name}: {name}: skipped, {drawn}", file=sys.stderr)
            continue
        fig, lines, *note = drawn
        if note and note[0]:
            print(f"{path.name}: {name}: {note[0]}", file=sys.stderr)
        subtitle(fig, rows)
        fig.tight_layout(rect=(0, 0.03, 1, 1))
        target = out_dir / f"{path.stem}-{name}.{args.format}"
        save(plt, fig, target, dpi=args.dpi)
        written.append(target)
        print(f"wrote {target}: {len(lines)} series: {'; '.join(style.label(k) for k in lines)}")
    return written


# What sets apart the files the plots do not read, so that the error names the right tool.
RELOAD_COLUMNS = ["model", "prefix_tokens", "reload_ms", "prefill_ms"]


def read_input(path):
    """('history' or 'report', its rows, every one checked), or BadInput saying what the file is instead."""
    text = read_text(path)
    kind = json_kind(text)
    if kind == "report":
        raise BadInput(f"{path} is a kvbench JSON report; the plots read CSV: convert it with "
                       f"`kvbench merge {path} -o {path.with_suffix('.csv')}`, or have kvbench write CSV "
                       "(-f csv, or --export csv:FILE beside another format)")
    if kind == "reload":
        raise BadInput(f"{path} is a `kvbench reload` JSON sheet: plots/reload_plot.py draws its CSV "
                       "(kvbench reload ... -f csv, or --export csv:FILE)")
    if kind == "roofline":
        raise BadInput(f"{path} is a kvbench roofline JSON: give it to --roofline, with the CSV to draw")
    if kind == "other":
        raise BadInput(f"{path} is JSON, not a kvbench CSV (kvbench sweep/generate -f csv)")
    header, numbered = csv_rows(path, text)
    if all(c in header for c in HISTORY_COLUMNS):
        return "history", read_history(path, header, numbered)
    if all(c in header for c in RELOAD_COLUMNS):
        script = pathlib.Path(__file__).resolve().parent / "reload_plot.py"
        script = os.path.relpath(script) if not os.path.relpath(script).startswith("..") else script
        raise BadInput(f"{path} is a `kvbench reload` CSV: draw it with plots/reload_plot.py "
                       f"(/usr/bin/python3 {script} {path})")
    return "report", read_rows(path, header, numbered)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        # Everything read and checked before the first figure: bad input leaves no file or folder behind.
        check_output_dir(args.output_dir, "<csv stem>-<figure>.<format>")
        args.roofline_peaks = load_roofline(args.roofline) if args.roofline else None
        inputs = [(path, *read_input(path)) for path in args.csv]
        load_matplotlib()
        written = []
        for path, kind, rows in inputs:
            if kind == "history":
                written += plot_history(path, rows, args)
            else:
                written += plot_file(path, rows, args)
        if not written:
            files = "the file has" if len(inputs) == 1 else "the files have"
            raise BadInput(f"no figure written: {files} no rows for {', '.join(args.figures)} "
                           "(the lines above say why)")
    except BadInput as error:
        print(f"kvbench_plot: error: {error}", file=sys.stderr)
        return 2
    except MissingMatplotlib as error:
        print(f"kvbench_plot: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
