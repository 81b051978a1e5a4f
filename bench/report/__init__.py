"""Reports of a run: cell labels and glyphs, the Markdown and CSV tables, live columns, the page.

``labels`` is the leaf every output shares (a cell in one string, the glyphs, a cell as a record);
``tables`` builds the decision table and the CSV frame; ``live`` reads ``<name>@live`` columns;
``write`` writes ``reports/``; ``page`` renders the HTML matrix; ``summary`` and ``coverage`` say
what a run comes to.
"""
