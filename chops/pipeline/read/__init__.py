"""Read: one typed reading of the customer's message on the operations route.

Enters: the message, the request being filled (the operation and the values given so far, kept across turns), what
the conversation has looked up, the pack's clock. Leaves: a ``Candidate`` the verifier scores: the look-ups read, then
one write with every value grounded by its value kind (its dry run), a question for the values still missing, or an
answer from the look-ups.

The model reads (``reading``: one grammar-constrained call a step returns the operation and the values the
customer gave, at any depth, or an answer); code decides (``request``: values merged into the request, grounded,
missing ones found at any depth; ``reader``: look-ups run, the write dry-run, the question asked).
"""
