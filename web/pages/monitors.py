"""The monitors' pages: the list (admins create and pause), a monitor with its alerts and
webhook deliveries, and an alert with the runs that drove it, opened as an annotation
queue. Viewers read; admins create, pause and send a test message (to its webhooks and
e-mail recipients); reviewers open an
alert's runs as a queue. The form's fields are the API's (``monitors.monitor_rules``);
its errors come back next to the field."""

from django import forms
from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from evalsite.models import Role
from monitors.emails import email_enabled
from monitors.models import Direction, Metric
from monitors.selectors import alert_get, alert_list, alert_runs_listed, delivery_list, monitor_get, monitor_list
from monitors.services import alert_queue_open, monitor_create, monitor_update
from monitors.webhooks import monitor_test_message
from web.pages.access import page_render, project_page
from web.pages.refusals import refusal


def _split(text):
    return [part.strip() for part in text.replace("\n", ",").split(",") if part.strip()]


class MonitorForm(forms.Form):
    name = forms.CharField(max_length=100)
    metric = forms.ChoiceField(choices=Metric.choices)
    scorer = forms.CharField(max_length=100, required=False, help_text="For pass_rate: the scorer watched.")
    feedback_name = forms.CharField(max_length=100, required=False, help_text="For feedback: scorer feedback:<name>.")
    target = forms.FloatField(help_text="A rate 0 to 1, or a p95 in ms (latency) or cents (cost).")
    direction = forms.ChoiceField(
        choices=[("", "default"), *Direction.choices], required=False,
        help_text="Default: above for pass_rate and feedback, below for the rest.",
    )  # fmt: skip
    window_minutes = forms.IntegerField(initial=60, min_value=1)
    min_runs = forms.IntegerField(initial=30, min_value=1, help_text="Runs the window needs before it decides.")
    run_name = forms.CharField(max_length=200, required=False, label="Runs named")
    tags = forms.CharField(max_length=500, required=False, help_text="Comma-separated; every one present.")
    webhook_urls = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}),
                                   help_text="One per line: each alert is POSTed there, signed.")  # fmt: skip
    email_recipients = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}),
                                       help_text="One address per line: each alert is e-mailed there.")  # fmt: skip

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not email_enabled():
            field = self.fields["email_recipients"]
            field.disabled = True
            field.help_text = "E-mail is off on this server (no EMAIL_HOST; docs/monitors.md)."

    def monitor_data(self):
        data = self.cleaned_data
        fields = {k: data[k] for k in ("name", "metric", "scorer", "feedback_name", "target", "window_minutes",
                                       "min_runs")}  # fmt: skip
        run_filter = {"name": data["run_name"], "tags": _split(data["tags"])}
        fields["filter"] = {k: v for k, v in run_filter.items() if v}
        fields["webhook_urls"] = _split(data["webhook_urls"])
        if data["email_recipients"]:
            fields["email_recipients"] = _split(data["email_recipients"])
        if data["direction"]:
            fields["direction"] = data["direction"]
        return fields


_FORM_FIELDS = {"filter.name": "run_name", "filter.tags": "tags"}


def _render(request, project, form, status=200):
    can_change = request.membership.allows(Role.ADMIN)
    context = {"monitors": monitor_list(project=project), "form": form if can_change else None,
               "can_change": can_change, "email_on": email_enabled()}  # fmt: skip
    return page_render(request, "monitors/monitors.html", context, status=status)


@project_page(change_role=Role.ADMIN)
def monitors_page(request, project):
    form = MonitorForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        with refusal(form, fields=_FORM_FIELDS) as refused:
            monitor = monitor_create(project=project, data=form.monitor_data())
        if refused:
            return _render(request, project, form, status=refused.error.status)
        messages.success(request, f"Monitor {monitor.name} is evaluated every minute.")
        return redirect("monitor", slug=project.slug, monitor_id=monitor.pk)
    return _render(request, project, form, status=400 if form.errors else 200)


@require_POST
@project_page(change_role=Role.ADMIN)
def monitor_pause(request, project, monitor_id):
    monitor = monitor_get(project=project, monitor_id=monitor_id)
    monitor = monitor_update(monitor=monitor, data={"paused": not monitor.paused})
    messages.success(request, f"Monitor {monitor.name} is {'paused' if monitor.paused else 'running'}.")
    return redirect("monitors", slug=project.slug)


@project_page
def alert_page(request, project, alert_id):
    alert = alert_get(project=project, alert_id=alert_id)
    runs = alert_runs_listed(alert)
    return page_render(request, "monitors/alert.html", {"alert": alert, "monitor": alert.monitor, "runs": runs})


@require_POST
@project_page
def alert_queue(request, project, alert_id):
    """Reviewers open the alert's runs as a queue (created once, then reused)."""
    queue = alert_queue_open(alert=alert_get(project=project, alert_id=alert_id), by=request.user)
    return redirect("queue", slug=project.slug, queue_id=queue.pk)


@project_page(change_role=Role.ADMIN)
def monitor_page(request, project, monitor_id):
    monitor = monitor_get(project=project, monitor_id=monitor_id)
    context = {
        "monitor": monitor,
        "alerts": alert_list(monitor=monitor)[:50],
        "deliveries": delivery_list(monitor=monitor),
        "can_change": request.membership.allows(Role.ADMIN),
        "email_on": email_enabled(),
    }
    return page_render(request, "monitors/monitor.html", context)


@require_POST
@project_page(change_role=Role.ADMIN)
def monitor_test_send(request, project, monitor_id):
    monitor = monitor_get(project=project, monitor_id=monitor_id)
    sent = monitor_test_message(monitor=monitor)
    if sent:
        messages.success(request, f"A test message is on its way to {len(sent)} webhook(s) and e-mail recipient(s); "
                                  "see the delivery log.")  # fmt: skip
    else:
        messages.error(request, "This monitor has no webhook URL or e-mail recipient to send a test to.")
    return redirect("monitor", slug=project.slug, monitor_id=monitor.pk)
