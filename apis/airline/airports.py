"""The airports the airline flies to, and the airline's own value kind for them: an airport is named by its code or by
its city, in English or Chinese ("Seattle" and 西雅图 name SEA, "New York" JFK and LGA), and a reading picks it among
the codes (``chops.domain.values``
registry: a kind a pack adds)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from chops.domain.evidence import Evidence
from chops.domain.values import ValueKind, register

# The cities of the airports the airline flies to (public IATA codes); an airport not listed is shown by its code.
CITIES = {"ATL": "Atlanta", "BOS": "Boston", "CLT": "Charlotte", "DEN": "Denver", "DFW": "Dallas",
          "DTW": "Detroit", "EWR": "Newark", "IAH": "Houston", "JFK": "New York (JFK)", "LAS": "Las Vegas",
          "LAX": "Los Angeles", "LGA": "New York (LaGuardia)", "MCO": "Orlando", "MIA": "Miami",
          "MSP": "Minneapolis", "ORD": "Chicago", "PHL": "Philadelphia", "PHX": "Phoenix", "SEA": "Seattle",
          "SFO": "San Francisco"}

# The same cities as Chinese customers write them.
CITIES_ZH = {"ATL": "亚特兰大", "BOS": "波士顿", "CLT": "夏洛特", "DEN": "丹佛", "DFW": "达拉斯", "DTW": "底特律",
             "EWR": "纽瓦克", "IAH": "休斯顿", "JFK": "纽约", "LAS": "拉斯维加斯", "LAX": "洛杉矶", "LGA": "纽约",
             "MCO": "奥兰多", "MIA": "迈阿密", "MSP": "明尼阿波利斯", "ORD": "芝加哥", "PHL": "费城", "PHX": "凤凰城",
             "SEA": "西雅图", "SFO": "旧金山"}


def city(code: str) -> str:
    """The city an airport serves, without the airport's own name ("New York" of JFK)."""
    return CITIES.get(code, code).split(" (")[0]


def _ground(value: Any, evidence: Evidence, options: Mapping[str, Any]) -> Any:
    code = str(value).strip().upper()
    if code not in CITIES:
        return None
    said = " ".join(evidence.texts)
    named = re.search(rf"\b{code}\b", said, re.IGNORECASE) or re.search(rf"\b{re.escape(city(code))}\b", said,
                                                                          re.IGNORECASE) or CITIES_ZH[code] in said
    return code if named or code in evidence.known else None


AIRPORT_KIND = register(ValueKind("airport", "airport code (IATA)", _ground, choices=tuple(CITIES)))
