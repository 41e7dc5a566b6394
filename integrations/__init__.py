"""Adapters where agent code lives: a LangGraph store over the Python client (``langgraph``)."""
