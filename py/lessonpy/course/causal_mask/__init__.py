"""Lesson 5, the causal mask: the exercises' checks (``exercises``)."""
