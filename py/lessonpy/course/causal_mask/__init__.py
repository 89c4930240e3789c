"""Lesson 5, the causal mask: the exercises' checks (``exercises``); what the build gives the next-token widget
(``next_token_widget``)."""
