"""`quiz generators`: every built-in generator with its parameters, as text and as JSON."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from attnquiz.engine.generators import MODULES
from attnquiz.engine.registry import catalogue, load_builtin_generators
from attnquiz.main import app

runner = CliRunner()


def test_json_lists_every_builtin_generator_with_typed_parameters() -> None:
    result = runner.invoke(app, ["generators", "--json"])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.output)
    assert [g["name"] for g in listed] == sorted(MODULES)
    by_name = {g["name"]: g for g in listed}
    assert by_name["additive_score"]["summary"].startswith("Score one encoder state with additive")
    assert by_name["additive_score"]["parameters"][0] == {"name": "dim", "type": "int", "default": 2}
    softmax = {p["name"]: p for p in by_name["softmax_weights"]["parameters"]}
    assert softmax["setting"] == {"name": "setting", "type": "'plain' | 'additive'", "default": "plain"}
    assert softmax["scores"]["type"] == "list[float] | None"
    for generator in listed:  # the parameters are exactly what params: is checked against
        spec = load_builtin_generators().get(generator["name"])
        assert spec is not None
        assert [p["name"] for p in generator["parameters"]] == list(spec.params_model.model_fields)


def test_text_shows_each_generator_its_summary_and_parameters() -> None:
    result = runner.invoke(app, ["generators"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"Generators  ·  {len(MODULES)} built in")
    assert "additive_score  Score one encoder state with additive" in result.output
    assert "    dim: int = 2" in result.output
    assert "    stem: str = 'Which of the following statements are true?'" in result.output
    assert len(catalogue()) == len(MODULES)


def test_help_lists_generators_with_an_example() -> None:
    result = runner.invoke(app, ["generators", "--help"])
    assert result.exit_code == 0
    assert "quiz generators --json" in result.output


def test_every_summary_is_a_whole_sentence() -> None:
    """A docstring's first line may stop mid-sentence ("..., its softmax weight α_t1 (Q14), the");
    the summary is the whole first sentence, however many lines it is wrapped over."""
    import inspect

    result = runner.invoke(app, ["generators", "--json"])
    for generator in json.loads(result.output):
        summary = generator["summary"]
        assert summary.endswith((".", "?", "!")), (generator["name"], summary)
        assert "\n" not in summary
        spec = load_builtin_generators().get(generator["name"])
        assert spec is not None
        doc = " ".join((inspect.getdoc(spec.fn) or "").split())
        assert doc.startswith(summary), generator["name"]
    by_name = {g["name"]: g["summary"] for g in json.loads(result.output)}
    assert by_name["additive_chain"].endswith("for two encoder states; (b) uses (a) and (c) uses (b).")


def test_first_sentence_stops_at_the_first_sentence_only() -> None:
    from attnquiz.engine.registry import first_sentence

    assert (
        first_sentence("Count the entries\nof a matrix. Then more.\n\nDetails.")
        == "Count the entries of a matrix."
    )
    assert (
        first_sentence("Scale by e.g. Two numbers, 0.5 and 1.5.") == "Scale by e.g. Two numbers, 0.5 and 1.5."
    )
    assert first_sentence("One line without a stop") == "One line without a stop"
    assert first_sentence("Why divide? Because.") == "Why divide?"
