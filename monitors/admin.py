from django.contrib import admin

from monitors.models import Alert, Delivery, Monitor


@admin.register(Monitor)
class MonitorAdmin(admin.ModelAdmin):
    list_display = ("name", "project", "metric", "target", "direction", "state", "paused", "last_evaluated_at")
    list_filter = ("state", "paused", "metric")
    readonly_fields = ("state", "last_evaluated_at", "last_n", "last_value", "last_low", "last_high")


@admin.register(Alert)
class AlertAdmin(admin.ModelAdmin):
    list_display = ("monitor", "kind", "at", "n", "value", "low", "high")
    list_filter = ("kind",)
    readonly_fields = ("monitor", "kind", "at", "window_start", "window_end", "n", "value", "low", "high", "run_ids")


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ("monitor", "alert", "url", "attempts", "last_status", "delivered_at")
    readonly_fields = ("monitor", "alert", "url", "attempts", "last_status", "last_error", "delivered_at")
