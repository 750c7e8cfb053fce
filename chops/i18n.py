"""The user's language and the message catalogs of the replies the code writes (not the models' prompts).

Catalogs are gettext ``.po`` files, ``chops/locale/<lang>/LC_MESSAGES/chops.po``, whose msgids are
the English texts (English needs no catalog). They are read with Babel and compiled in memory when
first used, so no generated ``.mo`` file lives in the repository. A msgid is marked ``N_("...")``
where it is written, so ``pybabel extract -k N_`` (and the catalog test) finds every one.
Placeholders are named, ``{message}``, filled with ``str.format``.

A domain pack ships the catalogs of its own vocabulary (its operations' titles, argument and column labels: the
``DomainPack.locale`` directory, laid out the same way); ``use_catalogs`` adds them behind the agent's own, as
Flask-Babel merges several translation directories.
"""

from __future__ import annotations

import gettext
import io
import logging
import re
from collections.abc import Iterable
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

from babel.lists import format_list
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_currency

LOCALE_DIR = Path(__file__).parent / "locale"
DOMAIN = "chops"
SOURCE_LANGUAGE = "en"
LANGUAGES = ("en", "zh")

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")
log = logging.getLogger(__name__)


def N_(msgid: str) -> str:
    """Marks ``msgid`` for extraction; it is translated where it is rendered (``translate``)."""
    return msgid


def text_language(text: str) -> str | None:
    """``"zh"`` when ``text`` has more Han characters than Latin words, ``"en"`` when it has Latin
    words, None when it has neither (a bare number or name decides nothing).

    A Han character is about one word, so "Please move me to 北京四中" (5 words, 4 Han) is English
    and "把我的 upload limit 改成 40" (2 words, 5 Han) is Chinese. Deterministic, offline, no model.
    """
    han, words = len(_HAN.findall(text)), len(_LATIN_WORD.findall(text))
    if han > words:
        return "zh"
    return "en" if words else None


def reply_language(texts: Iterable[str]) -> str:
    """The language of the reply: that of the newest of ``texts`` (newest first) that shows one, so a
    bare "40" answering a Chinese question is answered in Chinese; English when none does."""
    for text in texts:
        lang = text_language(text or "")
        if lang is not None:
            return lang
    return SOURCE_LANGUAGE


_PACK_CATALOGS: list[Path] = []  # the domain packs' catalog directories, after the agent's own


def use_catalogs(locale_dir: Path) -> None:
    """Serve a domain pack's catalogs in ``locale_dir`` behind the agent's own (once; the wiring calls it)."""
    if locale_dir not in _PACK_CATALOGS:
        _PACK_CATALOGS.append(locale_dir)


@lru_cache(maxsize=None)
def translations(lang: str, locale_dir: Path = LOCALE_DIR) -> gettext.NullTranslations:
    """The compiled catalog of ``lang`` in ``locale_dir``; ``NullTranslations`` (the English msgids) when there is
    none."""
    return _compiled(lang, locale_dir)


@lru_cache(maxsize=None)
def _merged(lang: str, dirs: tuple[Path, ...]) -> gettext.NullTranslations:
    """The catalogs of ``lang`` in ``dirs``, each the fallback of the one before (fresh objects: a fallback is set
    on the object itself)."""
    first, *rest = [_compiled(lang, d) for d in dirs]
    for later in rest:
        first.add_fallback(later)
    return first


def _compiled(lang: str, locale_dir: Path) -> gettext.NullTranslations:
    path = locale_dir / lang / "LC_MESSAGES" / f"{DOMAIN}.po"
    if lang == SOURCE_LANGUAGE or not path.is_file():
        return gettext.NullTranslations()
    with path.open("rb") as fp:
        catalog = read_po(fp, locale=lang, domain=DOMAIN)
    buf = io.BytesIO()
    write_mo(buf, catalog)  # fuzzy entries are left out, as msgfmt does
    buf.seek(0)
    return gettext.GNUTranslations(buf)


def translate(lang: str, msgid: str, *, locale_dir: Path | None = None, **params: object) -> str:
    """``msgid`` in ``lang`` with ``params`` filled in, from the catalogs of ``locale_dir`` (default: the agent's own
    and the packs' of ``use_catalogs``). A missing translation is the English msgid; a translation whose
    placeholders do not match is logged and replaced by the English text."""
    catalogs = translations(lang, locale_dir) if locale_dir else _merged(lang, (LOCALE_DIR, *_PACK_CATALOGS))
    text = catalogs.gettext(msgid)
    if not params:
        return text  # nothing to fill in (and a value such as a role word may hold braces)
    try:
        return text.format(**params)
    except (KeyError, IndexError, ValueError):
        log.warning("catalog %s: bad placeholders in the translation of %r", lang, msgid)
        return msgid.format(**params)


def said_in(said: dict[str, Any], lang: str) -> str:
    """A message a pack said in its catalog's words (``chops.domain.outcomes.Said.record``: msgid and fields), in
    ``lang``; each field that is itself a word of the catalogs (a reason, a cabin) in ``lang`` too."""
    fields = {k: translate(lang, v) for k, v in (said.get("fields") or {}).items()}
    return translate(lang, said["msgid"], **fields).strip()


def money(amount: Decimal, currency: str, lang: str) -> str:
    """``amount`` of ``currency`` (ISO 4217) as ``lang`` writes it ("$1,234.50" / "US$1,234.50"), by Babel's CLDR
    data."""
    return format_currency(amount, currency, locale=lang if lang in LANGUAGES else SOURCE_LANGUAGE)


def join_list(items: list[str], lang: str, style: str = "standard") -> str:
    """``items`` as one phrase in ``lang`` ("a, b and c" / "a、b和c"; ``style`` "or": "a, b or c"), by Babel's CLDR
    list patterns."""
    return format_list(items, style=style, locale=lang if lang in LANGUAGES else SOURCE_LANGUAGE) if items else ""
