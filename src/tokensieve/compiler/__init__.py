"""The compiler: grammar IR -> immutable compiled grammars (automata + parser tables)."""

from .compiled import CompiledGrammar, GrammarStats
from .compiler import Compiler

__all__ = ["CompiledGrammar", "Compiler", "GrammarStats"]
