"""Small server-rendered SVG plots (no JavaScript, no plotting library)."""

from django.utils.html import escape, format_html
from django.utils.safestring import mark_safe

WIDTH, HEIGHT, PAD = 640, 200, 34


def pass_rate_plot(points):
    """An SVG line of pass rates over time; ``points`` are ``(label, when, rate 0..1 or None)`` in time order.

    Points without a rate are left out of the line. The y axis is fixed at 0..1 so two
    plots read the same; every point carries a tooltip with its label and rate.
    """
    shown = [(label, rate) for label, _, rate in points if rate is not None]
    if not shown:
        return ""
    step = (WIDTH - 2 * PAD) / max(len(shown) - 1, 1)

    def x(i):
        return PAD + i * step if len(shown) > 1 else WIDTH / 2

    def y(rate):
        return HEIGHT - PAD - rate * (HEIGHT - 2 * PAD)

    parts = [
        format_html('<line class="axis" x1="{}" y1="{}" x2="{}" y2="{}"/>', PAD, y(0), WIDTH - PAD, y(0)),
        format_html('<line class="grid" x1="{}" y1="{}" x2="{}" y2="{}"/>', PAD, y(1), WIDTH - PAD, y(1)),
        format_html('<text x="4" y="{}">100%</text><text x="4" y="{}">0%</text>', y(1) + 4, y(0) + 4),
    ]
    coordinates = " ".join(f"{x(i):.1f},{y(rate):.1f}" for i, (_, rate) in enumerate(shown))
    parts.append(format_html('<polyline class="line" points="{}"/>', coordinates))
    for i, (label, rate) in enumerate(shown):
        cx, cy = f"{x(i):.1f}", f"{y(rate):.1f}"
        parts.append(
            format_html(
                '<circle class="point" cx="{}" cy="{}" r="4"><title>{}: {}</title></circle>'
                '<text class="label" x="{}" y="{}" text-anchor="middle">{}</text>',
                cx,
                cy,
                label,
                f"{rate:.1%}",
                cx,
                HEIGHT - 10,
                label,
            )  # fmt: skip
        )
    body = mark_safe("".join(parts))
    return format_html(
        '<svg class="plot" viewBox="0 0 {} {}" role="img" aria-label="{}">{}</svg>',
        WIDTH, HEIGHT, escape("Pass rate by experiment, oldest first"), body,
    )  # fmt: skip
