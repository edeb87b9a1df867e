"""wheeldoctor: is an installed Python environment really what its installers recorded?

``import wheeldoctor`` must stay nearly free: it is called from the start-up path of
serving processes. Only the runtime gate is bound here, and the gate defers every
import it needs until it is first asked.
"""

from __future__ import annotations

from wheeldoctor.gate.predicate import is_intact

__version__ = "0.1.0"

__all__ = ["__version__", "is_intact"]
