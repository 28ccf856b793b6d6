"""Child runs in traces: each step and each panel member is a named "chain" run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from langchain_core.callbacks import AsyncCallbackManager
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import (
    ensure_config,
    get_async_callback_manager_for_config,
    merge_configs,
    patch_config,
    set_config_context,
    var_child_runnable_config,
)
from langchain_core.runnables.utils import coro_with_context

from langchain_answer_metrics.judging.errors import StepError

OutT = TypeVar("OutT")


async def child_run(
    name: str,
    inputs: dict[str, Any],
    work: Callable[[RunnableConfig], Awaitable[OutT]],
    config: RunnableConfig | None,
    *,
    tags: Sequence[str] = (),
    metadata: dict[str, Any] | None = None,
) -> OutT:
    """Run ``work(child_config)`` as a child run called ``name`` (a "chain" run in traces).

    What ``RunnableLambda(fn, name=name).ainvoke`` does (``Runnable._acall_with_config``),
    at under half its CPU: it skips the signature inspection of ``fn`` on every call,
    which matters at two dozen child runs per sample. The child config is also made the
    context's current config, as LangChain does: a model binding called inside merges
    its config with that one, so without it the model's run would hang off the parent.
    """
    config = ensure_config(config)
    if tags or metadata:
        # On this run and inherited by the runs below it (the model calls).
        config = merge_configs(config, {"tags": list(tags), "metadata": metadata or {}})
    manager = recording(config)
    if manager is None:
        return await untraced(work, config)
    run = await manager.on_chain_start(None, inputs, name=name, run_id=config.pop("run_id", None))
    try:
        child = patch_config(config, callbacks=run.get_child())
        with set_config_context(child) as context:
            output = await coro_with_context(work(child), context)
    except BaseException as error:
        await run.on_chain_error(error)
        raise
    await run.on_chain_end(output)
    return output


def recording(config: RunnableConfig) -> AsyncCallbackManager | None:
    """The callback manager for a run under ``config``, if anything would record the run
    (a handler given, or tracing on); else None, so that no reference to it is kept
    while the work runs untraced."""
    manager = get_async_callback_manager_for_config(config)
    return manager if manager.handlers else None


async def untraced(
    work: Callable[[RunnableConfig], Awaitable[OutT]], config: RunnableConfig
) -> OutT:
    """Run ``work`` where nothing would record its run (no callback handler, tracing
    off): the run is not made. ``work`` gets the config a run's child gets (no
    ``run_name`` or ``run_id``, which were this run's), also as the context's config
    while it runs, as in :func:`child_run`. Most of a cheap sample's CPU (and of the
    objects the garbage collector walks) was runs nobody sees.

    It runs in the caller's task rather than a task of its own: without a tracer the
    only context variable set around it is the config, reset when it ends, and the
    steps set none of their own (a sample's position is set in the sample's task).
    """
    config.pop("run_name", None)
    config.pop("run_id", None)
    token = var_child_runnable_config.set(config)
    try:
        return await work(config)
    finally:
        var_child_runnable_config.reset(token)


async def step_run(
    step: str,
    trace_input: dict[str, Any],
    work: Callable[[RunnableConfig], Awaitable[OutT]],
    config: RunnableConfig | None,
    *,
    side: str | None = None,
) -> OutT:
    """Run a step's ``work`` as a child run named ``step``; its failure becomes a
    :class:`StepError` naming the step.

    ``side`` tags the run (``side:response``) and its metadata, so FactualCorrectness's
    two directions can be told apart in a trace.
    """
    tags = [f"side:{side}"] if side else []
    metadata = {"side": side} if side else None
    try:
        return await child_run(step, trace_input, work, config, tags=tags, metadata=metadata)
    except Exception as error:
        raise StepError(step, error) from error
