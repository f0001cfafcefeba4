"""The starter bank that ``quiz new`` writes: one formula, one generator and one choice item, commented."""

from __future__ import annotations

import re
from pathlib import PurePath

_TEMPLATE = r"""# yaml-language-server: $schema=quiz.schema.json
#
# A question bank for quiz, written by `quiz new`. Check it with
#
#     quiz check __FILE__
#
# and practise it with `quiz run __FILE__`. For completion and inline help in editors that
# read the line above (VS Code with the YAML extension, and others), write the schema next to
# this file once:
#
#     quiz schema > quiz.schema.json
#
# The authoring guide (docs/authoring.md) explains every field. Maths is TeX between $...$;
# in double-quoted YAML strings a backslash is written twice ("\\sqrt{d_k}"), in single-quoted
# or block (>-) strings once.

bank: __NAME__
title: "__TITLE__"
description: >-
  A starter bank: replace these items with your own.

items:
  # ---- A formula item: parameters, expressions and templates; no Python ----
  - id: ffn-params
    kind: formula
    source: "Day 13 §9, FFN parameter count"  # the past paper or notes problem it comes from
    topic: parameter-count
    params:
      # Drawn in this order; an expression may use the parameters above it.
      d: {choice: [256, 384, 512, 768, 1024]}   # d_model of real models
      f: {expr: "4*d"}                          # d_ff, four times wider
    prompt: >-
      The feed-forward network of a Transformer block expands $d_{\text{model}} = {{d}}$ to
      $d_{ff} = {{f}}$ and projects back. How many parameters does it hold, including biases?
    answer: {kind: integer, value: "2*d*f + f + d"}
    mistakes:
      # Each mistake is the value a named misconception gives; a student who types it is told why.
      - tag: no-biases
        value: "2*d*f"
        feedback: "That counts the weights only. The question includes $b_1$ ({{f}}) and $b_2$ ({{d}})."
      - tag: expand-only
        value: "d*f + f"
        feedback: "That is the first layer only. The FFN also projects back with $W_2$ and $b_2$."
    solution:
      - "Expand: $W_1$ is ${{d}} \\times {{f}}$ and $b_1$ has ${{f}}$ entries: ${{d*f + f}}$."
      - "Project back: $W_2$ is ${{f}} \\times {{d}}$ and $b_2$ has ${{d}}$ entries: ${{f*d + d}}$."
      - "Total: ${{d*f + f}} + {{f*d + d}} = {{2*d*f + f + d}}$."
    hint: "Count each of the two linear layers: its weight matrix and its bias vector."
    original: {d: 512}  # the notes' own numbers: d_model = 512, d_ff = 2048

  # ---- A generator item: a built-in Python generator (`quiz list week1` shows them in use) ----
  - id: additive-score
    source: "2026 T1 Quiz 1, Q13"
    topic: additive-attention
    generator: additive_score
    params: {dim: 2}                                     # checked against the generator's signature
    original: {h: [1, 0], s_proj: [1, 2], v: [1, 1]}  # the paper's inputs: quiz show --original
    tolerance: {decimals: 2}

  # ---- A choice item: statements drawn from a pool, shuffled, at least one true and one false ----
  - id: why-scale-scores
    source: "2025 T3 Quiz 1, Q173"
    topic: scaled-dot-product
    generator: statements
    params:
      stem: 'Why does scaled dot-product attention divide the scores by $\sqrt{d_k}$?'
      multiple: false   # single choice: exactly one true statement is shown
      options: 3
      hint: 'How does the spread of a dot product of two random vectors change as $d_k$ grows?'
      pool:
        - text: 'To keep the dot products from growing with $d_k$, so that the softmax does not saturate'
          true: true
          why: >-
            With unit-variance entries, $q \cdot k$ has variance $d_k$; dividing by $\sqrt{d_k}$
            brings it back to about 1.
        - text: 'To make each row of attention weights sum to 1'
          true: false
          why: 'The softmax makes each row sum to 1, with or without the scaling.'
        - text: 'To reduce the number of parameters of the attention layer'
          true: false
          why: 'Dividing by a constant adds and removes no parameters.'
        - text: 'To make every row of attention weights uniform'
          true: false
          why: 'Scaling keeps the order of the scores, so unequal scores still give unequal weights.'
"""


def bank_name(stem: str) -> str:
    """A kebab-case bank name from a file name: ``My Bank_2`` → ``my-bank-2``."""
    name = re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-")
    return name or "my-bank"


def bank_title(name: str) -> str:
    """A title from a bank name, as a person writes it: ``week3`` → ``Week 3``, ``my-bank-2`` →
    ``My bank 2`` (a number apart from the word before it)."""
    words = re.sub(r"(?<=[a-z])(?=[0-9])", " ", name.replace("-", " "))
    return words.capitalize()


def starter_bank(file_name: str) -> str:
    """The text of a starter bank for a file called ``file_name`` (its name comes from the file's)."""
    name = bank_name(PurePath(file_name).stem)
    return (
        _TEMPLATE.replace("__FILE__", file_name)
        .replace("__NAME__", name)
        .replace("__TITLE__", bank_title(name))
    )


__all__ = ["bank_name", "bank_title", "starter_bank"]
