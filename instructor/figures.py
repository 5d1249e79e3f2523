"""Figures of the reproduction report: the claims table, training curves, beam widths, the image-path
gradient and the LSTM-A variants. Each figure reads only the report dictionary."""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from shared.plotting import loss_curves


def claims_table(report: dict):
    rows = [
        [
            textwrap.fill(c["claim"], 60),
            textwrap.fill(c["lecture"], 28),
            textwrap.fill(c["measured"], 28),
            "yes" if c["holds"] else "NO",
        ]
        for c in report["claims"]
    ]
    fig, ax = plt.subplots(figsize=(13, 0.62 * len(rows) + 1))
    ax.axis("off")
    table = ax.table(
        cellText=rows,
        colLabels=["claim", "lecture", "measured", "holds"],
        loc="center",
        cellLoc="left",
        colWidths=[0.5, 0.22, 0.22, 0.06],
    )
    table.auto_set_font_size(False)
    table.set_fontsize(8)
    table.scale(1, 2.6)
    for (r, c), cell in table.get_celld().items():
        if r > 0 and c == 3:
            cell.set_facecolor("#d5f5e3" if rows[r - 1][3] == "yes" else "#fadbd8")
    ax.set_title("The lecture's claims, reproduced with the reference solutions", fontsize=10)
    fig.tight_layout()
    return fig


def beam_widths(report: dict):
    beam = report["results"]["beam"]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3))
    axes[0].plot(beam["widths"], beam["exact"], "o-", color="#2980b9")
    axes[0].set(xlabel="beam width k", ylabel="exact match", title="correctness")
    axes[1].plot(beam["widths"], beam["best_log_prob"], "s-", color="#c0392b")
    axes[1].set(xlabel="beam width k", ylabel="mean log p(best caption)", title="what beam search maximises")
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.title.set_fontsize(9)
    fig.tight_layout()
    return fig


def image_path_gradient(report: dict):
    grad = report["results"]["gradient"]
    fig, ax = plt.subplots(figsize=(5, 3.2))
    for name, trace in (("ReLU RNN", grad["relu_rnn"]), ("LSTM, image in h0/c0", grad["lstm"])):
        steps = sorted(trace, key=int)
        ax.semilogy([int(s) for s in steps], [trace[s] for s in steps], "o-", label=name)
    ax.set(xlabel="update", ylabel="gradient norm reaching fc", title="the image path during the first updates")
    ax.title.set_fontsize(9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def lstm_a_variants(report: dict):
    exact = report["results"]["lstm_a_exact"]
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.bar(list(exact), list(exact.values()), color=["#c0392b" if v == "A4" else "#7f8c8d" for v in exact])
    ax.set(ylabel="exact match", ylim=(0, 1), title="LSTM-A: same data and budget, six schedules")
    ax.title.set_fontsize(9)
    fig.tight_layout()
    return fig


def write_figures(report: dict, out: Path) -> list[Path]:
    """Write every figure as a PNG into `out`; return the paths."""
    figures = {
        "claims.png": claims_table(report),
        "training_curves.png": loss_curves({m["name"]: m["losses"] for m in report["models"]}),
        "beam_widths.png": beam_widths(report),
        "image_path_gradient.png": image_path_gradient(report),
        "lstm_a_variants.png": lstm_a_variants(report),
    }
    paths = []
    for name, fig in figures.items():
        fig.savefig(out / name, dpi=110)
        plt.close(fig)
        paths.append(out / name)
    return paths
