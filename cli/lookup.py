"""Looking things up: the work of `quiz list` and `quiz show`, once their arguments are parsed.

No typer here: their arguments are declared in `attnquiz.lookup_commands`, and
`attnquiz.plain_parsing` calls these functions directly when it can parse the arguments itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attnquiz.common import fail, new_seed, print_json, user_errors

if TYPE_CHECKING:
    from attnquiz.engine.bank.finding import BankListing


@user_errors
def list_bank(bank: str | None, as_json: bool) -> None:
    """`quiz list [BANK] [--json]`: a bank's items, or every bank found."""
    from attnquiz.engine.bank import finding as banks

    if bank is None:
        from attnquiz.authoring import list_banks

        list_banks(as_json)
        return

    # From the bank's listing index when it is current: no numpy, pydantic or yaml to import. Never
    # with the bank's plugins: listing runs no code a bank names, so a plugin item's kind is unknown.
    listed = banks.listing(bank)
    rows = listing_rows(listed)
    if as_json:
        print_json(rows)
    else:
        from attnquiz.item_listing import item_table  # rich only where it must draw

        item_table(listed.title, rows)


def listing_rows(listed: BankListing) -> list[dict[str, Any]]:
    """A row for each item of a bank's listing: what `quiz list` prints (and its ``--json``)."""
    from attnquiz.engine.extras import unavailable
    from attnquiz.wording import kind_name

    return [
        {
            "id": item.id,
            "source": item.source,
            "topic": item.topic,
            "kind": kind_name(item.kind, multiple=item.multiple),
            "original": item.original,
            "summary": item.summary,
            "requires": item.requires.split(",") if item.requires else [],
            # "" where it can run; else why `quiz run` does not offer it (PyTorch not installed)
            "unavailable": unavailable(item.requires.split(",")) if item.requires else "",
        }
        for item in listed.items
    ]


@user_errors
def show_item(
    bank: str,
    item: str,
    seed: int | None,
    code: str | None,
    original: bool,
    solution: bool,
    as_json: bool,
) -> None:
    """`quiz show BANK ITEM`: one variant of an item (or its original) with its answer."""
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
        return
    if not solution:  # without rich's console where it prints the same bytes (issue 43)
        from attnquiz.light_lines import print_without_rich
        from attnquiz.question_lines import draw_shown

        if print_without_rich(lambda light: draw_shown(light, question, with_answer=True)):
            return
    from attnquiz import display  # rich: where the light writer declines, and for the solution

    display.show_question(question, with_answer=True, with_solution=solution)
