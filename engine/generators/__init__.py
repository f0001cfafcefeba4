"""The built-in generators, one module per topic; importing this package registers them all."""

from engine.generators import additive, statements

__all__ = ["additive", "statements"]
