"""Scripts that run inside a target interpreter (standard library only); wheeldoctor reads them as text."""
