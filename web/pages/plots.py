"""Small server-rendered SVG plots (no JavaScript, no plotting library)."""

from django.utils.html import escape, format_html
from django.utils.safestring import mark_safe

WIDTH, HEIGHT, PAD = 640, 200, 34


def pass_rate_plot(points, title="Pass rate by experiment, oldest first"):
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
        WIDTH, HEIGHT, escape(title), body,
    )  # fmt: skip


DIFF_LABEL_W, DIFF_ROW_H, DIFF_TOP = 170, 24, 26


def _diff_x(value):
    """The x of a difference on the fixed −1..1 axis (values beyond it sit at its ends)."""
    value = max(-1.0, min(1.0, value))
    return DIFF_LABEL_W + (value + 1) / 2 * (WIDTH - DIFF_LABEL_W - PAD)


def _diff_row(i, row):
    cy = DIFF_TOP + DIFF_ROW_H * i + DIFF_ROW_H / 2
    name = row["scorer"] if len(row["scorer"]) <= 24 else row["scorer"][:23] + "…"
    kind = "regressed" if row["regressed"] else ("decidable" if row["decidable"] else "undecidable")
    interval, shown_interval = "", ""
    if row.get("ci95"):
        low, high = row["ci95"]
        interval = format_html(
            '<line class="interval {}" x1="{}" y1="{}" x2="{}" y2="{}"/>',
            kind, f"{_diff_x(low):.1f}", cy, f"{_diff_x(high):.1f}", cy,
        )  # fmt: skip
        shown_interval = f" [{low:+.3f}, {high:+.3f}]"
    return format_html(
        '<text x="4" y="{}">{}</text>{}<circle class="diff {}" cx="{}" cy="{}" r="5"><title>{}: {}{}</title></circle>',
        cy + 4, name, interval, kind, f"{_diff_x(row['diff']):.1f}", cy,
        row["scorer"], f"{row['diff']:+.3f}", shown_interval,
    )  # fmt: skip


def difference_plot(rows):
    """An SVG of each scorer's difference (candidate − base) with its 95% interval, on a fixed −1..1 axis.

    ``rows`` are the comparison's scorer rows; a row without a difference is left out. A
    regressed row is drawn in the failure colour, an undecidable one hollow. Empty when no
    row has a difference.
    """
    shown = [r for r in rows if r.get("diff") is not None]
    if not shown:
        return ""
    height = DIFF_TOP + DIFF_ROW_H * len(shown) + 10
    axis = format_html(
        '<line class="grid" x1="{}" y1="{}" x2="{}" y2="{}"/><text x="{}" y="16" text-anchor="middle">0</text>'
        '<text x="{}" y="16" text-anchor="middle">−1</text><text x="{}" y="16" text-anchor="middle">+1</text>',
        _diff_x(0), DIFF_TOP - 6, _diff_x(0), height - 6, _diff_x(0), _diff_x(-1), _diff_x(1),
    )  # fmt: skip
    parts = [axis, *(_diff_row(i, row) for i, row in enumerate(shown))]
    return format_html(
        '<svg class="plot diffs" viewBox="0 0 {} {}" role="img" aria-label="{}">{}</svg>',
        WIDTH, height, "Difference per scorer, candidate minus base, with 95% intervals",
        mark_safe("".join(parts)),
    )  # fmt: skip
