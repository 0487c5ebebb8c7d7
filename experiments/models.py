"""Experiments: one per version of the agent; runs and their scores carry it."""

from django.db import models

from evalsite.models import Project


class Experiment(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="experiments")
    name = models.CharField(max_length=200)
    dataset = models.ForeignKey(
        "datasets.Dataset", null=True, blank=True, on_delete=models.SET_NULL, related_name="experiments"
    )
    # Free-form facts about the version: commit, branch, model, prompt version.
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="experiment_unique_project_name")]

    def __str__(self):
        return self.name
