"""``python -m bench``: run the benchmarks and print the table."""

import sys

from bench.run import main

sys.exit(main())
