"""`quiz serve` over plain HTTP (no browser needed): the guard, practice, the history, the preview."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from html import unescape
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.practice.planning import plan_practice
from attnquiz.engine.variant import Question
from attnquiz.web.security import CONTENT_SECURITY_POLICY
from tests.web.conftest import Server, csrf_of, start_server

SEED = 7
# A topic whose first two questions at SEED have one answer each (no parts, no concept question).
PRACTICE_TOPIC = "additive-attention"


def planned_questions(topic: str, count: int, seed: int = SEED) -> list[Question]:
    """The questions the server will ask for this selection: the same planner, the same seeds."""
    plan = plan_practice(banks.load("week1"), seed=seed, topic=topic, count=count)
    return [p.build() for p in plan.questions]


def start(server: Server, **fields: str) -> str:
    """Start a session from the start page's form; the session's path."""
    home = server.request("GET", "/")
    form = {"csrf": csrf_of(home.body), "bank": "week1", "mode": "practice", **fields}
    reply = server.request("POST", "/start", form=form)
    assert reply.status == 303, reply.body
    return reply.headers["location"]


def answer(server: Server, session: str, response: str) -> tuple[str, str]:
    """Answer the current question as its page's form does: the redirect and the page it leads to."""
    page = server.request("GET", session)
    assert page.status == 200, page.body
    position = re.search(r'name="position" value="(\d+)"', page.body)
    assert position
    form = {"csrf": csrf_of(page.body), "position": position.group(1), "response": response}
    reply = server.request("POST", f"{session}/answer", form=form)
    assert reply.status == 303
    return reply.headers["location"], server.request("GET", reply.headers["location"]).body


def text_of(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


# -- the guard --------------------------------------------------------------------------------------


def test_a_request_without_the_token_is_refused(shared: Server) -> None:
    for path in ("/", "/stats", "/preview/week1", "/static/app.css", "/s/anything"):
        assert shared.request("GET", path, cookie=False).status == 403
    wrong = shared.request("GET", "/?token=" + "x" * 43, cookie=False)
    assert wrong.status == 403
    forged = shared.request("GET", "/", cookie=False, headers={"Cookie": f"quiz_token_{shared.port}=nope"})
    assert forged.status == 403


def test_the_token_in_the_url_becomes_a_strict_http_only_cookie(shared: Server) -> None:
    reply = shared.request("GET", f"/stats?days=3&token={shared.token}", cookie=False)
    assert reply.status == 303
    assert reply.headers["location"] == "/stats?days=3"  # the token leaves the address bar
    cookie = reply.headers["set-cookie"]
    assert cookie.startswith(f"quiz_token_{shared.port}={shared.token};")
    assert "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie
    followed = shared.request("GET", "/stats?days=3", cookie=False, headers={"Cookie": cookie.split(";")[0]})
    assert followed.status == 200


@pytest.mark.parametrize(
    "path", ["//evil.example/", "///evil.example/x", "/\\evil.example/", "/%2F/evil.example"]
)
def test_the_token_redirect_stays_on_the_server(shared: Server, path: str) -> None:
    # "//evil.example/" as a Location is a protocol-relative address of another site.
    reply = shared.request("GET", f"{path}?a=1&token={shared.token}", cookie=False)
    assert reply.status == 303
    location = reply.headers["location"]
    assert location.startswith("/")
    assert not location.startswith(("//", "/\\")), location
    assert urlsplit(location).netloc == ""
    assert "evil.example" in urlsplit(location).path


def test_another_quiz_server_neither_takes_nor_reads_this_ones_cookie(shared: Server, tmp_path: Path) -> None:
    # Cookies are shared by every port of 127.0.0.1: each server's has a name of its own port, and a
    # server takes only its own (with its own token).
    other = start_server("week1", db=tmp_path / "other.sqlite3")
    try:
        assert other.port != shared.port
        assert other.request("GET", "/", cookie=False, headers={"Cookie": shared.cookie}).status == 403
        moved = f"quiz_token_{other.port}={shared.token}"  # this one's token under the other's name
        assert other.request("GET", "/", cookie=False, headers={"Cookie": moved}).status == 403
        both = f"{shared.cookie}; {other.cookie}"
        assert other.request("GET", "/", cookie=False, headers={"Cookie": both}).status == 200
        assert shared.request("GET", "/", cookie=False, headers={"Cookie": both}).status == 200
        cookie = other.request("GET", f"/?token={other.token}", cookie=False).headers["set-cookie"]
        assert cookie.split("=")[0] == f"quiz_token_{other.port}" != shared.cookie.split("=")[0]
    finally:
        other.stop()


def test_every_response_carries_the_security_headers(shared: Server) -> None:
    for path, cookie in (("/", True), ("/static/app.js", True), ("/", False), ("/s/none", True)):
        reply = shared.request("GET", path, cookie=cookie)
        assert reply.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert reply.headers["x-content-type-options"] == "nosniff"
        assert reply.headers["referrer-policy"] == "no-referrer"
        assert reply.headers["x-frame-options"] == "DENY"
    assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY
    assert "default-src 'none'" in CONTENT_SECURITY_POLICY


@pytest.mark.parametrize(
    "host", ["evil.example", f"evil.example:{0}", "127.0.0.1:1", "localhost.evil.example", ""]
)
def test_a_host_header_that_is_not_the_bound_address_is_refused(shared: Server, host: str) -> None:
    # DNS rebinding: a hostile name resolving to 127.0.0.1 sends its own name as Host.
    reply = shared.request("GET", "/", headers={"Host": host.replace(":0", f":{shared.port}")})
    assert reply.status == 403


def test_localhost_names_the_bound_loopback_address(shared: Server) -> None:
    assert shared.request("GET", "/", headers={"Host": f"localhost:{shared.port}"}).status == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Origin": "null", "Sec-Fetch-Site": "cross-site"},
        {"Origin": "http://127.0.0.1:1"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ],
)
def test_a_cross_site_post_is_refused_even_with_the_cookie(shared: Server, headers: dict[str, str]) -> None:
    home = shared.request("GET", "/")
    form = {"csrf": csrf_of(home.body), "bank": "week1", "mode": "practice"}
    reply = shared.request("POST", "/start", form=form, headers=headers)
    assert reply.status == 403
    assert "another site" in reply.body


def test_a_post_of_the_servers_own_page_under_no_referrer_is_taken(shared: Server) -> None:
    # Referrer-Policy: no-referrer makes browsers send Origin: null with same-origin forms too.
    home = shared.request("GET", "/")
    form = {"csrf": csrf_of(home.body), "bank": "week1", "mode": "practice"}
    headers = {"Origin": "null", "Sec-Fetch-Site": "same-origin"}
    assert shared.request("POST", "/start", form=form, headers=headers).status == 303


@pytest.mark.parametrize("csrf", [None, "", "0" * 64])
def test_a_form_without_its_csrf_token_is_refused(shared: Server, csrf: str | None) -> None:
    form = {"bank": "week1", "mode": "practice"} | ({"csrf": csrf} if csrf is not None else {})
    reply = shared.request("POST", "/start", form=form)
    assert reply.status == 403
    session = start(shared, topic="parameter-count", count="1", seed=str(SEED))
    page = shared.request("GET", session)
    # The start page's token does not answer a session's questions: each session has its own.
    answer_form = {"csrf": csrf_of(shared.request("GET", "/").body), "position": "1", "response": "1"}
    assert shared.request("POST", f"{session}/answer", form=answer_form).status == 403
    assert "Question 1 of 1" in page.body


# -- practice ---------------------------------------------------------------------------------------


def test_practice_right_wrong_with_a_named_mistake_and_unreadable(server: Server) -> None:
    questions = planned_questions(PRACTICE_TOPIC, 2)
    first, second = questions
    assert second.variant.mistakes, "the test needs a question with a named mistake"
    assert (first.variant.parts, second.variant.parts) == ((), ()), "the test answers in one field"
    session = start(server, topic=PRACTICE_TOPIC, count="2", seed=str(SEED))

    where, page = answer(server, session, "__import__('os').system('true')")
    assert where == session  # unreadable: the same question again, nothing spent
    assert "Cannot read that" in page
    assert "it cost nothing" in page
    assert "Question 1 of 2" in page
    assert "__import__(&#39;os&#39;).system(&#39;true&#39;)" in page  # kept in the field, escaped

    where, page = answer(server, session, first.answer.format())
    assert where == f"{session}/feedback/1"
    assert "✓ Correct" in text_of(page)

    mistake = second.variant.mistakes[0]
    where, page = answer(server, session, mistake.format(second.answer))
    assert where == f"{session}/feedback/2"
    shown = text_of(page)
    assert "✗ Wrong" in shown
    assert f"mistake: {mistake.tag}" in shown
    assert "Worked solution" in shown
    assert f"{session}/summary" in page  # the last question: the next link is the summary

    summary = text_of(server.request("GET", f"{session}/summary").body)
    assert "1 / 2" in summary
    assert "2 answers saved to" in summary

    stats = subprocess.run(
        [sys.executable, "-m", "attnquiz", "stats", "--json", "--db", str(server.db)],
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(stats.stdout)
    (topic,) = data["topics"]
    assert (topic["topic"], topic["attempts"], topic["correct"]) == (PRACTICE_TOPIC, 2, 1)
    assert [m["tag"] for m in data["mistakes"]] == [mistake.tag]


def test_the_stats_page_shows_the_numbers_of_quiz_stats(server: Server) -> None:
    (question,) = planned_questions("complexity", 1)
    session = start(server, topic="complexity", count="1", seed=str(SEED))
    answer(server, session, question.answer.format())
    page = server.request("GET", "/stats")
    assert page.status == 200
    assert '<svg class="chart"' in page.body
    assert "week1 · complexity: 100% of 1" in text_of(page.body)
    assert "<script" not in page.body.split("</head>")[1]  # the charts need no script


@pytest.mark.parametrize(
    ("response", "said"),
    [
        ("9" * 200_000, "too long (200,000 characters"),
        ("\u202e1e999999", "U+202E"),
        ("\x00\udcff", "control character"),
        ("10^10^10", ""),
    ],
)
def test_hostile_responses_are_invalid_with_a_reason(shared: Server, response: str, said: str) -> None:
    session = start(shared, topic="complexity", count="1", seed=str(SEED))
    where, page = answer(
        shared, session, response.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    )
    assert where == session
    assert "Cannot read that" in page
    assert said in unescape(page)
    assert len(page) < 50_000


def test_an_answer_from_an_older_page_changes_nothing(shared: Server) -> None:
    session = start(shared, topic="complexity", count="2", seed=str(SEED))
    page = shared.request("GET", session)
    form = {"csrf": csrf_of(page.body), "position": "2", "response": "1"}
    reply = shared.request("POST", f"{session}/answer", form=form)
    assert reply.status == 303
    assert "Question 1 of 2" in shared.request("GET", session).body


def test_bad_start_options_say_why_on_the_start_page(shared: Server) -> None:
    home = shared.request("GET", "/")
    for fields, message in [
        ({"count": "0"}, "count must be a whole number from 1 to 500"),
        ({"count": "1e9"}, "count must be a whole number"),
        ({"topic": "nope"}, "has no topic"),
        ({"mode": "exam", "time": "forever"}, "is not a duration"),
    ]:
        form = {"csrf": csrf_of(home.body), "bank": "week1", "mode": "practice", **fields}
        reply = shared.request("POST", "/start", form=form)
        assert reply.status == 400
        assert message in unescape(reply.body)
    unknown = {"csrf": csrf_of(home.body), "bank": "../../etc/passwd"}
    assert shared.request("POST", "/start", form=unknown).status == 404


# "²" is a digit to str.isdigit and not to int; "١٢" is one to both; 5,000 digits are more than int
# reads; "1_0" is ten to int. Each is one line on the page it came from, never a 500.
TYPED = ["²", "١٢", "9" * 5000, "1_0", "-1", "²h", "١:٠٠"]


@pytest.mark.parametrize("typed", TYPED)
def test_every_number_field_of_the_forms_refuses_non_numbers_in_one_line(shared: Server, typed: str) -> None:
    home = shared.request("GET", "/")
    base = {"csrf": csrf_of(home.body), "bank": "week1", "topic": "complexity"}
    for fields in ({"count": typed}, {"seed": typed}, {"mode": "exam", "time": typed}):
        reply = shared.request("POST", "/start", form={**base, "mode": "practice", **fields})
        assert reply.status == 400, (fields, reply.status)
        said = re.findall(r"must be a whole number[^<]*|is not a duration[^<]*", unescape(reply.body))
        assert len(said) == 1, (fields, said)
    review = shared.request("GET", "/review")
    for field in ("limit", "new"):
        reply = shared.request("POST", "/review/start", form={"csrf": csrf_of(review.body), field: typed})
        assert reply.status == 400, (field, reply.status)
        assert f"{field} must be a whole number" in unescape(reply.body)
    for path in (f"/stats?days={quote(typed)}", f"/review?seed={quote(typed)}"):  # ignored
        assert shared.request("GET", path).status == 200
    session = start(shared, topic="complexity", count="2", seed=str(SEED), mode="exam", time="20m")
    page = shared.request("GET", session)
    moved = shared.request("POST", f"{session}/go", form={"csrf": csrf_of(page.body), "go": typed})
    assert moved.status == 303
    assert "no question" in unescape(shared.request("GET", session).body)
    rated = shared.request(
        "POST", f"{session}/rerate", form={"csrf": csrf_of(page.body), "rating": "good", "position": typed}
    )
    assert rated.status in (400, 404)


def test_an_exam_submits_itself_when_its_time_is_up(shared: Server) -> None:
    session = start(shared, topic="complexity", count="2", seed=str(SEED), mode="exam", time="2s")
    page = shared.request("GET", session)
    assert 'id="timer"' in page.body
    time.sleep(2.3)
    reply = shared.request("GET", session)
    assert reply.status == 303
    assert reply.headers["location"] == f"{session}/summary"
    summary = text_of(shared.request("GET", f"{session}/summary").body)
    assert "Time is up: the exam was submitted." in summary
    assert "0 / 2" in summary


# -- preview ----------------------------------------------------------------------------------------


def test_the_preview_shows_load_errors_as_file_line_field_message(server: Server, bank_copy: Path) -> None:
    before = json.loads(server.request("GET", "/preview/mybank/stamp").body)["stamp"]
    text = bank_copy.read_text(encoding="utf-8")
    bank_copy.write_text(text.replace("params: {dim: 2}", "params: {dim: many}", 1), encoding="utf-8")
    after = json.loads(server.request("GET", "/preview/mybank/stamp").body)["stamp"]
    assert after != before
    page = server.request("GET", "/preview/mybank")
    assert page.status == 200
    line = next(i for i, row in enumerate(text.splitlines(), 1) if "params: {dim: 2}" in row)
    assert re.search(rf"mybank\.yaml:{line}: items\[\d+\]\.params\.dim: ", unescape(page.body)), page.body


def test_bank_text_is_escaped(server: Server, bank_copy: Path) -> None:
    text = bank_copy.read_text(encoding="utf-8")
    hostile = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    bank_copy.write_text(text.replace('"2026 T1 Quiz 1, Q13"', json.dumps(hostile), 1), encoding="utf-8")
    page = server.request("GET", "/preview/mybank/additive-score?seed=3")
    assert page.status == 200
    assert hostile not in page.body
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page.body


def test_the_preview_offers_each_item_with_its_seed_and_next_variant(shared: Server) -> None:
    page = shared.request("GET", "/preview/week1/additive-score?seed=41")
    assert page.status == 200
    assert "/preview/week1/additive-score?seed=42" in page.body
    assert "Original (the past paper)" in page.body
    assert "1.93" in page.body  # the paper's own answer
    assert "Mistakes recognised" in page.body
    assert "<math" in page.body
    assert shared.request("GET", "/preview/week1/no-such-item").status == 404
    assert shared.request("GET", "/preview/nonexistent").status == 404


def test_chart_labels_from_the_history_are_escaped() -> None:
    from attnquiz.web import render

    hostile = '<script>x</script>" onload="y'
    svg = str(render.bar_chart(hostile, [render.Bar(hostile, 0.5, hostile)]))
    svg += str(render.day_chart(hostile, [render.Day(hostile, 3, 0.9), render.Day("2026-12-02", 0, 0.0)]))
    assert "<script>" not in svg
    assert '" onload="' not in svg
    assert "&lt;script&gt;x&lt;/script&gt;&#34; onload=&#34;y" in svg


# -- the command ------------------------------------------------------------------------------------


def test_other_commands_do_not_import_the_web_stack(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from attnquiz.main import main\n"
        "run = ['quiz', 'run', 'week1', '--count', '1', '--seed', '1', '--no-history']\n"
        "for argv in (['quiz', '--help'], run):\n"
        "    sys.argv = argv\n"
        "    try:\n"
        "        main()\n"
        "    except SystemExit:\n"
        "        pass\n"
        "web = ('starlette', 'uvicorn', 'jinja2', 'multipart', 'python_multipart', 'attnquiz.web')\n"
        "found = [m for m in sys.modules if m.split('.')[0] in web or m.startswith('attnquiz.web')]\n"
        "print('LOADED', sorted(found))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], input="1\n", capture_output=True, text=True, check=False, timeout=120
    )
    assert "LOADED []" in result.stdout, result.stdout[-2000:] + result.stderr[-2000:]
    assert "Question 1" in result.stdout  # quiz run did run


def test_another_interface_needs_host_and_is_warned_about(tmp_path: Path) -> None:
    from tests.web.conftest import start_server

    running = start_server("week1", "--host", "127.0.0.2", db=tmp_path / "h.sqlite3")
    running.stop()
    warning = running.stderr
    assert "warning: listening on 127.0.0.2, not 127.0.0.1" in warning


def test_an_unknown_bank_is_one_line_and_no_server(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "attnquiz", "serve", "no-such-bank"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr.startswith("quiz: no bank named 'no-such-bank'")
    assert "Traceback" not in result.stderr


def post(server: Server, session: str, action: str, **fields: str) -> str:
    """Send the current question's form to ``action`` (a button's formaction); where it leads."""
    page = server.request("GET", session)
    position = re.search(r'name="position" value="(\d+)"', page.body)
    form = {"csrf": csrf_of(page.body), "position": position.group(1) if position else "", **fields}
    reply = server.request("POST", f"{session}/{action}", form=form)
    assert reply.status == 303, reply.body
    return reply.headers["location"]


def test_an_exam_is_navigated_answered_and_submitted(shared: Server) -> None:
    first, second = planned_questions("complexity", 2)
    session = start(shared, topic="complexity", count="2", seed=str(SEED), mode="exam")
    post(shared, session, "go", go="2")
    assert "Question 2 of 2" in shared.request("GET", session).body
    answer(shared, session, "1/0 + (")  # unreadable: said at once, even in an exam
    assert "Cannot read that" in shared.request("GET", session).body
    where, page = answer(shared, session, second.answer.format())
    assert where == session  # no verdict before submission
    assert "Saved your answer to question 2." in page
    assert "Question 1 of 2" in page  # the first unanswered question comes next
    assert "Not answered yet: 1." in text_of(page)
    # Handing in with a question unanswered is asked first, on the page that lists the answers.
    assert post(shared, session, "finish") == f"{session}/submit?ask=1"
    asked = shared.request("GET", f"{session}/submit?ask=1").body
    assert "1 question has no answer yet: 1. Submit anyway" in text_of(asked)
    assert "Submit with 1 unanswered" in asked
    reply = shared.request("POST", f"{session}/finish", form={"csrf": csrf_of(asked), "confirm": "yes"})
    assert reply.headers["location"] == f"{session}/summary"
    summary = text_of(shared.request("GET", f"{session}/summary").body)
    assert "1 / 2" in summary
    assert "Results" in summary
    assert "Not answered" in summary
    assert first.answer.format() in summary


def test_a_review_starts_with_hints_and_skips(shared: Server) -> None:
    page = shared.request("GET", "/review")
    assert page.status == 200
    reply = shared.request(
        "POST", "/review/start", form={"csrf": csrf_of(page.body), "limit": "1", "new": "5"}
    )
    assert reply.status == 303
    session = reply.headers["location"]
    question = shared.request("GET", session).body
    assert "review" in question
    assert "Question 1 of 1" in question
    assert post(shared, session, "hint") == session
    assert "Hint:" in shared.request("GET", session).body
    assert post(shared, session, "skip") == f"{session}/feedback/1"
    skipped = text_of(shared.request("GET", f"{session}/feedback/1").body)
    assert "– Skipped" in skipped
    assert "Answer" in skipped
    assert f"{session}/summary" in shared.request("GET", f"{session}/feedback/1").body
    assert "Skipped" in text_of(shared.request("GET", f"{session}/summary").body)


def test_a_review_with_nothing_due_says_so(server: Server) -> None:
    page = server.request("GET", "/review")
    form = {"csrf": csrf_of(page.body), "limit": "5", "new": "0"}
    reply = server.request("POST", "/review/start", form=form)
    assert reply.headers["location"] == "/review?nothing=1"
    assert "Nothing is due now" in server.request("GET", "/review?nothing=1").body


def test_a_question_in_parts_is_asked_part_by_part_with_each_verdict(shared: Server) -> None:
    plan = plan_practice(banks.load("week1"), seed=SEED, items=["additive-chain"], count=1)
    question = plan.questions[0].build()
    parts = question.variant.parts
    assert len(parts) >= 2
    session = start(shared, items="additive-chain", count="1", seed=str(SEED))
    assert "Your answer to (a)" in shared.request("GET", session).body
    where, page = answer(shared, session, parts[0].answer.format())
    assert where == session
    assert "(a) ✓ Correct" in text_of(page)
    assert "Your answer to (b)" in page
    for part in parts[1:]:
        where, page = answer(shared, session, part.answer.format())
    assert where == f"{session}/feedback/1"
    shown = text_of(page)
    assert "✓ Correct" in shown
    for part in parts:
        assert f"({part.label}) ✓ Correct" in shown
