"""Scoring metrics: CAPID span metrics, DelegateCI leak/retention (SLR, NE, EA), PEEP leakage, reward."""

from benchgen.metrics.capid import CapidScores, score_file, score_sample
from benchgen.metrics.delegateci import Item, LeakReport, Matcher, RewriteSample, score_rewrites

__all__ = [
    "CapidScores",
    "Item",
    "LeakReport",
    "Matcher",
    "RewriteSample",
    "score_file",
    "score_rewrites",
    "score_sample",
]
