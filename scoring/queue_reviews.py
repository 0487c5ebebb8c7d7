"""The model of team review kept beside scoring.models (imported there): each reviewer's turn on a queue item."""

from django.conf import settings
from django.db import models


class QueueReview(models.Model):
    """One reviewer's turn on one item of a queue: labelled (counts towards reviewers_per_item) or skipped.

    Unique on (queue, item, reviewer): a reviewer labels an item once, however many requests race.
    """

    queue = models.ForeignKey("scoring.QueueFilter", on_delete=models.CASCADE, related_name="reviews")
    item = models.BigIntegerField()
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    outcome = models.CharField(max_length=20, default="labelled")  # labelled | skipped
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["queue", "item", "reviewer"], name="queuereview_unique_item_reviewer")
        ]
