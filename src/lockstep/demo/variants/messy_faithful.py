"""parse_amount, rewritten: one helper per shape of input, same results for every caller."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

CURRENCIES = {"$": "USD", "€": "EUR", "£": "GBP"}
CENT = Decimal("0.01")


def _split_currency(raw, default_currency):
    if raw[0] in CURRENCIES:
        return raw[1:], CURRENCIES[raw[0]]
    if raw[-3:].isalpha():
        code = raw[-3:].upper()
        if code not in CURRENCIES.values():
            raise KeyError(code)
        return raw[:-3].strip(), code
    return raw, default_currency


def _number(raw, strict):
    try:
        return Decimal(raw.replace(",", ""))
    except InvalidOperation:
        if strict:
            raise ValueError("bad amount: " + repr(raw.replace(",", ""))) from None
        return None


def parse_amount(raw, strict=False, default_currency="USD"):
    if raw is None:
        return None
    text = (raw.decode("latin-1") if isinstance(raw, bytes) else raw).strip()
    if not text:
        if strict:
            raise ValueError("empty amount")
        return ""
    text, currency = _split_currency(text, default_currency)
    if "-" in text[1:] and not text.startswith("-"):
        low, high = text.split("-", 1)
        return [parse_amount(low, strict, currency), parse_amount(high, strict, currency)]
    value = _number(text, strict)
    if value is None:
        return text.replace(",", "")
    return (value.quantize(CENT), currency)
