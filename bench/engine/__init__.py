"""The engine: what a turn, a decision and a cell are, the predicate API, and the replay that joins them.

``model`` holds the data types; ``predicate`` the declarations a port makes; ``replay`` drives one
sequence through one predicate; ``validate`` says what a decision must be; ``judge`` reads a cell
against its sequence's requirements; ``contain`` keeps a predicate's hang or Ctrl-C to its own cell;
``discovery`` finds the predicates of a folder and its entry points; ``changes`` writes a decision's
request changes. Nothing here reads or writes files but ``discovery``'s imports of predicate files.
"""
