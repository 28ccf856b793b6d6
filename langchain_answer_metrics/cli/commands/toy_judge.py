"""``answer-metrics toy-judge``: a toy judge on 127.0.0.1, to try everything without a key.

It serves the OpenAI API (chat completions and embeddings) from
:class:`~langchain_answer_metrics.testing.openai_server.LocalOpenAIServer`, whose replies
come from a rule-based heuristic (word overlap). Its scores are not judgments: it is for
trying the package and the documentation's examples offline, never for measuring answers.

    answer-metrics toy-judge --port 8011
    export OPENAI_BASE_URL=http://127.0.0.1:8011/v1 OPENAI_API_KEY=toy
"""

from __future__ import annotations

import sys
import threading

from langchain_answer_metrics.cli.command_options import ToyJudgeOptions

WARNING = (
    "toy judge: its verdicts come from word overlap, not understanding; "
    "the scores it gives are NOT real judgments. Use it to try the package offline."
)


def run_toy_judge(options: ToyJudgeOptions) -> int:
    """Serve until interrupted: the base URL on stdout (for scripts), how to use it on stderr."""
    from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

    server = LocalOpenAIServer(port=options.port, log_bodies=False)
    try:
        server.start()
    except OSError as error:
        print(
            f"answer-metrics: error: cannot listen on 127.0.0.1:{options.port} ({error.strerror}); "
            "pick another port with --port N",
            file=sys.stderr,
        )
        return 2
    try:
        print(server.base_url, flush=True)
        print(
            f"{WARNING}\nIn another shell:\n"
            f"  export OPENAI_BASE_URL={server.base_url} OPENAI_API_KEY=toy\n"
            "Stop it with Ctrl-C.",
            file=sys.stderr,
            flush=True,
        )
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0
