"""Rendering: results in, text out. The only package that formats anything for people or tools."""
