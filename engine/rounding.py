"""Early rounding, where plugins have imported it since quiz 0.1: the module is now
`attnquiz.engine.answers.rounding` (with the other answer modules); this name keeps those plugins working."""

from attnquiz.engine.answers.rounding import ROUNDED_EARLY as ROUNDED_EARLY
from attnquiz.engine.answers.rounding import rounded_early as rounded_early
