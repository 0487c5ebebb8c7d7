"""The form that saves a queue's filter: names of the project's datasets, experiments and label configs.

The menus offer what the project has; ``scoring.review.queue.queue_filter_create`` checks every
name again, so a stale menu or a hand-made request is answered next to the field.
"""

from django import forms

from datasets.case_selectors import dataset_list
from scoring.labels import label_config_list
from scoring.models import QueueFilter
from scoring.review.assignment import REVIEWERS_MAX, reviewer_members


def _choices(names, empty):
    return [("", empty)] + [(n, n) for n in names]


class QueueFilterForm(forms.Form):
    name = forms.CharField(max_length=100)
    kind = forms.ChoiceField(
        choices=[(QueueFilter.Kind.RUNS, "runs"), (QueueFilter.Kind.CASES_NEEDING_ANSWER, "cases needing an answer")]
    )
    dataset = forms.ChoiceField(required=False)
    experiment = forms.CharField(required=False, max_length=200)
    failed_scorer = forms.CharField(required=False, max_length=100, label="Failed scorer", help_text="or 'any'")
    abstained_scorer = forms.CharField(required=False, max_length=100, label="Abstained scorer", help_text="or 'any'")
    unlabeled = forms.ChoiceField(required=False, label="Without a label of")
    disagreement = forms.ChoiceField(required=False, label="Judge and reviewers disagree on")
    feedback = forms.CharField(
        required=False, max_length=300, label="With end users' feedback", help_text="name:value, e.g. thumbs:false"
    )

    reviewers_per_item = forms.IntegerField(
        required=False, min_value=1, max_value=REVIEWERS_MAX, initial=1, label="Reviewers per item",
        help_text="more than 1: each item is labelled by that many reviewers, then agreement is measured",
    )  # fmt: skip
    blind = forms.BooleanField(
        required=False, label="Blind review", help_text="reviewers do not see each other's labels"
    )
    assignees = forms.MultipleChoiceField(
        required=False, widget=forms.CheckboxSelectMultiple, help_text="none ticked: every reviewer may take items"
    )

    def __init__(self, *args, project, **kwargs):
        super().__init__(*args, **kwargs)
        configs = list(label_config_list(project=project, include_archived=False))
        self.fields["dataset"].choices = _choices(
            [d.name for d in dataset_list(project=project, include_archived=False)], "any dataset"
        )
        self.fields["unlabeled"].choices = _choices([c.name for c in configs], "—")
        self.fields["assignees"].choices = [(n, n) for n in reviewer_members(project=project)]
        self.fields["disagreement"].choices = _choices([c.name for c in configs if c.criterion], "—")
