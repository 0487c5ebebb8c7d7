"""Writes of datasets and golden cases, each case change with its revision.

Every change of a case bumps its ``version`` and writes a ``CaseRevision`` (who, when,
the old and new values of the fields that changed) in the same transaction, so the
audit trail can never disagree with the case. Cases are never deleted: archiving is a
change of ``status`` like any other, and so is restoring. The acting party ``by`` is a
user (pages) or an ``ApiKey`` (the API); it is recorded on the revision.

Services take raw values and validate them with ``datasets.case_validation``; they
raise ``Invalid`` (400), ``Conflict`` (409) or ``NotFound`` (404) and then write nothing.
"""

from django.db import IntegrityError, transaction

from checks.scorers.values import json_equal
from datasets.case_validation import (
    CASE_DEFAULTS,
    CASE_EDITABLE_FIELDS,
    case_fields_clean,
    dataset_fields_clean,
)
from datasets.models import CaseRevision, CaseStatus, Dataset, GoldenCase, Trace
from evalsite.errors import Conflict, Invalid
from evalsite.models import ApiKey

Action = CaseRevision.Action


def dataset_create(*, project, data):
    """A new dataset of ``project`` from ``{name, description?}``; ``Conflict`` if the name is taken."""
    fields = dataset_fields_clean(data)
    taken = Conflict(
        f"The project already has a dataset named {fields['name']!r}.",
        errors=[{"field": "name", "message": "is already the name of a dataset in this project"}],
    )
    if Dataset.objects.filter(project=project, name=fields["name"]).exists():
        raise taken
    try:
        with transaction.atomic():
            return Dataset.objects.create(project=project, **fields)
    except IntegrityError:
        raise taken from None


def case_snapshot(case):
    """The editable fields of a case and where it came from, as a revision records them."""
    values = {field: getattr(case, field) for field in CASE_EDITABLE_FIELDS}
    values["source_trace_id"] = case.source_trace_id
    return values


def revision_write(*, case, action, old, new, by, reason=""):
    """Record one change of ``case`` (already saved at its new ``version``), with why if given."""
    return CaseRevision.objects.create(
        case=case, version=case.version, action=action, old=old, new=new, reason=reason, **actor_fields(by)
    )


def revisions_write_created(*, cases, by):
    """Record the ``created`` revision of each of ``cases`` (just saved, at version 1) in one insert."""
    actor = actor_fields(by)
    return CaseRevision.objects.bulk_create(
        CaseRevision(
            case=case, version=case.version, action=CaseRevision.Action.CREATED, old=None, new=case_snapshot(case),
            **actor,
        )
        for case in cases
    )  # fmt: skip


def writable_dataset_check(dataset):
    if dataset.archived:
        raise Conflict(f"Dataset {dataset.name!r} is archived; its cases cannot change.")


def case_create(*, dataset, data, by):
    """A new case in ``dataset`` from raw fields (``name`` required); its first revision says ``created``.

    ``source_trace_id`` may name a run of the project: the case keeps the id, and links
    the run while it exists. Raises ``Conflict`` when the name is taken in the dataset
    or a case of the dataset already came from that run (no twins).
    """
    fields = {**CASE_DEFAULTS, **case_fields_clean(data)}
    writable_dataset_check(dataset)
    try:
        with transaction.atomic():
            _name_free_check(dataset, fields["name"])
            _source_free_check(dataset, fields["source_trace_id"])
            source_run = None
            if fields["source_trace_id"] is not None:
                source_run = Trace.objects.filter(
                    project_id=dataset.project_id, trace_id=fields["source_trace_id"]
                ).first()
            case = GoldenCase.objects.create(dataset=dataset, source_run=source_run, version=1, **fields)
            revision_write(case=case, action=Action.CREATED, old=None, new=case_snapshot(case), by=by)
    except IntegrityError:
        # A concurrent request took the name or the run between the check and the insert.
        raise Conflict(
            "Another request wrote a case with the same name or source run at the same time; retry."
        ) from None
    return case


def case_update(*, case, data, by, reason=""):
    """Apply an edit (any of the editable fields, plus an optional expected ``version``).

    Returns ``(case, changed)``. Only fields whose value differs count: an edit that
    changes nothing writes no revision and keeps the version. Otherwise the version goes
    up by one and one revision records the old and new values of the changed fields;
    its action is ``archived`` or ``restored`` when the status leaves or returns from
    ``archived``, else ``updated``. The case row is locked for the transaction, so
    concurrent edits queue instead of overwriting each other; with ``version`` given, an
    edit based on an older version is a ``Conflict`` rather than a silent overwrite.
    ``reason`` is kept on the revision (why a person released a case from quarantine).
    """
    if isinstance(data, dict) and "version" in data:
        data = dict(data)
        expected_version = data.pop("version")
        if isinstance(expected_version, bool) or not isinstance(expected_version, int) or expected_version < 1:
            raise Invalid(
                "The edit has invalid fields. Nothing was written.",
                errors=[{"field": "version", "message": "must be the positive integer version the edit is based on"}],
            )
    else:
        expected_version = None
    fields = case_fields_clean(data, allowed=CASE_EDITABLE_FIELDS, required=(), detail="The edit has invalid fields.")
    return _case_change(case, fields, by=by, expected_version=expected_version, reason=reason)


def _quarantine_check(case, fields):
    """A case is quarantined with a reason (in the same edit or already stored); lifting it clears the reason."""
    quarantined = fields.get("quarantined", case.quarantined)
    if quarantined and not fields.get("quarantine_reason", case.quarantine_reason):
        raise Invalid(
            "A quarantine needs a reason. Nothing was written.",
            errors=[{"field": "quarantine_reason", "message": "is required to quarantine a case"}],
        )
    if fields.get("quarantined") is False and "quarantine_reason" not in fields:
        fields["quarantine_reason"] = ""


def case_archive(*, case, by):
    """Archive ``case`` (never a delete). Idempotent: archiving an archived case changes nothing."""
    return _case_change(case, {"status": CaseStatus.ARCHIVED}, by=by)


def case_restore(*, case, by):
    """Bring an archived case back as active. Idempotent for a case that is not archived."""
    if case.status != CaseStatus.ARCHIVED:
        return case, False
    return _case_change(case, {"status": CaseStatus.ACTIVE}, by=by)


def change_action(old_status, new_status):
    if new_status == old_status:
        return Action.UPDATED
    if new_status == CaseStatus.ARCHIVED:
        return Action.ARCHIVED
    if old_status == CaseStatus.ARCHIVED:
        return Action.RESTORED
    return Action.UPDATED


def case_changes(case, fields):
    """``(old, new)`` of the fields whose value would change; both empty when nothing would."""
    old, new = {}, {}
    for field, value in fields.items():
        current = getattr(case, field)
        if not json_equal(current, value):
            old[field] = current
            new[field] = value
    return old, new


def _case_change(case, fields, *, by, expected_version=None, reason=""):
    writable_dataset_check(case.dataset)
    try:
        with transaction.atomic():
            locked = GoldenCase.objects.select_for_update(of=("self",)).select_related("dataset").get(pk=case.pk)
            if expected_version is not None and expected_version != locked.version:
                raise Conflict(
                    f"The case changed since version {expected_version}: it is at version {locked.version}. "
                    "Read it again and redo the edit.",
                    errors=[{"field": "version", "message": f"is {locked.version} now"}],
                )
            if "quarantined" in fields or "quarantine_reason" in fields:
                _quarantine_check(locked, fields)
            old, new = case_changes(locked, fields)
            if not new:
                return locked, False
            if "name" in new:
                _name_free_check(locked.dataset, new["name"], exclude=locked.pk)
            action = change_action(locked.status, new.get("status", locked.status))
            for field, value in new.items():
                setattr(locked, field, value)
            locked.version += 1
            locked.save(update_fields=[*new, "version", "updated_at"])
            revision_write(case=locked, action=action, old=old, new=new, by=by, reason=reason)
    except IntegrityError:
        raise Conflict("Another request changed this case's dataset at the same time; retry.") from None
    return locked, True


def _name_free_check(dataset, name, *, exclude=None):
    taken = GoldenCase.objects.filter(dataset=dataset, name=name)
    if exclude is not None:
        taken = taken.exclude(pk=exclude)
    if taken.exists():
        raise Conflict(
            f"Dataset {dataset.name!r} already has a case named {name!r}.",
            errors=[{"field": "name", "message": "is already the name of another case in this dataset"}],
        )


def _source_free_check(dataset, source_trace_id):
    if source_trace_id is None:
        return
    twin = GoldenCase.objects.filter(dataset=dataset, source_trace_id=source_trace_id).only("id", "name").first()
    if twin is not None:
        raise Conflict(
            f"Case {twin.name!r} (id {twin.pk}) of this dataset already came from run {source_trace_id!r}.",
            errors=[{"field": "source_trace_id", "message": f"run already captured as case {twin.pk}"}],
        )


def actor_fields(by):
    """The revision's ``changed_by`` / ``changed_by_key`` for the acting user or API key."""
    if isinstance(by, ApiKey):
        return {"changed_by_key": by, "changed_by": None}
    if by is not None and getattr(by, "is_authenticated", False):
        return {"changed_by": by, "changed_by_key": None}
    return {"changed_by": None, "changed_by_key": None}
