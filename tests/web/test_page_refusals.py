"""Pages show a service's refusal one way (``web.pages.refusals``), and say it in the page's words."""

import ast
from pathlib import Path

from django import forms

from evalsite import errors
from web.pages.refusals import refusal

PAGES = Path(__file__).resolve().parents[2] / "web" / "pages"
DOMAIN_ERRORS = {
    name for name, value in vars(errors).items() if isinstance(value, type) and issubclass(value, errors.DomainError)
}
# Where a page answers a domain error with something other than the error shown, and why.
OTHER_ANSWERS = {
    ("access.py", "wrapped"): "a selector's NotFound is the site's 404 page",
    ("access.py", "cursor_page"): "a cursor the list did not give is a 400 page",
    ("team.py", "invitation_page"): "a used or withdrawn invitation link opens the dead-link page",
    ("datasets.py", "dataset_import"): "an import's problems are listed line by line under the form",
    ("harvest.py", "_window"): "a window the page cannot read falls back to the default",
    ("queue.py", "queue_after_capture"): "a queue that is gone sends the reviewer back to the run",
}


def _handler(node):
    return isinstance(node, ast.ExceptHandler) and node.type is not None


def _catches(path):
    """``(innermost function, handler line)`` for each ``except`` naming a domain error in ``path``."""
    found = []

    def visit(node, function):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
        caught = {n.id for n in ast.walk(node.type) if isinstance(n, ast.Name)} if _handler(node) else set()
        if caught & DOMAIN_ERRORS:
            found.append((function, node.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(ast.parse(path.read_text()), None)
    return found


def test_pages_leave_a_refusal_to_the_one_helper_except_where_they_answer_otherwise():
    stray = [
        f"web/pages/{path.name}:{line} ({function})"
        for path in sorted(PAGES.glob("*.py"))
        if path.name != "refusals.py"
        for function, line in _catches(path)
        if (path.name, function) not in OTHER_ANSWERS
    ]
    assert stray == [], "use web.pages.refusals.refusal, or add the page's other answer to OTHER_ANSWERS"


def test_the_scan_finds_a_planted_catch(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("def view():\n    try:\n        pass\n    except (ValueError, Conflict) as exc:\n        pass\n")
    assert _catches(planted) == [("view", 4)]


class _RuleForm(forms.Form):
    run_name = forms.CharField(required=False)
    webhook_urls = forms.CharField(required=False)
    criteria_text = forms.CharField(required=False)


def _refused(error, fields=None):
    form = _RuleForm(data={})
    form.is_valid()
    with refusal(form, fields=fields) as refused:
        raise error
    assert refused.error is error
    return form.errors


def test_a_refusal_lands_next_to_the_field_the_page_calls_it_in_the_readers_count():
    shown = _refused(
        errors.Invalid(
            "Check the rule.",
            errors=[
                {"field": "filter.name", "message": "is too long"},
                {"field": "webhook_urls[1]", "message": "may not be called"},
                {"field": "criteria.tone", "message": "needs a question"},
                {"field": "colour", "message": "is unknown"},
            ],
        ),
        fields={"filter.name": "run_name", "criteria": "criteria_text"},
    )
    assert shown == {
        "run_name": ["is too long"],
        "webhook_urls": ["item 2: may not be called"],
        "criteria_text": ["tone: needs a question"],
        "__all__": ["colour: is unknown"],
    }


def test_a_refusal_without_items_shows_its_sentence_at_the_top_and_other_errors_pass_through():
    assert _refused(errors.Conflict("Another admin saved first; load the page again.")) == {
        "__all__": ["Another admin saved first; load the page again."]
    }
    form = _RuleForm(data={})
    try:
        with refusal(form):
            raise KeyError("not a refusal")
    except KeyError:
        pass
    else:
        raise AssertionError("an error that is not a refusal must propagate")
