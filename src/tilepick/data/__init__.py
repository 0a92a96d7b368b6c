"""Datasets: the column schema (declared once), readers, writers and compaction."""
