"""Integrations with model libraries. Each module imports its optional dependency itself,
so import them explicitly: ``tokensieve.integrations.transformers``,
``tokensieve.integrations.llama_cpp``.
"""
