"""Benchmarks against peers and floors. `python -m bench` runs them all; each module also runs
alone (`python -m bench.engine`). `--smoke` runs each case once on tiny inputs (used by the
test suite so the benchmarks cannot rot)."""
