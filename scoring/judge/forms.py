"""Forms for the judge configuration: the project admins' page and the Django admin.

Both show the same fields and the same messages: they parse what the browser sends,
check it with ``checks.judge.validation`` (the rules ``judge_configure`` applies) so
each message lands next to its field, and hand the values to ``judge_configure``.

The api key is write-only here too: its input never renders a value
(``PasswordInput(render_value=False)``); left blank it keeps the stored key; the "clear
the key" box empties it. Criteria are edited as text, one ``id: question`` per line.
"""

from django import forms

from checks.judge.validation import judge_config_errors
from scoring.judge.services import KEEP
from scoring.models import JudgeConfig

CRITERIA_HELP = (
    "One criterion per line, as id: question, e.g. "
    "answer_relevance: Does the answer address the question that was asked? "
    "Ids are lowercase snake_case and cannot be the id of a built-in scorer."
)


def criteria_text(criteria):
    """``{id: question}`` as the form's text, one ``id: question`` per line."""
    return "\n".join(f"{criterion_id}: {question}" for criterion_id, question in (criteria or {}).items())


def criteria_parse(text):
    """``(criteria, errors)`` from the form's text; blank lines are ignored."""
    criteria, errors = {}, []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        criterion_id, colon, question = line.partition(":")
        criterion_id = criterion_id.strip()
        if not colon or not criterion_id:
            errors.append(f"line {number}: write the criterion as id: question")
        elif criterion_id in criteria:
            errors.append(f"line {number}: {criterion_id} is listed twice")
        else:
            criteria[criterion_id] = question.strip()
    return criteria, errors


def _key_field():
    return forms.CharField(
        label="API key",
        required=False,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
    )


def _clear_key_field():
    return forms.BooleanField(label="Clear the stored key (send no Authorization header)", required=False)


def _criteria_field():
    return forms.CharField(
        label="Criteria", required=False, widget=forms.Textarea(attrs={"rows": 6}), help_text=CRITERIA_HELP
    )


class JudgeFieldsMixin:
    """The checks shared by the page form and the admin form."""

    key_field = "api_key"

    def _judge_fields(self, config):
        # The admin builds this form without the key field for a user who may only view.
        if self.key_field in self.fields:
            self.fields[self.key_field].help_text = (
                "A key is set. Leave blank to keep it, or type a new one to replace it."
                if config is not None and config.api_key
                else "No key is set. Leave blank for a local model server that needs none."
            )
        if config is not None and not self.is_bound:
            self.initial.setdefault("criteria_text", criteria_text(config.criteria))

    def api_key_value(self):
        """What ``judge_configure`` gets for ``api_key``: a new key, ``""`` (clear) or ``KEEP``."""
        if self.cleaned_data.get("clear_api_key"):
            return ""
        return self.cleaned_data.get(self.key_field) or KEEP

    def judge_values(self):
        """The keyword arguments for ``judge_configure`` (after ``is_valid()``)."""
        data = self.cleaned_data
        return {
            "endpoint": data.get("endpoint") or "",
            "model": data.get("model") or "",
            "api_key": self.api_key_value(),
            "timeout_seconds": data.get("timeout_seconds"),
            "criteria": data.get("criteria", {}),
            "max_concurrency": data.get("max_concurrency"),
        }

    def _judge_clean(self, data):
        criteria, problems = criteria_parse(data.get("criteria_text") or "")
        for problem in problems:
            self.add_error("criteria_text", problem)
        data["criteria"] = criteria
        if data.get(self.key_field) and data.get("clear_api_key"):
            self.add_error("clear_api_key", "Either type a new key or clear the stored one, not both.")
        if self.errors:
            return data
        values = self.judge_values()
        errors = judge_config_errors(**{**values, "api_key": None if values["api_key"] is KEEP else values["api_key"]})
        self.add_judge_errors(errors)
        return data

    @property
    def error_fields(self):
        """The service's field names this form calls otherwise (criteria are typed as one text)."""
        return {"criteria": "criteria_text", "api_key": self.key_field}

    def add_judge_errors(self, errors):
        """Place the validation's ``[{field, message}]`` next to their fields (``criteria.<name>`` as ``<name>: ...``)."""
        for error in errors:
            head, _, rest = (error.get("field") or "").partition(".")
            field = self.error_fields.get(head, head)
            message = f"{rest}: {error['message']}" if rest and head == "criteria" else error["message"]
            self.add_error(field if field in self.fields else None, message)


class JudgeConfigForm(JudgeFieldsMixin, forms.Form):
    """The project admins' settings page."""

    field_order = [
        "endpoint",
        "model",
        "api_key",
        "clear_api_key",
        "timeout_seconds",
        "max_concurrency",
        "criteria_text",
    ]
    api_key = _key_field()
    clear_api_key = _clear_key_field()
    criteria_text = _criteria_field()

    endpoint = forms.CharField(
        label="Endpoint",
        required=False,
        max_length=500,
        help_text="Base URL of an OpenAI-compatible server, e.g. http://localhost:11434/v1. "
        "Calls go to {endpoint}/chat/completions. Leave endpoint and model blank to turn the judge off.",
    )
    model = forms.CharField(label="Model", required=False, max_length=200, help_text="e.g. qwen2.5:14b")
    timeout_seconds = forms.IntegerField(
        label="Timeout (seconds)",
        initial=30,
        widget=forms.NumberInput(attrs={"min": 1, "max": 300}),
        help_text="One call, from connect to the last byte of the reply: 1 to 300.",
    )
    max_concurrency = forms.IntegerField(
        label="Calls at once",
        initial=4,
        widget=forms.NumberInput(attrs={"min": 1, "max": 32}),
        help_text="Judge calls a worker makes at the same time for this project: 1 to 32.",
    )

    def __init__(self, *args, config=None, **kwargs):
        if config is not None and "initial" not in kwargs:
            kwargs["initial"] = {
                "endpoint": config.endpoint,
                "model": config.model,
                "timeout_seconds": config.timeout_seconds,
                "max_concurrency": config.max_concurrency,
            }
        super().__init__(*args, **kwargs)
        self._judge_fields(config)

    def clean(self):
        return self._judge_clean(super().clean())


class JudgeConfigAdminForm(JudgeFieldsMixin, forms.ModelForm):
    """The Django admin's form. The model's ``api_key`` field is never one of its fields."""

    key_field = "new_api_key"
    new_api_key = _key_field()
    clear_api_key = _clear_key_field()
    criteria_text = _criteria_field()

    class Meta:
        model = JudgeConfig
        fields = ["project", "endpoint", "model", "timeout_seconds", "max_concurrency"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._judge_fields(self.instance if self.instance.pk else None)
        if "endpoint" in self.fields:
            self.fields["endpoint"].help_text = JudgeConfigForm.base_fields["endpoint"].help_text

    def clean(self):
        return self._judge_clean(super().clean())
