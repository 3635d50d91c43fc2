"""Turn raw order rows into invoice lines.  Nobody remembers why some of this is the way it is."""
from decimal import Decimal, ROUND_HALF_UP


def transform_row(row):
    out = {}
    name = row.get("name")
    if name is None:
        out["customer"] = "UNKNOWN"
    elif name == "":
        out["customer"] = ""          # blank is not missing: finance greps for it
    else:
        out["customer"] = " ".join(name.split()).title()
    qty = int(row.get("qty", 1))
    price = Decimal(str(row["price"]))
    subtotal = price * qty
    discount = _discount(subtotal, row.get("coupons") or [])
    total = subtotal - discount
    out["subtotal"] = _money(subtotal)
    out["discount"] = _money(discount)
    out["total"] = _money(total)
    if "note" in row:
        out["note"] = row["note"] if row["note"] else None
    return out


def _discount(subtotal, coupons):
    """Coupons apply in order; percentages stack on what is left; never more than the subtotal."""
    discount = Decimal("0")
    for c in coupons:
        if c.endswith("%"):
            pct = Decimal(c[:-1]) / Decimal(100)
            discount += (subtotal - discount) * pct
        else:
            discount += Decimal(c)
    return min(discount, subtotal)


def _money(amount):
    """Two decimals, half a cent rounds up (ROUND_HALF_UP, as finance expects)."""
    return str(amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def transform(rows):
    return [transform_row(r) for r in rows]
