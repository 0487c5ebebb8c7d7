"""Template filters of labels: a label's value as a reviewer reads it."""

from django import template

register = template.Library()


@register.filter
def label_value(score):
    """The label as given (yes/no for a boolean), from a human score."""
    value = score.detail.get("label")
    if isinstance(value, bool):
        return "yes" if value else "no"
    return value


@register.filter
def label_name(score):
    return score.scorer.split(":", 1)[1] if ":" in score.scorer else score.scorer
