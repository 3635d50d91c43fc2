"""``python -m lockstep`` runs the command line."""

from lockstep.cli import main

main()
