"""The one records format of a run, and its one resume path.

The CLI's ``--out`` and the runner's ``checkpoint=`` write the same file: a JSON line per
finished sample (:mod:`.format`, documented in docs/records.md), appended, flushed and
fsynced through the file's one writer (:mod:`.writer`), and a line per batch of a batch
run (:mod:`.batches`). A resume indexes the file (:mod:`.saved`) and asks one planner
what each sample still lacks (:mod:`.plan`). Files of earlier versions are read too
(:mod:`.legacy`, and :func:`~langchain_answer_metrics.core.compat.record_in_current_shape`).

    >>> saved = SavedRecords.load(Path("results.jsonl"))
    >>> still_to_score(saved.lookup("q1", fingerprint), fingerprint, signatures)
    ()

Each module is imported where it is used: reading a dataset loads none of them.
"""
