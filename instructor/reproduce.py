"""`python -m instructor reproduce`: train every reference model on the lecture's budgets and check the
lecture's claims.

Writes `report.json` (each claim beside the lecture's value and the measured one, CPU seconds per model)
and PNG figures to the output folder, and prints the claims table. A claim that does not hold is
reported as such, never tuned away: the lecture itself reports its own failed claims.

Runs on one thread by default: CPU seconds are the budget on a grading container, and trained numbers
move with the thread count (docs in shared notes), so one thread also makes the run repeatable.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from autograder.grader.training import SPECS
from shared.encoder import CaptionData, load_data
from shared.metrics import exact_match, failure_counts, style_scores
from shared.scenes import make_scenes
from shared.training import History, make_adam, seed_everything, train
from shared.vocab import T_MAX, decode_batch, encode_batch
from solutions import attention, lstm_a, reinforce, stylenet
from solutions.decoding import beam_search, greedy_decode
from solutions.show_and_tell import ShowTellLSTM, ShowTellRNN, caption_log_probs, caption_loss

BEAM_WIDTHS = (1, 2, 3, 5, 8)


@dataclass
class Claim:
    claim: str
    lecture: str
    measured: str
    holds: bool


@dataclass
class Trained:
    name: str
    epochs: int
    cpu_seconds: float
    wall_seconds: float
    losses: list[float]


class Timer:
    """Process CPU seconds and wall seconds of a block."""

    def __enter__(self):
        self.cpu0, self.wall0 = time.process_time(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.cpu = time.process_time() - self.cpu0
        self.wall = time.perf_counter() - self.wall0


def _trained(name: str, epochs: int, history: History) -> Trained:
    return Trained(name, epochs, history.cpu_seconds, history.wall_seconds, history.losses)


def _greedy_captions(model, state, max_len: int = T_MAX) -> list[str]:
    return decode_batch(greedy_decode(model, state, max_len))


def _teacher_forcing_loss(forward: Callable, grids: torch.Tensor, tokens: torch.Tensor):
    return lambda model, idx: caption_loss(forward(model, grids[idx], tokens[idx]), tokens[idx])


def image_path_gradient(
    model, data: CaptionData, steps: int = 150, batch_size: int = 32, at=(0, 25, 50, 100, 149)
) -> dict[int, float]:
    """The gradient norm reaching the image projection `fc` during the first updates (lecture 1.4)."""
    grids, tokens = data.train.grids, data.train.scenes.tokens
    seed_everything(0)
    model.train()
    opt = make_adam(model.parameters(), 3e-3)
    trace = {}
    for step in range(steps):
        idx = torch.randint(0, len(tokens), (batch_size,))
        loss = caption_loss(model(grids[idx], tokens[idx]), tokens[idx])
        opt.zero_grad()
        loss.backward()
        if step in at:
            trace[step] = model.fc.weight.grad.norm().item()
        opt.step()
    model.eval()
    return trace


@torch.no_grad()
def retrieval_ranks(
    model,
    grids: torch.Tensor,
    tokens: torch.Tensor,
    targets: list[str],
    references: list[list[str]],
    n_queries: int = 100,
) -> np.ndarray:
    """The lecture's text-to-image retrieval (its section 9): for each of the first n_queries target captions, every
    image ranked by log p(caption | image) (caption_log_probs); the rank (1-based) of the first image the caption
    describes (any scene it is a reference of is a hit, as in the lecture)."""
    n = grids.shape[0]
    if not 1 <= n_queries <= n:
        raise ValueError(f"n_queries: expected 1..{n}, got {n_queries}")
    ranks = []
    for q in range(n_queries):
        scores = caption_log_probs(model, grids, tokens[q : q + 1].expand(n, -1))
        hits = [targets[q] in references[j] for j in scores.argsort(descending=True).tolist()]
        ranks.append(hits.index(True) + 1)
    return np.array(ranks)


def run(out: Path) -> dict:
    """Run every experiment, write report.json and figures into `out`, and return the report."""
    out.mkdir(parents=True, exist_ok=True)
    claims: list[Claim] = []
    trained: list[Trained] = []
    figures: dict[str, dict] = {}

    with Timer() as t_scenes:
        make_scenes(6000, 0), make_scenes(400, 1)
    with Timer() as t_data:
        data = load_data(cache=False)
    test = data.test.scenes
    refs = test.references
    tr_grids, tr_tokens = data.train.grids, data.train.scenes.tokens
    n_train = len(tr_tokens)

    # The lecture's budget of each trained part is its training check's (autograder/grader/training/).
    part1, part4, part5, part6, part7 = (
        SPECS[p] for p in ("show_and_tell", "attention", "reinforce", "lstm_a", "stylenet")
    )

    # Part 1: Show and Tell, and the LSTM that forgets the image.
    seed_everything(0)
    show_tell = ShowTellRNN()
    h = train(
        show_tell,
        _teacher_forcing_loss(lambda m, f, y: m(f, y), tr_grids, tr_tokens),
        n_train,
        part1.epochs,
        part1.batch_size,
        part1.lr,
    )
    trained.append(_trained("Show and Tell (ReLU RNN)", part1.epochs, h))
    caps_st = _greedy_captions(show_tell, show_tell.init_state(data.test.grids))
    acc_st = exact_match(caps_st, refs)
    claims.append(
        Claim(
            f"Show and Tell (ReLU RNN) exact match >= 0.50 after {part1.epochs} epochs",
            "0.562",
            f"{acc_st:.3f}",
            acc_st >= 0.50,
        )
    )

    seed_everything(0)
    st_lstm = ShowTellLSTM()
    h = train(
        st_lstm,
        _teacher_forcing_loss(lambda m, f, y: m(f, y), tr_grids, tr_tokens),
        n_train,
        part1.epochs,
        part1.batch_size,
        part1.lr,
    )
    trained.append(_trained("Show and Tell (LSTM, image in h0/c0)", part1.epochs, h))
    acc_lstm = exact_match(_greedy_captions(st_lstm, st_lstm.init_state(data.test.grids)), refs)
    claims.append(
        Claim(
            "LSTM with the image only in h0/c0: exact match <= 0.30 on the same budget",
            "0.168",
            f"{acc_lstm:.3f}",
            acc_lstm <= 0.30,
        )
    )

    with Timer() as t_grad:
        seed_everything(0)
        trace_rnn = image_path_gradient(ShowTellRNN(), data)
        seed_everything(0)
        trace_lstm = image_path_gradient(ShowTellLSTM(), data)
    decay_rnn, decay_lstm = trace_rnn[149] / trace_rnn[0], trace_lstm[149] / trace_lstm[0]
    claims.append(
        Claim(
            "LSTM image-path gradient decay after 150 updates < 0.1x the ReLU RNN's",
            "x1.9e-06 vs x0.45",
            f"x{decay_lstm:.1e} vs x{decay_rnn:.2f}",
            decay_lstm < 0.1 * decay_rnn,
        )
    )
    figures["gradient"] = dict(relu_rnn=trace_rnn, lstm=trace_lstm)

    # Part 2: beam search on the Show and Tell model.
    with Timer() as t_beam:
        state = show_tell.init_state(data.test.grids)
        greedy = greedy_decode(show_tell, state, T_MAX)
        beams = {k: beam_search(show_tell, state, k, T_MAX) for k in BEAM_WIDTHS}
    equal_k1 = torch.equal(beams[1][0][:, 0], greedy)
    claims.append(
        Claim(
            "beam search with k = 1 equals greedy decoding on every test scene",
            "all 400",
            f"{int((beams[1][0][:, 0] == greedy).all(1).sum())} of {len(greedy)}",
            equal_k1,
        )
    )
    best_logp = [beams[k][1][:, 0].mean().item() for k in BEAM_WIDTHS]
    beam_exact = [exact_match(decode_batch(beams[k][0][:, 0]), refs) for k in BEAM_WIDTHS]
    monotone = all(a <= b + 1e-6 for a, b in zip(best_logp, best_logp[1:]))
    claims.append(
        Claim(
            "mean best log-probability never falls as k grows (k = 1, 2, 3, 5, 8)",
            "-0.946 / -0.934 / -0.932 / -0.932 / -0.932",
            " / ".join(f"{v:.3f}" for v in best_logp),
            monotone,
        )
    )
    figures["beam"] = dict(widths=list(BEAM_WIDTHS), best_log_prob=best_logp, exact=beam_exact)

    # Section 9: text-to-image retrieval with the Show and Tell model as scorer.
    with Timer() as t_retrieval:
        ranks = retrieval_ranks(show_tell, data.test.grids, test.tokens, test.targets, refs, n_queries=100)
    recall1 = float(np.mean(ranks == 1))
    claims.append(
        Claim(
            "text-to-image retrieval recall@1 >= 0.5 (Show and Tell as scorer, 100 queries)",
            "0.70",
            f"{recall1:.2f}",
            recall1 >= 0.5,
        )
    )

    # Part 4: soft attention with and without coordinates.
    soft_results = {}
    for name, with_coords in (("with coordinates", True), ("without coordinates", False)):
        tr = attention.with_coords(tr_grids, 8) if with_coords else tr_grids
        te = attention.with_coords(data.test.grids, 8) if with_coords else data.test.grids
        seed_everything(0)
        model = attention.AttnCaptioner(D=tr.shape[-1])
        h = train(
            model,
            _teacher_forcing_loss(lambda m, f, y: m(f, y)[0], tr, tr_tokens),
            n_train,
            part4.epochs,
            part4.batch_size,
            part4.lr,
        )
        trained.append(_trained(f"soft attention {name}", part4.epochs, h))
        caps = _greedy_captions(model, model.init_state(te))
        soft_results[name] = dict(
            model=model, test=te, exact=exact_match(caps, refs), failures=failure_counts(caps, test.objects, refs)
        )
    soft, nopos = soft_results["with coordinates"], soft_results["without coordinates"]
    claims.append(
        Claim(
            f"soft attention with coordinates exact match >= 0.55 after {part4.epochs} epochs",
            "0.593",
            f"{soft['exact']:.3f}",
            soft["exact"] >= 0.55,
        )
    )
    rel_pos, rel_nopos = soft["failures"]["wrong relation"], nopos["failures"]["wrong relation"]
    claims.append(
        Claim(
            "without coordinates: at least 1.5x the wrong-relation errors",
            "231 vs 123",
            f"{rel_nopos} vs {rel_pos}",
            rel_nopos >= 1.5 * rel_pos,
        )
    )

    # Part 5: hard attention trained with REINFORCE.
    tr_pos = attention.with_coords(tr_grids, 8)
    seed_everything(0)
    hard_model = attention.AttnCaptioner(D=tr_pos.shape[-1])
    hard_loss = reinforce.HardAttentionLoss(tr_pos, tr_tokens, seed=0)
    h = train(hard_model, hard_loss, n_train, part5.epochs, part5.batch_size, part5.lr)
    trained.append(_trained("hard attention (REINFORCE)", part5.epochs, h))
    decoder = reinforce.HardAttentionDecoder(hard_model)
    acc_hard = exact_match(_greedy_captions(decoder, decoder.init_state(soft["test"])), refs)
    claims.append(
        Claim(
            "hard attention exact match >= 0.25 and below soft attention",
            "0.330 (soft 0.593)",
            f"{acc_hard:.3f} (soft {soft['exact']:.3f})",
            0.25 <= acc_hard < soft["exact"],
        )
    )

    # Part 6: the six LSTM-A schedules.
    lstma_exact = {}
    for variant in lstm_a.VARIANTS:
        seed_everything(0)
        model = lstm_a.LSTMA(variant)
        attrs = data.train.predicted_attributes

        def loss(m, idx, attrs=attrs):
            return caption_loss(m(tr_grids[idx], attrs[idx], tr_tokens[idx]), tr_tokens[idx])

        h = train(model, loss, n_train, part6.epochs, part6.batch_size, part6.lr)
        trained.append(_trained(f"LSTM-A {variant}", part6.epochs, h))
        caps = _greedy_captions(model, model.init_state(data.test.grids, data.test.predicted_attributes))
        lstma_exact[variant] = exact_match(caps, refs)
    best = max(lstma_exact, key=lstma_exact.get)
    claims.append(
        Claim(
            f"A4 is the best LSTM-A variant ({part6.epochs} epochs each)",
            "LSTM .263 A1 .245 A2 .278 A3 .343 A4 .583 A5 .295",
            " ".join(f"{v} {a:.3f}" for v, a in lstma_exact.items()),
            best == "A4",
        )
    )

    # Part 7: StyleNet, the factor swapped at test time.
    factual = encode_batch(data.train.scenes.targets, stylenet.T_STYLE)
    sn, sh = stylenet.train_stylenet(
        tr_grids,
        factual,
        stylenet.styled_corpus(),
        caption_loss,
        epochs=part7.epochs,
        lr=part7.lr,
        batch_size=part7.batch_size,
    )
    trained.append(Trained("StyleNet (alternating)", part7.epochs, sh.cpu_seconds, sh.wall_seconds, sh.factual_losses))
    style = {}
    for factor in ("factual", "romantic"):
        sn.set_style(factor)
        style[factor] = style_scores(_greedy_captions(sn, sn.init_state(data.test.grids), stylenet.T_STYLE), refs)
    sn.set_style("factual")
    rate_r, rate_f = style["romantic"]["style_rate"], style["factual"]["style_rate"]
    slots_f = style["factual"]["content_slots"]
    claims.append(
        Claim("StyleNet style rate >= 0.95 with the romantic factor", "1.000", f"{rate_r:.3f}", rate_r >= 0.95)
    )
    claims.append(
        Claim("StyleNet style rate <= 0.05 with the factual factor", "0.000", f"{rate_f:.3f}", rate_f <= 0.05)
    )
    claims.append(Claim("StyleNet factual content slots >= 0.70", "0.806", f"{slots_f:.3f}", slots_f >= 0.70))

    train_cpu = sum(t.cpu_seconds for t in trained)
    extra_cpu = t_data.cpu + t_grad.cpu + t_beam.cpu + t_retrieval.cpu
    report = dict(
        environment=dict(
            python=platform.python_version(),
            torch=torch.__version__,
            threads=torch.get_num_threads(),
            machine=platform.machine(),
        ),
        scene_generation_seconds=dict(scenes="6000 + 400", wall=t_scenes.wall, cpu=t_scenes.cpu),
        encoder=dict(
            all_seven_correct=data.encoder_accuracy,
            cpu_seconds=data.encoder_cpu_seconds,
            data_and_encoder_cpu_seconds=t_data.cpu,
        ),
        claims=[asdict(c) for c in claims],
        models=[asdict(t) for t in trained],
        results=dict(
            lstm_a_exact=lstma_exact,
            style=style,
            soft_failures={k: v["failures"] for k, v in soft_results.items()},
            retrieval=dict(
                recall_at_1=recall1, recall_at_5=float(np.mean(ranks <= 5)), median_rank=float(np.median(ranks))
            ),
            **figures,
        ),
        cpu_seconds=dict(training=train_cpu, other=extra_cpu, total=time.process_time()),
    )
    (out / "report.json").write_text(json.dumps(report, indent=2))
    from instructor.figures import write_figures

    write_figures(report, out)
    return report


def print_report(report: dict) -> None:
    """The claims table and the CPU seconds per model."""
    rows = [("claim", "lecture", "measured", "holds")] + [
        (c["claim"], c["lecture"], c["measured"], "yes" if c["holds"] else "NO") for c in report["claims"]
    ]
    widths = [min(max(len(r[i]) for r in rows), 72) for i in range(4)]
    for r in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(r, widths)))
    print()
    for m in report["models"]:
        print(
            f"{m['name']:42s} {m['epochs']:3d} epochs  {m['cpu_seconds']:6.1f} CPU s  loss {m['losses'][0]:.3f} -> "
            f"{m['losses'][-1]:.3f}"
        )
    s = report["scene_generation_seconds"]
    c = report["cpu_seconds"]
    print(f"\nscene generation ({s['scenes']}): {s['wall']:.2f} s wall")
    print(
        f"encoder pretraining: {report['encoder']['cpu_seconds']:.1f} CPU s "
        f"(all 7 attributes right on {report['encoder']['all_seven_correct']:.3f} of test scenes)"
    )
    print(f"CPU seconds: training {c['training']:.1f}, other {c['other']:.1f}, whole process {c['total']:.1f}")
    held = sum(cl["holds"] for cl in report["claims"])
    print(f"{held} of {len(report['claims'])} claims hold")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "reproduce",
        help="train the reference models and check the lecture's claims",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--out", type=Path, default=Path("reports/reproduction"), help="output folder")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.set_defaults(run=_main)


def _main(args) -> int:
    torch.set_num_threads(args.threads)
    report = run(args.out)
    print_report(report)
    print(f"\nwrote {args.out / 'report.json'} and figures")
    return 0
