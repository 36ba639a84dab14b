"""Multi-limb modular arithmetic emitted as LLVM IR, for numba-compiled kernels.

Numba has no 128-bit integers, but LLVM does: emitting the Montgomery product
directly as IR over i128 lets LLVM select the 64x64->128 multiply and the
add-with-carry chains, which is about 4x fewer multiplications than 32-bit limbs
in plain numba arithmetic. Each factory bakes the modulus into the code as
constants; elements are numba UniTuple(uint64, n) values, least significant
limb first, always fully reduced (< p).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

if TYPE_CHECKING:
    from numba.core.base import BaseContext

_I64 = ir.IntType(64)
_I128 = ir.IntType(128)


def _limbs(value: int, n: int) -> list[int]:
    return [(value >> (64 * i)) & ((1 << 64) - 1) for i in range(n)]


def _unpack(builder: ir.IRBuilder, tup: ir.Value, n: int) -> list[ir.Value]:
    return [builder.extract_value(tup, i) for i in range(n)]


def _pack(
    context: BaseContext, builder: ir.IRBuilder, tuple_type: types.Type, limbs: list[ir.Value]
) -> ir.Value:
    out = ir.Constant(context.get_value_type(tuple_type), ir.Undefined)
    for i, limb in enumerate(limbs):
        out = builder.insert_value(out, limb, i)
    return out


def _to_wide(builder: ir.IRBuilder, limbs: list[ir.Value], width: ir.IntType) -> ir.Value:
    wide = ir.Constant(width, 0)
    for i, limb in enumerate(limbs):
        part = builder.zext(limb, width)
        if i:
            part = builder.shl(part, ir.Constant(width, 64 * i))
        wide = builder.or_(wide, part)
    return wide


def _from_wide(builder: ir.IRBuilder, wide: ir.Value, n: int) -> list[ir.Value]:
    width = wide.type
    return [
        builder.trunc(builder.lshr(wide, ir.Constant(width, 64 * i)) if i else wide, _I64) for i in range(n)
    ]


def _reduce_once(builder: ir.IRBuilder, wide: ir.Value, modulus: int) -> ir.Value:
    """wide - p if wide >= p, else wide (wide < 2p)."""
    p = ir.Constant(wide.type, modulus)
    return builder.select(builder.icmp_unsigned(">=", wide, p), builder.sub(wide, p), wide)


def _outlined(
    builder: ir.IRBuilder, name: str, ret: ir.Type, args: list[ir.Value], emit: Callable
) -> ir.Value:
    """Call `name`, a noinline function of this LLVM module whose body `emit` builds once.

    Inlined, a 6-limb Montgomery product is ~200 IR instructions at every call site: a point
    kernel holds dozens, and LLVM's optimizer spent ~85% of a first run's compile time on them
    (tools/compile_profile.py, 2026-12-05). One outlined copy per module (linkonce_odr: linked
    modules share it) costs a call per product: 2^16-point MSMs ran at the same speed within 3%
    (G1 -2%, G2 +3%) and a 2^16 NTT 20% faster, on one thread (tools/kernel_speed.py). Additions
    stay inline: outlined too, they made the G2 MSM 30% slower.
    """
    module = builder.module
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, [a.type for a in args]), name)
        fn.linkage = "linkonce_odr"
        fn.attributes.add("noinline")
        fn.attributes.add("nounwind")
        body = ir.IRBuilder(fn.append_basic_block("entry"))
        body.ret(emit(body, list(fn.args)))
    return builder.call(fn, args)


def make_mont_mul(modulus: int, n: int, *, outline: bool = True) -> Callable:
    """a * b * 2^(-64n) mod p by CIOS (coarsely integrated operand scanning); `outline`: as one
    noinline function per module rather than inline at each call."""
    p_limbs = _limbs(modulus, n)
    p_inv = (-pow(modulus, -1, 1 << 64)) % (1 << 64)
    tup = types.UniTuple(types.uint64, n)
    name = f"cuzk_mont_mul_{n}_{modulus:x}"

    def emit(context: BaseContext, builder: ir.IRBuilder, a: ir.Value, b: ir.Value) -> ir.Value:
        a_limbs = [builder.zext(x, _I128) for x in _unpack(builder, a, n)]
        b_limbs = [builder.zext(x, _I128) for x in _unpack(builder, b, n)]
        shift = ir.Constant(_I128, 64)

        def split(x):
            return builder.trunc(x, _I64), builder.trunc(builder.lshr(x, shift), _I64)

        def widen(x):
            return builder.zext(x, _I128)

        zero = ir.Constant(_I64, 0)
        t = [zero] * (n + 2)
        for i in range(n):
            carry = ir.Constant(_I128, 0)
            for j in range(n):
                s = builder.add(builder.add(builder.mul(a_limbs[j], b_limbs[i]), widen(t[j])), carry)
                t[j], hi = split(s)
                carry = widen(hi)
            t[n], t[n + 1] = split(builder.add(widen(t[n]), carry))
            m = widen(builder.mul(t[0], ir.Constant(_I64, p_inv)))
            _, hi = split(builder.add(builder.mul(m, ir.Constant(_I128, p_limbs[0])), widen(t[0])))
            carry = widen(hi)
            for j in range(1, n):
                s = builder.add(
                    builder.add(builder.mul(m, ir.Constant(_I128, p_limbs[j])), widen(t[j])), carry
                )
                t[j - 1], hi = split(s)
                carry = widen(hi)
            t[n - 1], hi = split(builder.add(widen(t[n]), carry))
            t[n] = builder.add(t[n + 1], hi)
        wide = _reduce_once(builder, _to_wide(builder, t[: n + 1], ir.IntType(64 * (n + 1))), modulus)
        return _pack(context, builder, tup, _from_wide(builder, wide, n))

    @intrinsic
    def mont_mul(typingctx, a, b):
        def codegen(context, builder, signature, args):
            if not outline:
                return emit(context, builder, args[0], args[1])
            ret = context.get_value_type(tup)
            return _outlined(builder, name, ret, list(args), lambda bb, xs: emit(context, bb, xs[0], xs[1]))

        return tup(tup, tup), codegen

    return mont_mul


def make_add_mod(modulus: int, n: int) -> Callable:
    """(a + b) mod p."""
    tup = types.UniTuple(types.uint64, n)
    width = ir.IntType(64 * n + 1)

    @intrinsic
    def add_mod(typingctx, a, b):
        def codegen(context, builder, signature, args):
            s = builder.add(
                _to_wide(builder, _unpack(builder, args[0], n), width),
                _to_wide(builder, _unpack(builder, args[1], n), width),
            )
            return _pack(context, builder, tup, _from_wide(builder, _reduce_once(builder, s, modulus), n))

        return tup(tup, tup), codegen

    return add_mod


def make_sub_mod(modulus: int, n: int) -> Callable:
    """(a - b) mod p."""
    tup = types.UniTuple(types.uint64, n)
    width = ir.IntType(64 * n)

    @intrinsic
    def sub_mod(typingctx, a, b):
        def codegen(context, builder, signature, args):
            x = _to_wide(builder, _unpack(builder, args[0], n), width)
            y = _to_wide(builder, _unpack(builder, args[1], n), width)
            d = builder.sub(x, y)
            fixed = builder.add(d, ir.Constant(width, modulus))
            res = builder.select(builder.icmp_unsigned("<", x, y), fixed, d)
            return _pack(context, builder, tup, _from_wide(builder, res, n))

        return tup(tup, tup), codegen

    return sub_mod


def make_lt(n: int) -> Callable:
    """a < b as unsigned n-limb integers (for canonical-form checks)."""
    tup = types.UniTuple(types.uint64, n)
    width = ir.IntType(64 * n)

    @intrinsic
    def lt(typingctx, a, b):
        def codegen(context, builder, signature, args):
            x = _to_wide(builder, _unpack(builder, args[0], n), width)
            y = _to_wide(builder, _unpack(builder, args[1], n), width)
            return builder.icmp_unsigned("<", x, y)

        return types.boolean(tup, tup), codegen

    return lt
