"""Lesson 4, attention: the cat sentence (``cat_example``), the hand-built heads (``hand_heads``), the head
trained in the page (``trained_head``), "it → cat" in the trained models (``trained_it``), what the first-token
heads write (``first_token_writes``), the exercises' checks (``exercises``) and the widgets' payloads
(``widget_payloads``)."""
