"""A loaded bank and its items, and how an item becomes a Question for a seed (or the past paper's own)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from msgspec.structs import replace

from attnquiz.engine.answers.kinds import ChoiceAnswer, IntegerAnswer, ShapeAnswer
from attnquiz.engine.bank.item_facts import ItemFacts
from attnquiz.engine.errors import GeneratorRunError, ItemNotFoundError, QuizError
from attnquiz.engine.extras import unavailable

if TYPE_CHECKING:
    from attnquiz.engine.bank.concept_items import Explain
    from attnquiz.engine.formula.items import Formula
    from attnquiz.engine.schema import Item
from attnquiz.engine.registry import GeneratorSpec, builtin_spec, generators, is_builtin
from attnquiz.engine.seeding import ORIGINAL_CODE, QuestionStreams, check_seed, question_rng, variant_code
from attnquiz.engine.variant import Question, Variant

_BUILTIN_NAME = "builtin_generator"
"""Where a pickled item keeps its built-in generator's name (see `BankItem.__getstate__`)."""
_PARAMETERS = "pickled_parameters"
"""Where a pickled item keeps its parameters (``kwargs`` and ``original_kwargs``), pickled apart."""
_HAS_ORIGINAL = "pickled_has_original"
"""Where a pickled item keeps whether it has an original, so that asking needs no parameters."""
_ITEM = "pickled_item"
"""Where a pickled item keeps its validated model (pydantic), pickled apart."""
_FACTS = "item_facts"
"""Where an item keeps its `ItemFacts` (pickled with it, as plain data)."""


class NoOriginalError(QuizError):
    """The item has no past-paper instance (its statement is not in the notes)."""


class _Frozen:
    """Read-only fields, equal by value and never hashed, as a frozen dataclass is, without the
    dataclass machinery: a bank and its items are made on every start that reads the bank cache, and
    `dataclasses` compiled their methods at import (a few milliseconds of the first question).

    ``__init__`` sets the ``_FIELDS`` in ``__dict__``; a field filled lazily (an item read back from
    the cache) is set through ``object.__setattr__``. Equality compares the ``_FIELDS`` alone, not
    the rest of ``__dict__`` (an item's cached facts, its still-pickled parameters)."""

    _FIELDS: tuple[str, ...] = ()

    __hash__ = None  # type: ignore[assignment]  # equal by value, and holds dicts: never a key

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self._FIELDS)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of a {type(self).__name__}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r} of a {type(self).__name__}")


class BankItem(_Frozen):
    """An item of a loaded bank: its YAML, its generator and its validated parameters.

    A formula item has its compiled ``formula``, and a ``spec`` that runs it like a generator (its
    ``original_kwargs`` are the past paper's parameter values), so every caller treats both alike.
    """

    item: Item
    spec: GeneratorSpec
    kwargs: Mapping[str, Any]
    original_kwargs: Mapping[str, Any] | None
    line: int
    bank: str
    formula: Formula | None
    explain: Explain | None
    folder: str
    """The bank's folder, where the images its texts show are found (`attnquiz.engine.bank.images`)."""

    _FIELDS = ("item", "spec", "kwargs", "original_kwargs", "line", "bank", "formula", "explain", "folder")

    def __init__(
        self,
        item: Item,
        spec: GeneratorSpec,
        kwargs: Mapping[str, Any],
        original_kwargs: Mapping[str, Any] | None,
        line: int,
        bank: str,
        formula: Formula | None = None,
        explain: Explain | None = None,
        folder: str = "",
    ) -> None:
        self.__dict__.update(
            item=item,
            spec=spec,
            kwargs=kwargs,
            original_kwargs=original_kwargs,
            line=line,
            bank=bank,
            formula=formula,
            explain=explain,
            folder=folder,
        )

    def __repr__(self) -> str:
        return f"BankItem(bank={self.bank!r}, line={self.line}, id={self.id!r})"

    # A cached bank (`attnquiz.engine.bank.finding`) stores a built-in generator by its name, and an item
    # read back looks its generator up when it is first used: the first question of `quiz run`
    # imports the module of its own generator, not those of all the bank's items (a fifth of the
    # cached bank's start-up). Its parameters are pickled apart and read back when first used too:
    # they hold the generators' own classes (statement pools, a plugin's objects), whose modules only
    # the items asked for need. Its validated model is pickled apart as well: what a question needs
    # of it is in its `facts` (plain data), so a question built from the cache imports no pydantic.
    def __getstate__(self) -> dict[str, Any]:
        import pickle

        state = dict(self.__dict__)
        state[_FACTS] = self.facts
        if "item" in state:  # else still pickled, as read back
            state[_ITEM] = pickle.dumps(state.pop("item"), protocol=pickle.HIGHEST_PROTOCOL)
        spec = state.get("spec")
        if isinstance(spec, GeneratorSpec) and is_builtin(spec):
            del state["spec"]
            state[_BUILTIN_NAME] = spec.name
        if "kwargs" in state:  # else still pickled, as read back: kept so
            parameters = (state.pop("kwargs"), state.pop("original_kwargs"))
            state[_PARAMETERS] = pickle.dumps(parameters, protocol=pickle.HIGHEST_PROTOCOL)
            state[_HAS_ORIGINAL] = parameters[1] is not None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        name = state.get(_BUILTIN_NAME)
        if name is not None and name not in generators:
            # A generator renamed since the entry was written: the cache reads the file instead.
            raise LookupError(f"no built-in generator {name!r}")
        self.__dict__.update(state)

    if not TYPE_CHECKING:  # for the type checker `spec` is a field like any other

        def __getattr__(self, name: str) -> Any:
            # Called only for an attribute not set: the spec, the parameters or the validated model
            # of an item read back from the cache.
            builtin = self.__dict__.get(_BUILTIN_NAME)
            if name == "spec" and builtin is not None:
                spec = builtin_spec(builtin)
                object.__setattr__(self, "spec", spec)
                return spec
            if name == "item" and _ITEM in self.__dict__:
                import pickle

                item = pickle.loads(self.__dict__[_ITEM])
                object.__setattr__(self, "item", item)
                del self.__dict__[_ITEM]
                return item
            pickled = self.__dict__.get(_PARAMETERS)
            if name in {"kwargs", "original_kwargs"} and pickled is not None:
                import pickle

                kwargs, original_kwargs = pickle.loads(pickled)
                object.__setattr__(self, "kwargs", kwargs)
                object.__setattr__(self, "original_kwargs", original_kwargs)
                del self.__dict__[_PARAMETERS]
                return self.__dict__[name]
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def facts(self) -> ItemFacts:
        """What questions need of the validated item, as plain data (`attnquiz.engine.bank.item_facts`)."""
        facts = self.__dict__.get(_FACTS)
        if not isinstance(facts, ItemFacts):
            facts = ItemFacts.of(self.item)
            object.__setattr__(self, _FACTS, facts)
        return facts

    @property
    def id(self) -> str:
        """The item's id."""
        return self.facts.id

    @property
    def topic(self) -> str:
        """The item's topic."""
        return self.facts.topic

    @property
    def source(self) -> str:
        """Where the item comes from, as the notes cite it."""
        return self.facts.source

    @property
    def unavailable(self) -> str:
        """Why this item is not offered here ("" when it is): an optional package its bank says it
        ``requires`` (PyTorch) is not installed (`attnquiz.engine.extras`)."""
        return unavailable(self.facts.requires)

    @property
    def has_original(self) -> bool:
        """Whether the past paper's own instance can be shown."""
        known = self.__dict__.get(_HAS_ORIGINAL)  # read back from the cache: known without the parameters
        return known if isinstance(known, bool) else self.original_kwargs is not None

    def question(self, seed: int, streams: QuestionStreams | None = None) -> Question:
        """The variant of this item for ``seed`` (``streams``: the seed's, when a caller builds many
        items of one seed: the same stream, seeded with the others)."""
        check_seed(seed)
        if streams is not None and streams.seed == seed:
            rng = streams.rng(self.bank, self.id)
        else:
            rng = question_rng(seed, self.bank, self.id)
        variant = self._run(rng, self.kwargs, seed)
        return self._wrap(variant, seed, variant_code(seed))

    def original(self) -> Question:
        """The past paper's own instance, with its inputs."""
        if self.original_kwargs is None:
            # The notes about the original say why it is missing ("the paper's wording is not in the notes").
            why = self.facts.notes_not_on("variants")
            raise NoOriginalError(
                f"{self.id}: this item has no original instance"
                + (f" ({why})" if why else "")
                + "; try --seed N for a variant"
            )
        # The original's inputs are all given, so the generator draws nothing that matters;
        # a fixed stream keeps even incidental draws (such as option order) reproducible.
        variant = self._run(question_rng(0, self.bank, self.id), self.original_kwargs, None)
        return self._wrap(variant, None, ORIGINAL_CODE)

    def _run(self, rng: np.random.Generator, kwargs: Mapping[str, Any], seed: int | None) -> Variant:
        try:
            variant: object = self.spec.fn(rng, **kwargs)  # a plugin may return anything
        except BaseException as exc:
            # Imported on failure only: tracebacks and its traceback module are not on a variant's path.
            from attnquiz.engine.bank import tracebacks

            # A formula item's error: its module is imported with the bank's first formula item, so
            # when it is not, none was raised (a bank of generators never imports the formula language).
            if "attnquiz.engine.formula.items" in sys.modules:
                from attnquiz.engine.formula.items import FormulaError

                if isinstance(exc, FormulaError):
                    # Already one located line (file:line: field: message, values); the seed reproduces it.
                    raise exc.for_seed(seed) from None
            # A generator bug must still reach the user as one clear line that reproduces it; a
            # plugin's (even an exit) also says where in the bank's code, with that code's traceback.
            if not tracebacks.is_code_failure(exc):
                raise  # Ctrl-C, or an export's stop on SIGTERM
            run = f"(seed={seed if seed is not None else 'original'}, params={dict(kwargs)})"
            theirs = self.folder and not is_builtin(self.spec)
            frames = tracebacks.bank_frames(exc.__traceback__, Path(self.folder)) if theirs else []
            if not frames:  # quiz's own generator (a bug of quiz's): no code of the bank to point at
                raised = tracebacks.exception_text(exc)
                raise GeneratorRunError(
                    f"item {self.id!r}: generator {self.spec.name!r} raised {raised} {run}"
                ) from exc
            message = (
                f"{tracebacks.where(frames, '')}: item {self.id!r}: generator {self.spec.name!r} raised "
                f"{tracebacks.exception_text(exc)} {run}"
            )
            raise GeneratorRunError("\n".join([message, *tracebacks.format_frames(frames)])) from None
        if not isinstance(variant, Variant):  # a plugin that forgot its return (its annotation says Variant)
            from attnquiz.engine.bank import tracebacks

            where = tracebacks.definition(self.spec.fn)
            raise GeneratorRunError(
                f"{where + ': ' if where else ''}item {self.id!r}: generator {self.spec.name!r} returned "
                f"{type(variant).__name__}, not a Variant (seed={seed if seed is not None else 'original'})"
            )
        return self._apply_overrides(variant)

    def _apply_overrides(self, variant: Variant) -> Variant:
        facts = self.facts  # a formula or concept item overrides nothing: it builds its own answer
        answer = variant.answer
        tolerance = facts.tolerance
        # Rebuilding re-checks every mistake: only when the tolerance differs.
        if (
            tolerance is not None
            and not isinstance(answer, ChoiceAnswer | IntegerAnswer | ShapeAnswer)
            and tolerance != answer.tolerance
        ):
            answer = replace(answer, tolerance=tolerance)
        if facts.scoring is not None and isinstance(answer, ChoiceAnswer):
            answer = replace(answer, scoring=facts.scoring)
        if answer is variant.answer:
            return variant
        return replace(variant, answer=answer)

    def _wrap(self, variant: Variant, seed: int | None, code: str) -> Question:
        facts = self.facts
        return Question(
            bank=self.bank,
            folder=self.folder,
            item_id=facts.id,
            source=facts.source,
            topic=facts.topic,
            seed=seed,
            code=code,
            variant=variant,
            student_note=facts.note_text("students", original=seed is None),
            instructor_note=facts.note_text("instructors", original=seed is None),
        )


class Bank(_Frozen):
    """A validated bank: its name, title, where it came from, and its items in order."""

    name: str
    title: str
    description: str
    path: str
    items: tuple[BankItem, ...]
    plugins: tuple[Path, ...]
    """The bank's plugin files (Python code), whether or not this load imported them."""
    origin: str
    """Where `attnquiz.engine.bank.finding` found it: built-in, QUIZ_PATH or path ("" when loaded
    directly)."""
    images: tuple[tuple[str, int, int], ...]
    """The image files its texts show (relative to its folder), each with the size and modification
    time (ns) it had when checked: a cached bank whose images changed is read again."""

    _FIELDS = ("name", "title", "description", "path", "items", "plugins", "origin", "images")

    def __init__(
        self,
        name: str,
        title: str,
        description: str,
        path: str,
        items: tuple[BankItem, ...],
        plugins: tuple[Path, ...] = (),
        origin: str = "",
        images: tuple[tuple[str, int, int], ...] = (),
    ) -> None:
        self.__dict__.update(
            name=name,
            title=title,
            description=description,
            path=path,
            items=items,
            plugins=plugins,
            origin=origin,
            images=images,
        )

    def __repr__(self) -> str:
        return f"Bank(name={self.name!r}, path={self.path!r}, {len(self.items)} items)"

    def found_at(self, origin: str) -> Bank:
        """This bank as found at ``origin`` (built-in, QUIZ_PATH or path)."""
        fields = {name: getattr(self, name) for name in self._FIELDS}
        return Bank(**{**fields, "origin": origin})

    def get(self, item_id: str) -> BankItem:
        """The item with that id, or an error that suggests the closest ids."""
        for entry in self.items:
            if entry.id == item_id:
                return entry
        import difflib  # only to suggest a name for one that is not found

        close = difflib.get_close_matches(item_id, [e.id for e in self.items], n=3, cutoff=0.5)
        hint = (
            f" (did you mean {', '.join(close)}?)" if close else f"; `quiz list {self.name}` shows its items"
        )
        raise ItemNotFoundError(f"bank {self.name!r} has no item {item_id!r}{hint}")

    def topics(self) -> list[str]:
        """The bank's topics, in the order they first appear."""
        return list(dict.fromkeys(e.topic for e in self.items))

    def check_topic(self, topic: str) -> str:
        """``topic`` if the bank has it, else an error that suggests the closest topics."""
        known = self.topics()
        if topic in known:
            return topic
        import difflib  # only to suggest a name for one that is not found

        close = difflib.get_close_matches(topic, known, n=3, cutoff=0.5)
        hint = f" (did you mean {', '.join(close)}?)" if close else f" (topics: {', '.join(known)})"
        raise ItemNotFoundError(f"bank {self.name!r} has no topic {topic!r}{hint}")
