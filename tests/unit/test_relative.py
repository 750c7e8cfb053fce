"""Variants described relative to the line they replace (``chops.pipeline.relative``): "a bigger one", "less
bright", "a larger frame" keep the variants on that side of the old line's value. Made-up products only."""

from __future__ import annotations

from apis.retail.registry import OPERATIONS
from chops.pipeline.choices import arg_options
from chops.pipeline.relative import amounts, comparisons, labels, like_another, rank

KETTLE = {"product_id": "p-k", "name": "Kettle", "options": "capacity, finish", "variants": {
    "k-500": "500ml, matte; $20.00; available", "k-750": "750ml, matte; $22.00; available",
    "k-1000": "1000ml, gloss; $25.00; available", "k-250": "250ml, gloss; $18.00; available"}}
TORCH = {"product_id": "p-t", "name": "Torch", "options": "glow, case", "variants": {
    "t-low": "low, red; $9.00; available", "t-med": "medium, red; $10.00; available",
    "t-high": "high, blue; $11.00; available", "t-high-red": "high, red; $12.00; NOT available"}}
ORDER = {"order_id": "#W0000077", "status": "delivered", "items": [
    {"item_id": "k-500", "product_id": "p-k", "name": "Kettle", "options": "capacity: 500ml, finish: matte"},
    {"item_id": "t-med", "product_id": "p-t", "name": "Torch", "options": "glow: medium, case: red"}]}
SWAP = (OPERATIONS["exchange_delivered_order_items"],)


def new_items(*asked: str) -> tuple[str, ...]:
    options = arg_options(SWAP, [ORDER, KETTLE, TORCH], (), "", asked)
    return {arg: v for _, arg, v, _ in options}["new_item_ids"]


def test_a_comparison_names_its_option_by_the_old_lines_label():
    options = labels(["capacity: 500ml, finish: matte"])
    assert options == {"capacity": "500ml", "finish": "matte"}
    assert comparisons("a bigger one please", options) == [("capacity", 1)]  # bigger, no option named: the size
    assert comparisons("a shorter one, still bamboo", ["deck", "length", "design"]) == [("length", -1)]
    assert comparisons("one with less glow and a shinier finish", ["glow", "case"]) == [("glow", -1)]
    assert comparisons("a glossier, brighter torch", ["brightness", "case"]) == [("brightness", 1)]
    assert comparisons("I'd like more help with this", options) == []  # "more help" names no option
    # Of time, not length: "I no longer need it" asks for no longer board.
    assert comparisons("Cancel it, I no longer need it", ["deck", "length"]) == []
    assert comparisons("I don't want it any longer; a longer one, please", ["deck", "length"]) == [("length", 1)]
    assert rank("750ml", ["500ml", "1000ml"]) == 750 and rank("medium", ["low", "high"]) == 1
    assert rank("matte", ["gloss"]) is None  # no order: nothing is compared


def test_the_variants_on_the_side_asked_for_are_offered():
    kettles = [v for v in new_items("Could I swap the kettle for a bigger one?") if v.startswith("k-")]
    assert kettles == ["k-750"]  # the bigger ones, in the finish they did not ask to change (narrowing.closest)
    assert [v for v in new_items("the kettle but smaller") if v.startswith("k-")] == ["k-250"]
    # The torch with less glow: the low one; with more glow: the high one available (not the one NOT available).
    assert [v for v in new_items("a torch with less glow") if v.startswith("t-")] == ["t-low"]
    assert [v for v in new_items("a torch with more glow") if v.startswith("t-")] == ["t-high"]
    # With a named feature too, the comparison narrows what that left; nothing on its side: all of them stay.
    assert [v for v in new_items("a bigger kettle in gloss") if v.startswith("k-")] == ["k-1000"]
    assert [v for v in new_items("a smaller kettle, the 750ml one") if v.startswith("k-")] == ["k-750"]


def test_the_same_option_and_the_most_or_least_of_one():
    options = {"capacity": "500ml", "finish": "matte"}
    assert comparisons("the same finish but the largest you have", options) == [("finish", 0), ("capacity", 2)]
    assert comparisons("the cheapest one", options) == [("price", -2)]
    assert comparisons("a less expensive kettle", options) == [("price", -1)]
    assert comparisons("the same finish as my other kettle", options) == []  # another line, not this one
    kettles = lambda text: [v for v in new_items(text) if v.startswith("k-")]  # noqa: E731
    assert kettles("the cheapest kettle you have") == ["k-250"]
    assert kettles("the most expensive kettle") == ["k-1000"]
    assert kettles("a kettle with the same finish, the largest one") == ["k-750"]  # matte first, then the largest
    assert kettles("a cheaper kettle") == ["k-250"]  # below the old line's $20.00
    # The most glow among the torches available (the high red one is NOT available).
    assert [v for v in new_items("the torch with the maximum glow") if v.startswith("t-")] == ["t-high"]


PUZZLE = {"product_id": "p-pz", "name": "Crossword Book", "options": "puzzles, difficulty level", "variants": {
    "pz-200-expert": "200, expert; $12.00; available", "pz-100-beginner": "100, beginner; $8.00; available",
    "pz-300-beginner": "300, beginner; $11.00; available", "pz-100-intermediate": "100, intermediate; $9.00; available"}}
PUZZLE_ORDER = {"order_id": "#W0000078", "status": "pending", "items": [{
    "item_id": "pz-200-expert", "product_id": "p-pz", "name": "Crossword Book",
    "options": "puzzles: 200, difficulty level: expert"}]}


def test_easier_or_harder_is_the_difficulty_and_fewest_the_least():
    options = {"puzzles": "200", "difficulty level": "expert"}
    assert comparisons("an easier crossword book", options) == [("difficulty level", -1)]
    assert comparisons("the easiest one with the fewest puzzles", options) == [("difficulty level", -2),
                                                                              ("puzzles", -2)]
    assert rank("beginner", ["intermediate", "expert"]) == 0
    books = lambda text: arg_options(SWAP, [PUZZLE_ORDER, PUZZLE], (), "", [text])  # noqa: E731
    offered = {arg: v for _, arg, v, _ in books("change my crossword book to the easiest one with the fewest puzzles")}
    assert offered["new_item_ids"] == ("pz-100-beginner",)


def test_the_same_options_chained_by_and():
    options = ["material", "color", "height"]
    assert comparisons("a 4 foot one with the same material and color", options) == [("material", 0), ("color", 0)]
    assert comparisons("keep the same color and height please", options) == [("color", 0), ("height", 0)]
    assert comparisons("the same material and less height", options) == [("material", 0), ("height", -1)]
    assert comparisons("the same material and then more", options) == [("material", 0)]


def test_keeping_options_is_asking_for_the_same():
    options = ["pressure", "capacity", "type"]
    assert comparisons("keep the capacity and type but lower the pressure", options) == [
        ("capacity", 0), ("type", 0), ("pressure", -1)]
    assert comparisons("keeping its capacity", options) == [("capacity", 0)]
    assert comparisons("I want to keep the machine, thanks", options) == []


def test_a_line_like_another_of_the_customers_is_given_that_lines_item():
    """"Change the kettle I just ordered to the same kind as the one I already got": the item of the kettle in the
    delivered order, whatever the model chose (train task 23: it proposed the pending kettle for itself)."""
    pending = {"order_id": "#W0000078", "status": "pending", "items": [
        {"item_id": "k-250", "product_id": "p-k", "name": "Kettle", "options": "capacity: 250ml, finish: gloss"}]}
    modify = OPERATIONS["modify_pending_order_items"]
    sources = [ORDER, pending, KETTLE, TORCH]
    proposed = {"order_id": "#W0000078", "item_ids": ["k-250"], "new_item_ids": ["k-250"],
                "payment_method_id": "credit_card_1"}
    for text in ("Change the kettle I just ordered to the same kind as the one I already got.",
                 "Make my pending kettle like the one I received",
                 "Exchange the kettle I ordered for the same type as the one in my last order"):
        assert like_another(modify, proposed, [text], sources)["new_item_ids"] == ["k-500"], text
    assert like_another(modify, proposed, ["Change the kettle I just ordered to a matte one."], sources) is None
    # A new item of the model's own choosing is left: the record it changes may be the wrong one, not the item.
    chosen = {**proposed, "new_item_ids": ["k-1000"]}
    assert like_another(modify, chosen, ["Make my pending kettle like the one I received"], sources) is None
    # The model's own item where the words after "like" name the other record's state, not the one changed: the other
    # line's item (the delivered kettle exchanged for the pending one's kind); the other way round it stands.
    exchange = OPERATIONS["exchange_delivered_order_items"]
    received = {"order_id": "#W0000077", "item_ids": ["k-500"], "new_item_ids": ["k-1000"],
                "payment_method_id": "credit_card_1"}
    like_pending = "Exchange the kettle I received for the same kind as the one in my pending order."
    assert like_another(exchange, received, [like_pending], sources)["new_item_ids"] == ["k-250"]
    assert like_another(modify, chosen, [like_pending], sources) is None
    assert like_another(exchange, received, ["Exchange the kettle I received for a glossy one."], sources) is None
    # Two other kettles held: which one is not guessed.
    third = {"order_id": "#W0000080", "status": "delivered", "items": [
        {"item_id": "k-1000", "product_id": "p-k", "name": "Kettle", "options": "capacity: 1000ml, finish: gloss"}]}
    assert like_another(modify, proposed, ["the kettle like the one I got"], [*sources, third]) is None
    # So too where one other order holds the two.
    both = {**ORDER, "items": [*ORDER["items"], {"item_id": "k-1000", "product_id": "p-k", "name": "Kettle",
                                                 "options": "capacity: 1000ml, finish: gloss"}]}
    assert like_another(modify, proposed, ["the kettle like the one I got"], [both, pending, KETTLE, TORCH]) is None


def test_a_comparison_by_a_number_keeps_the_value_that_far_from_the_old_one():
    """"1000 more pieces" than a 500-piece puzzle is the 1500-piece one, not any larger one (train tasks 98, 107)."""
    blocks = {"product_id": "p-b", "name": "Block Set", "options": "pieces, theme", "variants": {
        f"b-{n}-{t}": f"{n}, {t}; $10.00; available" for n in (100, 200, 300, 400) for t in ("farm", "space")}}
    order = {"order_id": "#W0000079", "status": "delivered", "items": [
        {"item_id": "b-200-farm", "product_id": "p-b", "name": "Block Set", "options": "pieces: 200, theme: farm"}]}

    def sets(text: str) -> list[str]:
        options = {arg: v for _, arg, v, _ in arg_options(SWAP, [order, blocks], (), "", [text])}
        return [v for v in options["new_item_ids"] if v.startswith("b-")]

    assert amounts("a set with 200 more pieces", ["pieces", "theme"]) == {"pieces": 200}
    assert sets("Swap the block set for one with 200 more pieces, same theme") == ["b-400-farm"]
    assert sets("the block set with 100 fewer pieces, same theme please") == ["b-100-farm"]
    assert sets("the block set, 100 pieces less. Same theme.") == ["b-100-farm"]
    assert sets("the block set with more pieces, same theme") == ["b-300-farm", "b-400-farm"]  # no number: the side
    assert sets("the block set with 500 more pieces, same theme") == ["b-300-farm", "b-400-farm"]  # none that far
