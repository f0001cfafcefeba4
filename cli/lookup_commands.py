"""`quiz list`, `quiz show` and `quiz schema` as typer declares them: their arguments, options and help.

The work is `attnquiz.lookup`'s (no typer there): `attnquiz.plain_parsing` runs it without typer
when the arguments are plain, typer runs it through these functions otherwise.
"""

from __future__ import annotations

from typing import Annotated

import typer

from attnquiz import lookup
from attnquiz.common import print_json
from attnquiz.options import BankArg, JsonOpt


def list_command(
    bank: Annotated[
        str | None,
        typer.Argument(help="A bank name (e.g. week1) or a path to a bank file; none: list every bank."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """List a bank's items (id, source, topic, answer kind), or with no bank every bank found.

    Example: quiz list week1
    """
    lookup.list_bank(bank=bank, as_json=as_json)


def show_command(
    bank: BankArg,
    item: Annotated[str, typer.Argument(help="The item's id (see `quiz list BANK`).")],
    seed: Annotated[
        int | None, typer.Option("--seed", "-s", min=0, max=2**32 - 1, help="Build the variant of this seed.")
    ] = None,
    code: Annotated[
        str | None, typer.Option("--code", help="Build the variant of this variant code.")
    ] = None,
    original: Annotated[bool, typer.Option("--original", help="The past paper's own question.")] = False,
    solution: Annotated[
        bool, typer.Option("--solution", help="Add the worked solution and the known mistakes.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Show one variant of an item with its answer (a random one unless --seed, --code or --original).

    Example: quiz show week1 additive-score --seed 7 --solution
    """
    lookup.show_item(
        bank=bank, item=item, seed=seed, code=code, original=original, solution=solution, as_json=as_json
    )


def schema_command() -> None:
    """Print the JSON Schema of the bank format (for editors: quiz schema > quiz.schema.json).

    Example: quiz schema > quiz.schema.json
    """
    from attnquiz.engine.schema import json_schema

    print_json(json_schema())
