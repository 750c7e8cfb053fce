"""``chops eval conversations``: whole conversations with a simulated customer, graded by the end state.

A task file (tau2's task format: the scenario, the reference actions, what must be communicated) and a
users file (scripted keyword-rule users, one per task) drive conversations through the one
``ConversationService``, each on its own fresh database; the end state is compared with the reference
actions replayed on another fresh database. Modules: ``tasks`` (the files), ``scripted_user`` and
``llm_user`` (the customer), ``database`` (the template copy), ``grading``, ``session`` (one
conversation), ``runner`` (all of them, resumable), ``report``, ``cli``.
"""
