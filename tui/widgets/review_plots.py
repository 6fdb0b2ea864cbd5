"""Plots of the review statistics: reviews due per day (the forecast) and recall per day.

textual-plotext (a Textual widget over plotext) is imported with this module, which the quiz
screen loads only when it first shows a plot, so the app's first frame does not pay for it.
The figures come from :func:`engine.quiz.lesson_stats`; this widget only draws them.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import Vertical
from textual_plotext import PlotextPlot

from engine.quiz_stats import LessonStats, percent
from tui import strings

_TICK_EVERY = 7


def _ticks(days: Sequence[dt.date]) -> tuple[list[float], list[str]]:
    """Tick positions (bar indexes, as plotext takes them: floats) and their dates."""
    positions: list[float] = list(range(0, len(days), _TICK_EVERY))
    return positions, [f"{days[int(n)]:%m-%d}" for n in positions]


class ReviewPlots(Vertical):
    """Two bar charts over every lesson in ``rows``: reviews due on each of the next 30 local
    dates, and the share of Good/Easy ratings on each of the past 30."""

    DEFAULT_CSS = """
    ReviewPlots {
        height: auto;
    }
    ReviewPlots PlotextPlot {
        height: 11;
    }
    """

    def compose(self) -> ComposeResult:
        yield PlotextPlot(id="forecast-plot")
        yield PlotextPlot(id="recall-plot")

    def show(self, rows: Sequence[LessonStats]) -> None:
        """Draw the statistics of ``rows`` (summed over the lessons, day by day)."""
        self._forecast(rows)
        self._recall(rows)

    def _forecast(self, rows: Sequence[LessonStats]) -> None:
        widget = self.query_one("#forecast-plot", PlotextPlot)
        plt = widget.plt
        plt.clear_figure()
        days = [day.date for day in rows[0].due_forecast] if rows else []
        counts = [sum(row.due_forecast[n].count for row in rows) for n in range(len(days))]
        plt.title(strings.QUIZ_PLOT_FORECAST.format(total=sum(counts), days=len(days)))
        if days:
            plt.bar(list(range(len(days))), counts, width=0.6)
            plt.xticks(*_ticks(days))
            top = max(max(counts), 1)
            plt.ylim(0, top)
            step = max(1, math.ceil(top / 4))
            plt.yticks(list(range(0, top + 1, step)))
        widget.refresh()

    def _recall(self, rows: Sequence[LessonStats]) -> None:
        widget = self.query_one("#recall-plot", PlotextPlot)
        plt = widget.plt
        plt.clear_figure()
        days = [day.date for day in rows[0].recall_history] if rows else []
        reviews = [sum(row.recall_history[n].reviews for row in rows) for n in range(len(days))]
        recalled = [sum(row.recall_history[n].recalled for row in rows) for n in range(len(days))]
        total = sum(reviews)
        overall = percent(sum(recalled) / total if total else None)
        plt.title(strings.QUIZ_PLOT_RECALL.format(recall=overall, reviews=total, days=len(days)))
        if days:
            # Only days with reviews get a bar: a day without any is no recall of 0 %.
            reviewed = [n for n, count in enumerate(reviews) if count]
            if reviewed:
                shares = [100 * recalled[n] / reviews[n] for n in reviewed]
                plt.bar(reviewed, shares, width=0.6)
            plt.xticks(*_ticks(days))
            plt.xlim(-1, len(days))
            plt.ylim(0, 100)
            plt.yticks([0, 25, 50, 75, 100])
        widget.refresh()
