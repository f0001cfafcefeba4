"""`attnquiz.engine.markup.xml_text` escapes exactly as `xml.sax.saxutils` does (the exports' bytes depend on
it)."""

from __future__ import annotations

from xml.sax import saxutils

from hypothesis import given
from hypothesis import strategies as st

from attnquiz.engine.markup import xml_text

TEXT = st.text(alphabet=st.sampled_from(list("a&<>\"'\n\r\t é€;#x")) | st.characters(), max_size=40)
ENTITIES = st.sampled_from([None, {'"': "&quot;"}, {"'": "&apos;", "é": "&#233;"}])


@given(TEXT, ENTITIES)
def test_escape_is_saxutils_escape(text: str, entities: dict[str, str] | None) -> None:
    assert xml_text.escape(text, entities) == saxutils.escape(text, entities or {})


@given(TEXT, ENTITIES)
def test_quoteattr_is_saxutils_quoteattr(text: str, entities: dict[str, str] | None) -> None:
    assert xml_text.quoteattr(text, entities) == saxutils.quoteattr(text, entities or {})


def test_the_cases_that_choose_the_quotes() -> None:
    assert xml_text.quoteattr("plain") == '"plain"'
    assert xml_text.quoteattr('say "x"') == "'say \"x\"'"
    assert xml_text.quoteattr("""it's "x\"""") == '"it\'s &quot;x&quot;"'
    assert xml_text.quoteattr("a\nb\tc\r<&>") == '"a&#10;b&#9;c&#13;&lt;&amp;&gt;"'
