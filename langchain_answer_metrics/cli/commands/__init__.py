"""The commands of ``answer-metrics``, one module each: its entry point and its flow.

Each entry point takes the command's typed options
(:mod:`~langchain_answer_metrics.cli.command_options`), built once from the parsed
arguments by :func:`~langchain_answer_metrics.cli.command.main`; nothing here reads an
``argparse.Namespace``. A command reaches down (the checks, the run, the outputs of
``cli/``, then the library), never back up to the entry point; ``demo`` runs
``evaluate``'s flow and ``compare``'s table.

- ``evaluate``: score a data file (:mod:`.evaluate`); ``demo``: the bundled one, and
  ``demo --compare`` (:mod:`.demo`);
- ``calibrate``: scores against human labels (:mod:`.calibrate`);
- ``compare``: two runs, and their responses judged side by side (:mod:`.compare`,
  :mod:`.compare_judged`);
- ``align``: fit a metric's judges to human labels (:mod:`.align`);
- ``simulate``: conversations with an app (:mod:`.simulate`);
- ``toy-judge``: a toy judge on 127.0.0.1 (:mod:`.toy_judge`).
"""
