"""`quiz answer` as typer declares it: its arguments, options and help.

The work is `attnquiz.answer`'s (no typer there): `attnquiz.plain_parsing` runs it without typer
when the arguments are plain, typer runs it through this function otherwise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attnquiz import answer
from attnquiz.options import BankArg, JsonOpt


def answer_command(
    bank: BankArg,
    item: Annotated[str, typer.Argument(help="The item's id (see `quiz list BANK`).")],
    responses: Annotated[
        list[str] | None,
        typer.Argument(
            help="Your answer, e.g. 1.93, 2*tanh(2), [0.881, 0.119], A, C or 12d^2 + 13d; for a question "
            "in parts one answer per part (R1 R2 ...). Omit it (or give -) to read it from standard input "
            "(a question in parts: one line per part)."
        ),
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", "-s", min=0, max=2**32 - 1, help="The variant of this seed.")
    ] = None,
    code: Annotated[str | None, typer.Option("--code", help="The variant of this variant code.")] = None,
    original: Annotated[bool, typer.Option("--original", help="The past paper's own question.")] = False,
    file: Annotated[
        Path | None,
        typer.Option("--file", "-f", help="Read the answer from this file (a code question's .py file)."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Grade one answer to a variant: correct, partial, wrong or invalid, with feedback and the mistake.

    A concept question is never scored: its answer is shown with the model answer and key points
    (status unscored), and needs no --seed, --code or --original.

    Exit code 0 for any grade (an invalid answer costs nothing), 1 for a user error such as an
    unknown item.

    A question in parts takes one answer per part and is graded with error carried forward: a part
    that uses an earlier one is marked against the value computed from your own earlier answer.

    Example: quiz answer week1 additive-score --original "2*tanh(2)"

    Example (in parts): quiz answer week1 params-chain --original 64 32768 1050624 3152384 18914304

    Example (code): quiz answer code attention --seed 1 --file attention.py
    """
    answer.answer_item(
        bank=bank,
        item=item,
        responses=responses,
        seed=seed,
        code=code,
        original=original,
        file=file,
        as_json=as_json,
    )
