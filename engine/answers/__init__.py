"""Answers: what a right answer is (the kinds), reading a response (parse), grading it, and the chains
of questions in parts (carry-forward, early rounding).

The answer kinds are also importable from here, as plugins have imported them since quiz 0.1
(``from attnquiz.engine.answers import Mistake, NumericAnswer, Tolerance``).
"""

from attnquiz.engine.answers.kinds import (
    Answer as Answer,
    ChoiceAnswer as ChoiceAnswer,
    CodeAnswer as CodeAnswer,
    DEFAULT_REAL_TOLERANCE as DEFAULT_REAL_TOLERANCE,
    EXACT as EXACT,
    ExplainAnswer as ExplainAnswer,
    ExpressionAnswer as ExpressionAnswer,
    Formula as Formula,
    IntegerAnswer as IntegerAnswer,
    MatrixAnswer as MatrixAnswer,
    Mistake as Mistake,
    NumericAnswer as NumericAnswer,
    Option as Option,
    Part as Part,
    PartsAnswer as PartsAnswer,
    ShapeAnswer as ShapeAnswer,
    Tolerance as Tolerance,
    VectorAnswer as VectorAnswer,
    format_number as format_number,
    symbols as symbols,
)
