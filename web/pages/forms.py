"""Browser forms of the curation pages.

Forms only turn what a reviewer typed into the values the services take (text or JSON
from a textarea, a checkbox into a boolean) and keep the input for re-display; the
rules themselves live in the services (``datasets.case_validation``), and their errors
come back next to the field they name with ``errors_show``.
"""

import json
import re

from django import forms

from checks import json_rules
from datasets.models import CaseStatus
from scoring.run_filters import RUN_FILTERS, run_filters_from

TEXT, JSON = "text", "json"
VALUE_FORMATS = [(TEXT, "text"), (JSON, "JSON")]
JSON_WIDGET = forms.Textarea(attrs={"rows": 6, "spellcheck": "false", "class": "json"})


def json_parse(text):
    """The JSON value in ``text`` by the API's rules (``checks.json_rules``); ``forms.ValidationError`` saying where it breaks."""
    try:
        return json_rules.json_parse(text, where="value")
    except json_rules.JsonRefused as exc:
        where = "" if exc.field == "value" else f"{exc.field} "
        raise forms.ValidationError(f"{where}{exc.message}") from None


def json_text(value):
    return json.dumps(value, indent=2, ensure_ascii=False)


def value_text(value):
    """``(text, format)`` to show a stored value in a text-or-JSON field (None shows empty)."""
    if value is None:
        return "", TEXT
    if isinstance(value, str):
        return value, TEXT
    return json_text(value), JSON


_ITEM = re.compile(r"^\[(\d+)\]")  # ``[0]`` of a list field, as a reader counts it: ``item 1``


def errors_show(form, error, fields=None):
    """Put a service error's ``{field, message}`` items next to the form fields they name.

    ``expectations.tool_match`` goes to the ``expectations`` field as
    ``tool_match: <message>``, ``webhook_urls[1]`` to ``webhook_urls`` as ``item 2:
    <message>``; a field the form does not have goes to the top.
    ``fields`` maps the service's names to the form's where they differ: a whole path
    (``{"filter.name": "run_name"}``, the message alone) or its head
    (``{"criteria": "criteria_text"}``, the rest of the path before the message).
    """
    fields = fields or {}
    items = error.errors or [{"field": None, "message": error.detail}]
    for item in items:
        path = item.get("field") or ""
        head = path.replace("[", ".").split(".", 1)[0]
        rest = path[len(head) :].lstrip(".")
        if path in fields:
            head, rest = fields[path], ""
        else:
            head = fields.get(head, head)
        rest = _ITEM.sub(lambda m: f"item {int(m[1]) + 1}", rest)
        message = f"{rest}: {item['message']}" if rest else item["message"]
        if head in form.fields and not form.fields[head].widget.is_hidden:
            form.add_error(head, message)
        elif head in form.fields:
            # A hidden field (the version an edit is based on) has nowhere to show its
            # error: the whole explanation goes to the top of the form.
            form.add_error(None, error.detail)
        else:
            form.add_error(None, f"{path}: {item['message']}" if path else item["message"])


class ValueWithFormat:
    """Cleans a textarea ``<name>`` read as plain text or as JSON per ``<name>_format``."""

    value_fields = ()

    def clean(self):
        data = super().clean()
        for name in self.value_fields:
            text = data.get(name) or ""
            if not text.strip():
                data[name] = None
            elif data.get(f"{name}_format") == JSON:
                try:
                    data[name] = json_parse(text)
                except forms.ValidationError as exc:
                    self.add_error(name, exc)
            else:
                data[name] = text
        return data


def _json_object_clean(form, name):
    text = form.cleaned_data.get(name) or ""
    if not text.strip():
        return {}
    return json_parse(text)


def _run_filter_field(f):
    common = {"required": False, "label": f.label}
    if f.hint:
        common["help_text"] = f.hint
    if f.kind == "text":
        return forms.CharField(max_length=f.max_length, **common)
    if f.kind == "scorer":
        return forms.CharField(max_length=f.max_length, widget=forms.Select, **common)
    if f.kind == "status":
        return forms.ChoiceField(choices=[("", "any"), *f.choices], **common)
    if f.kind == "time":
        return forms.DateTimeField(widget=forms.DateTimeInput(attrs={"type": "datetime-local"}), **common)
    raise ValueError(f"run filter {f.kwarg!r} of kind {f.kind!r} has no page field")


_RunFilterFields = type(
    "_RunFilterFields", (forms.Form,), {f.page: _run_filter_field(f) for f in RUN_FILTERS if f.page is not None}
)


class RunFilterForm(_RunFilterFields):
    """The runs list's filters (a GET form: the URL of a filtered list can be shared).

    Its fields are built from ``scoring.run_filters``, the declaration the API's filters
    are also built from.
    """

    def __init__(self, data=None, *, scorer_ids=()):
        super().__init__(data)
        # Choices, not free text: the project's scorers (built-ins, agent checks, its judge
        # criteria). A scorer id in a shared URL that is not listed is still applied and shown.
        for f in RUN_FILTERS:
            if f.page is None or f.kind != "scorer":
                continue
            chosen = (data or {}).get(f.page)
            ids = [*scorer_ids, *([chosen] if chosen and chosen not in scorer_ids and chosen != "any" else [])]
            self.fields[f.page].widget.choices = [("", "—"), ("any", "any scorer"), *((s, s) for s in ids)]

    def filters(self):
        """The ``runs_list`` keyword arguments (no filter when the form is invalid)."""
        if not self.is_valid():
            return {}
        return {kwarg: value or None for kwarg, value in run_filters_from(self.cleaned_data, names="page").items()}


class DatasetTargetMixin:
    """A dataset to capture into: one of the project's, or a new one named here."""

    def dataset_choices(self, datasets):
        self.fields["dataset"].choices = [("", "choose a dataset")] + [(d.name, d.name) for d in datasets]

    def clean(self):
        data = super().clean()
        if not data.get("dataset") and not data.get("new_dataset"):
            self.add_error("dataset", "Choose a dataset, or name a new one.")
        if data.get("dataset") and data.get("new_dataset"):
            self.add_error("new_dataset", "Leave this empty when you choose an existing dataset.")
        return data


class CaptureForm(DatasetTargetMixin, ValueWithFormat, forms.Form):
    """Capture one run (the run page)."""

    value_fields = ("expected_output",)

    dataset = forms.ChoiceField(required=False)
    new_dataset = forms.CharField(required=False, max_length=100, label="or a new dataset")
    name = forms.CharField(required=False, max_length=200, help_text="Default: the run's trace_id.")
    use_output_as_expected = forms.BooleanField(
        required=False,
        label="Use the run's answer as the expected answer",
        help_text="Only for runs that went right. A failed run's answer must not become the reference.",
    )
    accept_failed_output = forms.BooleanField(
        required=False,
        label="Take the answer even if the run failed a check",
        help_text="A failed run's answer would make its own failure the reference: tick only if it is right.",
    )
    expected_output = forms.CharField(
        required=False,
        strip=False,
        label="Expected answer",
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Leave empty to write it later: the case is flagged 'needs expected answer'.",
    )
    expected_output_format = forms.ChoiceField(choices=VALUE_FORMATS, initial=TEXT, label="read as")
    expectations = forms.CharField(
        required=False,
        widget=JSON_WIDGET,
        help_text='JSON object, e.g. {"expected_tools": ["quote_room"]}.',
    )

    def __init__(self, *args, datasets=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.dataset_choices(datasets)

    def clean_expectations(self):
        return _json_object_clean(self, "expectations")

    def capture_data(self, trace_id):
        """The ``cases_capture`` request for this run."""
        d = self.cleaned_data
        data = {
            "trace_ids": [trace_id],
            "use_output_as_expected": d["use_output_as_expected"],
            "accept_failed_output": d["accept_failed_output"],
        }
        if d["expected_output"] is not None:
            data["expected_output"] = d["expected_output"]
        if d["expectations"]:
            data["expectations"] = d["expectations"]
        if d["name"]:
            data["name"] = d["name"]
        return data


class BulkCaptureForm(DatasetTargetMixin, forms.Form):
    """Capture the runs ticked in the runs list, or every run its filter matches (``all_matching``)."""

    trace_ids = forms.Field(required=False, widget=forms.MultipleHiddenInput)
    all_matching = forms.BooleanField(required=False, label="Every run matching this filter")
    dataset = forms.ChoiceField(required=False)
    new_dataset = forms.CharField(required=False, max_length=100, label="or a new dataset")
    use_output_as_expected = forms.BooleanField(
        required=False, label="Use each run's answer as the expected answer (runs that failed a check are skipped)"
    )
    accept_failed_output = forms.BooleanField(
        required=False,
        label="Take the answer even if the run failed a check",
        help_text="A failed run's answer would make its own failure the reference: tick only if it is right.",
    )

    def __init__(self, *args, datasets=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.dataset_choices(datasets)

    def clean(self):
        data = super().clean()
        # With all_matching the runs are the filter's, found again by the server: the ticks are ignored.
        if not data.get("all_matching") and not data.get("trace_ids"):
            self.add_error("trace_ids", "Tick at least one run to capture.")
        return data

    def capture_data(self):
        d = self.cleaned_data
        return {
            "trace_ids": list(d["trace_ids"] or []),
            "use_output_as_expected": d["use_output_as_expected"],
            "accept_failed_output": d["accept_failed_output"],
        }


class DatasetForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="One line of text, e.g. reservo or feature/123.")
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def dataset_data(self):
        return {"name": self.cleaned_data["name"], "description": self.cleaned_data["description"]}


class CaseForm(ValueWithFormat, forms.Form):
    """Create or edit a case. ``version`` is the version the reviewer saw: a newer one is a conflict."""

    value_fields = ("input", "expected_output")

    name = forms.CharField(max_length=200)
    status = forms.ChoiceField(choices=CaseStatus.choices, initial=CaseStatus.ACTIVE)
    input = forms.CharField(required=False, strip=False, widget=forms.Textarea(attrs={"rows": 3}))
    input_format = forms.ChoiceField(choices=VALUE_FORMATS, initial=TEXT, label="read as")
    expected_output = forms.CharField(
        required=False,
        strip=False,
        label="Expected answer",
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Empty = no expected answer yet (the case stays in the review queue).",
    )
    expected_output_format = forms.ChoiceField(choices=VALUE_FORMATS, initial=TEXT, label="read as")
    expectations = forms.CharField(required=False, widget=JSON_WIDGET, help_text="JSON object; empty = none.")
    notes = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    metadata = forms.CharField(required=False, widget=JSON_WIDGET, help_text="JSON object; empty = none.")
    version = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)

    @classmethod
    def initial_for(cls, case):
        input_text, input_format = value_text(case.input)
        expected_text, expected_format = value_text(case.expected_output)
        return {
            "name": case.name,
            "status": case.status,
            "input": input_text,
            "input_format": input_format,
            "expected_output": expected_text,
            "expected_output_format": expected_format,
            "expectations": json_text(case.expectations) if case.expectations else "",
            "notes": case.notes,
            "metadata": json_text(case.metadata) if case.metadata else "",
            "version": case.version,
        }

    def clean_expectations(self):
        return _json_object_clean(self, "expectations")

    def clean_metadata(self):
        return _json_object_clean(self, "metadata")

    def case_data(self):
        """The fields for ``case_create`` / ``case_update`` (with ``version`` when known)."""
        d = self.cleaned_data
        data = {
            key: d[key] for key in ("name", "status", "input", "expected_output", "expectations", "notes", "metadata")
        }
        if d.get("version"):
            data["version"] = d["version"]
        return data


class ImportForm(forms.Form):
    file = forms.FileField(label="JSONL file", help_text="One case per line, as the export writes them.")
