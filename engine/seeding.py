"""The seeding policy, in one place: how seeds become random generators and short variant codes.

A question's random stream depends on the seed, the bank name and the item id (never on
``hash()``, which changes between runs), so the same seed gives the same variant on every machine
and two items never share a stream. A variant code is the seed written in Crockford base 32 with
a check character, short enough to print on a worksheet and to type back in.
"""

from __future__ import annotations

import zlib
from functools import lru_cache

import numpy as np

from attnquiz.engine.errors import VariantCodeError

MAX_SEED = 2**32 - 1
_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford: no I, L, O, U
_READS_AS = {"O": "0", "I": "1", "L": "1"}
_CODE_DIGITS = 7  # 35 bits hold any 32-bit seed
_VALUE = {ch: i for i, ch in enumerate(_ALPHABET)}  # _ALPHABET.index without the scan


@lru_cache(maxsize=4096)  # bank names and item ids: a few hundred strings, hashed for every variant
def _crc(text: str) -> int:
    return zlib.crc32(text.encode("utf-8"))


def question_rng(seed: int, bank: str, item: str) -> np.random.Generator:
    """The random generator a generator receives for this seed, bank and item."""
    entropy = [seed, _crc(bank), _crc(item)]
    if 0 <= seed <= MAX_SEED:
        # Each entry fits one 32-bit word, which is exactly the array SeedSequence makes of the
        # list (the same stream); handing it over ready saves converting the ints one by one.
        return np.random.default_rng(np.array(entropy, dtype=np.uint32))
    return np.random.default_rng(entropy)


def derive_seed(master: int, *keys: int | str) -> int:
    """A seed for one part of a larger whole (a question of a session, a student of a class)."""
    entropy = [master, *(k if isinstance(k, int) else _crc(k) for k in keys)]
    return int(np.random.SeedSequence(entropy).generate_state(1, dtype=np.uint32)[0])


def check_seed(seed: int) -> int:
    """``seed`` if it is a valid seed, else a clear error."""
    if not 0 <= seed <= MAX_SEED:
        raise VariantCodeError(f"a seed is a whole number from 0 to {MAX_SEED}, not {seed}")
    return seed


# The check character c makes c + Σⱼ xʲ·dⱼ = 0 in the field GF(32), reading each character as a
# 5-bit polynomial modulo the primitive x⁵ + x² + 1, with the last seed digit weighted x and the
# first x⁷. The eight weights 1, x, …, x⁷ are distinct and non-zero, so a single wrong character and
# a swap of two neighbouring different characters (the check included) always change the sum: both
# are refused. A plain "seed mod 31" check could not do this: 32 ≡ 1 (mod 31) makes it the digit
# sum, blind to every swap and to 0 ↔ Z.
_GF32_MODULUS = 0b100101


def _check_char(digits: str) -> str:
    total = 0
    for ch in digits:  # Horner's rule: ((d₀x + d₁)x + …)x
        total = (total ^ _VALUE[ch]) << 1
        if total & 0b100000:
            total ^= _GF32_MODULUS
    return _ALPHABET[total]


@lru_cache(maxsize=256)  # a class's row asks it for every item of the same seed
def variant_code(seed: int) -> str:
    """The printable code of a seed, e.g. ``0000-007E`` for seed 7 (four, a dash, four)."""
    check_seed(seed)
    digits = ""
    rest = seed
    for _ in range(_CODE_DIGITS):
        rest, digit = divmod(rest, 32)
        digits = _ALPHABET[digit] + digits
    text = digits + _check_char(digits)
    return f"{text[:4]}-{text[4:]}"


def seed_from_code(code: str) -> int:
    """The seed a variant code stands for; forgiving of case, dashes, spaces, O/0 and I/L/1."""
    if code.strip().lower() == ORIGINAL_CODE:
        # "original" reads as 0R1G1NA1 with O→0, I/L→1: refuse it rather than return a random seed.
        raise VariantCodeError(f"{code!r} is the past paper's own question, not the code of a seed")
    cleaned = "".join(code.split()).replace("-", "").upper()
    cleaned = "".join(_READS_AS.get(ch, ch) for ch in cleaned)
    if len(cleaned) != _CODE_DIGITS + 1 or any(ch not in _ALPHABET for ch in cleaned):
        raise VariantCodeError(f"{code!r} is not a variant code: a code has 8 characters, like 0000-007E")
    seed = 0
    for ch in cleaned[:-1]:
        seed = seed * 32 + _ALPHABET.index(ch)
    if seed > MAX_SEED or _check_char(cleaned[:-1]) != cleaned[-1]:
        raise VariantCodeError(f"{code!r} is not a valid variant code (check the characters)")
    return seed


ORIGINAL_CODE = "original"
