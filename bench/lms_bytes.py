"""What the bytes of a Moodle or STACK XML export are: ``python -m bench.lms_bytes week1.xml``.

Each question's elements are counted whole (tags, text and CDATA) under the part of the question
they make; in the HTML of the texts, the formulas are counted apart: the TeX a browser draws, the
spoken form a screen reader reads, and the markup that shows one and hides the other.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

_TOKEN = re.compile(r"<!\[CDATA\[.*?\]\]>|<!--.*?-->|<[^>]*>|[^<]+", re.DOTALL)
_MATH = re.compile(
    r'(<span class="quiz-math"><span aria-hidden="true">)(.*?)'
    r'(</span><span class="[^"]*">)(.*?)(</span></span>)',
    re.DOTALL,
)
_PARTS = {
    "questiontext": "question text",
    "generalfeedback": "worked solution (general feedback)",
    "answer": "answers and their feedback (named mistakes)",
    "graderinfo": "grader information (essays, marked by hand)",
    "prt": "potential response trees (STACK marking, named mistakes)",
    "qtest": "question tests (STACK)",
    "input": "inputs (STACK)",
    "name": "names (item, variant code, seed)",
    "tags": "tags",
}


def _part(tag: str) -> str:
    return _PARTS.get(tag, "other settings (grades, penalties, STACK options)")


def measure(data: str) -> Counter[str]:
    """Bytes per part of the questions, with the formulas in the texts counted apart."""
    bytes_of: Counter[str] = Counter()
    depth, child, start = 0, "", 0
    for found in _TOKEN.finditer(data):
        token = found.group()
        if token.startswith(("<!", "<?")) or not token.startswith("<"):
            continue
        closing, empty = token.startswith("</"), token.endswith("/>")
        if not closing:
            if depth == 2:
                child, start = re.split(r"[\s/>]", token[1:], maxsplit=1)[0], found.start()
            if not empty:
                depth += 1
        else:
            depth -= 1
        if depth == 2 and (closing or empty) and child:
            piece = data[start : found.end()]
            in_files = sum(len(m.group()) for m in re.finditer(r"<file .*?</file>", piece, re.DOTALL))
            bytes_of["embedded figures (SVG, base64)"] += in_files
            for math in _MATH.finditer(piece):
                bytes_of["formulas: TeX"] += len(math.group(2).encode())
                bytes_of["formulas: spoken form"] += len(math.group(4).encode())
                markup = len(math.group(1)) + len(math.group(3)) + len(math.group(5))
                bytes_of["formulas: markup showing one, hiding the other"] += markup
                in_files += len(math.group().encode())
            bytes_of[_part(child)] += len(piece.encode()) - in_files
            child = ""
    bytes_of["file frame (header, categories, line ends)"] = len(data.encode()) - sum(bytes_of.values())
    return bytes_of


def main(paths: list[str]) -> None:
    for path in paths:
        data = Path(path).read_text(encoding="utf-8")
        total = len(data.encode())
        print(f"{path}: {total:,} bytes")
        for part, size in measure(data).most_common():
            print(f"  {size / total:6.1%} {size:>13,}  {part}")


if __name__ == "__main__":
    main(sys.argv[1:])
