"""`quiz run`, `quiz review` and `quiz stats` as typer declares them: their arguments, options and help.

The work is `attnquiz.practice`'s (no typer there): `attnquiz.plain_parsing` runs `quiz run`
without typer when its arguments are plain, typer runs every command through these functions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attnquiz import practice
from attnquiz.practice import Solutions

DbOpt = Annotated[
    Path | None,
    typer.Option(
        "--db",
        help="History database file (default: $QUIZ_HOME/history.sqlite3, else the user data folder).",
        dir_okay=False,
    ),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print JSON Lines: one object per answer and a summary.")
]
SeedOpt = Annotated[
    int | None,
    typer.Option(
        "--seed", "-s", min=0, max=2**32 - 1, help="The session's seed (printed, so it can be repeated)."
    ),
]


SolutionsOpt = Annotated[
    Solutions,
    typer.Option(
        "--solutions",
        case_sensitive=False,
        help="Show the worked solution after every answer, after wrong ones (default; w asks), or never.",
    ),
]
NoHistoryOpt = Annotated[bool, typer.Option("--no-history", help="Do not read or save history.")]


def run_command(
    bank: Annotated[
        str | None,
        typer.Argument(help="A bank name (e.g. week1) or a path to a bank file.", show_default=False),
    ] = None,
    topic: Annotated[str | None, typer.Option("--topic", "-t", help="Only this topic's items.")] = None,
    item: Annotated[
        list[str] | None,
        # Typer would show the Python type, <list[str]>; one id is what each --item takes.
        typer.Option("--item", "-i", metavar="<id>", help="Only this item (repeat the option for more)."),
    ] = None,
    count: Annotated[
        int | None, typer.Option("--count", "-n", min=1, max=500, help="Number of questions (default 10).")
    ] = None,
    seed: SeedOpt = None,
    original: Annotated[
        bool, typer.Option("--original", help="The past papers' own questions, in the bank's order.")
    ] = False,
    exam: Annotated[
        bool, typer.Option("--exam", help="Exam conditions: no feedback until you submit.")
    ] = False,
    time_limit: Annotated[
        str | None, typer.Option("--time", help="Exam time limit, e.g. 20m, 1h30m, 90s (implies --exam).")
    ] = None,
    solutions: SolutionsOpt = Solutions.wrong,
    db: DbOpt = None,
    no_history: NoHistoryOpt = False,
    as_json: JsonOpt = False,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Continue the exam you left unsubmitted (Ctrl-C, a closed terminal): its questions, "
            "answers and time left.",
        ),
    ] = False,
) -> None:
    """Practise a bank: fresh variants one at a time, graded at once, saved to your history.

    Answers can also be piped in, one per line: a session is scriptable (see --json).

    Example: quiz run week1 --topic multi-head-attention --count 5 --seed 42
    """
    practice.run_practice(
        bank=bank,
        topic=topic,
        item=item,
        count=count,
        seed=seed,
        original=original,
        exam=exam,
        time_limit=time_limit,
        solutions=solutions,
        db=db,
        no_history=no_history,
        as_json=as_json,
        resume=resume,
    )


def review_command(
    bank: Annotated[
        list[str] | None,
        typer.Argument(help="Banks to review (default: every bank found).", show_default=False),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=500, help="Most questions to ask.")] = 20,
    new: Annotated[int, typer.Option("--new", min=0, max=500, help="New items a day to mix in.")] = 10,
    seed: SeedOpt = None,
    solutions: SolutionsOpt = Solutions.wrong,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Review what is due today, chosen by spaced repetition (FSRS), with fresh variants.

    Items you got wrong come back within minutes; items you know come back after days, then weeks.
    New items are mixed in, a few at a time.

    Example: quiz review week1 --limit 10
    """
    practice.review_due(
        bank=bank, limit=limit, new=new, seed=seed, solutions=solutions, db=db, as_json=as_json
    )


def stats_command(
    bank: Annotated[list[str] | None, typer.Argument(help="Only these banks.", show_default=False)] = None,
    days: Annotated[
        int, typer.Option("--days", min=1, max=3650, help="Days shown in the activity chart.")
    ] = 14,
    db: DbOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the statistics as one JSON object.")] = False,
) -> None:
    """Show your history: accuracy and due reviews per bank and topic, frequent mistakes, recent days.

    Example: quiz stats --json
    """
    practice.show_stats(bank=bank, days=days, db=db, as_json=as_json)
