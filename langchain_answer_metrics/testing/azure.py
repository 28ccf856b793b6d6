"""Azure OpenAI's routes on the local server, as the ``openai`` client's ``AzureOpenAI``
(and LangChain's ``AzureChatOpenAI`` / ``AzureOpenAIEmbeddings``) call them.

- ``POST /openai/deployments/{deployment}/chat/completions?api-version=...`` and
  ``.../embeddings``: the deployment is the model that answers (the body's ``model``, if
  any, is the model's name, not where the request goes);
- ``/openai/files`` and ``/openai/batches`` (same methods as OpenAI's, see
  :mod:`.batches`): an uploaded file is ``pending`` until looked at again, then
  ``processed``, and a batch on a pending file is refused; a batch's ``endpoint`` and its
  lines' ``url`` are ``/chat/completions`` or ``/embeddings`` (no ``/v1``), and every
  line's ``model`` is the name of a deployment;
- every route needs an ``api-version`` query parameter (``404 Resource not found``
  without one, as Azure answers).

``server.deployments = {"judge-dep"}`` names the deployments that exist (an unknown one is
``404 DeploymentNotFound`` live, and fails a batch's validation); None: any name is one.
Azure's newer ``/openai/v1/`` routes are OpenAI's own shape, served as OpenAI's.

    server = LocalOpenAIServer().start()
    judge = AzureChatOpenAI(azure_endpoint=server.url, azure_deployment="judge-dep",
                            api_version="2024-10-21", api_key="sk-test")
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from langchain_answer_metrics.testing.replies import Reply

__all__ = ["AzureRequest", "azure_request", "deployment_not_found"]


@dataclass(frozen=True)
class AzureRequest:
    """An Azure-style request: the route as OpenAI's without the prefix, the deployment
    it names (live requests), or the reply that refuses it."""

    route: str
    deployment: str | None = None
    refusal: Reply | None = None


def _error(status: int, code: str, message: str) -> Reply:
    return Reply(status, {"error": {"code": code, "message": message}})


def deployment_not_found(name: str) -> Reply:
    return _error(
        404,
        "DeploymentNotFound",
        f"The API deployment {name} does not exist. If you created the deployment within "
        "the last 5 minutes, please wait a moment and try again.",
    )


def azure_request(path: str, deployments: Collection[str] | None) -> AzureRequest | None:
    """``path`` read as an Azure OpenAI route; None for any other (OpenAI's ``/v1/...``,
    and Azure's ``/openai/v1/...``, which has OpenAI's shape)."""
    split = urlsplit(path)
    parts = [part for part in split.path.split("/") if part]
    if parts[:1] != ["openai"] or parts[1:2] == ["v1"]:
        return None
    if not parse_qs(split.query).get("api-version"):
        return AzureRequest(split.path, refusal=_error(404, "404", "Resource not found"))
    if parts[1:2] == ["deployments"] and len(parts) > 3:
        name = parts[2]
        if deployments is not None and name not in deployments:
            return AzureRequest(split.path, name, deployment_not_found(name))
        return AzureRequest("/" + "/".join(parts[3:]), name)
    return AzureRequest("/" + "/".join(parts[1:]))
