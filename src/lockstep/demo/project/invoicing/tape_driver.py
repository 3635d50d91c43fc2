"""What the tape oracle runs: the summary of a late invoice, with its collaborators on tape."""

from invoicing.sample import LINES
from invoicing.summary import summarize


def drive(tape):
    with tape.patch("invoicing.rates.rate"), tape.patch("invoicing.fees.late_fee"):
        return summarize(LINES, days_late=45)
