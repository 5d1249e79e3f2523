"""The buggy variants (tests/meta) that a student's public checks do not catch although the grader takes points
from them: every public check passes on its public cases, the grade is below full marks. Each is allowed here with
the reason; tests/grader/test_grader_variants.py computes the set from the grades the variant suite already makes and
fails when a variant escapes without being listed, or is listed but no longer escapes (then delete its entry).
The list must not grow: MOST is the count it may not exceed, lowered each time an entry goes."""

from __future__ import annotations

ALLOWED: dict[str, str] = {
    "bleu/splits_on_single_spaces": "split(' ') makes empty words of repeated spaces and a word of the empty caption: only the hidden corpus_bleu_matches_the_definition, captions_are_split_on_any_whitespace show it",
    "bleu/tokenises_the_references_in_place": "overwrites the caller's reference strings with word lists: only the hidden bleu_functions_leave_their_inputs_unchanged show it",
    "stylenet/input_weight_through_data": ".data cuts U and V out of the graph: they never learn: only the hidden forward_gradients_match_lstm_cell show it",
    "stylenet/styled_step_without_zero_grad": "stale gradients from the factual batch are added to the styled gradient: only the hidden styled_step_is_a_gradient_step_on_the_romantic_loss show it",
}

MOST = 4
