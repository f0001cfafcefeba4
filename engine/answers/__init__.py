"""Answers: what a right answer is (the kinds, their tolerances and values), reading a response (parse
and a reader per form), grading it, and the chains of questions in parts (carry-forward, early rounding).

The answer kinds are also importable from here, as plugins have imported them since quiz 0.1
(``from attnquiz.engine.answers import Mistake, NumericAnswer, Tolerance``).
"""

from attnquiz.engine.answers.kinds import (
    Answer as Answer,
)
from attnquiz.engine.answers.kinds import (
    ChoiceAnswer as ChoiceAnswer,
)
from attnquiz.engine.answers.kinds import (
    CodeAnswer as CodeAnswer,
)
from attnquiz.engine.answers.kinds import (
    ExplainAnswer as ExplainAnswer,
)
from attnquiz.engine.answers.kinds import (
    ExpressionAnswer as ExpressionAnswer,
)
from attnquiz.engine.answers.kinds import (
    IntegerAnswer as IntegerAnswer,
)
from attnquiz.engine.answers.kinds import (
    MatrixAnswer as MatrixAnswer,
)
from attnquiz.engine.answers.kinds import (
    Mistake as Mistake,
)
from attnquiz.engine.answers.kinds import (
    NumericAnswer as NumericAnswer,
)
from attnquiz.engine.answers.kinds import (
    Option as Option,
)
from attnquiz.engine.answers.kinds import (
    Part as Part,
)
from attnquiz.engine.answers.kinds import (
    PartsAnswer as PartsAnswer,
)
from attnquiz.engine.answers.kinds import (
    ShapeAnswer as ShapeAnswer,
)
from attnquiz.engine.answers.kinds import (
    VectorAnswer as VectorAnswer,
)
from attnquiz.engine.answers.kinds import (
    symbols as symbols,
)
from attnquiz.engine.answers.tolerance import DEFAULT_REAL_TOLERANCE as DEFAULT_REAL_TOLERANCE
from attnquiz.engine.answers.tolerance import EXACT as EXACT
from attnquiz.engine.answers.tolerance import Tolerance as Tolerance
from attnquiz.engine.answers.tolerance import format_number as format_number
from attnquiz.engine.answers.values import Formula as Formula
