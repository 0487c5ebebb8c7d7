"""The one rulebook of a monitor's fields, for the API and the pages alike.

``monitor_fields(data, current=None)`` checks ``data`` (on a change, merged over the
monitor's ``current`` fields, so rules across fields hold after every change) and
returns the fields to store, or raises ``Invalid`` listing every bad field by name
(``webhook_urls[1]``, ``email_recipients[0]``, ``filter.tags``...). Nothing is written
by it. E-mail recipients are refused while the server sends no e-mail (no ``EMAIL_HOST``)
when they are given; a monitor that has some keeps them if e-mail is turned off later.
"""

from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from evalsite.errors import Invalid
from evalsite.outbound import outbound_url_check
from monitors.emails import email_enabled
from monitors.models import Direction, Metric

RATES = (Metric.PASS_RATE, Metric.ERROR_RATE, Metric.FEEDBACK)
DEFAULT_DIRECTION = {Metric.PASS_RATE: Direction.ABOVE, Metric.FEEDBACK: Direction.ABOVE}
FIELDS = ("name", "metric", "scorer", "feedback_name", "filter", "production_only", "window_minutes", "target",
          "direction", "min_runs", "paused", "webhook_urls", "email_recipients")  # fmt: skip
MAX_WINDOW_MINUTES = 7 * 24 * 60
MAX_WEBHOOKS = 10
MAX_RECIPIENTS = 10


def _text(value, limit=100):
    return isinstance(value, str) and 0 < len(value.strip()) <= limit


def _integer(value, low, high):
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _filter_errors(value):
    if not isinstance(value, dict):
        return [("filter", "must be an object with name and/or tags")]
    errors = [(f"filter.{key}", "unknown filter; use name, tags") for key in sorted(set(value) - {"name", "tags"})]
    if "name" in value and not _text(value["name"], 200):
        errors.append(("filter.name", "must be a text of 1 to 200 characters"))
    tags = value.get("tags", [])
    if not isinstance(tags, list) or not all(_text(t, 200) for t in tags):
        errors.append(("filter.tags", "must be a list of texts"))
    return errors


def _webhook_errors(urls):
    if not isinstance(urls, list) or len(urls) > MAX_WEBHOOKS:
        return [("webhook_urls", f"must be a list of at most {MAX_WEBHOOKS} URLs")]
    errors = []
    for i, url in enumerate(urls):
        try:
            outbound_url_check(url, field=f"webhook_urls[{i}]")
        except Invalid as exc:
            errors.extend((e["field"], e["message"]) for e in exc.errors)
    return errors


def _email_errors(addresses, given):
    if not isinstance(addresses, list) or len(addresses) > MAX_RECIPIENTS:
        return [("email_recipients", f"must be a list of at most {MAX_RECIPIENTS} e-mail addresses")]
    if given and addresses and not email_enabled():
        message = "e-mail is off on this server: set EMAIL_HOST (docs/monitors.md), or leave it empty"
        return [("email_recipients", message)]
    errors, seen = [], set()
    for i, address in enumerate(addresses):
        try:
            validate_email(address if isinstance(address, str) else "")
        except ValidationError:
            errors.append((f"email_recipients[{i}]", f"is not an e-mail address: {address!r}"))
            continue
        if address.lower() in seen:
            errors.append((f"email_recipients[{i}]", f"{address!r} is listed twice"))
        seen.add(address.lower())
    return errors


def _metric_errors(fields):
    metric, errors = fields.get("metric"), []
    if metric not in Metric.values:
        return [("metric", "must be one of " + ", ".join(Metric.values))]
    if metric == Metric.PASS_RATE and not _text(fields.get("scorer")):
        errors.append(("scorer", "is required for pass_rate: the scorer whose pass rate is watched"))
    if metric == Metric.FEEDBACK and not _text(fields.get("feedback_name")):
        errors.append(("feedback_name", "is required for feedback: the feedback name (scorer feedback:<name>)"))
    target = fields.get("target")
    if isinstance(target, bool) or not isinstance(target, (int, float)):
        errors.append(("target", "must be a number"))
    elif metric in RATES and not 0 <= target <= 1:
        errors.append(("target", "must be a rate from 0 to 1"))
    elif target < 0:
        errors.append(("target", "must be 0 or more"))
    return errors


def _shape_errors(fields):
    errors = [] if _text(fields.get("name")) else [("name", "must be a text of 1 to 100 characters")]
    for key in ("production_only", "paused"):
        if not isinstance(fields.get(key), bool):
            errors.append((key, "must be true or false"))
    if not _integer(fields.get("window_minutes"), 1, MAX_WINDOW_MINUTES):
        errors.append(("window_minutes", f"must be a whole number of minutes from 1 to {MAX_WINDOW_MINUTES}"))
    if not _integer(fields.get("min_runs"), 1, 1_000_000):
        errors.append(("min_runs", "must be a whole number from 1 to 1000000"))
    if fields.get("direction") not in Direction.values:
        errors.append(("direction", "must be above or below"))
    return errors


def monitor_fields(data, current=None):
    """The checked fields of a monitor from ``data`` over ``current`` (a dict); ``Invalid`` listing each problem."""
    if not isinstance(data, dict):
        raise Invalid("The body must be a JSON object.", errors=[{"field": "body", "message": "must be an object"}])
    unknown = sorted(set(data) - set(FIELDS))
    defaults = {"scorer": "", "feedback_name": "", "filter": {}, "production_only": True, "window_minutes": 60,
                "min_runs": 30, "paused": False, "webhook_urls": [], "email_recipients": []}  # fmt: skip
    fields = {**defaults, **(current or {}), **{k: v for k, v in data.items() if k in FIELDS}}
    metric = fields.get("metric")
    fields.setdefault("direction", DEFAULT_DIRECTION.get(metric, Direction.BELOW) if isinstance(metric, str) else None)
    errors = [(key, f"unknown field; use {', '.join(FIELDS)}") for key in unknown]
    errors += _shape_errors(fields) + _metric_errors(fields) + _filter_errors(fields["filter"])
    errors += _webhook_errors(fields["webhook_urls"])
    errors += _email_errors(fields["email_recipients"], given="email_recipients" in data)
    if "target" not in fields:
        errors.append(("target", "is required"))
    if errors:
        listed = [{"field": field, "message": message} for field, message in errors]
        raise Invalid(f"{errors[0][0]} {errors[0][1]}. Nothing was written.", errors=listed)
    fields["name"] = fields["name"].strip()
    return fields
