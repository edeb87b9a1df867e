"""Pure parsers of what installers write: RECORD, wheel archives. Bad input becomes findings, not exceptions."""
