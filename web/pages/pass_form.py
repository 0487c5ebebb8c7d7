"""The form of the "Start a scoring pass" page: scorers, the settings each one takes, which runs.

A scorer's settings are fields derived from its config schema (``Scorer.config_schema``):
a string, a number, an integer, a yes/no or one of a few values gets a field of that
kind; anything else (a list, an object, several shapes) a JSON box. The fields of a
scorer are named ``<scorer>__<setting>`` and read only when the scorer is ticked; what
they make up is the request's ``config.<scorer>``, checked by the same rules as the API
(``checks.scorers.config_validate``), its problems shown next to the field they name.
"""

import re

from django import forms

from checks.scorers import config_validate
from scoring.selection.requests import DEFAULT_LIMIT
from web.pages.forms import json_parse

SEPARATOR = "__"
# jsonschema's word for a missing key: "'tool' is a required property".
REQUIRED = re.compile(r"'(\w+)' is a required property")


def setting_field(scorer, name, schema):
    """The form field of setting ``name`` of ``scorer`` (JSON Schema ``schema``)."""
    required = name in scorer.config_schema.get("required", ())
    label = f"{name}{' (required)' if required else ''}"
    options = {"required": False, "label": label, "help_text": schema.get("description", "")}
    kind = schema.get("type")
    if "enum" in schema:
        default = schema.get("default")
        blank = ("", f"(the default: {default})" if default is not None else "(not set)")
        return forms.ChoiceField(choices=[blank, *((v, v) for v in schema["enum"])], **options)
    if kind == "string":
        return forms.CharField(max_length=schema.get("maxLength"), **options)
    if kind == "integer":
        return forms.IntegerField(min_value=schema.get("minimum"), **options)
    if kind == "number":
        return forms.FloatField(min_value=schema.get("minimum"), **options)
    if kind == "boolean":
        return forms.BooleanField(**options)
    options["help_text"] = f"JSON. {options['help_text']}".strip()
    return forms.CharField(widget=forms.Textarea(attrs={"rows": 2, "spellcheck": "false", "class": "json"}), **options)


def scorer_settings(scorer):
    """``{field name: form field}`` of the settings ``scorer`` takes (none for a judge criterion's fixed ones)."""
    if scorer.fixed_config is not None:
        return {}
    properties = scorer.config_schema.get("properties") or {}
    return {f"{scorer.id}{SEPARATOR}{name}": setting_field(scorer, name, schema) for name, schema in properties.items()}


class PassForm(forms.Form):
    scorers = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, label="Scorers")
    experiment = forms.ChoiceField(required=False, label="Runs of experiment")
    since = forms.DateTimeField(
        required=False, label="Started from", widget=forms.DateTimeInput(attrs={"type": "datetime-local"})
    )
    limit = forms.IntegerField(
        required=False,
        min_value=1,
        label="At most",
        help_text=f"The newest runs first; empty: the newest {DEFAULT_LIMIT:,}.",
    )

    def __init__(self, data, *, scorers, experiments):
        super().__init__(data)
        self.catalog = scorers
        self.fields["scorers"].choices = [(s, s) for s in scorers]
        self.fields["experiment"].choices = [("", "any experiment"), *((e, e) for e in experiments)]
        self.settings = {}
        for scorer in scorers.values():
            fields = scorer_settings(scorer)
            self.fields.update(fields)
            self.settings[scorer.id] = list(fields)

    def settings_groups(self):
        """``[(scorer id, [bound fields])]`` of the scorers with settings, in the list's order."""
        return [(s, [self[name] for name in names]) for s, names in self.settings.items() if names]

    def clean(self):
        data = super().clean()
        self.config = {}
        for scorer_id in data.get("scorers") or ():
            config = self._scorer_config(scorer_id, data)
            if config is None:
                continue
            for problem in config_validate(self.catalog[scorer_id], config):
                self._problem_show(scorer_id, problem)
            self.config[scorer_id] = config
        return data

    def _scorer_config(self, scorer_id, data):
        """The settings filled in for ``scorer_id`` as its config; None when none is."""
        config = {}
        for name in self.settings.get(scorer_id, ()):
            value = data.get(name)
            if value in (None, "", False):
                continue
            if isinstance(self.fields[name].widget, forms.Textarea):
                try:
                    value = json_parse(value)
                except forms.ValidationError as exc:
                    self.add_error(name, exc)
                    continue
            config[name.split(SEPARATOR, 1)[1]] = value
        return config or None

    def _problem_show(self, scorer_id, problem):
        """``"<scorer>.<setting>…: message"`` next to the setting's field, else at the top naming the scorer."""
        where, _, message = problem.partition(": ")
        setting = where.removeprefix(scorer_id).lstrip(".").replace("[", ".").split(".", 1)[0]
        missing = REQUIRED.fullmatch(message)
        if not setting and missing:
            setting, message = missing.group(1), f"Required when {scorer_id} is ticked."
        name = f"{scorer_id}{SEPARATOR}{setting}"
        if setting and name in self.fields:
            self.add_error(name, message)
        else:
            self.add_error(None, f"The settings of {scorer_id}: {message}")

    def request_data(self):
        """The body a ``POST /v1/api/passes`` would carry."""
        d = self.cleaned_data
        data = {"scorers": d["scorers"]}
        if self.config:
            data["config"] = dict(self.config)
        for key, value in (("experiment", d["experiment"]), ("from", d["since"]), ("limit", d["limit"])):
            if value not in (None, ""):
                data[key] = value
        return data
