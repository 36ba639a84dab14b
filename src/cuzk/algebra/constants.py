"""BLS12-381 parameters, with the derived constants the kernels need.

Sources: the zcash/bls12_381 crate's notes and py_ecc (which the tests use as an
oracle for every value here); the Fq2 tower is Fq[i]/(i^2 + 1), the curves are
E1: y^2 = x^3 + 4 over Fq and the twist E2: y^2 = x^3 + 4(1 + i) over Fq2.
"""

from __future__ import annotations

#: The BLS parameter z (negative), from which p and r are derived.
Z = -0xD201000000010000

#: Base field modulus p (381 bits).
Q = 0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB
#: Scalar field modulus r (255 bits), the order of G1 and G2.
R = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001

FQ_LIMBS = 6
FR_LIMBS = 4

#: Montgomery radix exponents: R_fq = 2^384, R_fr = 2^256 (64-bit limbs, the
#: same R as 32-bit limbs, so GPU kernels share the host's Montgomery form).
FQ_BITS = 64 * FQ_LIMBS
FR_BITS = 64 * FR_LIMBS

#: Curve coefficients b for E1 (b = 4) and E2 (b = 4 + 4i, as (c0, c1)).
G1_B = 4
G2_B = (4, 4)

#: Standard generators (affine, canonical).
G1_GEN = (
    0x17F1D3A73197D7942695638C4FA9AC0FC3688C4F9774B905A14E3A3F171BAC586C55E83FF97A1AEFFB3AF00ADB22C6BB,
    0x08B3F481E3AAA0F1A09E30ED741D8AE4FCF5E095D5D00AF600DB18CB2C04B3EDD03CC744A2888AE40CAA232946C5E7E1,
)
G2_GEN = (
    (
        0x024AA2B2F08F0A91260805272DC51051C6E47AD4FA403B02B4510B647AE3D1770BAC0326A805BBEFD48056C8C121BDB8,
        0x13E02B6052719F607DACD3A088274F65596BD0D09920B61AB5DA61BBDC7F5049334CF11213945D57E5AC7D055D042B7E,
    ),
    (
        0x0CE5D527727D6E118CC9CDC6DA2E351AADFD9BAA8CBDD3A76D429A695160D12C923AC9CC3BACA289E193548608B82801,
        0x0606C4A02EA734CC32ACD2B02BC28B99CB3E287E85A763AF267492AB572E99AB3F370D275CEC1DA1AAA9075FF05F79BE,
    ),
)

#: Cube root of unity in Fq with sigma(x, y) = (BETA x, y) acting as [-z^2] on G1
#: (Scott's G1 membership test: P in G1 iff sigma(P) == [-z^2] P).
G1_BETA = 0x5F19672FDF76CE51BA69C6076A0F77EADDB3A93BE6F89688DE17D813620A00022E01FFFFFFFEFFFE

#: psi(x, y) = (conj(x) PSI_X, conj(y) PSI_Y), the untwist-Frobenius-twist map;
#: P in G2 iff psi(P) == [z] P (Scott's G2 membership test).
G2_PSI_X = (
    0,
    0x1A0111EA397FE699EC02408663D4DE85AA0D857D89759AD4897D29650FB85F9B409427EB4F49FFFD8BFD00000000AAAD,
)
G2_PSI_Y = (
    0x135203E60180A68EE2E9C448D77A2CD91C3DEDD930B1CF60EF396489F61EB45E304466CF3E67FA0AF1EE7B04121BDEA2,
    0x06AF0E0437FF400B6831E36D6BD17FFE48395DABC2D3435E77F76E17009241C5EE67992F72EC05F4C81084FBEDE3CC09,
)

#: 2-adicity of r - 1: the largest power-of-two NTT domain is 2^32.
FR_TWO_ADICITY = 32

#: Multiplicative generators used for roots of unity by the two ecosystems we
#: serve (FORMATS.md section 0): bellperson/blstrs use 7, snarkjs/ffjavascript 5.
BELLPERSON_GENERATOR = 7
SNARKJS_GENERATOR = 5


def root_of_unity(log_n: int, generator: int = BELLPERSON_GENERATOR) -> int:
    """The primitive 2^log_n-th root of unity generator^((r-1)/2^32) squared down."""
    if not 0 <= log_n <= FR_TWO_ADICITY:
        raise ValueError(f"domain 2^{log_n} exceeds the 2-adicity 2^{FR_TWO_ADICITY} of r - 1")
    w = pow(generator, (R - 1) >> FR_TWO_ADICITY, R)
    return pow(w, 1 << (FR_TWO_ADICITY - log_n), R)


def mont_constants(modulus: int, limbs: int) -> tuple[int, int, int]:
    """(R mod p, R^2 mod p, -p^-1 mod 2^64) for Montgomery arithmetic with `limbs` 64-bit limbs."""
    radix = 1 << (64 * limbs)
    return radix % modulus, radix * radix % modulus, (-pow(modulus, -1, 1 << 64)) % (1 << 64)
