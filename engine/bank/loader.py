"""YAML bank file → validated `Bank`, with every problem reported as ``file:line: field: message``.

This is the only module that imports yaml. It reads YAML 1.2 scalars (``1e-3`` is a number,
``no`` and ``off`` are strings, dates stay text) rather than PyYAML's YAML 1.1 defaults, records
the line of every key, validates the file against `attnquiz.engine.schema`, then checks each item's
generator and parameters against the registry, and reports all problems at once.
"""

from __future__ import annotations

import difflib
import itertools
import re
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pydantic
import yaml

from attnquiz.engine.bank.concept_items import Explain, check_explain
from attnquiz.engine.bank.file_text import MAX_BANK_BYTES, decode_bank, read_bank_bytes
from attnquiz.engine.bank.loaded import Bank, BankItem
from attnquiz.engine.errors import BankError, GeneratorSpecError, Issue
from attnquiz.engine.formula.items import Formula, FormulaCompileError
from attnquiz.engine.registry import Registry, load_builtin_generators
from attnquiz.engine.schema import (
    ITEM_KINDS,
    KEBAB,
    SNAKE,
    BankModel,
    ExplainItem,
    FormulaItem,
    GeneratorItem,
    ToleranceSpec,
)

Loc = tuple[str | int, ...]

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Yaml12Loader(_BaseLoader):  # type: ignore[misc]
    """SafeLoader with YAML 1.2 core-schema booleans and floats, and no timestamps."""


_REPLACED_TAGS = {
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:timestamp",
}
_resolvers = {
    first: [(tag, rx) for tag, rx in entries if tag not in _REPLACED_TAGS]
    for first, entries in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Yaml12Loader.yaml_implicit_resolvers = _resolvers
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789")
)


def _construct_int(loader: Any, node: yaml.ScalarNode) -> int:
    # YAML 1.2: 017 is seventeen (PyYAML's 1.1 reading would make it octal 15).
    text = str(loader.construct_scalar(node))
    return int(text, 0) if text[:2] in {"0o", "0x"} else int(text, 10)


_Yaml12Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+0123456789."),
)

_MAX_DEPTH = 50
MAX_NODES = 50_000
"""A bank with more YAML events (keys, values, list entries, starts and ends of lists and mappings)
than this is refused before any tree is built (week 1 has ~2,800): composing costs ~0.5 kB and 4 µs
a node, so a 1 MB file of ``[1,1,1,…]`` must not be composed."""


class _TooLarge(Exception):
    """The document has more nodes than `MAX_NODES`: building stops at once."""


class _AliasOfCollection(Exception):
    """An alias of a mapping or list: building stops at once (what follows would only be noise)."""

    def __init__(self, node: yaml.Node, path: Loc, after: int) -> None:
        super().__init__()
        self.node = node
        self.path = path
        self.after = after


class _Located:
    """Python data built from a YAML node tree, with the line of every key path.

    The tree is built with bounded work: every node is counted, and an alias (``*name``) of a
    mapping or a list is refused rather than expanded, so a 46-byte ``- &r [*r, *r]`` or a
    "billion laughs" file costs what its text costs. An alias of a scalar is still allowed.
    """

    def __init__(self, file: str) -> None:
        self.file = file
        self.lines: dict[Loc, int] = {}
        self.literal_starts: dict[Loc, int] = {}
        """For each text written as a literal block (``prompt: |``), the line before its first line."""
        self.issues: list[Issue] = []
        self._built: set[int] = set()  # the collection nodes built so far (a second visit is an alias)
        self._nodes = 0

    def build(self, loader: Any, node: yaml.Node, path: Loc, after: int = 0) -> Any:
        """The data of ``node``; ``after`` is where in the text its own notation starts at the
        earliest (past its key or the previous entry), which finds the line of an alias."""
        self.lines.setdefault(path, node.start_mark.line + 1)
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise _TooLarge
        if len(path) > _MAX_DEPTH:
            self.issue(path, "nested too deeply")
            return None
        if isinstance(node, yaml.MappingNode | yaml.SequenceNode):
            if id(node) in self._built:
                raise _AliasOfCollection(node, path, after)
            self._built.add(id(node))
        if isinstance(node, yaml.MappingNode):
            result: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = (
                    loader.construct_object(key_node, deep=True)
                    if isinstance(key_node, yaml.ScalarNode)
                    else None
                )
                if isinstance(key, bool) and isinstance(key_node, yaml.ScalarNode):
                    # A plain `true:` key (a choice statement's truth) is a name, not a boolean.
                    key = key_node.value
                if not isinstance(key, str | int) or isinstance(key, bool):
                    self.issues.append(
                        Issue(
                            self.file,
                            key_node.start_mark.line + 1,
                            format_loc(path),
                            "keys must be plain names",
                        )
                    )
                    continue
                key = str(key)
                child = (*path, key)
                if key in result:
                    self.issues.append(
                        Issue(
                            self.file,
                            key_node.start_mark.line + 1,
                            format_loc(child),
                            f"duplicate key (first given at line {self.lines[child]})",
                        )
                    )
                    continue
                self.lines[child] = key_node.start_mark.line + 1
                result[key] = self.build(loader, value_node, child, key_node.end_mark.index)
            return result
        if isinstance(node, yaml.SequenceNode):
            starts = [node.start_mark.index + 1, *(v.end_mark.index for v in node.value)]
            return [self.build(loader, v, (*path, i), starts[i]) for i, v in enumerate(node.value)]
        if isinstance(node, yaml.ScalarNode) and node.style == "|":
            # The node starts at its `|`: the text's line n is n lines below it (a literal block
            # keeps every line break, blank lines included).
            self.literal_starts[path] = node.start_mark.line + 1
        return loader.construct_object(node, deep=True)

    def line_of(self, loc: Loc) -> int:
        """The line of the deepest part of ``loc`` that the file has (a missing key: its parent)."""
        for end in range(len(loc), -1, -1):
            line = self.lines.get(loc[:end])
            if line is not None:
                return line
        return 1

    def text_line(self, loc: Loc, row: int | None) -> int:
        """The line of row ``row`` (1-based) of the text at ``loc``: that row's own line in a literal
        block ``|``; else (a folded or quoted text, or no row) the line of the text's key."""
        start = self.literal_starts.get(loc)
        if row is not None and start is not None:
            return start + row
        return self.line_of(loc)

    def issue(self, loc: Loc, message: str, row: int | None = None) -> None:
        self.issues.append(Issue(self.file, self.text_line(loc, row), format_loc(loc), message))


def format_loc(loc: Loc) -> str:
    """``('items', 3, 'params', 'dim')`` → ``items[3].params.dim``."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            # A key is quoted as written, but never at length (a file that is not a bank has long ones).
            name = part if len(part) <= _KEY_SHOWN else part[: _KEY_SHOWN - 1] + "…"
            name = "".join(c if c.isprintable() else "?" for c in name)  # no control sequence either
            text += f".{name}" if text else name
    return text


_KEY_SHOWN = 40


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:37] + "...")
    if isinstance(value, bool | int | float) or value is None:
        return repr(value)
    return type(value).__name__


_PATTERN_WORDS = {
    KEBAB: "must be kebab-case: lower-case letters and digits joined by '-' (e.g. additive-score)",
    SNAKE: "must be a snake_case Python name (e.g. additive_score)",
}


def _model_at(
    loc: Loc, params_model: type[pydantic.BaseModel] | None, data: Any = None
) -> type[pydantic.BaseModel] | None:
    """The model whose fields are allowed at ``loc`` (for "did you mean" on unknown fields)."""
    if not loc:
        return BankModel
    if loc[0] == "items" and len(loc) >= 2 and _item_kind(data, loc[1]) == "formula":
        return _model_along(FormulaItem, loc[2:])
    if loc[0] == "items" and len(loc) >= 2 and _item_kind(data, loc[1]) == "explain":
        return _model_along(ExplainItem, loc[2:])
    if loc[0] == "items" and len(loc) == 2:
        return GeneratorItem
    if loc[0] == "items" and len(loc) == 3:
        if loc[2] in {"params", "original"}:
            return params_model
        if loc[2] == "tolerance":
            return ToleranceSpec
    return None


def _item_kind(data: Any, index: str | int) -> Any:
    """The ``kind`` of item ``index`` of the raw bank data (``generator`` when it is not given)."""
    items = data.get("items") if isinstance(data, dict) else None
    if not isinstance(index, int) or not isinstance(items, list) or not 0 <= index < len(items):
        return None
    item = items[index]
    return item.get("kind", "generator") if isinstance(item, dict) else None


def _model_along(annotation: Any, path: Loc) -> type[pydantic.BaseModel] | None:
    """The model reached from ``annotation`` along ``path`` (field names, list indexes, mapping keys)."""
    origin = typing.get_origin(annotation)
    if origin in {typing.Union, types.UnionType}:
        found = (_model_along(arg, path) for arg in typing.get_args(annotation) if arg is not type(None))
        return next((model for model in found if model is not None), None)
    if not path:
        is_model = isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel)
        return annotation if is_model else None
    if origin is list:
        return _model_along(typing.get_args(annotation)[0], path[1:])
    if origin is dict:
        return _model_along(typing.get_args(annotation)[1], path[1:])
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        field = annotation.model_fields.get(str(path[0]))
        return _model_along(field.annotation, path[1:]) if field is not None else None
    return None


def _without_kind_tag(loc: Loc) -> Loc:
    """pydantic names the member of the items' union (``items[0].formula.answer``): drop that part."""
    if len(loc) >= 3 and loc[0] == "items" and isinstance(loc[1], int) and loc[2] in ITEM_KINDS:
        loc = (*loc[:2], *loc[3:])
    # A formula item's figure is a union too (``figures[0].line.where``).
    if len(loc) >= 5 and loc[2] == "figures" and isinstance(loc[3], int) and loc[4] in _FIGURE_KINDS:
        return (*loc[:4], *loc[5:])
    return loc


_FIGURE_KINDS = ("heatmap", "line")


def _without_note_index(loc: Loc, data: Any) -> Loc:
    """A single note written as a mapping is validated as a list of one (``note[0].for``): drop the 0."""
    if len(loc) >= 4 and loc[0] == "items" and isinstance(loc[1], int) and loc[2:4] == ("note", 0):
        items = data.get("items") if isinstance(data, dict) else None
        item = items[loc[1]] if isinstance(items, list) and loc[1] < len(items) else None
        if isinstance(item, dict) and isinstance(item.get("note"), dict):
            return (*loc[:3], *loc[4:])
    return loc


_LITERAL_SYNONYMS = {
    "numeric": "number",
    "float": "number",
    "real": "number",
    "int": "integer",
    "count": "integer",
}
"""Names other tools give a kind (an answer's `numeric`, as in Moodle): the one quiz uses."""


def _pydantic_issues(
    located: _Located,
    error: pydantic.ValidationError,
    prefix: Loc,
    known_lines: Loc | None = None,
    params_model: type[pydantic.BaseModel] | None = None,
    data: Any = None,
) -> None:
    """Translate pydantic's errors into issues at the lines of the offending keys, in plain words."""
    for detail in error.errors(include_url=False):
        loc: Loc = tuple(detail["loc"])
        full = _without_note_index(_without_kind_tag((*prefix, *loc)), data)
        message = str(detail["msg"]).removeprefix("Value error, ")
        kind = detail["type"]
        value = detail.get("input")
        suggestion = ""
        if kind == "item_kind":
            full = (*full, "kind")
            value = _item_kind(data, full[1])
            close = difflib.get_close_matches(str(value), ITEM_KINDS, n=1, cutoff=0.6)
            message += f" (did you mean {close[0]!r}?)" if close else ""
        if kind == "extra_forbidden":
            model = _model_at(full[:-1], params_model, data)
            allowed = sorted(model.model_fields) if model is not None else []
            close = difflib.get_close_matches(str(full[-1]), allowed, n=1, cutoff=0.6)
            message = "unknown field" + (
                f" (did you mean {close[0]!r}?)"
                if close
                else f" (allowed: {', '.join(allowed)})"
                if allowed
                else ""
            )
        elif kind == "literal_error" and isinstance(value, str):
            expected: list[str] = re.findall(r"'([^']*)'", str(detail.get("ctx", {}).get("expected", "")))
            meant = _LITERAL_SYNONYMS.get(value.lower()) or next(
                iter(difflib.get_close_matches(value, expected, n=1, cutoff=0.6)), ""
            )
            if meant in expected:
                suggestion = meant
        elif kind == "missing":
            message = "required field is missing"
        elif kind == "string_pattern_mismatch":
            message = _PATTERN_WORDS.get(str(detail.get("ctx", {}).get("pattern")), message)
        elif kind in {"model_type", "dict_type"} and len(full) == 2 and full[0] == "items":
            message = "an item must be a mapping with id, source, topic and generator"
        if kind not in {"missing", "extra_forbidden"} and not isinstance(value, dict | list):
            hint = f": did you mean {suggestion!r}?" if suggestion else ""
            message += f" (got {_describe(value)}{hint})"
        where = known_lines if known_lines is not None and full not in located.lines else full
        located.issues.append(Issue(located.file, located.line_of(where), format_loc(full), message))


def parse_yaml(text: str, file: str) -> tuple[Any, _Located]:
    """The data of a YAML document and the lines of its keys; a syntax error is a BankError.

    The work is bounded by the text's length: at most `MAX_BANK_BYTES` characters, at most
    `MAX_NODES` parser events, and no alias of a mapping or list expanded.
    """
    located = _Located(file)
    quotable = text if looks_like_bank(text) else None
    if len(text) > MAX_BANK_BYTES:
        message = f"the file has {len(text):,} characters; a bank may have at most {MAX_BANK_BYTES:,}"
        raise BankError(file, [Issue(file, 1, "", message)])
    loader = _Yaml12Loader(text)
    try:
        _count_events(text)  # before any node is composed: composing costs memory
        node = loader.get_single_node()
        data = located.build(loader, node, ()) if node is not None else None
    except _TooLarge:
        message = f"more than {MAX_NODES:,} YAML values: split the bank into smaller ones"
        raise BankError(file, [Issue(file, 1, "", message)]) from None
    except _AliasOfCollection as alias:
        what = "mapping" if isinstance(alias.node, yaml.MappingNode) else "list"
        # The node is the anchored one (its marks are the anchor's): the alias is the first `*`
        # past the key or the previous entry.
        star = text.find("*", alias.after)
        line = text.count("\n", 0, star) + 1 if star >= 0 else located.line_of(alias.path)
        message = (
            f"an alias (*name) of a {what} (anchored at line {alias.node.start_mark.line + 1}) is not "
            "allowed in a bank: write the values out (aliases of single values are fine)"
        )
        issue = Issue(file, line, format_loc(alias.path), message, token="*")
        raise BankError(file, [issue], quotable) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        column = mark.column + 1 if mark else None
        problem = exc.problem or exc.context or "cannot be read"
        problem += _tab_hint(text, line)
        raise BankError(file, [Issue(file, line, "", f"YAML syntax: {problem}", column)], quotable) from None
    except yaml.YAMLError as exc:
        raise BankError(file, [Issue(file, 1, "", f"YAML: {exc}")]) from None
    except RecursionError:
        raise BankError(file, [Issue(file, 1, "", "YAML: nested too deeply")]) from None
    finally:
        loader.dispose()
    return data, located


def _count_events(text: str) -> None:
    """Raise `_TooLarge` past `MAX_NODES` parser events: a cheap pass (C parser, no nodes kept)."""
    loader = _Yaml12Loader(text)
    try:
        for count in itertools.count(1):
            if not loader.check_event():
                return
            loader.get_event()
            if count > MAX_NODES:
                raise _TooLarge
    finally:
        loader.dispose()


_BANK_KEY = re.compile(r"^[\"']?(?:bank|items)[\"']?[ \t]*:", re.MULTILINE)


def looks_like_bank(text: str) -> bool:
    """Whether a file's text may be quoted in messages: it has a top-level ``bank:`` or ``items:``.

    A path given by mistake, or a bank that is a symlink to another file (a key, a password file),
    must not have its lines echoed as "unknown field" names or source excerpts.
    """
    return _BANK_KEY.search(text) is not None


def _tab_hint(text: str, line: int) -> str:
    """YAML forbids tabs in indentation, and its messages never say "tab": say it."""
    lines = text.splitlines()
    near = lines[max(0, line - 2) : line]  # the line of the error and the one before it
    if any("\t" in entry for entry in near):
        return " (the line has a tab: YAML indents with spaces only)"
    return ""


def load_bank_text(
    text: str,
    file: str,
    registry: Registry | None = None,
    base_dir: Path | None = None,
    *,
    plugins: bool = False,
) -> Bank:
    """Validate a bank's YAML text; every problem in it is raised at once as a BankError.

    ``base_dir`` is where the bank's ``plugins`` are looked for (default: the folder of ``file``).
    A bank's plugins are Python code: they are imported only when ``plugins`` is true (a command
    that builds variants). Otherwise an item of a plugin's generator is kept with its parameters
    unchecked, and building a variant of it raises `PluginsNotImportedError`.
    """
    registry = registry or load_builtin_generators()
    data, located = parse_yaml(text, file)
    quotable = text if looks_like_bank(text) else None
    if not isinstance(data, dict) or quotable is None:
        # Nothing of a file that is not a bank is quoted: not its keys, not its lines.
        located.issues = [
            Issue(file, 1, "", "not a question bank: a bank is a mapping with bank, title and items")
        ]
        raise BankError(file, located.issues)
    folder = base_dir or Path(file).parent
    before_plugins = len(located.issues)
    plugin_paths = _plugin_paths(located, data.get("plugins"), folder)
    if plugin_paths and plugins:
        registry = _with_plugins(located, registry, plugin_paths, file)
    # A plugin that did not load (a syntax error, a missing file) defines nothing: its generators'
    # items are not also "unknown generator ... did you mean", a second error that sends the author
    # to the wrong line. The plugin's own error is the one to fix.
    plugins_failed = len(located.issues) > before_plugins

    raw_items = data.get("items")
    forgot_kind = {
        index
        for index, raw in enumerate(raw_items if isinstance(raw_items, list) else [])
        if isinstance(raw, dict) and _suggest_formula_kind(located, raw, index)
    }
    model: BankModel | None = None
    try:
        model = BankModel.model_validate(data)
    except pydantic.ValidationError as exc:
        _pydantic_issues(located, exc, (), data=data)
    if forgot_kind:
        # Read as generator items, their formula fields are "unknown" and `generator` "missing":
        # noise once the one fix (`kind: formula`) is named.
        noise = tuple(f"items[{index}]." for index in forgot_kind)
        located.issues = [issue for issue in located.issues if not issue.field.startswith(noise)]

    items: list[BankItem] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(raw_items if isinstance(raw_items, list) else []):
        if not isinstance(raw, dict):
            continue
        item_id = raw.get("id")
        if isinstance(item_id, str):
            if item_id in seen:
                located.issue(
                    ("items", index, "id"), f"duplicate id {item_id!r} (first used at line {seen[item_id]})"
                )
            else:
                seen[item_id] = located.line_of(("items", index, "id"))
        if raw.get("kind") == "explain":
            explain = _check_explain(located, raw, index)
            if model is not None and explain is not None:
                items.append(
                    BankItem(
                        item=model.items[index],
                        spec=explain.spec(),
                        kwargs={},
                        original_kwargs={},
                        line=located.line_of(("items", index)),
                        bank=model.bank,
                        folder=str(folder.resolve()),
                        explain=explain,
                    )
                )
            continue
        if raw.get("kind") == "formula":
            formula = _check_formula(located, raw, index, data.get("bank"))
            if model is not None and formula is not None:
                items.append(
                    BankItem(
                        item=model.items[index],
                        spec=formula.spec(),
                        kwargs={},
                        original_kwargs=formula.original,
                        line=located.line_of(("items", index)),
                        bank=model.bank,
                        folder=str(folder.resolve()),
                        formula=formula,
                    )
                )
            continue
        resolved = _check_generator(
            located,
            registry,
            raw,
            index,
            deferred=bool(plugin_paths) and not plugins,
            plugins_failed=plugins_failed,
        )
        if model is not None and resolved is not None:
            spec, kwargs, original_kwargs = resolved
            items.append(
                BankItem(
                    item=model.items[index],
                    spec=spec,
                    kwargs=kwargs,
                    original_kwargs=original_kwargs,
                    line=located.line_of(("items", index)),
                    bank=model.bank,
                    folder=str(folder.resolve()),
                )
            )

    shown: list[tuple[str, int, int]] = []
    _check_images(located, data, folder, text.splitlines(), shown)
    # An image path refused by the Markdown check (a URL, ``..``) is refused by the image check at
    # the same line with the same words: said once.
    located.issues = list(dict.fromkeys(located.issues))
    if located.issues or model is None:
        raise BankError(file, located.issues, quotable)
    return Bank(
        name=model.bank,
        title=model.title,
        description=model.description,
        path=file,
        items=tuple(items),
        plugins=tuple(path for _, path in plugin_paths),
        images=tuple(dict.fromkeys(shown)),
    )


_IMAGE_LINE = re.compile(r"^[ \t]{0,3}!\[[^\[\]\n]*\]\(([^()\s]*)\)(?:\{width=[^{}\s]*\})?\s*$", re.MULTILINE)


def _check_images(
    located: _Located,
    data: Any,
    folder: Path,
    lines: list[str],
    shown: list[tuple[str, int, int]],
    loc: Loc = (),
) -> None:
    """Every image a text of the bank shows (``![alt](file.png)`` on a line of its own) exists next
    to the bank and is a real, inert PNG, JPEG or SVG of a bounded size: a problem at its line (in a
    literal block ``|``, the image's own line; else its text's first line). Each good image is
    added to ``shown`` with its size and modification time, so that a cached bank whose image
    files changed since is read again (see `attnquiz.engine.bank.finding`)."""
    from attnquiz.engine.bank import images

    if isinstance(data, str):
        if "![" in data:
            for match in _IMAGE_LINE.finditer(data):
                try:
                    shown.append(images.load(folder, match.group(1)).stamp)
                except images.ImageError as exc:
                    line = located.line_of(loc)
                    if 0 < line <= len(lines) and re.search(r"\|[-+0-9]*\s*(#.*)?$", lines[line - 1]):
                        line += 1 + data.count("\n", 0, match.start())
                    located.issues.append(Issue(located.file, line, format_loc(loc), str(exc)))
    elif isinstance(data, dict):
        for key, value in data.items():
            _check_images(located, value, folder, lines, shown, (*loc, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            _check_images(located, value, folder, lines, shown, (*loc, index))


def _plugin_paths(located: _Located, plugins: Any, folder: Path) -> list[tuple[int, Path]]:
    """The bank's plugin files with their indexes: ``.py`` files in the bank's own folder or below.

    ``plugins:`` never follows a path out of the bank's folder (``../../etc/hostname``, an absolute
    path, or a symlink that leads out): a bank shared with you cannot make quiz import a file
    elsewhere on your disk.
    """
    if not isinstance(plugins, list):
        return []  # the schema reports anything else
    found: list[tuple[int, Path]] = []
    root = folder.resolve()
    for index, name in enumerate(plugins):
        if not isinstance(name, str):
            continue
        where = ("plugins", index)
        if not name.endswith(".py"):
            located.issue(where, "a plugin is a Python file ending in .py, next to the bank")
            continue
        candidate = Path(name)
        resolved = (root / candidate).resolve()
        if candidate.is_absolute() or ".." in candidate.parts or not resolved.is_relative_to(root):
            located.issue(where, "a plugin must be a .py file in the bank's own folder (or below it)")
            continue
        found.append((index, folder / candidate))
    return found


def _with_plugins(
    located: _Located, builtin: Registry, plugins: list[tuple[int, Path]], file: str
) -> Registry:
    """The bank's registry: the built-in generators plus those of its plugin modules (imported now)."""
    from attnquiz.engine import errors
    from attnquiz.engine.bank.plugins import PluginError, load_plugin

    shown = ", ".join(str(path) for _, path in plugins)
    errors.notice(f"bank {file} runs Python code from its plugins: {shown}")
    registry = Registry(builtin)
    for index, path in plugins:
        try:
            plugin = load_plugin(path, builtin)
            for generator_name in plugin.own():
                spec = plugin.get(generator_name)
                if spec is not None:
                    registry.adopt(spec)
        except (PluginError, GeneratorSpecError) as exc:
            located.issue(("plugins", index), str(exc))
    return registry


_FORMULA_ONLY = sorted(set(FormulaItem.model_fields) - set(GeneratorItem.model_fields))


def _suggest_formula_kind(located: _Located, raw: Mapping[str, Any], index: int) -> bool:
    """An item with formula fields but no ``kind: formula`` is a formula item that forgot its kind:
    say so (and return True)."""
    if "kind" in raw or "generator" in raw:
        return False
    given = [name for name in _FORMULA_ONLY if name in raw]
    if given:
        located.issue(
            ("items", index),
            f"has {', '.join(given)}, which only formula items have: add `kind: formula` to the item",
        )
    return bool(given)


def _check_formula(located: _Located, raw: Mapping[str, Any], index: int, bank: Any) -> Formula | None:
    """Compile a formula item and build its original and first variants; problems become issues."""
    try:
        item = FormulaItem.model_validate(raw)
    except pydantic.ValidationError:
        return None  # the bank's own validation reports it, at the right lines
    prefix: Loc = ("items", index)

    def line_of(loc: Loc) -> int:
        return located.line_of((*prefix, *loc))

    try:
        formula = Formula.compile(
            item,
            file=located.file,
            prefix=prefix,
            line_of=line_of,
            text_start=lambda loc: located.literal_starts.get((*prefix, *loc)),
        )
    except FormulaCompileError as exc:
        for loc, message in exc.problems:
            located.issue((*prefix, *loc), message)
        return None
    problems = formula.trial(bank if isinstance(bank, str) else "")
    located.issues.extend(problems)
    return None if problems else formula


def _check_explain(located: _Located, raw: Mapping[str, Any], index: int) -> Explain | None:
    """Check an explain item's texts (Markdown and TeX at their own lines); the item if they are fine."""
    try:
        item = ExplainItem.model_validate(raw)
    except pydantic.ValidationError:
        return None  # the bank's own validation reports it, at the right lines
    prefix: Loc = ("items", index)
    return check_explain(
        item, located.file, lambda loc, message, row: located.issue((*prefix, *loc), message, row)
    )


def _check_generator(
    located: _Located,
    registry: Registry,
    raw: Mapping[str, Any],
    index: int,
    *,
    deferred: bool = False,
    plugins_failed: bool = False,
) -> tuple[Any, dict[str, Any], dict[str, Any] | None] | None:
    """Check an item's generator and parameters; the validated keyword arguments if they are fine.

    ``deferred``: the bank's plugins were not imported, so a generator that is not built in is taken
    to be theirs, with its parameters as written (they are checked when the plugins are imported).
    ``plugins_failed``: a plugin did not load (its error is reported), so a generator that is not
    known may well be that plugin's, and is not reported again.
    """
    name = raw.get("generator")
    if not isinstance(name, str):
        return None
    spec = registry.get(name)
    if spec is None and deferred:
        from attnquiz.engine.bank.plugins import deferred_spec

        params = raw.get("params", {})
        original = raw.get("original")
        if not isinstance(params, dict):
            return None
        original_kwargs = {**params, **original} if isinstance(original, dict) else None
        return deferred_spec(name), dict(params), original_kwargs
    if spec is None and plugins_failed:
        return None
    if spec is None:
        suggestion = registry.suggest(name)
        hint = f" (did you mean {suggestion!r}?)" if suggestion else ""
        located.issue(("items", index, "generator"), f"unknown generator {name!r}{hint}")
        return None
    params = raw.get("params", {})
    if not isinstance(params, dict):
        return None
    prefix: Loc = ("items", index, "params")
    try:
        kwargs = spec.validate_params(params)
    except pydantic.ValidationError as exc:
        _pydantic_issues(located, exc, prefix, known_lines=prefix, params_model=spec.params_model)
        return None
    original = raw.get("original")
    original_kwargs = None
    if isinstance(original, dict):
        try:
            original_kwargs = spec.validate_params({**params, **original})
        except pydantic.ValidationError as exc:
            where: Loc = ("items", index, "original")
            _pydantic_issues(located, exc, where, known_lines=where, params_model=spec.params_model)
            return None
    return spec, kwargs, original_kwargs


def load_bank_file(
    path: Path, shown_as: str | None = None, registry: Registry | None = None, *, plugins: bool = False
) -> Bank:
    """Read and validate a bank file; ``shown_as`` is the name used in error messages."""
    file = shown_as or str(path)
    text = decode_bank(read_bank_bytes(path, file), file)
    return load_bank_text(text, file, registry, base_dir=path.parent, plugins=plugins)
