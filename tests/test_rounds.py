"""The round scheduler: balanced positions and carry-over."""

from collections import Counter

import pytest

from bringup.boot import rounds


def test_two_kernels_alternate_ab_ba():
    assert [rounds.order(["a", "b"], r) for r in range(4)] == [["a", "b"], ["b", "a"], ["a", "b"], ["b", "a"]]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_every_kernel_in_every_position_and_after_every_other_equally_often(n):
    ks = [f"k{i}" for i in range(n)]
    rows = [rounds.order(ks, r) for r in range(rounds.cycle(n))]
    assert all(sorted(r) == ks for r in rows)
    positions = Counter((k, i) for r in rows for i, k in enumerate(r))
    assert len(set(positions.values())) == 1 and len(positions) == n * n
    if n > 1:
        follows = Counter((r[i], r[i + 1]) for r in rows for i in range(n - 1))
        assert len(follows) == n * (n - 1) and len(set(follows.values())) == 1
