"""SVG files made inert by construction: parsed, checked against an allow-list, and written anew.

An SVG is embedded in HTML pages, LMS questions and PDFs, so it must be a picture and nothing
else. Matching the bytes against patterns of known attacks misses what the next browser reads
differently (``java&#x9;script:``, ``u\\72l(``, ``@\\69mport``, an XSLT processing instruction, an
element of another namespace), so nothing of the file is copied: `clean` parses it (no DOCTYPE,
no entities), keeps only the elements and attributes of `ELEMENTS` and `ATTRIBUTES`, checks every
value (links are ``#fragments`` of the file itself, ``url()`` is ``url(#id)``, functions are those
of colours and transforms, no backslash, no at-rule) and writes a new document from the tree:
no processing instruction, comment, DOCTYPE or foreign element can survive, since none is ever
written. A file that needs something outside the list is refused with the reason (an editor's own
metadata, such as Inkscape's, is dropped instead: it draws nothing).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from attnquiz.engine.markup.xml_text import escape, quoteattr

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
XML_NS = "http://www.w3.org/XML/1998/namespace"
MAX_ELEMENTS = 50_000
MAX_DEPTH = 64

ELEMENTS = frozenset(
    {
        "svg", "g", "defs", "title", "desc", "symbol", "use", "path", "rect", "circle", "ellipse",
        "line", "polyline", "polygon", "text", "tspan", "textPath", "linearGradient",
        "radialGradient", "stop", "clipPath", "mask", "pattern", "marker", "style", "switch",
    }
)  # fmt: skip
"""What an inert picture is drawn with: no script, link, animation, image, filter or foreign content."""

_DROPPED = frozenset({"metadata"})
"""SVG elements that draw nothing and are left out rather than refused (an editor's notes)."""
_EDITOR_NAMESPACES = frozenset(
    {
        "http://www.inkscape.org/namespaces/inkscape",
        "http://sodipodi.sourceforge.net/DTD/sodipodi-0.dtd",
        "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
        "http://purl.org/dc/elements/1.1/",
        "http://creativecommons.org/ns#",
        "http://ns.adobe.com/AdobeIllustrator/10.0/",
        "http://ns.adobe.com/SaveForWeb/1.0/",
        "http://ns.adobe.com/Extensibility/1.0/",
    }
)
"""Namespaces of drawing programs' own bookkeeping: their elements and attributes are dropped."""

ATTRIBUTES = frozenset(
    {
        "id", "class", "style", "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry", "fx",
        "fy", "fr", "width", "height", "d", "points", "transform", "viewBox", "preserveAspectRatio",
        "version", "fill", "fill-opacity", "fill-rule", "stroke", "stroke-width", "stroke-opacity",
        "stroke-linecap", "stroke-linejoin", "stroke-dasharray", "stroke-dashoffset",
        "stroke-miterlimit", "opacity", "color", "visibility", "display", "overflow",
        "font-family", "font-size", "font-weight", "font-style", "font-variant", "font-stretch",
        "text-anchor", "dominant-baseline", "alignment-baseline", "baseline-shift",
        "letter-spacing", "word-spacing", "text-decoration", "writing-mode", "dx", "dy", "rotate",
        "textLength", "lengthAdjust", "startOffset", "offset", "stop-color", "stop-opacity",
        "gradientUnits", "gradientTransform", "spreadMethod", "clip-path", "clip-rule",
        "clipPathUnits", "mask", "maskUnits", "maskContentUnits", "patternUnits",
        "patternContentUnits", "patternTransform", "markerWidth", "markerHeight", "markerUnits",
        "refX", "refY", "orient", "marker-start", "marker-mid", "marker-end", "vector-effect",
        "shape-rendering", "text-rendering", "paint-order", "role", "aria-label", "aria-hidden",
        "aria-labelledby", "aria-describedby", "lang", "href", "type", "media",
    }
)  # fmt: skip
"""Geometry, presentation and accessibility: attributes that draw, never ones that run or load."""

_CSS_PROPERTIES = frozenset(a for a in ATTRIBUTES if "-" in a or a in {"fill", "stroke", "opacity", "color"})
_CSS_PROPERTIES |= {"font", "display", "visibility", "overflow", "mix-blend-mode", "isolation"}
_FUNCTIONS = frozenset(
    {"rgb", "rgba", "hsl", "hsla", "url", "translate", "rotate", "scale", "matrix", "skewx", "skewy"}
)
_FUNCTION = re.compile(r"([A-Za-z_-][A-Za-z0-9_-]*)\s*\(")
_URL = re.compile(r"url\(\s*(['\"]?)#[A-Za-z_][A-Za-z0-9_.:-]*\1\s*\)", re.IGNORECASE)
_FRAGMENT = re.compile(r"#[A-Za-z_][A-Za-z0-9_.:-]*")
_SAFE_VALUE = re.compile(r"[^\\<>@{}`;\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*")
_SELECTOR = re.compile(r"[A-Za-z0-9\s.#*,_:-]+")
_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_PROPERTY = re.compile(r"[A-Za-z-]+")


class SvgError(ValueError):
    """An SVG that is not an inert picture, or not a well-formed SVG document."""


def clean(data: bytes) -> bytes:
    """The SVG document rebuilt from its allowed elements and attributes; raises SvgError."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SvgError("not an SVG file (not UTF-8 text)") from None
    if re.search(r"<!DOCTYPE|<!ENTITY", text, re.IGNORECASE):
        raise SvgError("an SVG with a DOCTYPE or entities is not allowed")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise SvgError(f"not an SVG file (not well-formed XML: {exc})") from None
    namespace, tag = _split(root.tag)
    if tag != "svg" or namespace not in ("", SVG_NS):
        raise SvgError("not an SVG file (its root element is not <svg>)")
    count = sum(1 for _ in root.iter())
    if count > MAX_ELEMENTS:
        raise SvgError(f"the SVG has {count:,} elements; at most {MAX_ELEMENTS:,} are allowed")
    out: list[str] = ['<?xml version="1.0" encoding="UTF-8"?>\n']
    _write(root, out, 0, top=True)
    return "".join(out).encode("utf-8")


def _split(name: str) -> tuple[str, str]:
    if name.startswith("{"):
        namespace, _, local = name[1:].partition("}")
        return namespace, local
    return "", name


def _write(element: ET.Element, out: list[str], depth: int, *, top: bool = False) -> None:
    if depth > MAX_DEPTH:
        raise SvgError(f"the SVG nests elements more than {MAX_DEPTH} deep")
    _, tag = _split(element.tag)
    attributes = _attributes(element, tag)
    if top:
        attributes = [("xmlns", SVG_NS), ("xmlns:xlink", XLINK_NS), *attributes]
    out.append(f"<{tag}" + "".join(f" {name}={_attribute_value(value)}" for name, value in attributes) + ">")
    if tag == "style":
        # Nothing in a rebuilt sheet needs escaping (no <, > or &): it reads the same as XML or HTML.
        out.append(_stylesheet(element.text or ""))
        if len(element):
            raise SvgError("an SVG <style> may hold only CSS text")
    else:
        out.append(escape(element.text or ""))
        for child in element:
            child_namespace, child_tag = _split(child.tag)
            if child_namespace in _EDITOR_NAMESPACES or (
                child_namespace in ("", SVG_NS) and child_tag in _DROPPED
            ):
                pass  # an editor's bookkeeping draws nothing: left out (the text after it is kept)
            elif child_namespace not in ("", SVG_NS):
                raise SvgError(f"an SVG with an element of the namespace {child_namespace} is not allowed")
            elif child_tag not in ELEMENTS:
                raise SvgError(f"an SVG with <{child_tag}> is not allowed (it is not plain drawing)")
            else:
                _write(child, out, depth + 1)
            out.append(escape(child.tail or ""))
    out.append(f"</{tag}>")


def _attributes(element: ET.Element, tag: str) -> list[tuple[str, str]]:
    kept: list[tuple[str, str]] = []
    for name, raw in element.attrib.items():
        namespace, local = _split(name)
        value = " ".join(raw.split())  # XML's own normalisation: tabs and line breaks are spaces
        if namespace in _EDITOR_NAMESPACES:
            continue
        if namespace == XML_NS and local in {"space", "lang"}:
            kept.append((f"xml:{local}", _plain(local, value)))
            continue
        if namespace == XLINK_NS and local == "href":
            local, namespace = "href", ""
        if namespace or local not in ATTRIBUTES:
            what = f"{{{namespace}}}{local}" if namespace else local
            reason = "event attributes run code" if local.lower().startswith("on") else "it does not draw"
            raise SvgError(f"an SVG with the attribute {what}= is not allowed ({reason})")
        if local == "href":
            if not _FRAGMENT.fullmatch(value):
                raise SvgError(
                    f"an SVG that refers to anything outside itself (href={value[:40]!r}) is not allowed"
                )
            kept.append(("xlink:href", value))
        elif local == "style":
            kept.append(("style", _declarations(value)))
        elif local == "type" and tag == "style":
            if value not in ("text/css", ""):
                raise SvgError(f"an SVG style of type {value[:40]!r} is not allowed (only text/css)")
            kept.append(("type", "text/css"))
        elif local in {"type", "media"}:
            raise SvgError(f"an SVG with the attribute {local}= on <{tag}> is not allowed")
        else:
            kept.append((local, _plain(local, value)))
    return kept


def _plain(name: str, value: str) -> str:
    """A presentation or geometry value: no CSS escape or at-rule, functions only of colours and
    transforms, and ``url()`` only of an element of the file itself."""
    if not _SAFE_VALUE.fullmatch(value) or "/*" in value or "*/" in value:
        raise SvgError(f"an SVG value {name}={value[:40]!r} is not allowed (no \\, <, >, @, {{, }}, ;)")
    for match in _FUNCTION.finditer(value):
        function = match.group(1).lower()
        if function not in _FUNCTIONS:
            raise SvgError(
                f"an SVG value {name}={value[:40]!r} is not allowed ({match.group(1)}() is not a colour "
                "or a transform)"
            )
        if function == "url" and not _URL.match(value, match.start()):
            raise SvgError(
                f"an SVG value that loads anything ({name}={value[:40]!r}) is not allowed: url() "
                "may only name an element of the file (url(#id))"
            )
    return value


def _declarations(text: str) -> str:
    """CSS declarations (a style attribute, or the body of a rule) rebuilt one by one."""
    kept: list[str] = []
    for declaration in text.split(";"):
        if not declaration.strip():
            continue
        name, colon, value = declaration.partition(":")
        name, value = name.strip().lower(), " ".join(value.split())
        if not colon or not _PROPERTY.fullmatch(name):
            raise SvgError(f"an SVG style {declaration.strip()[:40]!r} is not a CSS declaration")
        if name not in _CSS_PROPERTIES:
            raise SvgError(f"an SVG style property {name!r} is not allowed (it is not a drawing property)")
        if value.lower().endswith("!important"):
            value = value[: -len("!important")].rstrip()
        if "&" in value:
            raise SvgError(f"an SVG style value {value[:40]!r} is not allowed (no &)")
        kept.append(f"{name}: {_plain(name, value)}")
    return "; ".join(kept)


def _stylesheet(text: str) -> str:
    """A ``<style>`` sheet rebuilt rule by rule: simple selectors and allowed declarations only
    (no at-rule, comment or escape can pass, since none is written)."""
    rules: list[str] = []
    rest = _COMMENT.sub(" ", text).strip()
    while rest:
        selector, brace, after = rest.partition("{")
        body, closing, rest = after.partition("}")
        if not brace or not closing or "{" in body:
            raise SvgError("an SVG <style> must be plain CSS rules (selector { property: value; })")
        selector = " ".join(selector.split())
        if not _SELECTOR.fullmatch(selector):
            raise SvgError(f"an SVG style selector {selector[:40]!r} is not allowed (no at-rule or escape)")
        rules.append(f"{selector} {{ {_declarations(body)} }}")
        rest = rest.strip()
    return "\n".join(rules)


def _attribute_value(value: str) -> str:
    return quoteattr(value, {"\t": "&#9;", "\n": "&#10;", "\r": "&#13;"})


__all__ = ["ATTRIBUTES", "ELEMENTS", "MAX_ELEMENTS", "SvgError", "clean"]
