"""The runtime gate: ``is_intact(name)``, cached, thread-safe, and light to import (standard library only)."""
