#!/usr/bin/python3
"""Runs two or more builds' micro-benchmarks alternately, round by round, and compares them.

On a shared or virtualised host the machine's speed drifts by tens of percent within minutes,
so two binaries timed one after the other measure the drift as much as the change. Here every
round runs each binary once, in a shuffled order, so a drift hits all of them alike; each
benchmark's time in a binary is then set against the first binary's time in the same round,
and the median of those per-round ratios is the figure to quote (bench/journal/ does so).

    scripts/bench-ab.py --rounds 5 --filter 'BM_Linear/rows:8/.*/cold:1' \\
        before=old/bench/kvbench_bench after=build/bench/kvbench_bench

Writes NAME.json per binary into --out (the rounds as Google Benchmark repetitions), prints
each benchmark's median time per binary with the median per-round ratio and its range, then,
where a kvbench binary is found, `kvbench compare` of the first binary against each other
(docs/compare.md: its Mann-Whitney U test over the rounds). Exit status: 0, 1 when a binary
fails, 2 for a usage error.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def usage_error(message):
    print(f"bench-ab: error: {message}", file=sys.stderr)
    sys.exit(2)


def named_binary(text):
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"'{text}' must be NAME=BINARY (for example after=build/bench/kvbench_bench)")
    if "/" in name or name.startswith("."):
        raise argparse.ArgumentTypeError(f"'{name}' must be a plain name: it names the file NAME.json")
    return name, path


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="bench-ab.py",
        description="Run micro-benchmark binaries alternately, round by round, and compare them.",
        epilog="Arguments after -- go to every binary (for example --benchmark_min_time=0.2s).")
    parser.add_argument("binaries", nargs="+", type=named_binary, metavar="NAME=BINARY",
                        help="two or more; the first is the base the others are set against")
    parser.add_argument("--rounds", type=int, default=5, help="rounds, each binary once per round (default 5)")
    parser.add_argument("--filter", default=".", help="--benchmark_filter for every binary (default: all)")
    parser.add_argument("--out", default="bench-ab", help="directory for NAME.json (default bench-ab/)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the order within rounds (default 1)")
    parser.add_argument("--kvbench", help="kvbench binary for `kvbench compare` (default: build/kvbench, if built)")
    parser.error = usage_error  # one line naming the argument, not argparse's usage block
    dashes = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:dashes])
    args.passed = argv[dashes + 1:]
    if len(args.binaries) < 2:
        usage_error("NAME=BINARY: give at least two binaries to compare")
    names = [name for name, _ in args.binaries]
    if len(set(names)) != len(names):
        usage_error("NAME=BINARY: each name must be different")
    if not 1 <= args.rounds <= 1000:
        usage_error(f"--rounds: {args.rounds} must be from 1 to 1000")
    for name, path in args.binaries:
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            usage_error(f"{name}={path}: no executable file there")
    return args


def run_once(path, bench_filter, passed):
    """The benchmarks of one run of a binary, as Google Benchmark reports them."""
    command = [path, f"--benchmark_filter={bench_filter}", "--benchmark_format=json", *passed]
    done = subprocess.run(command, capture_output=True, text=True)
    message = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
    if done.returncode != 0:
        print(f"bench-ab: error: {path} exited with {done.returncode}: {message}", file=sys.stderr)
        sys.exit(1)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        # Google Benchmark exits 0 when the filter matches nothing, saying so on stderr only.
        print(f"bench-ab: error: {path} printed no Google Benchmark JSON: {message}", file=sys.stderr)
        sys.exit(1)
    runs = [b for b in report.get("benchmarks", []) if b.get("run_type", "iteration") == "iteration"]
    if not runs:
        print(f"bench-ab: error: {path}: no benchmark matches --filter '{bench_filter}'", file=sys.stderr)
        sys.exit(1)
    return report.get("context", {}), runs


def run_rounds(args):
    """(contexts by name, runs by name: one list of benchmark entries per round)."""
    order = random.Random(args.seed)
    contexts, rounds = {}, {name: [] for name, _ in args.binaries}
    for r in range(args.rounds):
        binaries = list(args.binaries)
        order.shuffle(binaries)
        for name, path in binaries:
            context, runs = run_once(path, args.filter, args.passed)
            contexts.setdefault(name, context)
            rounds[name].append(runs)
        print(f"bench-ab: round {r + 1} of {args.rounds} done", file=sys.stderr, flush=True)
    return contexts, rounds


def export(out_dir, contexts, rounds):
    """NAME.json per binary: every round's runs as repetitions, which kvbench compare takes as samples."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, by_round in rounds.items():
        benchmarks = []
        for index, runs in enumerate(by_round):
            for run in runs:
                benchmarks.append(dict(run, run_type="iteration", repetition_index=index, repetitions=len(by_round)))
        path = out_dir / f"{name}.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps({"context": contexts[name], "benchmarks": benchmarks}, indent=1) + "\n")
        tmp.replace(path)  # never a half-written file under the final name
        paths[name] = path
    return paths


def times_by_benchmark(by_round):
    """{benchmark name: [its time in each round]}, and {name: time unit}. A round that ran a
    benchmark several times (--benchmark_repetitions after --) counts its median."""
    times, units = {}, {}
    for runs in by_round:
        this_round = {}
        for run in runs:
            this_round.setdefault(run["name"], []).append(run["real_time"])
            units[run["name"]] = run.get("time_unit", "ns")
        for name, values in this_round.items():
            times.setdefault(name, []).append(statistics.median(values))
    return times, units


def paired_table(rounds):
    """Lines: each benchmark's median per binary, and for the others the median per-round ratio to the first."""
    names = list(rounds)
    base = names[0]
    base_times, units = times_by_benchmark(rounds[base])
    others = {name: times_by_benchmark(rounds[name])[0] for name in names[1:]}
    lines = [f"median {units[next(iter(units))]} per binary; in brackets the median of the per-round "
             f"ratios to {base}, then their range"]
    for bench, times in base_times.items():
        cells = [f"{base} {statistics.median(times):.4g}"]
        for name in names[1:]:
            theirs = others[name].get(bench)
            if not theirs or len(theirs) != len(times):
                cells.append(f"{name} (missing)")
                continue
            ratios = [t / b for t, b in zip(theirs, times)]
            cells.append(f"{name} {statistics.median(theirs):.4g} ({statistics.median(ratios):.2f}, "
                         f"{min(ratios):.2f}-{max(ratios):.2f})")
        lines.append(f"{bench}  " + "  ".join(cells))
    return lines


def main(argv):
    args = parse_args(argv)
    contexts, rounds = run_rounds(args)
    paths = export(Path(args.out), contexts, rounds)
    print("\n".join(paired_table(rounds)))
    kvbench = args.kvbench or str(ROOT / "build" / "kvbench")
    if not (os.path.isfile(kvbench) and os.access(kvbench, os.X_OK)):
        print(f"bench-ab: no kvbench at {kvbench}: the U test of `kvbench compare` is left out", file=sys.stderr)
        return 0
    names = list(paths)
    for name in names[1:]:
        print(f"\nkvbench compare {paths[names[0]]} {paths[name]}", flush=True)
        subprocess.run([kvbench, "compare", str(paths[names[0]]), str(paths[name])])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
