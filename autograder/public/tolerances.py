"""Every tolerance a public check uses, and those hidden checks share with public ones: one named compare.Tolerance
each, defined here once, with why it has that size (the hidden checks' own: autograder.grader.tolerances). A
check passes one to compare.expect_tensor (`tolerance=`) or compare.expect_close, or asks it about numbers (`accepts`)
or tensors (`allclose`); the kit's test_check_modules refuses a literal number given as a tolerance anywhere in the
check modules.

|actual - expected| <= atol + rtol |expected|, elementwise; `float64=` is the tighter one that applies when the
inputs and the result are all float64 (Tolerance.for_dtypes). A check's message prints the rtol and atol it used.
Statistical bounds (a number of standard errors of a Monte Carlo estimate or of a sampled frequency) are computed by
the checks that draw the samples, and the thresholds that decide whether something moved at all (an anchor) are no
tolerances: both stay with their checks.
"""

from __future__ import annotations

from autograder.public.compare import Tolerance

# -- every part ----------------------------------------------------------------------------------------------------

EXACT = Tolerance(0.0, 0.0)  # bit for bit: an input left unchanged, the same draw again, a value passed through

# -- Part 1 (show_and_tell) ----------------------------------------------------------------------------------------

RNN_FLOAT64 = Tolerance(1e-9, 1e-9)  # float64 throughout: a few roundings of O(1) values (~1e-15), with room
RNN_STEP = Tolerance(1e-5, 1e-5, float64=RNN_FLOAT64)  # one step: a few float32 roundings of O(1) values
RNN_MODEL = Tolerance(1e-4, 1e-5, float64=RNN_FLOAT64)  # a sequence of steps and a softmax in float32
RNN_ZEROS = Tolerance(0.0, 0.0, float64=RNN_FLOAT64)  # zeros: exact in float32 (made, never computed)
PAD_GRADIENT = Tolerance(0.0, 1e-12)  # a gradient that must be 0: masked terms leave float64 rounding at most
LOG_PROB_SLIPS = Tolerance(1e-4, 1e-4)  # naming a slip: a float32 result matches the slip's float64 value this well
RECALL = Tolerance(0.0, 1e-9)  # a share of captions, k of N: an exact fraction but for the float's rounding

# -- Part 2 (decoding) ---------------------------------------------------------------------------------------------

BEAM_SCORE = Tolerance(1e-5, 1e-5)  # a beam's score against its tokens' log-probability: float32 sums of 1 to 3 terms
TOP_SCORES = Tolerance(1e-6, 1e-6)  # the best scores against enumeration: float32 sums of the toy table (~1e-7 off)
SORTED_SCORES = Tolerance(0.0, 1e-9)  # best first: a score may exceed the one before it by rounding only

# -- Part 3 (bleu) -------------------------------------------------------------------------------------------------

BLEU = Tolerance(1e-9, 1e-12)  # against the reference or a closed form: exact counts, log/exp/pow rounding (~1e-15)
BLEU_ZERO = Tolerance(0.0, 1e-12)  # a score that must be 0 is 0: a smoothing constant in place of it fails

# -- Part 4 (attention) --------------------------------------------------------------------------------------------

ATTENTION_FLOAT64 = Tolerance(1e-9, 1e-10)  # float64 results: (nearly) the last digits
ATTENTION = Tolerance(1e-4, 1e-5, float64=ATTENTION_FLOAT64)  # float32 rounding of softmax scores up to ~30
ATTENTION_GRAD_FLOAT64 = Tolerance(1e-7, 1e-9)  # float64 gradients: through the LSTM cell T-1 times, a little room
ATTENTION_GRAD = Tolerance(1e-3, 1e-4, float64=ATTENTION_GRAD_FLOAT64)  # float32 gradients through T-1 cell steps
ATTENTION_SUMS_FLOAT64 = Tolerance(1e-9, 1e-9)  # float64 weights' signs and sums, the context's hull: rounding only
ATTENTION_SUMS = Tolerance(1e-5, 1e-5, float64=ATTENTION_SUMS_FLOAT64)  # the same of float32 weights and context
COORDS = Tolerance(1e-6, 1e-6)  # cell centres in [-1, 1], computed in float32 or float64

# -- Part 5 (reinforce) --------------------------------------------------------------------------------------------

LOCATION_LOG_PROB = Tolerance(1e-5, 1e-6)  # log of a float32 weight against float64
LOCATION_LOG_PROB_GRAD = Tolerance(1e-4, 1e-5)  # 1 / weight of float32 weights down to ~1e-3, projected on the simplex
REINFORCE_LOSS = Tolerance(1e-4, 1e-5)  # a float32 masked mean of products of O(1) to O(10) values
REINFORCE_LOSS_GRAD = Tolerance(1e-4, 1e-6)  # its gradient: float32 entries of O(1/N)
BASELINE_UPDATE = Tolerance(1e-5, 1e-6)  # a float32 moving average of O(1) rewards
OPTIMAL_BASELINE = Tolerance(1e-5, 1e-5)  # a ratio of float32 means of up to 40 terms

# -- Part 6 (lstm_a) -----------------------------------------------------------------------------------------------

LSTM_A = Tolerance(1e-7, 1e-9)  # float64 end to end: ~1e-15 from the reference; a wrong schedule is off by 1e-2 or more
SCHEDULE_GRAD = Tolerance(1e-12, 1e-12)  # the gradient of a returned input: 1 or 0 times a float64 weight
SAME_INPUT = Tolerance(1e-6, 1e-7)  # a float32 tensor recognised as an input by value: a copy, maybe cast and back

# -- Part 7 (stylenet) ---------------------------------------------------------------------------------------------

FACTORED_CELL = Tolerance(1e-5, 1e-6)  # float64 cell: an implementation with a float32 intermediate stays well inside
STYLED_LOSS = Tolerance(1e-4, 1e-5)  # the loss a styled step returns: float32 forward against float64
