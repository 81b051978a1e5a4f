"""Development tools run from a clone and left out of the wheel: the mutation check and the perf figures."""
