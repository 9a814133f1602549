#!/usr/bin/python3
"""Every relative link of the documents leads somewhere: a file that exists, and for a
#anchor a heading of that file (GitHub's anchor rules). Checks README.md, docs/, bench/ and
results/README.md, the docs/<page>.md#<anchor> and docs/<page>.md, "Title" citations in code
comments (and none of a page without docs/, nor of the specification outside the repository), that every
bench/journal/<date>-<topic>.md named in code (the kernels' comments link their tuned choices
so) exists, and that every bench/journal entry is listed in the journal's index.

Usage: check_doc_links.py <source root>. Prints one line per broken link; exit 1 if any."""

import pathlib
import re
import sys
import unicodedata

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_CITATION = re.compile(r"\bdocs/([a-z_]+\.md)#([A-Za-z0-9_-]+)")
# A section cited by its title: docs/<page>.md, "Title" (the title a heading's text, exactly).
SECTION_CITATION = re.compile(r"\bdocs/([a-z_]+\.md),\s+\"([^\"]+)\"")
# A page#anchor without the docs/ a reader needs to find it from the code.
BARE_CITATION = re.compile(r"(?<![\w/.-])([a-z_]+\.md)#[A-Za-z0-9_-]+")
# The project's specification lives outside the repository; the code cites docs/ instead.
OUTSIDE_CITATION = re.compile(r"\bSPEC(?:\s*§|\s+section|'s)|\.\./shared/")
# A journal entry named in code: the name runs to the first character a file name here does not
# use, less a sentence's closing period, so a misspelt or wrapped name is caught, not skipped.
JOURNAL_CITATION = re.compile(r"\bbench/journal/([A-Za-z0-9_.-]*[A-Za-z0-9_-])")
FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")


def slug(heading):
    """GitHub's anchor of a heading: the rendered text, lower case, punctuation dropped,
    spaces made hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link renders as its text
    text = text.replace("`", "").replace("*", "")
    kept = []
    for ch in text.strip().lower():
        category = unicodedata.category(ch)
        if ch in " -" or category[0] in "LMN" or category == "Pc":
            kept.append("-" if ch == " " else ch)
    return "".join(kept)


def prose_lines(text):
    """The lines outside fenced code blocks."""
    in_fence = False
    for number, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if not in_fence:
            yield number, line


def anchors(path, cache={}):
    if path not in cache:
        seen = {}
        found = set()
        for _, line in prose_lines(path.read_text(encoding="utf-8")):
            match = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if not match:
                continue
            base = slug(match.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        # Headings written as HTML anchors, if any.
        found.update(re.findall(r'<a\s+(?:name|id)="([^"]+)"', path.read_text(encoding="utf-8")))
        cache[path] = found
    return cache[path]


def check_documents(root):
    documents = [root / "README.md", root / "results" / "README.md"]
    documents += sorted((root / "docs").glob("*.md"))
    documents += sorted((root / "bench").rglob("*.md"))
    errors = []
    for doc in documents:
        if not doc.exists():
            continue
        for number, line in prose_lines(doc.read_text(encoding="utf-8")):
            for target in LINK.findall(INLINE_CODE.sub("", line)):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                    continue  # http:, https:, mailto:
                where = f"{doc.relative_to(root)}:{number}"
                path_part, _, anchor = target.partition("#")
                linked = (doc.parent / path_part).resolve() if path_part else doc
                if not linked.exists():
                    errors.append(f"{where}: {target}: no such file")
                    continue
                if anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                    errors.append(f"{where}: {target}: no heading with anchor #{anchor}")
    return errors


def check_code_citations(root):
    journal = root / "bench" / "journal"
    errors = []
    for folder in ("src", "include", "tests", "bench", "scripts", "plots", "fuzz", "cmake", ".ci"):
        for path in sorted((root / folder).rglob("*")):
            if not path.is_file() or path.suffix in (".md", ".png", ".json", ".csv"):
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            for number, line in enumerate(text.split("\n"), 1):
                where = f"{path.relative_to(root)}:{number}"
                for page, anchor in CODE_CITATION.findall(line):
                    doc = root / "docs" / page
                    if not doc.exists():
                        errors.append(f"{where}: docs/{page}: no such file")
                    elif anchor not in anchors(doc):
                        errors.append(f"{where}: docs/{page}#{anchor}: no heading with that anchor")
                for page, title in SECTION_CITATION.findall(line):
                    doc = root / "docs" / page
                    if not doc.exists():
                        errors.append(f"{where}: docs/{page}: no such file")
                    elif slug(title) not in anchors(doc):
                        errors.append(f"{where}: docs/{page}, \"{title}\": no heading with that title")
                for page in BARE_CITATION.findall(line):
                    errors.append(f"{where}: {page}#...: cite it from the repository's root (docs/{page}#...)")
                if OUTSIDE_CITATION.search(line):
                    errors.append(f"{where}: cites a file outside the repository; cite docs/ instead")
                for entry in JOURNAL_CITATION.findall(line):
                    if not (entry.endswith(".md") and (journal / entry).is_file()):
                        errors.append(f"{where}: bench/journal/{entry}: no such journal entry")
    return errors


def check_journal_index(root):
    journal = root / "bench" / "journal"
    if not journal.is_dir():
        return []
    index = (journal / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"\]\(([^)#]+\.md)\)", index))
    return [f"bench/journal/{entry.name}: not listed in bench/journal/README.md"
            for entry in sorted(journal.glob("*.md"))
            if entry.name != "README.md" and entry.name not in listed]


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    root = pathlib.Path(sys.argv[1]).resolve()
    errors = check_documents(root) + check_code_citations(root) + check_journal_index(root)
    for error in errors:
        print(f"check_doc_links: {error}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
