"""The one decision validator: its shortcut for the common selections says what its general check says."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bench.engine.model import Decision
from bench.engine.validate import InvalidDecision, check_calls, check_decision

_SELECTIONS = st.one_of(st.just("all"), st.just(()), st.tuples(st.integers(-1, 3)),
                        st.tuples(st.integers(0, 2), st.integers(0, 2)), st.tuples(st.booleans()),
                        st.just([0]), st.none(), st.just("none"))


@given(run=_SELECTIONS, failed=_SELECTIONS, n_calls=st.integers(0, 70))
def test_a_decision_s_selections_are_checked_as_check_calls_checks_them(
        run: object, failed: object, n_calls: int) -> None:
    decision = Decision("continue", "r", run=run, failed=failed)  # type: ignore[arg-type]
    try:
        expected = check_calls(run, failed, n_calls)
    except InvalidDecision as exc:
        try:
            check_decision(decision, n_calls, None, None)
        except InvalidDecision as same:
            assert str(same) == str(exc)
        else:
            raise AssertionError(f"check_decision accepted {decision}, check_calls refuses it: {exc}") from None
    else:
        assert check_decision(decision, n_calls, None, None) == expected
