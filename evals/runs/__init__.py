"""Eval runs: create, execute, fan out, score, finalise, schedule, list and report them.

The in-process runner (`runner.execute_run`) is: `begin_run` (ids of unfinished samples) ->
`record_max_model_len` -> `execute_samples(ids)` -> `score_and_store(run_id)`. The workers run
the same steps, fanning `execute_samples` out over chunks of ids; every step opens its own
sessions and is safe to repeat.
"""
