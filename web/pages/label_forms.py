"""The label controls of the run page and the annotation queue: one field per label config.

Boolean configs are yes/no radios, categorical ones a radio per option, numeric ones a
radio per step when the range is 3 to 9 whole numbers (else a number field). A field left
empty labels nothing. The form only reads the reviewer's choice; ``scoring.labels``
decides what a valid label is, and its errors come back next to the field.
"""

from django import forms

from scoring.models import LabelKind

# A numeric range of whole numbers with 3 to 9 steps (1..5 stars) gets one radio (and one
# key) per step; any other range (0..1, 0..100) a number field, which takes any value in it.
MIN_STEPS, MAX_STEPS = 3, 9
BOOLEAN_CHOICES = [("true", "yes"), ("false", "no")]


def _steps(config):
    low, high = config.minimum, config.maximum
    if low is None or high is None or low != int(low) or high != int(high):
        return None
    if not MIN_STEPS <= high - low + 1 <= MAX_STEPS:
        return None
    return [int(low) + i for i in range(int(high - low) + 1)]


def _field(config):
    common = {"required": False, "label": config.name, "help_text": config.description}
    if config.kind == LabelKind.BOOLEAN:
        return forms.ChoiceField(choices=BOOLEAN_CHOICES, widget=forms.RadioSelect, **common)
    if config.kind == LabelKind.CATEGORICAL:
        return forms.ChoiceField(choices=[(o, o) for o in config.options], widget=forms.RadioSelect, **common)
    steps = _steps(config)
    if steps:
        return forms.ChoiceField(choices=[(str(s), str(s)) for s in steps], widget=forms.RadioSelect, **common)
    return forms.FloatField(widget=forms.NumberInput(attrs={"step": "any"}), **common)


class LabelForm(forms.Form):
    comment = forms.CharField(required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args, configs, current=None, **kwargs):
        """``configs``: the project's active label configs; ``current``: ``{config name: value}`` shown checked."""
        super().__init__(*args, **kwargs)
        self.configs = list(configs)
        for config in self.configs:
            field = _field(config)
            field.widget.attrs.update({"data-kind": config.kind})
            self.fields[self.field_name(config)] = field
            value = (current or {}).get(config.name)
            if value is not None:
                self.initial[self.field_name(config)] = self._as_choice(config, value)

    @staticmethod
    def current_of(scores, username):
        """``{config name: value}`` of ``username``'s own labels among ``scores`` (to show them checked)."""
        return {
            s.scorer.split(":", 1)[1]: s.detail.get("label")
            for s in scores
            if s.source == "human" and s.detail.get("author") == username and s.detail.get("by") == "user"
        }

    @staticmethod
    def field_name(config):
        return f"config_{config.pk}"

    @staticmethod
    def _as_choice(config, value):
        if config.kind == LabelKind.BOOLEAN:
            return "true" if value else "false"
        if config.kind == LabelKind.NUMERIC and isinstance(value, float) and value.is_integer():
            return str(int(value))
        return str(value) if config.kind == LabelKind.NUMERIC and _steps(config) else value

    def label_fields(self):
        """``[(config, bound field)]`` in the configs' order, for the template."""
        return [(config, self[self.field_name(config)]) for config in self.configs]

    def clean(self):
        data = super().clean()
        if not self.values():
            raise forms.ValidationError("Choose a value for at least one label.")
        return data

    def values(self):
        """``[(config, value)]`` of the labels chosen, as the label service reads them."""
        chosen = []
        for config in self.configs:
            raw = self.cleaned_data.get(self.field_name(config))
            if raw in (None, ""):
                continue
            if config.kind == LabelKind.BOOLEAN:
                chosen.append((config, raw == "true"))
            elif config.kind == LabelKind.NUMERIC:
                number = float(raw)
                chosen.append((config, int(number) if number.is_integer() else number))
            else:
                chosen.append((config, raw))
        return chosen
