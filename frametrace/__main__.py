"""`python -m frametrace [options] script.py [args...]`: see frametrace/cli.py."""
import sys

from frametrace.cli import main

sys.exit(main())
