"""The metrics one run scores, built from the command's options.

Which metrics (``--metric``), their settings and the models they need are read from the
options against :data:`~langchain_answer_metrics.metrics.registry.METRICS` and the judges
the ``--config`` file declares (:mod:`~langchain_answer_metrics.cli.declared`): a judge panel
from ``--config``, ``--base-url`` or the environment, and embedding models, else the
bundled local one. Each metric comes with its signature (its models, settings and prompts,
signed as the runner's ``checkpoint=`` signs them:
:func:`~langchain_answer_metrics.checkpoints.metric_signature`), which a resumed run
compares with the saved scores.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from langchain_answer_metrics.checkpoints import metric_signature
from langchain_answer_metrics.cli.declared import DeclaredJudge, metric_entries
from langchain_answer_metrics.cli.group_options import JudgeOptions, MetricChoice
from langchain_answer_metrics.cli.options import UsageError, missing_setting, settings_of
from langchain_answer_metrics.cli.run_checks import NO_JUDGE as NO_JUDGE
from langchain_answer_metrics.cli.run_checks import chosen_metrics as chosen_metrics
from langchain_answer_metrics.cli.run_checks import result_keys as result_keys
from langchain_answer_metrics.config import Panel, load_config, panel_from_base_url
from langchain_answer_metrics.config.declared import lists_models
from langchain_answer_metrics.judging.judges import Embedder, as_embedders
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.metrics.registry import MetricModels


@dataclass
class MetricPlan:
    """A metric to run and its signature (for resuming)."""

    metric: AnswerMetric
    signature: str


class MetricPlans(list[MetricPlan]):
    """The run's metric plans (a list), and the configured panel they were built from
    (None when nothing was configured: e.g. the local embedding model alone)."""

    panel: Panel | None = None


def build_metrics(
    names: Sequence[str], *, metrics: MetricChoice, judges: JudgeOptions
) -> MetricPlans:
    """The metric objects for ``names``, with the settings of ``metrics``, built with the
    models ``judges`` names."""
    known = metric_entries(judges.config, metrics.metric_file)
    entries = [known[name] for name in names]
    for entry in entries:
        problem = missing_setting(entry, metrics.settings, config=judges.config)
        if problem is not None:
            raise UsageError(problem)
    judged = [entry.key for entry in entries if entry.needs_judge]
    explicit = judges.config or judges.base_url or judges.embedding_model
    # Only a run that needs a judge (or names models) reads the config or the environment:
    # semantic similarity alone is offline whatever OPENAI_* variables are set.
    panel = judge_panel(judges, needs_judge=bool(judged)) if explicit or judged else None
    members = list(panel.judges) if panel is not None else []
    if judged and not members:
        if panel is None:
            raise UsageError(NO_JUDGE.format(metrics=", ".join(judged)))
        raise UsageError(f"{judges.config}: lists no chat_models, but {judged[0]} needs a judge")
    models = MetricModels(judges=members)
    if any(entry.needs_embeddings for entry in entries):
        embedders, baseline = embeddings(judges, panel)
        models = MetricModels(members, embedders, embedding_baseline=baseline)
    plans = MetricPlans()
    plans.panel = panel
    for entry in entries:
        try:
            metric = entry.build(models, settings_of(metrics.settings, entry, config=judges.config))
        except ValidationError:
            raise
        except ValueError as error:  # settings that contradict each other
            raise UsageError(str(error)) from None
        # Signed as the runner's checkpoint= signs it: a prompt or PROMPT_VERSION change
        # makes a resumed run score again rather than reuse a stale score.
        sign = entry.signature_of if isinstance(entry, DeclaredJudge) else metric_signature
        plans.append(MetricPlan(metric, sign(metric)))
    return plans


def judge_panel(judges: JudgeOptions, *, needs_judge: bool) -> Panel | None:
    """The configured panel, or None when nothing is configured (no config, URL or key).
    A config file declaring judges alone (``metrics:``) leaves the models to the rest."""
    if _config_models(judges):
        if judges.base_url or judges.model or judges.embedding_model:
            raise UsageError(
                "--config already lists the models; drop --base-url/--model/--embedding-model "
                "or drop --config"
            )
        return load_config(judges.config)
    if judges.base_url is not None:
        if judges.model is None and needs_judge:
            raise UsageError("--base-url needs --model ID: the judge's model id on that endpoint")
        # Embedding-only runs never call the judge, but the panel is built with one.
        return panel_from_base_url(
            judges.base_url,
            model=judges.model or "unused",
            embedding_model=judges.embedding_model,
        )
    if os.environ.get("OPENAI_API_KEY"):
        overrides = {
            "ANSWER_METRICS_JUDGE_MODEL": judges.model,
            "ANSWER_METRICS_EMBEDDING_MODEL": judges.embedding_model,
        }
        env = {**os.environ, **{k: v for k, v in overrides.items() if v}}
        return load_config(env=env)
    if judges.embedding_model:
        raise UsageError(
            "--embedding-model needs an endpoint: set OPENAI_API_KEY, or pass --base-url URL"
        )
    return None


def _config_models(judges: JudgeOptions) -> bool:
    """Whether ``--config`` is given and lists models."""
    return judges.config is not None and lists_models(judges.config)


def embeddings(judges: JudgeOptions, panel: Panel | None) -> tuple[list[Embedder], float | None]:
    """Configured embedding models, else the bundled local model with its measured
    baseline (``--rescale-baseline`` overrides it, as a metric setting)."""
    configured = _config_models(judges) or judges.embedding_model is not None
    if panel is not None and configured and panel.embedders:
        return list(panel.embedders), None
    try:
        from langchain_answer_metrics.adapters.local_embeddings import (
            LOCAL_BASELINE,
            LocalE5Embeddings,
        )

        local = LocalE5Embeddings()
    except ImportError as error:
        raise UsageError(
            f"the local embedding model is not installed ({error}); run "
            'pip install "langchain-answer-metrics[local]" (x86_64 Linux), or use remote '
            "embeddings with --embedding-model ID or a --config listing embedding_models"
        ) from None
    return as_embedders(local), LOCAL_BASELINE
