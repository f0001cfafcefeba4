"""Text and attribute values escaped for XML, as `xml.sax.saxutils` escapes them, byte for byte.

Not `xml.sax.saxutils` itself: importing it imports `urllib.request` (and with it http.client, ssl
and email), 9 ms of every export's start for three string replacements.
"""

from __future__ import annotations

from collections.abc import Mapping


def escape(data: str, entities: Mapping[str, str] | None = None) -> str:
    """``&``, ``<`` and ``>`` as entities, then each key of ``entities`` as its value."""
    data = data.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;")
    for key, value in (entities or {}).items():
        data = data.replace(key, value)
    return data


def quoteattr(data: str, entities: Mapping[str, str] | None = None) -> str:
    """An attribute value with its quotes: escaped, with tab, line feed and carriage return as
    character references, in double quotes unless it holds one and no single quote."""
    data = escape(data, {**(entities or {}), "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})
    if '"' in data:
        if "'" in data:
            return '"{}"'.format(data.replace('"', "&quot;"))
        return f"'{data}'"
    return f'"{data}"'


__all__ = ["escape", "quoteattr"]
