"""How a metric's async run is traced: langchain-core's ``_acall_with_config``, made lean.

    >>> result = await acall_traced(metric, metric._run, sample, config)

Why not ``Runnable._acall_with_config`` itself: measured on one machine (scripted
embeddings, 2,000 concurrent ``SemanticSimilarity.ainvoke`` calls, untraced, CPU time
per call, best of five; two runs), langchain-core's path cost 606-622 us against
407-495 us here: a quarter to a half more.
It inspects the wrapped function's signature twice per call and always starts a run
through a callback manager, even where no handler would record it. This copy keeps the
same run in traces (name, inputs, outputs, errors, child config and context) and makes no
run where nothing records one (``judging.tracing.untraced``). The sync ``invoke`` uses
langchain-core's ``_call_with_config`` as it is. Re-measure when langchain-core changes:
if the gap closes, call ``runnable._acall_with_config(run, value, config,
run_type="chain")`` instead.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from langchain_core.callbacks import AsyncCallbackManagerForChainRun
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config, patch_config, set_config_context
from langchain_core.runnables.utils import coro_with_context

from langchain_answer_metrics.judging.tracing import recording, untraced

Output = TypeVar("Output")

__all__ = ["acall_traced"]


async def acall_traced(
    runnable: Runnable[Any, Any],
    run: Callable[[Any, AsyncCallbackManagerForChainRun, RunnableConfig], Awaitable[Output]],
    value: Any,
    config: RunnableConfig | None,
) -> Output:
    """``runnable._acall_with_config(run, value, config, run_type="chain")``, leaner."""
    config = ensure_config(config)
    manager = recording(config)
    if manager is None:  # no trace to record: see tracing.untraced
        noop = AsyncCallbackManagerForChainRun.get_noop_manager()
        return await untraced(lambda child: run(value, noop, child), config)
    run_manager = await manager.on_chain_start(
        None,
        value,
        run_type="chain",
        name=config.get("run_name") or runnable.get_name(),
        run_id=config.pop("run_id", None),
    )
    try:
        child = patch_config(config, callbacks=run_manager.get_child())
        with set_config_context(child) as context:
            output = await coro_with_context(run(value, run_manager, child), context)
    except BaseException as error:
        await run_manager.on_chain_error(error)
        raise
    await run_manager.on_chain_end(output)
    return output
