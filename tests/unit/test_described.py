"""The variant a customer describes (``chops.pipeline.described``): the option values they typed pick, per
product, the variants the executor's grammar offers for a swap's new items; one not available is never offered
while another is. Made-up products only."""

from __future__ import annotations

from apis.retail.registry import OPERATIONS
from chops.pipeline.choices import arg_options
from chops.pipeline.walk import records
from chops.pipeline.described import descriptions, features, mentioned_features
from tests.unit.pipeline_support import call, to_system, verdict
from tests.unit.retail_support import MIA
from tests.unit.test_retail_agent import shop  # noqa: F401  (fixture)

SWEATER = {"product_id": "p-sw", "name": "Sweater", "options": "color, size, yarn", "variants": {
    "sw-red-m-wool": "red, M, wool; $30.00; available",
    "sw-red-m-cotton": "red, M, cotton; $28.00; available",
    "sw-green-l-wool": "green, L, wool; $31.00; available",
    "sw-green-l-cotton": "green, L, cotton; $29.00; available",
    "sw-green-m-wool": "green, M, wool; $30.00; NOT available",
    "sw-navy-xl-v-neck": "navy, XL, v-neck; $33.00; available"}}
BEANIE = {"product_id": "p-beanie", "name": "Beanie", "variants": {"beanie-1": "black, one size; $9.00; available",
                                                          "beanie-2": "white, one size; $9.00; available"}}
ORDER = {"order_id": "#W0000042", "status": "delivered", "items": [
    {"item_id": "sw-red-m-wool", "product_id": "p-sw", "name": "Sweater", "options": "color: red, size: M, yarn: wool"},
    {"item_id": "beanie-1", "product_id": "p-beanie", "name": "Beanie", "options": "color: black, size: one size"}]}
PROFILE = {"orders": ["#W0000042"], "payment_methods": [{"id": "gift_card_9"}]}
SWAP = (OPERATIONS["exchange_delivered_order_items"],)


def new_items(*asked: str, sources=(PROFILE, ORDER, SWEATER, BEANIE), message: str = "") -> tuple[str, ...]:
    offered = {arg: v for _, arg, v, _ in arg_options(SWAP, list(sources), (), message, asked)}
    return offered["new_item_ids"]


def test_a_features_are_the_parts_of_a_listed_line_without_labels():
    assert features("green, L, wool; $31.00; available") == ["green", "L", "wool", "$31.00", "available"]
    assert features("color: red, size: M") == ["red", "M"]
    line = "navy, XL, v-neck, 1000ml, crew neck; $33.00"
    assert mentioned_features(line, ["A Navy V neck in xl, 1000 ml please"]) == {"navy", "XL", "v-neck", "1000ml"}
    assert mentioned_features(line, ["the NAVY vneck, a crewneck"]) == {"navy", "v-neck", "crew neck"}
    # A word may stand between a feature's words, not two, nor may they change places.
    assert mentioned_features("not resistant, 4 hours", ["black ones, 4 battery hours, not water resistant"]) == {
        "not resistant", "4 hours"}
    assert mentioned_features("not resistant", ["not at all water resistant", "resistant? not"]) == set()
    assert mentioned_features("1 liter, 1.5 liters", ["a 1.5 liter one"]) == {"1.5 liters"}  # a number is no gap
    # Whole words only, and an apostrophe joins: "it's" is not the size S, nor "I'm" M; "small" is S, not M.
    assert mentioned_features("red, S, M", ["it's a small one, I'm sure"]) == {"S"}
    assert mentioned_features("L, XL", ["in extra large"]) == {"XL"} and mentioned_features("L, XL", ["large"]) == {"L"}
    assert mentioned_features("红色, M", ["我要红色的"]) == set()  # no word boundaries to go by: nothing narrowed



def test_a_difference_or_the_value_not_wanted_names_no_feature():
    line = "300, 500, 800, maple, oak"
    # "200 more" of a 300-sheet pad is 500, not the 200 typed; a bare number still names its value.
    assert mentioned_features(line, ["the same pad but 200 more sheets, or 300 fewer"]) == set()
    assert mentioned_features(line, ["the 500 sheet pad, 2 sizes bigger"]) == {"500"}
    # What follows "rather than" / "instead of" is the one the customer does not want.
    assert mentioned_features(line, ["oak rather than maple, if you have both"]) == {"oak"}
    assert mentioned_features(line, ["a pad in oak instead of maple"]) == {"oak"}
    assert mentioned_features(line, ["maple is nice but oak rather than maple"]) == {"maple", "oak"}  # said wanted once

def test_descriptions_are_a_variants_line_and_an_order_lines_texts():
    described = descriptions(node for data in [ORDER, SWEATER] for node in records(data))
    assert described["sw-green-l-wool"] == "green, L, wool; $31.00; available"
    assert "color: black" in described["beanie-1"] and "Beanie" in described["beanie-1"]


def test_the_variants_the_customer_describes_are_offered():
    assert new_items("Could I get the sweater in green, size L, cotton?") == (
        "sw-green-l-cotton", "beanie-2")  # the beanie's own line is its only one: the other stays
    # Fewer features named: of the variants naming the most of them, those most like the line replaced (its wool
    # yarn; its size M is not listed in green).
    assert new_items("the sweater in green please") == ("sw-green-l-wool", "beanie-2")
    # Nothing named: every available variant (the unavailable green M is never offered while another is).
    assert new_items("I want to exchange my sweater") == (
        "sw-red-m-cotton", "sw-green-l-wool", "sw-green-l-cotton", "sw-navy-xl-v-neck", "beanie-2")


JACKET = {"product_id": "p-jk", "name": "Rain Jacket", "options": "size, color, lining", "variants": {
    "jk-s-navy-light": "S, navy, light; $80.00; available",
    "jk-m-navy-heavy": "M, navy, heavy; $90.00; available",
    "jk-s-olive-medium": "S, olive, medium; $85.00; available",
    "jk-m-navy-medium": "M, navy, medium; $88.00; available",
    "jk-l-olive-heavy": "L, olive, heavy; $92.00; available",
    "jk-xl-navy-light": "XL, navy, light; $84.00; available"}}
JACKET_ORDER = {"order_id": "#W0000043", "status": "delivered", "items": [
    {"item_id": "jk-s-navy-light", "product_id": "p-jk", "name": "Rain Jacket",
     "options": "size: S, color: navy, lining: light"}]}


def test_a_size_said_in_words_is_its_letters_and_names_no_other_place():
    sources = (PROFILE, JACKET_ORDER, JACKET)
    # "medium" is the size M and the lining's medium; "heavy" is the only lining said: M and heavy, not a ranking
    assert new_items("swap my rain jacket for a medium one with a heavy lining", sources=sources) == (
        "jk-m-navy-heavy",)
    assert new_items("the rain jacket in extra large please", sources=sources) == ("jk-xl-navy-light",)
    # said alone, "medium" may be the size or the lining: the one medium in both is the best match
    assert new_items("a medium rain jacket instead", sources=sources) == ("jk-m-navy-medium",)


def test_a_size_said_in_words_names_no_other_place_where_it_is_the_old_lines_size_too():
    jacket = {**JACKET, "variants": {**JACKET["variants"], "jk-m-navy-light": "M, navy, light; $82.00; NOT available"}}
    order = {**JACKET_ORDER, "items": [{"item_id": "jk-m-navy-light", "product_id": "p-jk", "name": "Rain Jacket",
                                        "options": "size: M, color: navy, lining: light"}]}
    sources = (PROFILE, order, jacket)
    # "medium" is the size the jacket already has (M), not a lining said beside the heavy one: M and heavy (own5)
    assert new_items("Then the medium navy one with a heavy lining is fine.", sources=sources) == ("jk-m-navy-heavy",)
    assert new_items("the rain jacket, medium, but with the heavy lining", sources=sources) == ("jk-m-navy-heavy",)


def test_of_alternatives_ranked_in_one_place_the_one_said_first_is_taken_where_one_is_left():
    sources = (PROFILE, JACKET_ORDER, JACKET)
    assert new_items("rain jacket in size M please; for the lining a heavy one first, then medium",
                     sources=sources) == ("jk-m-navy-heavy",)
    assert new_items("rain jacket in size M please; for the lining medium first, else heavy",
                     sources=sources) == ("jk-m-navy-medium",)


def test_what_the_customer_wants_counts_before_what_their_line_already_is():
    # They name their red M line and the green L they want: red and M are what the line is, green and L new.
    assert new_items("My sweater is the red M one, wool. I want it green, in L instead.") == (
        "sw-green-l-wool", "beanie-2")  # wool is what the line is: the yarn they did not ask to change stays
    # "Instead of" names the old line's feature: the red ones are not preferred for it.
    assert new_items("A navy sweater instead of my red one") == ("sw-navy-xl-v-neck", "beanie-2")
    # An earlier message counts too: the options may come before the order is found.
    assert new_items("It's #W0000042.", "Swap my sweater for a navy XL") == ("sw-navy-xl-v-neck", "beanie-2")


def test_a_variant_with_a_feature_said_as_not_wanted_is_left_out_while_another_is_left():
    # "Instead of" (an article aside): no wool one, though the wool is what the line is; the rest as they were.
    assert new_items("I'd like the sweater in cotton instead of wool") == ("sw-red-m-cotton", "beanie-2")
    assert new_items("any sweater rather than a red one") == (
        "sw-green-l-wool", "sw-green-l-cotton", "sw-navy-xl-v-neck", "beanie-2")
    # Every available one has it: none is left out for it.
    assert new_items("the beanie in something other than white") == ("sw-red-m-cotton", "sw-green-l-wool",
                                                                    "sw-green-l-cotton", "sw-navy-xl-v-neck",
                                                                    "beanie-2")


def test_with_no_feature_said_whole_a_word_of_one_picks():
    hub = {"product_id": "p-hub", "name": "Smart Plug", "variants": {
        "hub-1": "Orbit Voice, black; $20.00; available", "hub-2": "Zenith Assistant, black; $21.00; available",
        "hub-3": "Zenith Assistant, white; $22.00; available", "hub-4": "Lumen Link, black; $19.00; available"}}
    order = {**ORDER, "items": [{"item_id": "hub-4", "product_id": "p-hub", "name": "Smart Plug",
                                 "options": "compatibility: Lumen Link, color: black"}]}
    sources = (PROFILE, order, hub)
    # "Zenith Home" is no listed feature; its "Zenith" is a word of one the old line lacks (train task 0's thermostat).
    assert new_items("a smart plug that works with Zenith Home", sources=sources) == ("hub-2", "hub-3")
    # Not a word of the old line's, nor one said as not wanted, nor a short one.
    assert new_items("a plug for Zenith Home instead of Lumen Link", sources=sources) == ("hub-2", "hub-3")
    assert new_items("a smart plug without the Lumen link", sources=sources) == ("hub-1", "hub-2", "hub-3")
    assert new_items("a plug other than Orbit, please", sources=sources) == ("hub-1", "hub-2", "hub-3")
    # Features said whole but ranked ("first, then"): the first that is left (train tasks 6 and 7).
    assert new_items("a smart plug, Orbit Voice first, then Zenith Assistant", sources=sources) == ("hub-1",)


def test_alternatives_the_customer_ranks_count_for_none_until_the_first_left_is_taken():
    # Green or navy, whichever they have: both colours are in the same place of the line, so neither narrows
    # (``narrowed``); cotton does, and of what it left, the colour said first is taken (``preferred``).
    assert new_items("A green sweater, or navy if there is none, in cotton.") == ("sw-green-l-cotton", "beanie-2")
    # Of each alternative, the one closest to the old line: the yarn not spoken of stays wool (``closest``)
    assert new_items("Green L first, else navy XL.") == ("sw-green-l-wool", "beanie-2")
    assert new_items("Navy XL first, else green L.") == ("sw-navy-xl-v-neck", "beanie-2")
    assert new_items("A sweater in L; cotton first, then wool.") == ("sw-green-l-cotton", "beanie-2")


def test_what_the_customer_does_not_ask_to_change_stays_as_the_line_was():
    # Cotton asked for; the colour and size not spoken of: the cotton one in the old line's red M.
    assert new_items("the same sweater, but in cotton") == ("sw-red-m-cotton", "beanie-2")
    # Nothing named, or only a comparison: nothing to keep, every variant stays for the model (or the comparison).
    assert new_items("another sweater please") == (
        "sw-red-m-cotton", "sw-green-l-wool", "sw-green-l-cotton", "sw-navy-xl-v-neck", "beanie-2")


def test_a_sentence_about_another_product_does_not_describe_this_one():
    # "white" is the beanie's wish; the sweater's sentence says green.
    assert new_items("The sweater should be green. The beanie should be white.") == ("sw-green-l-wool", "beanie-2")
    # A sentence naming no product describes whichever the customer is talking about.
    assert new_items("I'd like to swap my sweater. Make it navy, please.") == ("sw-navy-xl-v-neck", "beanie-2")


def test_an_unavailable_variant_is_offered_only_when_its_product_has_nothing_else():
    assert "sw-green-m-wool" not in new_items("green, M, wool please")
    only = {"product_id": "p-sw", "name": "Sweater", "variants": {"sw-x": "grey, S; $1.00; NOT available"}}
    assert new_items("grey S", sources=(PROFILE, ORDER, only)) == ("sw-x",)  # the platform says why it cannot be


def test_each_product_keeps_its_own_best_variants():
    assert new_items("the sweater in navy XL and the beanie in white", message="the sweater and the beanie") == (
        "sw-navy-xl-v-neck", "beanie-2")


def test_of_two_lines_of_a_product_the_one_said_as_held_alone_counts_as_what_it_already_is():
    # The order holds a 13-inch and a 17-inch laptop; "the 17-inch laptop" is the line held, so "13-inch" is asked for
    # (train task 35: every offered laptop's features counted as old, and the 1.5B chose a 17-inch i9).
    laptop = {"product_id": "p-lt", "name": "Laptop", "variants": {
        "lt-13-i5": "13-inch, i5, silver; $900.00; available", "lt-13-i7": "13-inch, i7, black; $990.00; available",
        "lt-17-i9": "17-inch, i9, black; $2500.00; available"}}
    order = {"order_id": "#W0000042", "status": "delivered", "items": [
        {"item_id": "lt-13-i7", "product_id": "p-lt", "name": "Laptop", "options": "13-inch, i7, black"},
        {"item_id": "lt-17-i5", "product_id": "p-lt", "name": "Laptop", "options": "17-inch, i5, silver"}]}
    sources = (PROFILE, order, laptop)
    # (and of those the one most like the line held: i5, silver)
    assert new_items("Change the 17-inch laptop to the 13-inch version", sources=sources) == ("lt-13-i5",)
    assert new_items("my black laptop should be a silver one", sources=sources) == ("lt-13-i5",)
    # Nothing said as held: both lines' features are old, and "13-inch" narrows nothing, as before.
    assert new_items("I want a laptop in 13-inch", sources=sources) == ("lt-13-i5", "lt-13-i7", "lt-17-i9")


def test_an_option_the_customer_typed_is_not_offered_as_an_id():
    laptop = {"product_id": "p-lt", "name": "Laptop", "variants": {"lt-1": "15-inch, i7, 8GB, 1TB SSD; $9.00; available",
                                                                  "lt-2": "13-inch, i5, 16GB, 512GB SSD; $8.00; available"}}
    order = {"order_id": "#W0000042", "status": "delivered",
             "items": [{"item_id": "lt-2", "product_id": "p-lt", "name": "Laptop", "options": "13-inch, i5"}]}
    offered = {arg: v for _, arg, v, _ in arg_options(SWAP, [PROFILE, order, laptop], ["8GB", "1TB", "#W0000042"],
                                                        "the laptop", ["The i7, 8GB, 1TB SSD laptop, #W0000042"])}
    assert offered["new_item_ids"] == ("lt-1", "#W0000042")  # "8GB" and "1TB" name options; the order id stays
    assert "8GB" in offered["order_id"]  # other arguments are offered what was typed, as ever
    # A feature of two words as the customer types it ("15-inch", "15inch") names an option too.
    offered = {arg: v for _, arg, v, _ in arg_options(SWAP, [PROFILE, order, laptop], ["15-inch", "15inch"],
                                                        "the laptop", ["Make it the 15-inch one, 15inch"])}
    assert offered["new_item_ids"] == ("lt-1",)


def test_other_arguments_and_operations_are_not_narrowed():
    offered = {arg: v for _, arg, v, _ in arg_options(SWAP, [PROFILE, ORDER, SWEATER], (), "", ["green L"])}
    assert offered["item_ids"] == ("sw-red-m-wool", "beanie-1")  # the order's lines: what the line is, not wanted
    reads = (OPERATIONS["get_item_details"],)
    assert all(len(v) > 1 for *_, v, _ in arg_options(reads, [PROFILE, ORDER, SWEATER], (), "", ["green L"]))


def test_the_executor_is_offered_only_the_kettle_the_customer_describes(shop):  # noqa: F811
    agent, _, llm = shop
    to_system(llm)
    llm.enqueue("executor", call("get_order_details", order_id="#T0000003"))
    llm.enqueue("executor", call("exchange_delivered_order_items", order_id="#T0000003", item_ids=["k-glass-1l"],
                                 new_item_ids=["k-red-1l"], payment_method_id="gift_card_mia"))
    llm.enqueue("verifier", verdict(9))
    result = agent.handle(MIA, "Please exchange the glass kettle from #T0000003 for the enamel one, same 1L size, "
                          "and use my gift card.",
                          turn_key="d:1", conversation_id="d")
    assert result.outcome == "pending_confirmation"
    second = [s for role, _, s in llm.calls if role == "executor"][1].model_json_schema()["$defs"]
    new = str(second["exchange_delivered_order_itemsArgs"]["properties"]["new_item_ids"])
    assert "k-red-1l" in new
    assert not any(other in new for other in ("k-steel-1l", "k-steel-2l", "k-glass-1l"))
    assert llm.pending() == {}


def test_a_unit_after_a_number_is_read_in_any_of_its_spellings():
    shelf = "material: glass, color: white, height: 4 ft; $531.22; available"
    for said in ["a 4 foot one", "four feet? no, a 4-feet one", "the 4ft shelf"]:
        assert "4 ft" in mentioned_features(shelf, [said]), said
    assert "4 ft" not in mentioned_features(shelf, ["a 5 foot one, 4 shelves"])
    kettle = "capacity: 2 liters, material: steel"
    assert mentioned_features(kettle, ["the 2 litre kettle"]) == {"2 liters"}
    assert mentioned_features(kettle, ["the 2L kettle"]) == {"2 liters"}
    assert mentioned_features("screen size: 15-inch", ["a 15 inches screen"]) == {"15-inch"}


SHADES = {"product_id": "p-shades", "name": "Shades", "options": "frame color, lens color, frame", "variants": {
    "sh-black-green-metal": "black, green, metal; $50.00; available",
    "sh-black-brown-metal": "black, brown, metal; $52.00; available",
    "sh-brown-brown-metal": "brown, brown, metal; $49.00; available",
    "sh-black-blue-plastic": "black, blue, plastic; $45.00; available"}}
SHADES_ORDER = {"order_id": "#W0000042", "status": "delivered", "items": [
    {"item_id": "sh-black-green-metal", "product_id": "p-shades", "name": "Shades",
     "options": "frame color: black, lens color: green, frame: metal"}]}


def test_a_feature_said_beside_a_places_name_is_that_places():
    def shades(*asked: str) -> tuple[str, ...]:
        return new_items(*asked, sources=(PROFILE, SHADES_ORDER, SHADES))
    # "brown lenses" is the lens colour's brown: the frame stays black as it was, even with an alternative ranked
    assert shades("The same shades with brown lenses please") == ("sh-black-brown-metal",)
    assert shades("The shades with brown lenses; if there are none, blue is fine") == ("sh-black-brown-metal",)
    assert shades("Brown lenses please; if brown isn't there, blue") == ("sh-black-brown-metal",)  # said again
    # the lenses they have, said first, are no first choice
    assert shades("My shades have green lenses. I want brown lenses, or blue if there are none") == (
        "sh-black-brown-metal",)
    # a brown frame asked for: the frame colour's brown (the lens colour brown too is one place each)
    assert shades("The shades in a brown frame please") == ("sh-brown-brown-metal",)
    # said with no place's name beside it, brown is either place's, as before
    assert shades("The shades in brown please") == ("sh-brown-brown-metal",)


POLO = {"product_id": "p-polo", "name": "Polo", "options": "color, size, fabric, collar", "variants": {
    "po-teal-m-linen-button": "teal, M, linen, button-down; $40.00; available",
    "po-grey-xl-pique-button": "grey, XL, pique, button-down; $38.00; available",
    "po-grey-m-pique-spread": "grey, M, pique, spread; $41.00; available",
    "po-teal-xl-linen-spread": "teal, XL, linen, spread; $39.00; available"}}
POLO_ORDER = {"order_id": "#W0000042", "status": "delivered", "items": [
    {"item_id": "po-grey-xl-linen-button", "product_id": "p-polo", "name": "Polo",
     "options": "color: grey, size: XL, fabric: linen, collar: button-down"}]}


def test_a_places_name_before_its_own_feature_leaves_the_feature_before_it_alone():
    """"teal, size M" names the size of the M: the teal is still a colour asked for (train task 4: "purple, size S,
    v-neck" counted no purple, and the black t-shirts like the old one were offered)."""
    def polos(*asked: str) -> tuple[str, ...]:
        return new_items(*asked, sources=(PROFILE, POLO_ORDER, POLO))
    assert polos("Swap my polo for a teal one, size M, with a button-down collar") == ("po-teal-m-linen-button",)
    assert polos("The polo in teal, size M, pique if possible") == ("po-teal-m-linen-button",)
    # a place's name after a feature, with none of that place's features after it, still places the feature there:
    # no collar is teal, so nothing is narrowed
    assert len(polos("The polo with a teal collar please")) == 4
