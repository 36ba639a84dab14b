"""Poseidon: parameters and hashes against known answers from PyPI's poseidon-hash, and the
numba twin and the gadget against a plain-Python reference permutation written here."""

from __future__ import annotations

import pytest
from gadget_harness import both
from poseidon_kat import KAT

from cuzk.algebra.constants import R
from cuzk.algebra.fields import FR
from cuzk.errors import CircuitError
from cuzk.gadgets.num import Num
from cuzk.gadgets.poseidon import permute_trace, poseidon_hash, poseidon_native, trace_length
from cuzk.gadgets.poseidon_params import params, round_numbers
from cuzk.r1cs import ConstraintSystem


def reference_permutation(state: list[int], arity: int) -> list[int]:
    """The paper's permutation on Python ints, straight from the parameters."""
    p = params(arity)
    t, half = p.t, p.full_rounds // 2
    rc = iter(p.round_constants)
    s = list(state)
    for r in range(p.full_rounds + p.partial_rounds):
        s = [(x + next(rc)) % R for x in s]
        if r < half or r >= half + p.partial_rounds:
            s = [pow(x, 5, R) for x in s]
        else:
            s[0] = pow(s[0], 5, R)
        s = [sum(p.mds[i][j] * s[j] for j in range(t)) % R for i in range(t)]
    return s


def reference_trace(state: list[int], arity: int) -> list[int]:
    """The values the gadget allocates, from the plain permutation: x^2, x^4, x^5 per S-box in
    round order, then the output."""
    p = params(arity)
    t, half = p.t, p.full_rounds // 2
    rc = iter(p.round_constants)
    s, out = list(state), []
    for r in range(p.full_rounds + p.partial_rounds):
        s = [(x + next(rc)) % R for x in s]
        for j in range(t if r < half or r >= half + p.partial_rounds else 1):
            out += [pow(s[j], 2, R), pow(s[j], 4, R), pow(s[j], 5, R)]
            s[j] = out[-1]
        s = [sum(p.mds[i][j] * s[j] for j in range(t)) % R for i in range(t)]
    return [*out, s[1]]


@pytest.mark.parametrize("arity", sorted(KAT))
def test_parameters_match_poseidon_hash(arity):
    k, p = KAT[arity], params(arity)
    assert (p.full_rounds, p.partial_rounds) == (k["full_rounds"], k["partial_rounds"])
    assert round_numbers(arity + 1) == (k["full_rounds"], k["partial_rounds"])
    assert len(p.round_constants) == p.t * (p.full_rounds + p.partial_rounds)
    assert p.round_constants[0] == k["rc_first"] and p.round_constants[-1] == k["rc_last"]
    assert p.mds[0][1] == k["mds_0_1"]
    assert all(0 <= c < R for c in p.round_constants)


@pytest.mark.parametrize("arity", sorted(KAT))
def test_reference_and_native_match_known_answers(arity):
    for state, want in KAT[arity]["vectors"]:
        assert reference_permutation(state, arity)[1] == want
        if state[0] == params(arity).domain_tag:
            got = poseidon_native(arity, FR.from_ints(state[1:]).reshape(1, arity, 4))
            assert FR.to_ints(got) == [want]


@pytest.mark.parametrize("arity", [2, 8, 11])
def test_native_matches_reference_on_random_inputs(arity, rng):
    x = FR.random(4 * arity, rng).reshape(4, arity, 4)
    got = FR.to_ints(poseidon_native(arity, x))
    for row, g in zip(x, got, strict=True):
        assert reference_permutation([params(arity).domain_tag, *FR.to_ints(row)], arity)[1] == g


@pytest.mark.parametrize("arity", [2, 11])
def test_a_batch_split_over_threads_matches_row_by_row(arity, rng):
    """Past SERIAL_WORK the rows run in chunks on the thread pool: every row, its hash and its
    trace, equals the same row hashed alone, and the hash equals the reference's."""
    from cuzk.algebra._parallel import SERIAL_WORK, limit_threads, parts_for
    from cuzk.gadgets.poseidon import permutation_products, permute_trace

    n = 3 * SERIAL_WORK // permutation_products(arity) + 5
    x = FR.random(n * arity, rng).reshape(n, arity, 4)
    with limit_threads(3):
        if parts_for(n, n * permutation_products(arity)) < 2:
            pytest.skip("one thread on this machine: nothing to split")
        hashes, trace = permute_trace(arity, x)
    for i in (0, n // 2, n - 1):
        alone, alone_trace = permute_trace(arity, x[i : i + 1])
        assert (hashes[i] == alone[0]).all() and (trace[i] == alone_trace[0]).all()
    want = reference_permutation([params(arity).domain_tag, *FR.to_ints(x[n - 1])], arity)[1]
    assert FR.to_ints(hashes[n - 1 : n]) == [want]


@pytest.mark.parametrize("arity", [2, 8, 11])
def test_gadget(arity, rng):
    x = FR.random(arity, rng)

    def body(cs, view):
        xs = [Num.alloc(cs, view.field("x", i)) for i in range(arity)]
        return poseidon_hash(cs, xs, arity=arity)

    out, rec = both(body, {"x": x}, {"x": ("field", (arity,))})
    assert FR.to_ints(out.value) == [
        reference_permutation([params(arity).domain_tag, *FR.to_ints(x)], arity)[1]
    ]
    p = params(arity)
    assert rec.topology.num_constraints == 3 * p.sboxes + 1 + 1  # S-boxes, the output, ONE's input row
    assert rec.topology.num_aux == trace_length(arity) + arity


def test_gadget_rejects_wrong_arity():
    cs = ConstraintSystem()
    x = Num.alloc(cs, 1)
    with pytest.raises(CircuitError, match="takes 2 inputs"):
        poseidon_hash(cs, [x], arity=2)


@pytest.mark.parametrize("arity", [2, 8, 11])
def test_the_sparse_partial_rounds_keep_every_traced_value(arity, rng):
    """The twin mixes partial rounds with sparse matrices (2t - 1 products instead of t^2); every
    S-box value it records must still be the plain permutation's, or the witness breaks."""
    x = FR.random(3 * arity, rng).reshape(3, arity, 4)
    out, trace = permute_trace(arity, x)
    assert trace.shape[1] == trace_length(arity)
    for row, tr, o in zip(x, trace, FR.to_ints(out), strict=True):
        want = reference_trace([params(arity).domain_tag, *FR.to_ints(row)], arity)
        assert FR.to_ints(tr) == want and o == want[-1]
