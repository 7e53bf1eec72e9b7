"""Adapters that let BODi propose parameters inside other frameworks (Optuna, Ax)."""
