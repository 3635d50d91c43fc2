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
    coupons = row.get("coupons") or []
    discount = Decimal("0")
    for c in coupons:
        if c.endswith("%"):
            pct = Decimal(c[:-1]) / Decimal(100)
            discount = discount + (subtotal - discount) * pct   # percentage coupons stack
        else:
            discount = discount + Decimal(c)
    if discount > subtotal:
        discount = subtotal
    total = subtotal - discount
    out["subtotal"] = str(subtotal.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
    out["discount"] = str(discount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
    out["total"] = str(total.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
    if "note" in row:
        out["note"] = row["note"] if row["note"] else None
    return out


def transform(rows):
    return [transform_row(r) for r in rows]
