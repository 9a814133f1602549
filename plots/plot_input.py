"""What the plot scripts share about their input and output: errors in one line, a CSV read
whole before anything is drawn, and -o as the folder the figures go to."""

import argparse
import csv
import io
import json
import pathlib

# Names a file of figures would have: -o takes the folder they go to, as kvbench's -o takes a
# report's file.
IMAGE_SUFFIXES = {".png", ".svg", ".pdf", ".jpg", ".jpeg"}


class BadInput(Exception):
    """A file that is not the CSV a script draws, or an option it cannot honour."""


class Parser(argparse.ArgumentParser):
    """Usage errors in one line, as the scripts' other errors; help within 80 columns, the
    description and epilog as written."""

    def __init__(self, **kwargs):
        kwargs.setdefault("formatter_class", lambda prog: argparse.RawDescriptionHelpFormatter(prog, width=80))
        super().__init__(**kwargs)

    def error(self, message):
        self.exit(2, f"{pathlib.Path(self.prog).stem}: error: {message} (see --help)\n")


def read_text(path):
    # A FIFO would wait for a writer and a device such as /dev/zero never end, as kvbench refuses them.
    if pathlib.Path(path).exists() and not pathlib.Path(path).is_file() and not pathlib.Path(path).is_dir():
        raise BadInput(f"cannot read {path}: not a regular file (a FIFO, device or socket)")
    try:
        # utf-8-sig: a leading byte-order mark, as editors on Windows write, is skipped, as
        # kvbench's own readers skip it (docs/cli.md, "Behaviour you can rely on").
        with open(path, newline="", encoding="utf-8-sig") as f:
            return f.read()
    except OSError as error:
        raise BadInput(f"cannot read {path}: {error.strerror}") from error
    except UnicodeDecodeError as error:
        raise BadInput(f"{path} is not a readable CSV: it is not text ({error.reason} at byte "
                       f"{error.start})") from error


def csv_rows(path, text):
    """(header, [(line number, row)...]) of a CSV's text."""
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        header = reader.fieldnames or []
        rows = [(reader.line_num, row) for row in reader]
    except csv.Error as error:
        raise BadInput(f"{path} is not a readable CSV: {error}") from error
    if not header:
        raise BadInput(f"{path} is empty")
    return header, rows


def check_output_dir(folder, figure_names):
    """Refuses an -o that is a file, or named like a figure; figure_names: how the figures in
    the folder are named, for the message."""
    if folder is None or folder.is_dir():
        return
    if folder.exists():
        raise BadInput(f"-o {folder} is a file: -o names the folder the figures go to")
    if folder.suffix.lower() in IMAGE_SUFFIXES:
        raise BadInput(f"-o {folder}: -o names a folder, not a figure (figures are named "
                       f"{figure_names} in it, e.g. -o plots/)")


def check_fields(path, header, numbered):
    """Refuses a row cut short (a file written in part) or one longer than the header."""
    for line, row in numbered:
        if None in row.values() or None in row:
            fields = len(header) - list(row.values()).count(None) + len(row.get(None) or [])
            raise BadInput(f"{path}, line {line}: {fields} fields where the header has {len(header)}: "
                           f"is the row cut short?")


def json_kind(text):
    """'report' (a kvbench JSON or JSON Lines report), 'reload' (reload's sheet), 'other' JSON, or None."""
    if text.lstrip()[:1] not in ("{", "["):
        return None
    # RecursionError: a value nested deeper than Python's parser goes, which no report is.
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        try:
            data = json.loads(text.lstrip().splitlines()[0])  # JSON Lines: one row a line
        except (ValueError, RecursionError):
            return None
    rows = data.get("rows", [data]) if isinstance(data, dict) else data
    first = rows[0] if isinstance(rows, list) and rows and isinstance(rows[0], dict) else {}
    if "prefix_tokens" in first:
        return "reload"
    if "peak_gflops" in first:
        return "roofline"
    return "report" if "path" in first and "latency_us_median" in first else "other"


def save(plt, fig, target, **savefig_options):
    """Writes one figure and closes it; its folder is made only now, so a run that draws nothing
    leaves none behind."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(target, **savefig_options)
    except OSError as error:
        raise BadInput(f"cannot write {target}: {error.strerror or error}") from error
    finally:
        plt.close(fig)
