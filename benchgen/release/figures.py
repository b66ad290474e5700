"""Card figures as deterministic PNGs (Agg canvas, default style, fixed DPI, no Software metadata).

No pyplot: figures are built on :class:`matplotlib.figure.Figure` with an Agg canvas so nothing touches
global backend state, and ``metadata={"Software": None}`` keeps the matplotlib version string out
of the file. Same data + same matplotlib => byte-identical PNGs.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from benchgen.release.context import ReleaseContext

PNG_METADATA: dict[str, Any] = {"Software": None}
MAX_ATTRIBUTES = 30


def _new_figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Any, path: Path, dpi: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", dpi=dpi, metadata=PNG_METADATA)


def _heatmap(
    ax: Any,
    fig: Any,
    rows: list[str],
    cols: list[str],
    values: list[list[float | None]],
    fmt: str,
    label: str,
    vmax: float | None = None,
) -> None:
    import numpy as np

    data = np.array([[np.nan if v is None else v for v in r] for r in values], dtype=float)
    masked = np.ma.masked_invalid(data)
    im = ax.imshow(masked, cmap="viridis", aspect="auto", vmin=0.0, vmax=vmax)
    ax.set_xticks(range(len(cols)), labels=cols, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(rows)), labels=rows, fontsize=8)
    if len(rows) * len(cols) <= 400:
        top = np.nanmax(data) if np.isfinite(data).any() else 0.0
        for i in range(len(rows)):
            for j in range(len(cols)):
                if not np.isnan(data[i, j]):
                    colour = "black" if data[i, j] > 0.6 * (vmax or top or 1) else "white"
                    ax.text(j, i, format(data[i, j], fmt), ha="center", va="center", fontsize=7, color=colour)
    fig.colorbar(im, ax=ax, label=label, shrink=0.8)


def coverage_figure(ctx: ReleaseContext, path: Path, dpi: int) -> None:
    counts: Counter[tuple[str, str]] = Counter()
    for r in ctx.all_rows():
        counts[(str(r.get("domain")), str(r.get("task_type")))] += 1
    domains = sorted({d for d, _ in counts}) or ["(none)"]
    tasks = sorted({t for _, t in counts}) or ["(none)"]
    fig = _new_figure(max(4.0, 1.0 + 0.45 * len(tasks)), max(3.0, 1.2 + 0.35 * len(domains)))
    ax = fig.add_subplot()
    _heatmap(
        ax, fig, domains, tasks, [[counts.get((d, t), 0) for t in tasks] for d in domains], ".0f", "rows"
    )
    ax.set_title("Released rows by domain × task type (all configs)", fontsize=10)
    ax.set_xlabel("task type")
    ax.set_ylabel("domain")
    _save(fig, path, dpi)


def attribute_figure(ctx: ReleaseContext, path: Path, dpi: int) -> None:
    import numpy as np

    by_side = ctx.attribute_counts()
    total = by_side["E"] + by_side["N"]
    attrs = [a for a, _ in sorted(total.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_ATTRIBUTES]] or [
        "(none)"
    ]
    y = np.arange(len(attrs))
    fig = _new_figure(6.5, max(3.0, 1.0 + 0.25 * len(attrs)))
    ax = fig.add_subplot()
    ax.barh(
        y - 0.2, [by_side["E"].get(a, 0) for a in attrs], height=0.4, label="essential (E)", color="#1b9e77"
    )
    ax.barh(
        y + 0.2,
        [by_side["N"].get(a, 0) for a in attrs],
        height=0.4,
        label="non-essential (N)",
        color="#d95f02",
    )
    ax.set_yticks(y, labels=attrs, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("occurrences in released rows")
    shown = "" if len(total) <= MAX_ATTRIBUTES else f" (top {MAX_ATTRIBUTES} of {len(total)})"
    ax.set_title(f"Attribute frequency by side{shown}", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    _save(fig, path, dpi)


def _audit_marginals(ctx: ReleaseContext) -> dict[str, dict[str, float]]:
    """Per-axis acceptance rates from ``run_meta["audit"]["acceptance_by"]`` (domain, task_type)."""
    by = (ctx.meta.get("audit") or {}).get("acceptance_by") or {}
    out: dict[str, dict[str, float]] = {}
    for axis in ("domain", "task_type"):
        vals = by.get(axis) if isinstance(by, dict) else None
        if not isinstance(vals, dict):
            continue
        rates = {}
        for k, v in vals.items():
            rate = v.get("rate") if isinstance(v, dict) else v
            if isinstance(rate, int | float):
                rates[str(k)] = float(rate)
        if rates:
            out[axis] = dict(sorted(rates.items()))
    return out


def acceptance_figure(ctx: ReleaseContext, path: Path, dpi: int) -> str:
    """Acceptance by stratum; returns the caption (which says where the numbers come from)."""
    rates, source = ctx.acceptance_by_stratum()
    marginals = _audit_marginals(ctx) if source.startswith("share of released") else {}
    if marginals:
        fig = _new_figure(6.5, 1.5 + 0.3 * sum(len(v) for v in marginals.values()))
        axes = fig.subplots(
            len(marginals), 1, squeeze=False, height_ratios=[len(v) + 2 for v in marginals.values()]
        )[:, 0]
        for ax, (axis, vals) in zip(axes, marginals.items(), strict=True):
            names = list(vals)
            ax.barh(range(len(names)), [vals[n] for n in names], color="#7570b3")
            ax.set_yticks(range(len(names)), labels=names, fontsize=8)
            ax.invert_yaxis()
            ax.set_xlim(0, 1)
            ax.set_title(f"acceptance rate by {axis.replace('_', ' ')}", fontsize=9)
        axes[-1].set_xlabel("share of judged drafts with verdict pass")
        _save(fig, path, dpi)
        return "Acceptance rate (judge verdict `pass`) by domain and by task type, from the run's audit."
    domains = sorted({d for d, _ in rates}) or ["(none)"]
    tasks = sorted({t for _, t in rates}) or ["(none)"]
    fig = _new_figure(max(4.0, 1.0 + 0.45 * len(tasks)), max(3.0, 1.2 + 0.35 * len(domains)))
    ax = fig.add_subplot()
    _heatmap(
        ax,
        fig,
        domains,
        tasks,
        [[rates.get((d, t)) for t in tasks] for d in domains],
        ".2f",
        "acceptance rate",
        vmax=1.0,
    )
    ax.set_title("Acceptance rate by domain × task type", fontsize=10)
    _save(fig, path, dpi)
    return f"Acceptance rate by domain × task type: {source}."


def write_figures(root: Path, ctx: ReleaseContext) -> list[tuple[str, str]]:
    """Write the card figures under ``root/figures``; return (relative path, caption) pairs."""
    import matplotlib
    import matplotlib.style

    dpi = ctx.options.figure_dpi
    out = []
    with matplotlib.rc_context(), matplotlib.style.context("default"):
        matplotlib.rcParams["svg.hashsalt"] = "benchgen"
        coverage_figure(ctx, root / "figures/coverage.png", dpi)
        out.append(("figures/coverage.png", "Coverage: released rows per domain × task type."))
        attribute_figure(ctx, root / "figures/attributes.png", dpi)
        out.append(("figures/attributes.png", "Attribute frequency, essential (E) vs non-essential (N)."))
        caption = acceptance_figure(ctx, root / "figures/acceptance.png", dpi)
        out.append(("figures/acceptance.png", caption))
    return out
