#!/usr/bin/python3
"""Fails on an #include that points up the layers, or into another library's private files.

Every #include of kvbench's sources (src/, tests/, bench/, fuzz/) is resolved as the compiler
resolves it: beside the including file first, then in the include roots (src/<library>/include/,
and src/engine/ for the engine's interior). The header's layer must be the including file's own
or one below it, as LAYERS says; and a library's files outside its include/ folder are private to
it, except the engine's interior, which the tests and benchmarks reach through
kvbench_engine_internal. Includes of the standard library and of other packages resolve nowhere
here and are not checked.

    tests/check_layers.py [ROOT] [--plant FILE:HEADER]

--plant adds one include of HEADER to FILE before checking (FILE need not include it): a
violation planted that way must make the check fail, which is how ctest tests the checker.
Exit status: 0 when every include points down, 1 otherwise, 2 for a usage error.
"""
import argparse
import os
import re
import sys
from pathlib import Path

# The layers, lowest first, written once: a name, the paths it owns (the longest match decides a
# file's layer), and the layers it may include directly; what those may include, it may too.
# The engine is cut in four floors: the element types both the kernels and the model use; the
# kernels' parts (their types, tuning table, SIMD back-ends, prefetching, decoders); the kernels
# the model calls, which never include one another (the model chooses between them); the model.
ENGINE = "src/engine/"
KERNELS = ENGINE + "kernels/"
KERNEL_ENTRY_POINTS = ["attention_kernel", "attention_grouped", "small_m_gemm", "small_m_lanes", "small_m_typed", "vector_math",
                       "task_ranges"]
LAYERS = [
    ("files", ["src/files/"], []),
    ("engine types", [ENGINE + "include/kvbench/engine/kv_dtype.hpp", ENGINE + "include/kvbench/engine/kv_convert.hpp",
                      ENGINE + "include/kvbench/engine/ascii_case.hpp",
                      ENGINE + "include/kvbench/engine/weight_dtype.hpp",
                      ENGINE + "kv_convert.cpp"], []),
    ("engine kernel parts", [KERNELS], ["engine types"]),
    ("engine kernels", [KERNELS + name + "." for name in KERNEL_ENTRY_POINTS], ["engine kernel parts"]),
    ("engine model", [ENGINE], ["engine kernels"]),
    ("measure", ["src/measure/"], ["engine model", "files"]),
    ("plan", ["src/plan/"], ["engine model", "files"]),
    ("report", ["src/report/"], ["measure", "files"]),
    ("compare", ["src/compare/"], ["report"]),
    ("cli", ["src/cli/"], ["compare", "plan", "report"]),
    ("tests", ["tests/", "bench/", "fuzz/"], ["cli"]),
]
# Layers whose files include no other file of their own layer but their own header.
LEAF_LAYERS = {"engine kernels"}
# The interior of a library that some layer may still reach: the engine's, for the tests.
INTERNAL_ACCESS = {("tests", "engine")}

SOURCE_DIRS = ["src", "tests", "bench", "fuzz"]
SOURCE_SUFFIXES = {".cpp", ".hpp", ".in"}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def layer_of(path):
    best = None
    for name, prefixes, _ in LAYERS:
        for prefix in prefixes:
            if path.startswith(prefix) and (best is None or len(prefix) > len(best[1])):
                best = (name, prefix)
    return best[0] if best else None


def allowed_below():
    direct = {name: set(below) for name, _, below in LAYERS}
    closure = {}
    for name, _, _ in LAYERS:  # lowest first, so every layer below is already closed
        closure[name] = {name}
        for below in direct[name]:
            closure[name] |= closure[below]
    return closure


def library_of(path):
    parts = path.split("/")
    return parts[1] if parts[0] == "src" and len(parts) > 2 else "tests"


def is_private(path):
    parts = path.split("/")
    return parts[0] == "src" and parts[2] != "include"


def include_roots(root):
    roots = sorted(str(p.relative_to(root)) for p in (root / "src").glob("*/include") if p.is_dir())
    return roots + ["src/engine"]


def resolve(root, including, header, quoted, roots):
    candidates = [os.path.join(os.path.dirname(including), header)] if quoted else []
    candidates += [os.path.join(r, header) for r in roots]
    for candidate in candidates:
        normal = os.path.normpath(candidate)
        if not normal.startswith("..") and (root / normal).is_file():
            return normal
    return None


def source_files(root):
    for top in SOURCE_DIRS:
        for path in sorted((root / top).rglob("*")):
            if path.is_file() and path.suffix in SOURCE_SUFFIXES:
                yield str(path.relative_to(root))


def check(root, planted):
    roots = include_roots(root)
    closure = allowed_below()
    problems = []
    n_includes = 0
    for path in source_files(root):
        lines = (root / path).read_text(encoding="utf-8", errors="replace").splitlines()
        includes = [(number, m.group(1) == '"', m.group(2))
                    for number, line in enumerate(lines, 1) if (m := INCLUDE.match(line))]
        includes += [(0, True, header) for file, header in planted if file == path]
        layer = layer_of(path)
        for number, quoted, header in includes:
            target = resolve(root, path, header, quoted, roots)
            if target is None or target == path:
                continue
            n_includes += 1
            where = f"{path}:{number}" if number else f"{path} (planted)"
            target_layer = layer_of(target)
            if target_layer not in closure.get(layer, set()):
                problems.append(f"{where} includes \"{header}\" ({target_layer}), "
                                f"which is not below its own layer ({layer})")
            elif (target_layer == layer and layer in LEAF_LAYERS
                  and Path(target).stem != Path(path).stem):
                problems.append(f"{where} includes \"{header}\", another of the {layer}: "
                                "the model chooses between them, they never call each other")
            elif (is_private(target) and library_of(target) != library_of(path)
                  and (layer, library_of(target)) not in INTERNAL_ACCESS):
                problems.append(f"{where} includes \"{header}\", private to src/{library_of(target)}/ "
                                f"(only src/{library_of(target)}/include/ is for other libraries)")
    return problems, n_includes


def main(argv):
    parser = argparse.ArgumentParser(prog="check_layers.py", description="Fail on an #include that points up.")
    parser.add_argument("root", nargs="?", default=Path(__file__).resolve().parent.parent, type=Path)
    parser.add_argument("--plant", action="append", default=[], metavar="FILE:HEADER",
                        help="add an include of HEADER to FILE (a path from the root) before checking")
    args = parser.parse_args(argv)
    planted = []
    for text in args.plant:
        file, sep, header = text.partition(":")
        if not sep or not (args.root / file).is_file():
            print(f"check_layers.py: error: --plant {text}: must be FILE:HEADER with FILE a source file", file=sys.stderr)
            return 2
        planted.append((file, header))
    problems, n_includes = check(args.root.resolve(), planted)
    for problem in problems:
        print(f"check_layers.py: {problem}")
    if problems:
        print(f"check_layers.py: {len(problems)} of {n_includes} includes point up or into private files")
        return 1
    print(f"check_layers.py: all {n_includes} includes of kvbench's own files point down the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
