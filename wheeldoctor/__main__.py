"""``python -m wheeldoctor``."""

from __future__ import annotations

from wheeldoctor.cli import main

main()
