"""The message catalogs: language choice, fallback to English, and no template shipped untranslated."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
import sqlalchemy as sa
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

import chops
from chops import i18n
from chops.domain.pack import available_packs, load_pack
from chops.i18n import LANGUAGES, LOCALE_DIR, reply_language, text_language, translate, translations, use_catalogs

PACKAGE = Path(chops.__file__).parent


def _code_msgids() -> set[str]:
    """Every msgid marked ``N_("...")`` in the package, found by Babel's own extractor (as pybabel does)."""
    return {msg for _, _, msg, _, _ in extract_from_dir(str(PACKAGE), method_map=[("**.py", "python")],
                                                         keywords={"N_": None})}


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


@pytest.mark.parametrize(("text", "lang"), [
    ("Please change my upload limit to 40.", "en"),
    ("请把我的上传上限改成40。", "zh"),
    ("把我的 upload limit 改成 40", "zh"),
    ("Please move me to 北京四中", "en"),  # 5 words, 4 Han characters
    ("我的学校是 Riverside School", "zh"),
    ("李明", "zh"),
    ("40", None),
    ("", None),
])
def test_the_language_of_a_text(text, lang):
    assert text_language(text) == lang


def test_the_reply_language_comes_from_the_newest_message_that_shows_one():
    assert reply_language(["40", "请把我的上传上限改一下"]) == "zh"
    assert reply_language(["40", "Please change my limit", "请把我的上传上限改一下"]) == "en"
    assert reply_language(["40", "?"]) == "en"


def test_every_msgid_used_in_code_has_a_chinese_translation_with_the_same_placeholders():
    with (LOCALE_DIR / "zh" / "LC_MESSAGES" / "chops.po").open("rb") as fp:
        catalog = read_po(fp)
    msgids = _code_msgids()
    assert len(msgids) > 40  # the extractor really found the templates
    for msgid in sorted(msgids):
        message = catalog.get(msgid)
        assert message is not None and message.string and not message.fuzzy, f"untranslated: {msgid!r}"
        assert _fields(message.string) == _fields(msgid), f"placeholders differ: {msgid!r}"
        assert translate("zh", msgid) == message.string  # the compiled catalog serves it


def _vocabulary(pack) -> set[str]:
    """The words a pack's replies show the user: titles, argument and column labels."""
    words = set()
    for op in pack.api(sa.create_engine("sqlite://")).operations.values():
        assert op.title, f"{pack.name}: {op.name} has no title"
        for name, field in op.args_model.model_fields.items():
            assert field.title, f"{pack.name}: {op.name}.{name} has no label for the user"
            words.add(field.title)
        words |= {op.title, *(label for _, label in op.columns)}
    return words


@pytest.mark.parametrize("name", ["cphos", "retail", "airline"])
def test_every_operation_and_argument_of_a_pack_has_words_for_the_user_in_its_own_catalog(name):
    assert name in available_packs()
    pack = load_pack(name)
    with (pack.locale / "zh" / "LC_MESSAGES" / "chops.po").open("rb") as fp:
        catalog = read_po(fp)
    for msgid in sorted(_vocabulary(pack)):
        message = catalog.get(msgid)
        assert message is not None and message.string and not message.fuzzy, f"{name}: untranslated {msgid!r}"
        assert translate("zh", msgid, locale_dir=pack.locale) == message.string


def test_a_packs_catalog_is_served_behind_the_agents_own(tmp_path, monkeypatch):
    monkeypatch.setattr(i18n, "_PACK_CATALOGS", [])  # the packs this process wired stay as they were
    pack_locale = _po(tmp_path, "zh", 'msgid "rent a bicycle"\nmsgstr "租一辆自行车"\n\n'
                                      'msgid "Done: {message}"\nmsgstr "好了：{message}"\n')
    assert translate("zh", "rent a bicycle") == "rent a bicycle"  # not served before the wiring adds it
    use_catalogs(pack_locale)
    use_catalogs(pack_locale)  # once
    assert translate("zh", "rent a bicycle") == "租一辆自行车"
    assert translate("zh", "Done: {message}", message="x") == "已完成：x"  # the agent's own wins
    assert translate("en", "rent a bicycle") == "rent a bicycle"


def _po(tmp_path: Path, lang: str, entries: str) -> Path:
    target = tmp_path / lang / "LC_MESSAGES"
    target.mkdir(parents=True)
    (target / "chops.po").write_text('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=utf-8\\n"\n\n'
                                     + entries, encoding="utf-8")
    return tmp_path


def test_a_missing_fuzzy_or_broken_translation_falls_back_to_english(tmp_path):
    locale = _po(tmp_path, "zh", 'msgid "Done: {message}"\nmsgstr "已完成：{mesage}"\n\n'
                                 '#, fuzzy\nmsgid "I couldn\'t do that: {message}"\nmsgstr "无法：{message}"\n\n'
                                 'msgid "arbiter"\nmsgstr "仲裁"\n')
    assert translate("zh", "arbiter", locale_dir=locale) == "仲裁"
    assert translate("zh", "Done: {message}", locale_dir=locale, message="ok") == "Done: ok"  # bad placeholder
    assert translate("zh", "I couldn't do that: {message}", locale_dir=locale, message="x") == "I couldn't do that: x"
    assert translate("zh", "role", locale_dir=locale) == "role"  # not in the catalog
    assert translate("fr", "Done: {message}", message="ok") == "Done: ok"  # no catalog at all


def test_the_real_catalogs_load_for_every_language():
    for lang in LANGUAGES:
        translations(lang)  # English is the msgids themselves; Chinese compiles from the .po
    assert translate("zh", "Done: {message}", message="x") == "已完成：x"
