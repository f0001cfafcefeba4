"""Looking things up: `quiz list`, `quiz show` and `quiz schema`."""

from __future__ import annotations

from typing import Annotated

import typer

from attnquiz.common import BankArg, JsonOpt, fail, new_seed, print_json, user_errors


@user_errors
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
    from attnquiz import display
    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.extras import unavailable

    if bank is None:
        from attnquiz.authoring import list_banks

        list_banks(as_json)
        return

    # From the bank's listing index when it is current: no numpy, pydantic or yaml to import. Never
    # with the bank's plugins: listing runs no code a bank names, so a plugin item's kind is unknown.
    listed = banks.listing(bank)
    rows = [
        {
            "id": item.id,
            "source": item.source,
            "topic": item.topic,
            "kind": display.kind_name(item.kind, multiple=item.multiple),
            "original": item.original,
            "summary": item.summary,
            "requires": item.requires.split(",") if item.requires else [],
            # "" where it can run; else why `quiz run` does not offer it (PyTorch not installed)
            "unavailable": unavailable(item.requires.split(",")) if item.requires else "",
        }
        for item in listed.items
    ]
    if as_json:
        print_json(rows)
    else:
        display.item_table(listed.title, rows)


@user_errors
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
    from attnquiz import display
    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.seeding import seed_from_code

    if sum(x is not None and x is not False for x in (seed, code, original or None)) > 1:
        fail("give only one of --seed, --code and --original", 2)
    entry = banks.load(bank, plugins=True).get(item)
    if original:
        question = entry.original()
    else:
        if code is not None:
            seed = seed_from_code(code)
        question = entry.question(seed if seed is not None else new_seed())
    if as_json:
        print_json(question.to_json())
    else:
        display.show_question(question, with_answer=True, with_solution=solution)


def schema_command() -> None:
    """Print the JSON Schema of the bank format (for editors: quiz schema > quiz.schema.json).

    Example: quiz schema > quiz.schema.json
    """
    from attnquiz.engine.schema import json_schema

    print_json(json_schema())
