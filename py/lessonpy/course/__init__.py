"""The course's lessons, one folder each, named by the lesson's slug (``causal-mask`` as ``causal_mask``):
each lesson's examples, exercises' checks and widget payloads. A lesson's folder imports ``maths``, ``models``
and itself, never another lesson's folder nor ``runtime``; ``checks`` is the registry of every lesson's
exercise checks by name, which the grader looks a check up in. Each lesson's numbers (build time only) live
beside its text in ``lessons/``, not here.
"""
