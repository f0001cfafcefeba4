"""`quiz generators`: the built-in generators a bank item may name, with their parameters.

Only typer is imported at the top; the registry (and every generator module, to read their
signatures) is imported when the command runs.
"""

from __future__ import annotations

from typing import Any

from attnquiz.common import print_json, user_errors
from attnquiz.options import JsonOpt


@user_errors
def generators_command(as_json: JsonOpt = False) -> None:
    """List the built-in generators: name, what it asks, and each parameter's type and default.

    A generator item names one (`generator: additive_score`) and may set its parameters
    (`params: {dim: 3}`); `original:` gives the past paper's own inputs.

    Example: quiz generators --json
    """
    from attnquiz.engine.registry import catalogue

    listed = catalogue()
    if as_json:
        print_json(listed)
        return
    _show(listed)


def _show(listed: list[dict[str, Any]]) -> None:
    from rich.text import Text

    from attnquiz.display import console
    from attnquiz.folding import fold

    console.print(Text(f"Generators  ·  {len(listed)} built in", style="bold"))
    for generator in listed:
        console.print()
        line = Text(generator["name"], style="bold")
        line.append(f"  {generator['summary']}")
        console.print(fold(line, console.width, hang=4))
        for param in generator["parameters"]:
            default = param["default"]
            shown = "None" if default is None else repr(default) if isinstance(default, str) else str(default)
            console.print(
                Text(f"    {param['name']}: {param['type']} = {shown}", style="dim"), soft_wrap=True
            )
