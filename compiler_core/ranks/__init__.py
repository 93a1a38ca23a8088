"""Many ranks of one job compared: what differs between them, who is slow, one trace for all.

Qt-free and torch-free; each piece reads a `Session` whose compiles carry a rank (a folder of
per-rank `TORCH_TRACE` logs, or a `run --nproc N` session):

- `graph_hash.py`: structural signatures of graphs and the first node where two part.
- `collectives.py`: the collectives each compiled graph issues, in order, with sizes.
- `rank_divergence.py`: `rank_divergence(session)`, every aspect on which ranks disagree.
- `rank_sets.py`: ranks that agree grouped ("ranks 0-6, 8-15 identical; rank 7 differs in ...").
- `stragglers.py`: per-step skew, the slowest rank and its lag, compile-time skew.
- `rank_trace.py`: one Chrome/Perfetto trace, each rank its own process.
- `rank_facts.py`: all of it as the keys `summary` prints.
"""
