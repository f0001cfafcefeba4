"""The compiled form of a formula expression: a tree of nodes, each computing its value from the variables.

Built by `attnquiz.engine.formula.expressions.compile_expression`; computed with `.arithmetic`.
"""

from __future__ import annotations

from collections.abc import Callable

from attnquiz.engine.formula.arithmetic import FUNCTIONS, binary, compare, negate, number_or_list, truth
from attnquiz.engine.formula.values import Env, Value

Run = Callable[[Env], Value]
"""How a compiled expression, or one node of it, is computed: called with the variables."""


# The compiled form: a tree of small nodes, each called with the variables. Nodes rather than closures,
# so that a compiled bank can be pickled into the bank cache (a closure cannot be); plain classes with
# __slots__ rather than dataclasses, which would cost milliseconds of every start-up to build.


class Const:
    """A number, or true/false, written in the expression."""

    __slots__ = ("value",)

    def __init__(self, value: Value) -> None:
        self.value = value

    def __call__(self, env: Env) -> Value:
        return self.value


class Variable:
    """A parameter's name, looked up in the variables."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, env: Env) -> Value:
        return env[self.name]


class Binary:
    """``left op right`` for ``+ - * / ^`` (see `binary`)."""

    __slots__ = ("left", "op", "right")

    def __init__(self, op: str, left: Run, right: Run) -> None:
        self.op, self.left, self.right = op, left, right

    def __call__(self, env: Env) -> Value:
        return binary(self.op, self.left(env), self.right(env))


class Negated:
    """``-inner``."""

    __slots__ = ("inner",)

    def __init__(self, inner: Run) -> None:
        self.inner = inner

    def __call__(self, env: Env) -> Value:
        return negate(self.inner(env))


class Plus:
    """``+inner``: its number or list as it is."""

    __slots__ = ("inner",)

    def __init__(self, inner: Run) -> None:
        self.inner = inner

    def __call__(self, env: Env) -> Value:
        return number_or_list(self.inner(env), "`+`")


class Not:
    """``not inner``."""

    __slots__ = ("inner",)

    def __init__(self, inner: Run) -> None:
        self.inner = inner

    def __call__(self, env: Env) -> Value:
        return not truth(self.inner(env), "not")


class AnyOf:
    """``a or b or ...``: whether any of the conditions holds."""

    __slots__ = ("parts",)

    def __init__(self, parts: tuple[Run, ...]) -> None:
        self.parts = parts

    def __call__(self, env: Env) -> Value:
        return any(truth(part(env), "or") for part in self.parts)


class AllOf:
    """``a and b and ...``: whether all of the conditions hold."""

    __slots__ = ("parts",)

    def __init__(self, parts: tuple[Run, ...]) -> None:
        self.parts = parts

    def __call__(self, env: Env) -> Value:
        return all(truth(part(env), "and") for part in self.parts)


class Chain:
    """``a < b <= c``: every comparison holds, each side computed once."""

    __slots__ = ("chain", "first")

    def __init__(self, first: Run, chain: tuple[tuple[str, Run], ...]) -> None:
        self.first, self.chain = first, chain

    def __call__(self, env: Env) -> Value:
        left = self.first(env)
        for op, part in self.chain:
            right = part(env)
            if not compare(op, left, right):
                return False
            left = right
        return True


class Call:
    """A call of one of `FUNCTIONS`, found by its name when called (so that the node pickles)."""

    __slots__ = ("args", "name")

    def __init__(self, name: str, args: tuple[Run, ...]) -> None:
        self.name, self.args = name, args

    def __call__(self, env: Env) -> Value:
        return FUNCTIONS[self.name].run([arg(env) for arg in self.args])


class ListOf:
    """``[a, b, ...]``: a list of the entries' values."""

    __slots__ = ("items",)

    def __init__(self, items: tuple[Run, ...]) -> None:
        self.items = items

    def __call__(self, env: Env) -> Value:
        return tuple(item(env) for item in self.items)
