"""quiz's engine: banks, generators, reference numerics, grading and rendering, with no terminal code."""
