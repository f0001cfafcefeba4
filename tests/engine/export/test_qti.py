"""Canvas QTI 1.2: a zip whose XML parses, whose manifest lists every file, one question group per item."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
import zipfile

import pytest

from attnquiz.engine.answers.kinds import ChoiceAnswer, ExplainAnswer, IntegerAnswer, NumericAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.export.lms import qti
from attnquiz.engine.plan.class_plan import plan_class

from .samples import sample_plan

QTI = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"
CP = "{http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1}"


def _open(data: bytes) -> dict[str, ET.Element]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.testzip() is None
        return {name: ET.fromstring(archive.read(name)) for name in archive.namelist()}


def test_the_manifest_lists_every_file_and_every_file_parses() -> None:
    package = qti.package(sample_plan(2))
    files = _open(package.data)
    assert next(iter(files)) == "imsmanifest.xml"
    manifest = files["imsmanifest.xml"]
    listed = {f.get("href") for f in manifest.iter(f"{CP}file")}
    assert listed == set(files) - {"imsmanifest.xml"}
    assert any(name.endswith("/assessment_meta.xml") for name in files)


def test_one_question_group_per_item_drawing_one_variant() -> None:
    plan = sample_plan(3)
    files = _open(qti.package(plan).data)
    (assessment_file,) = [n for n in files if n.count("/") == 1 and not n.endswith("assessment_meta.xml")]
    assessment = files[assessment_file].find(f"{QTI}assessment")
    assert assessment is not None
    root = assessment.find(f"{QTI}section")
    assert root is not None
    groups = root.findall(f"{QTI}section")
    assert [g.get("title") for g in groups] == list(plan.items)
    for group, (_, questions) in zip(groups, plan.by_item(), strict=True):
        assert group.findtext(f"{QTI}selection_ordering/{QTI}selection/{QTI}selection_number") == "1"
        items = group.findall(f"{QTI}item")
        assert len(items) == len(questions)
        for item, question in zip(items, questions, strict=True):
            assert question.code in (item.get("title") or "")
            fields = {
                f.findtext(f"{QTI}fieldlabel"): f.findtext(f"{QTI}fieldentry")
                for f in item.iter(f"{QTI}qtimetadatafield")
            }
            answer = question.answer
            if isinstance(answer, NumericAnswer | IntegerAnswer):
                assert fields["question_type"] == "numerical_question"
                # The last condition is the exact value with the item's tolerance; any before it is
                # the value rounded as asked (the answer Canvas shows), inside that range.
                scale = 10.0 ** qti.canvas_scale(answer.value, answer.tolerance.half_width(answer.value))
                lows = [float(v.text or "nan") * scale for v in item.iter(f"{QTI}vargte")]
                highs = [float(v.text or "nan") * scale for v in item.iter(f"{QTI}varlte")]
                shown = [float(v.text or "nan") * scale for v in item.iter(f"{QTI}varequal")]
                half = answer.tolerance.half_width(answer.value)
                assert lows[-1] <= answer.value <= highs[-1]
                assert highs[-1] - lows[-1] == pytest.approx(2 * half, rel=1e-9, abs=1e-12 * scale)
                assert shown[0] == pytest.approx(float(answer.tolerance.format(answer.value)), rel=1e-12)
                assert all(
                    lows[-1] <= low and high <= highs[-1] for low, high in zip(lows, highs, strict=True)
                )
            elif isinstance(answer, ExplainAnswer):
                assert fields["question_type"] == "essay_question"  # marked by hand (test_concepts)
            elif isinstance(answer, ChoiceAnswer):
                expected = "multiple_answers_question" if answer.multiple else "multiple_choice_question"
                assert fields["question_type"] == expected
                labels = item.findall(f".//{QTI}response_label")
                assert len(labels) == len(answer.options)
            else:
                assert fields["question_type"] == "fill_in_multiple_blanks_question"
            assert item.find(f"{QTI}itemfeedback[@ident='general_fb']") is not None


def test_warnings_say_where_canvas_scores_differently() -> None:
    plan = plan_class(banks.load("week1"), students=2, master_seed=5)
    package = qti.package(plan)
    _open(package.data)
    schemes = {
        q.item_id: q.answer.scoring
        for q in plan.sheets[0].questions
        if isinstance(q.answer, ChoiceAnswer) and q.answer.multiple
    }
    for item_id, scheme in schemes.items():
        warned = any(
            w.startswith("Canvas scores multiple-answer")
            and item_id in w.rsplit(": ", 1)[1].rstrip(")").split(", ")
            for w in package.warnings
        )
        assert warned == (scheme != "net"), item_id
    # One line per kind of note, each naming its items once.
    kinds = [w.rsplit(" (", 1)[0] for w in package.warnings]
    assert len(kinds) == len(set(kinds))


def test_the_same_plan_gives_the_same_zip() -> None:
    assert qti.package(sample_plan(2)).data == qti.package(sample_plan(2)).data
