"""What a code task is: the code to write, its reference, its named mistakes as mutants, its test inputs.

The tasks themselves are in `attnquiz.engine.code.tasks` (NumPy functions) and
`attnquiz.engine.code.torch_attention` (a PyTorch module). Most tasks ask for a function, called on
each test's arguments; a task with a ``harness`` asks for something else (a class) and sends the
sandbox the trusted code that builds it and calls it on one test.
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Args = tuple[Any, ...]
Draw = Callable[[np.random.Generator], Args]


@dataclass(frozen=True)
class Mutant:
    """One named mistake: the reference with it applied, and what to tell a student who makes it.
    ``feedback`` may name an argument's shape as ``{shape:NAME}`` (the first test's)."""

    tag: str
    fn: Callable[..., Any]
    feedback: str


@dataclass(frozen=True)
class CodeTask:
    """A function to write: its name and arguments, the task in words, the reference and the mutants.

    A task that asks for more than a NumPy function says so in the fields after ``stub_body``:
    ``needs`` the packages it imports beyond NumPy (`attnquiz.engine.extras`), ``harness`` the code
    that puts the student's definition to one test inside the sandbox, ``solution`` the worked
    solution in the student's library (the NumPy ``reference`` then only grades), ``stub_text`` the
    stub, ``call`` the signature as the student writes it, ``definition`` its first line, ``library``
    and ``what`` the words for what is written ("a PyTorch class") and ``example`` how the example
    is shown."""

    name: str
    function: str
    arguments: tuple[str, ...]
    task: str
    reference: Callable[..., Any]
    mutants: tuple[Mutant, ...]
    draw: Draw
    edges: Callable[[np.random.Generator], list[Args]]
    hidden: int = 6
    stub_body: str = "    ..."
    needs: tuple[str, ...] = ()
    harness: str = ""
    solution: str = ""
    stub_text: str = ""
    call: str = ""
    definition: str = ""
    library: str = "NumPy"
    what: str = "function"
    example: Callable[[Args], tuple[str, str]] | None = None
    """The example as the student would try it, (the inputs and the call, the names it returns); None:
    each argument assigned as a NumPy array, then the function called."""

    @property
    def signature(self) -> str:
        """``attention(Q, K, V)``."""
        return self.call or f"{self.function}({', '.join(self.arguments)})"

    @property
    def first_line(self) -> str:
        """The line that starts the student's definition: ``def attention(Q, K, V):``."""
        return self.definition or f"def {self.signature}:"

    def stub(self) -> str:
        """The stub the student starts from."""
        if self.stub_text:
            return self.stub_text
        head = next(line for line in self.source().splitlines() if line.startswith("def "))
        return f"import numpy as np\n\n\n{head}\n{self.stub_body}\n"

    def source(self) -> str:
        """The worked solution: the reference's source, as the key prints it (without type hints'
        noise), or the task's own ``solution``."""
        if self.solution:
            return self.solution
        text = textwrap.dedent(inspect.getsource(self.reference))
        lines = [line.split("  # noqa")[0].rstrip() for line in text.splitlines()]
        return (
            "import numpy as np\n\n\n"
            + "\n".join(lines).replace(": Array", "").replace(" -> Array", "")
            + "\n"
        )

    def tests(self, draw: int) -> list[Args]:
        """The test inputs of a variant: the example shown (first), then the hidden ones and the edges."""
        rng = np.random.default_rng(draw)
        cases = [self.draw(rng) for _ in range(1 + self.hidden)]
        return cases + self.edges(rng)


def shapes_of(arguments: Sequence[str], args: Args) -> dict[str, str]:
    """Each argument's shape as the course writes it, ``(3, 2)`` (for the feedback's ``{shape:NAME}``)."""
    found: dict[str, str] = {}
    for name, value in zip(arguments, args, strict=False):
        shape = getattr(value, "shape", None)
        if shape is not None:
            found[name.split("=")[0]] = (
                "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"
            )
    return found


# Feedback shared by the NumPy masked softmax and the PyTorch class: the same mistakes, said once.
MASK_ZERO = (
    "You set the hidden scores to 0 instead of $-\\infty$; $e^0 = 1$, so the hidden keys still get "
    "weight. Only $e^{-\\infty} = 0$ removes them."
)
MASK_AFTER = (
    "You masked after the softmax, so the rows no longer sum to 1. Mask the scores with $-\\infty$ "
    "before the softmax, which renormalises over the visible keys."
)
