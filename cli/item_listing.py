"""A bank's items as `quiz list BANK` prints them: grouped by topic, each with its answer kind and source.

Drawn once, through a `Lines` writer: `attnquiz.light_lines` prints it without rich's console (the
start-up of `quiz list`, issue 43) wherever it can print the very bytes rich would; elsewhere
(Windows, a line too wide, a character it does not print) `attnquiz.display.RichLines` draws it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from attnquiz.light_lines import Run, print_without_rich
from attnquiz.line_breaks import NBSP
from attnquiz.wording import SEP


class Lines(Protocol):
    """Where the listing is drawn."""

    width: int

    def blank(self) -> None: ...

    def line(self, runs: Sequence[Run]) -> None: ...

    def put(self, runs: Sequence[Run], *, hang: int = 0) -> None: ...


def item_table(title: str, rows: list[dict[str, Any]]) -> None:
    """Print the items of a bank (the names that --topic and --item take) on standard output."""
    if print_without_rich(lambda light: draw_items(light, title, rows)):
        return
    from attnquiz.display import RichLines, console

    draw_items(RichLines(console), title, rows)


def draw_items(out: Lines, title: str, rows: list[dict[str, Any]]) -> None:
    """The listing's lines, drawn on ``out``."""
    out.put([(title, "bold"), (f"{SEP}{len(rows)} items", "dim")])
    topics: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        topics.setdefault(row["topic"], []).append(row)
    id_width = max((len(row["id"]) for row in rows), default=0)
    kind_width = max((len(row["kind"]) for row in rows), default=0)
    hang = id_width + kind_width + 4
    # Too narrow for three columns: the source goes under its item.
    beside = out.width - 2 - hang >= 24
    for topic, members in topics.items():
        out.blank()
        out.line([(topic, "bold cyan"), (f"  ({len(members)})", "dim")])
        for row in members:
            source = row["source"] + ("" if row["original"] else f"{NBSP}*")
            source += f"{NBSP}†" if row.get("unavailable") else ""
            line: list[Run] = [
                ("  ", ""),
                (row["id"].ljust(id_width), "bold"),
                ("  ", ""),
                (row["kind"].ljust(kind_width), ""),
                ("  ", ""),
            ]
            if beside:
                out.put([*line, (source, "")], hang=hang)
            else:
                out.put(line)
                out.put([(f"    {source}", "dim")])
    if not all(row["original"] for row in rows):
        out.blank()
        out.put([("* no --original: the notes give no fixed statement or numbers to rebuild", "dim")])
    for reason in dict.fromkeys(row["unavailable"] for row in rows if row.get("unavailable")):
        out.blank()
        out.put([(f"† not offered by quiz run: {reason}", "yellow")])
