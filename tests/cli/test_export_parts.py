"""`quiz export --max-size`: a Moodle or STACK export cut into files under a site's upload limit, as a
user runs it; sizes as people write them; the limits and formats it refuses, and how."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnquiz.exporting import parse_size
from attnquiz.main import app

runner = CliRunner()
ARGS = ["export", "week1", "--variants", "2", "--seed", "4", "--count", "6"]


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("20MB", 20_000_000),
        ("20mb", 20_000_000),
        ("20M", 20_000_000),
        ("500 kB", 500_000),
        ("1.5MiB", 1_572_864),
        ("2GiB", 2 * 2**30),
        ("1k", 1000),
        ("123", 123),
        (".5kB", 500),
        ("0", 0),
    ],
)
def test_sizes_as_people_write_them(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize(
    "text", ["", "MB", "-5MB", "20 TB", "1e9", "20MBB", "x", "5,000", "1" * 60, "nan", "\u0663MB"]
)
def test_what_is_no_size(text: str) -> None:
    assert parse_size(text) is None


def _export(tmp_path: Path, fmt: str, *extra: str) -> tuple[int, str]:
    result = runner.invoke(app, [*ARGS, "--format", fmt, *extra])
    return result.exit_code, result.output


def test_an_export_cut_into_parts_under_the_limit(tmp_path: Path) -> None:
    code, output = _export(tmp_path, "moodle", "-o", str(tmp_path / "whole.xml"))
    assert code == 0, output
    whole = (tmp_path / "whole.xml").read_bytes()
    limit = len(whole) // 3
    code, output = _export(tmp_path, "moodle", "-o", str(tmp_path / "bank.xml"), "--max-size", f"{limit}B")
    assert code == 0, output
    parts = sorted(tmp_path.glob("bank-*.xml"), key=lambda p: int(p.stem.split("-")[1]))
    assert len(parts) >= 3
    assert [p.name for p in parts] == [f"bank-{n}.xml" for n in range(1, len(parts) + 1)]
    assert all(str(p) in output for p in parts)
    assert not (tmp_path / "bank.xml").exists()
    assert all(p.stat().st_size <= limit for p in parts)
    names = [
        q.findtext("name/text") for p in parts for q in ET.parse(p).getroot() if q.get("type") != "category"
    ]
    assert names == [q.findtext("name/text") for q in ET.fromstring(whole) if q.get("type") != "category"]
    # Fewer parts next time: the part left over from the first export is named in a warning.
    code, output = _export(tmp_path, "moodle", "-o", str(tmp_path / "bank.xml"), "--max-size", "10MB")
    assert code == 0, output
    assert (tmp_path / "bank-1.xml").read_bytes() == whole
    assert "bank-2.xml (and any later part) is left from an earlier export" in " ".join(output.split())


@pytest.mark.parametrize(
    ("fmt", "extra", "message"),
    [
        ("moodle", ["--max-size", "2kB"], "size limit of 2,000 bytes is smaller than one question"),
        ("moodle", ["--max-size", "lots"], "--max-size 'lots' is not a size"),
        ("moodle", ["--max-size", "0"], "--max-size '0' is less than a byte: no question fits"),
        ("moodle", ["--max-size", "0.5"], "--max-size '0.5' is less than a byte"),
        ("json", ["--max-size", "20MB"], "--max-size is for moodle and stack exports, not json"),
        ("qti", ["--max-size", "20MB"], "--max-size is for moodle and stack exports, not qti"),
        ("moodle", ["--max-size", "20MB", "-o", "-"], "give a file name (-o week1.xml), not -o -"),
    ],
)
def test_refused_limits_and_formats_say_why_and_write_nothing(
    tmp_path: Path, fmt: str, extra: list[str], message: str
) -> None:
    out = [] if "-o" in extra else ["-o", str(tmp_path / "bank.xml")]
    code, output = _export(tmp_path, fmt, *out, *extra)
    assert code != 0
    assert "Traceback" not in output
    assert message in " ".join(output.split())
    assert list(tmp_path.iterdir()) == []
