"""parse_amount: eleven years of special cases, called from everywhere.

It returns None, a string, a tuple or a list depending on the path taken, and
raises ValueError or KeyError on others.  Callers rely on every one of those.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

CURRENCIES = {"$": "USD", "€": "EUR", "£": "GBP"}


def parse_amount(raw, strict=False, default_currency="USD"):
    if raw is None:
        return None
    if isinstance(raw, bytes):
        raw = raw.decode("latin-1")
    raw = raw.strip()
    if raw == "":
        if strict:
            raise ValueError("empty amount")
        return ""
    if raw[0] in CURRENCIES:
        currency = CURRENCIES[raw[0]]
        raw = raw[1:]
    elif raw[-3:].isalpha():
        currency = raw[-3:].upper()
        raw = raw[:-3].strip()
        if currency not in CURRENCIES.values():
            raise KeyError(currency)
    else:
        currency = default_currency
    if "-" in raw and not raw.startswith("-"):
        low, high = raw.split("-", 1)
        return [parse_amount(low, strict, currency), parse_amount(high, strict, currency)]
    raw = raw.replace(",", "")
    try:
        value = Decimal(raw)
    except InvalidOperation:
        if strict:
            raise ValueError("bad amount: " + repr(raw))
        return raw
    return (value.quantize(Decimal("0.01")), currency)
