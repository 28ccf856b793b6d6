"""The notebooks execute offline, top to bottom, without a cell error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"

# Injected before the notebook's own cells, inside the kernel: record every connection and
# name lookup the notebook makes, so the last injected cell can insist they were loopback.
GUARD = """
import ipaddress as _ipaddress
import socket as _socket

_attempts = []
_real_connect, _real_getaddrinfo = _socket.socket.connect, _socket.getaddrinfo

def _connect(sock, address):
    if sock.family in (_socket.AF_INET, _socket.AF_INET6):
        _attempts.append(address[0])
    return _real_connect(sock, address)

def _getaddrinfo(host, *args, **kwargs):
    _attempts.append(host)
    return _real_getaddrinfo(host, *args, **kwargs)

_socket.socket.connect = _connect
_socket.getaddrinfo = _getaddrinfo
"""
CHECK = """
def _loopback(host):
    if host in ("localhost", None, ""):
        return True
    try:
        return _ipaddress.ip_address(str(host)).is_loopback
    except ValueError:
        return False

assert [host for host in _attempts if not _loopback(host)] == [], _attempts
"""


def execute(path: Path) -> Any:
    notebook = nbformat.read(path, as_version=4)
    notebook.cells.insert(0, nbformat.v4.new_code_cell(GUARD))
    notebook.cells.append(nbformat.v4.new_code_cell(CHECK))
    client = nbclient.NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    return notebook


@pytest.mark.slow  # executes the notebook in a Jupyter kernel
def test_langsmith_notebook_executes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    path = NOTEBOOKS / "langsmith_experiment.ipynb"
    notebook = execute(path)
    outputs = "\n".join(
        output.get("text", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
    )
    # Per-row feedback, the error row, and the summary all show up.
    assert "When was the Eiffel Tower built?" in outputs
    assert "MissingFieldError: faithfulness: field 'retrieved_contexts'" in outputs
    assert "faithfulness: mean 0.833" in outputs and "1 error" in outputs
    assert "faithfulness_ci_low" in outputs


def test_langsmith_notebook_is_committed_with_outputs() -> None:
    notebook = nbformat.read(NOTEBOOKS / "langsmith_experiment.ipynb", as_version=4)
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code_cells and all(cell.get("execution_count") for cell in code_cells)
    assert not any(
        output.get("output_type") == "error" for cell in code_cells for output in cell.outputs
    )


@pytest.mark.slow  # executes the notebook in a Jupyter kernel
def test_agents_notebook_executes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    notebook = execute(NOTEBOOKS / "agents.ipynb")
    outputs = "\n".join(
        str(output.get("text", "")) + str(output.get("data", {}).get("text/plain", ""))
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
    )
    # A real LangGraph run read back, the numbered trajectory, the four metrics' reasons
    # (the repeated call faulted at its step), votes in one request, and the estimate.
    assert "zh-wrong-city  AgentSample(user_input='北京今天天气怎么样？', messages=6" in outputs
    assert '[4] assistant calls get_weather({"city": "北京"})' in outputs
    assert "FAIL: Step 4 repeats the call of step 2: get_weather" in outputs
    assert "PASS: Шаг 4: итоговый ответ" in outputs and "faulted step: 4" in outputs
    assert "FAIL (0 PASS / 3 FAIL): Step 4: the final answer reports" in outputs
    assert "| requests: 1" in outputs and "requests: 10 |" in outputs


def test_agents_notebook_is_committed_with_outputs() -> None:
    notebook = nbformat.read(NOTEBOOKS / "agents.ipynb", as_version=4)
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code_cells and all(cell.get("execution_count") for cell in code_cells)
    assert not any(
        output.get("output_type") == "error" for cell in code_cells for output in cell.outputs
    )
