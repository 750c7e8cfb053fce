"""The one LLM seam: the pipeline is handed an ``LLM``; only the adapters import provider libraries.

Public names: ``Message``, ``LLM``, ``LLMError``, ``CallRecord``, ``Ledger``, ``build_llm``,
``ScriptedLLM`` / ``ScriptExhausted`` (tests), ``Completion`` / ``Provider`` (adapters).
"""

from chops.llm.accounting import CallRecord, Ledger
from chops.llm.base import LLM, Completion, LLMError, Message, Provider
from chops.llm.factory import build_llm
from chops.llm.scripted import ScriptedLLM, ScriptExhausted

__all__ = ["CallRecord", "Completion", "LLM", "LLMError", "Ledger", "Message", "Provider",
           "ScriptExhausted", "ScriptedLLM", "build_llm"]
