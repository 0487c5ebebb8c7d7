"""Changes a project's admins make: API keys, members, invitations, quota, feedback origins. Each one audited.

Every service takes the acting user (``actor``), runs in one transaction and writes one
``AuditEntry`` in it. Bad input raises ``Invalid`` naming the field; nothing is written
then. A project always keeps at least one admin: removing or demoting the last one is a
``Conflict``. Secrets (a key, an invitation's token) exist only in a return value.
"""

import hashlib
import secrets
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from evalsite.errors import Conflict, Invalid, NotFound
from evalsite.models import ApiKey, AuditEntry, Invitation, Membership, Project, Role
from evalsite.origins import origins_clean
from evalsite.projects import api_key_create
from evalsite.scopes import DEFAULT_SCOPES, scopes_clean

INVITATION_VALID_FOR = timedelta(days=7)
MAX_QUOTA_PER_MINUTE = 10_000_000


def audit_record(*, project, actor, action, summary, **detail):
    return AuditEntry.objects.create(
        project=project,
        actor=actor,
        actor_name=actor.get_username() if actor else "",
        action=action,
        summary=summary[:500],
        detail=detail,
    )


def _field_error(field, message):
    return Invalid(f"{field}: {message}", errors=[{"field": field, "message": message}])


def _name_clean(name, field="name", max_length=200):
    name = (name or "").strip()
    if not name:
        raise _field_error(field, "is required.")
    if len(name) > max_length:
        raise _field_error(field, f"must be at most {max_length} characters.")
    return name


def _role_clean(role):
    if role not in Role.values:
        raise _field_error("role", f"must be one of {', '.join(Role.values)}; got {role!r}.")
    return role


# --- API keys ---------------------------------------------------------------------------


def key_issue(*, project, actor, name, scopes=DEFAULT_SCOPES):
    """``(ApiKey, full_key)``: the full key is shown once and never stored."""
    name = _name_clean(name)
    try:
        scopes = scopes_clean(scopes)
    except ValueError as exc:
        raise _field_error("scopes", f"{exc}.") from None
    with transaction.atomic():
        key, full_key = api_key_create(project=project, name=name, created_by=actor, scopes=scopes)
        audit_record(
            project=project,
            actor=actor,
            action="key.create",
            summary=f"created API key {name!r} ({key.prefix}) with scopes {','.join(scopes)}",
        )
    return key, full_key


def key_withdraw(*, project, actor, key_id):
    """Revoke one of the project's keys; revoking a revoked key changes and records nothing."""
    with transaction.atomic():
        key = ApiKey.objects.select_for_update().filter(project=project, pk=key_id).first()
        if key is None:
            raise NotFound("No such API key in this project.")
        if key.revoked_at is None:
            key.revoked_at = timezone.now()
            key.save(update_fields=["revoked_at"])
            audit_record(
                project=project,
                actor=actor,
                action="key.revoke",
                summary=f"revoked API key {key.name!r} ({key.prefix})",
            )
    return key


# --- members ----------------------------------------------------------------------------


def member_add(*, project, actor, who, role):
    """Make an existing user (username or e-mail) a member; ``Conflict`` if already one."""
    role = _role_clean(role)
    who = (who or "").strip()
    users = get_user_model().objects.filter(Q(username=who) | Q(email__iexact=who)) if who else []
    user = users[0] if len(users) == 1 else None
    if user is None:
        raise _field_error("user", f"no single user has the username or e-mail {who!r}; invite them instead.")
    with transaction.atomic():
        if Membership.objects.filter(project=project, user=user).exists():
            raise Conflict(f"{user.get_username()} is already a member of {project.name}.")
        membership = Membership.objects.create(project=project, user=user, role=role)
        audit_record(
            project=project, actor=actor, action="member.add", summary=f"added {user.get_username()} as {role}"
        )
    return membership


def _membership_locked(project, membership_id):
    """The membership, locked after the project row: every member change takes the same two locks in that order.

    Only the membership row is locked (``of=("self",)``), not its user: two admins
    changing each other's role at once each locked the other's user row too, then each
    needed its own (the audit row's actor) and the database broke the cycle as a
    deadlock. Locking the project first makes them queue instead.
    """
    Project.objects.select_for_update().filter(pk=project.pk).first()
    membership = (
        Membership.objects.select_for_update(of=("self",))
        .select_related("user")
        .filter(project=project, pk=membership_id)
        .first()
    )
    if membership is None:
        raise NotFound("No such member in this project.")
    return membership


def _last_admin_kept(project, membership):
    # The project row is locked (``_membership_locked``), so two admins demoting each other queue.
    admins = Membership.objects.filter(project=project, role=Role.ADMIN).exclude(pk=membership.pk)
    if membership.role == Role.ADMIN and not admins.exists():
        raise Conflict(f"{membership.user.get_username()} is the last admin of {project.name}; make another first.")


def member_role_change(*, project, actor, membership_id, role):
    role = _role_clean(role)
    with transaction.atomic():
        membership = _membership_locked(project, membership_id)
        if membership.role == role:
            return membership
        if role != Role.ADMIN:
            _last_admin_kept(project, membership)
        before, membership.role = membership.role, role
        membership.save(update_fields=["role"])
        name = membership.user.get_username()
        audit_record(
            project=project, actor=actor, action="member.role", summary=f"changed {name} from {before} to {role}"
        )
    return membership


def member_remove(*, project, actor, membership_id):
    with transaction.atomic():
        membership = _membership_locked(project, membership_id)
        _last_admin_kept(project, membership)
        membership.delete()
        name = membership.user.get_username()
        audit_record(
            project=project, actor=actor, action="member.remove", summary=f"removed {name} ({membership.role})"
        )


# --- invitations ------------------------------------------------------------------------


def _token_hash(token):
    return hashlib.sha256(token.encode()).hexdigest()


def invitation_create(*, project, actor, email, role):
    """``(Invitation, token)``: the token goes in the one-time link, shown once."""
    role = _role_clean(role)
    email = (email or "").strip()
    try:
        validate_email(email)
    except ValidationError:
        raise _field_error("email", f"is not an e-mail address: {email!r}.") from None
    token = secrets.token_urlsafe(32)
    with transaction.atomic():
        invitation = Invitation.objects.create(
            project=project, email=email, role=role, token_hash=_token_hash(token), created_by=actor,
            expires_at=timezone.now() + INVITATION_VALID_FOR,
        )  # fmt: skip
        audit_record(project=project, actor=actor, action="invite.create", summary=f"invited {email} as {role}")
    return invitation, token


def invitation_withdraw(*, project, actor, invitation_id):
    with transaction.atomic():
        updated = Invitation.objects.filter(
            project=project, pk=invitation_id, accepted_at__isnull=True, revoked_at__isnull=True
        ).update(revoked_at=timezone.now())
        if updated:
            email = Invitation.objects.get(pk=invitation_id).email
            audit_record(
                project=project, actor=actor, action="invite.revoke", summary=f"withdrew the invitation of {email}"
            )
        elif not Invitation.objects.filter(project=project, pk=invitation_id).exists():
            raise NotFound("No such invitation in this project.")


def invitation_open(token):
    """The open invitation a link's token names; ``NotFound`` when used, withdrawn, expired or unknown."""
    invitation = Invitation.objects.select_related("project").filter(token_hash=_token_hash(token or "")).first()
    if invitation is None or not invitation.is_open:
        raise NotFound("This invitation link is not valid: it was used, withdrawn or has expired.")
    return invitation


def invitation_accept(*, token, user):
    """Make ``user`` a member with the invited role; the link works once.

    A user who is already a member keeps the higher of the two roles. The claim is a
    conditional update, so two people opening the same link at once cannot both join.
    """
    invitation = invitation_open(token)
    with transaction.atomic():
        _invitation_claim(invitation, user)
        return _invited_member_join(invitation, user)


def invitation_signup(*, token, username, password):
    """A new account for the invited person, made a member; returns ``(user, membership)``.

    The link is claimed *before* the account is made, in the same transaction: of six
    people sending the form at once, one claim succeeds and the five others get
    ``NotFound`` with no account made (they used to get an account each, with no project).
    The account's e-mail is the invitation's. A username another signup took at the same
    moment is an ``Invalid`` naming ``username``, and nothing is written.
    """
    invitation = invitation_open(token)
    users = get_user_model().objects
    try:
        with transaction.atomic():
            _invitation_claim(invitation, None)
            user = users.create_user(username=username, email=invitation.email, password=password)
            Invitation.objects.filter(pk=invitation.pk).update(accepted_by=user)
            return user, _invited_member_join(invitation, user)
    except IntegrityError:
        if not users.filter(username=username).exists():
            raise
        raise _field_error("username", f"{username!r} was just taken; choose another.") from None


def _invitation_claim(invitation, user):
    claimed = Invitation.objects.filter(pk=invitation.pk, accepted_at__isnull=True, revoked_at__isnull=True).update(
        accepted_at=timezone.now(), accepted_by=user
    )
    if not claimed:
        raise NotFound("This invitation link is not valid: it was used, withdrawn or has expired.")


def _invited_member_join(invitation, user):
    membership, created = Membership.objects.get_or_create(
        project=invitation.project, user=user, defaults={"role": invitation.role}
    )
    if not created and not membership.allows(invitation.role):
        membership.role = invitation.role
        membership.save(update_fields=["role"])
    audit_record(
        project=invitation.project, actor=user, action="invite.accept",
        summary=f"{user.get_username()} joined as {membership.role} (invitation of {invitation.email})",
    )  # fmt: skip
    return membership


# --- quota ------------------------------------------------------------------------------


def _whole_number(raw):
    """``raw`` (text or int) as an int when it is ASCII digits only, else ``None``.

    ``int()`` also reads ``"١٢"`` (Arabic-Indic digits), ``"1_000"`` and ``"+5"``: none of
    them is how anyone writes a quota, and a page would show back a number never typed.
    """
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    text = str(raw).strip()
    return int(text) if text.isascii() and text.isdigit() else None


def quota_set(*, project, actor, quota_per_minute):
    value = _whole_number(quota_per_minute)
    if value is None:
        raise _field_error("quota_per_minute", f"must be a whole number; got {quota_per_minute!r}.")
    if not 0 <= value <= MAX_QUOTA_PER_MINUTE:
        raise _field_error("quota_per_minute", f"must be between 0 (no ceiling) and {MAX_QUOTA_PER_MINUTE}.")
    with transaction.atomic():
        before = Project.objects.select_for_update().get(pk=project.pk).quota_per_minute
        if before != value:
            Project.objects.filter(pk=project.pk).update(quota_per_minute=value)
            audit_record(
                project=project, actor=actor, action="quota.set",
                summary=f"changed the quota from {before or 'none'} to {value or 'none'} records per minute",
            )  # fmt: skip
    project.quota_per_minute = value
    return project


MAX_RETENTION_DAYS = 36_500


def retention_set(*, project, actor, retention_days):
    """Keep runs ``retention_days`` days (blank or 0: forever)."""
    raw = str(retention_days if retention_days is not None else "").strip()
    value = _whole_number(raw) if raw else 0
    if value is None:
        raise _field_error("retention_days", f"must be a whole number of days or blank; got {raw!r}.")
    if not 0 <= value <= MAX_RETENTION_DAYS:
        raise _field_error(
            "retention_days", f"must be between 1 and {MAX_RETENTION_DAYS} days, or blank to keep every run."
        )
    value = value or None
    with transaction.atomic():
        before = Project.objects.select_for_update().get(pk=project.pk).retention_days
        if before != value:
            Project.objects.filter(pk=project.pk).update(retention_days=value)
            audit_record(
                project=project, actor=actor, action="retention.set",
                summary=f"changed run retention from {_days(before)} to {_days(value)}",
            )  # fmt: skip
    project.retention_days = value
    return project


def _days(value):
    return f"{value} days" if value else "forever"


def feedback_origins_set(*, project, actor, origins):
    """The web page origins that may send feedback from a browser: ``origins`` is text, one per line or comma."""
    try:
        value = origins_clean(str(origins or "").replace(",", "\n").split())
    except ValueError as exc:
        raise _field_error("feedback_origins", str(exc)) from None
    with transaction.atomic():
        before = Project.objects.select_for_update().get(pk=project.pk).feedback_origins
        if before != value:
            Project.objects.filter(pk=project.pk).update(feedback_origins=value)
            audit_record(
                project=project, actor=actor, action="feedback_origins.set",
                summary=f"changed the feedback origins to {', '.join(value) or 'none'}", before=before, after=value,
            )  # fmt: skip
    project.feedback_origins = value
    return project
