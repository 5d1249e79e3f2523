"""The caption grammar: parsing, failure classification, and the romantic rewrite StyleNet learns from.

Every factual caption reads "a <colour> <shape> <relation> a <colour> <shape>", so a wrong
caption can be classified automatically (wrong relation, wrong colour, wrong shape,
hallucinated object, same object twice, ungrammatical).
"""
from __future__ import annotations

from shared.vocab import COLOR_WORDS, SHAPE_WORDS, STYLE_WORDS

RELATIONS = ("above", "below", "left of", "right of")
FAILURE_KINDS = ("correct", "wrong relation", "wrong colour", "wrong shape", "hallucinated object",
                 "same object twice", "ungrammatical")
STYLE_VERB = {"circle": ("sits", "happily"), "square": ("waits", "quietly"), "triangle": ("smiles", "brightly")}
SLOT_NAMES = ("subject colour", "subject shape", "relation", "object colour", "object shape")


def parse_caption(caption: str) -> dict | None:
    """'a c1 s1 rel a c2 s2' -> {'subj': (c1, s1), 'rel': rel, 'obj': (c2, s2)}, or None if off-grammar."""
    if not isinstance(caption, str):
        raise TypeError(f"caption: expected a str, got {type(caption).__name__}")
    w = caption.split()
    if len(w) < 7 or w[0] != "a" or w[1] not in COLOR_WORDS or w[2] not in SHAPE_WORDS:
        return None
    k = 5 if w[3] in ("left", "right") else 4
    rel = " ".join(w[3:k])
    if rel not in RELATIONS or len(w) != k + 3:
        return None
    if w[k] != "a" or w[k + 1] not in COLOR_WORDS or w[k + 2] not in SHAPE_WORDS:
        return None
    return dict(subj=(w[1], w[2]), rel=rel, obj=(w[k + 1], w[k + 2]))


def classify_failure(caption: str, objects: list[dict], references: list[str]) -> str:
    """One of FAILURE_KINDS for a generated caption of a scene with these objects and references."""
    if not references:
        raise ValueError("references: expected at least one reference caption, got none")
    if caption in references:
        return "correct"
    p = parse_caption(caption)
    if p is None:
        return "ungrammatical"
    if p["subj"] == p["obj"]:
        return "same object twice"
    present = [(o["color"], o["shape"]) for o in objects]
    for key in ("subj", "obj"):
        c, s = p[key]
        if (c, s) not in present:
            if any(s == s_ for _, s_ in present):
                return "wrong colour"
            if any(c == c_ for c_, _ in present):
                return "wrong shape"
            return "hallucinated object"
    return "wrong relation"


def romantic(caption: str) -> str:
    """The deterministic romantic rewrite: 'the <c1> <s1> <verb> <adverb> <rel> the <c2> <s2>'."""
    p = parse_caption(caption)
    if p is None:
        raise ValueError(f"caption: expected a factual caption 'a <colour> <shape> <relation> a <colour> <shape>', "
                         f"got {caption!r}")
    verb, adverb = STYLE_VERB[p["subj"][1]]
    return f"the {p['subj'][0]} {p['subj'][1]} {verb} {adverb} {p['rel']} the {p['obj'][0]} {p['obj'][1]}"


def content_slots(caption: str) -> tuple[str, str, str, str, str] | None:
    """Strip style words, map 'the' back to 'a', parse: the 5 content slots (see SLOT_NAMES), or None."""
    core = " ".join("a" if w == "the" else w for w in caption.split() if w == "the" or w not in STYLE_WORDS)
    p = parse_caption(core)
    return None if p is None else (p["subj"][0], p["subj"][1], p["rel"], p["obj"][0], p["obj"][1])


def is_styled(caption: str) -> bool:
    """Does the caption contain a style-only word?"""
    return any(w in STYLE_WORDS for w in caption.split())
