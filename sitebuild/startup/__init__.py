"""Pyodide prepared for the pages' start-up: fetched and verified, precompiled, packed into archives,
split, snapshotted, and matplotlib's font cache."""
