"""The seeding policy, in one place: how seeds become random generators and short variant codes.

A question's random stream depends on the seed, the bank name and the item id (never on
``hash()``, which changes between runs), so the same seed gives the same variant on every machine
and two items never share a stream. A variant code is the seed written in Crockford base 32 with
a check character, short enough to print on a worksheet and to type back in.
"""

from __future__ import annotations

import sys
import zlib
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.random.bit_generator import ISpawnableSeedSequence

from attnquiz.engine.errors import VariantCodeError

if TYPE_CHECKING:
    from numpy.typing import NDArray

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


class QuestionStreams:
    """The random generators of several items for one seed: the streams `question_rng` gives, with
    the seeding worked out for all the items at once.

    numpy's `SeedSequence` hashes each [seed, crc32(bank), crc32(item)] word by word in a few dozen
    steps of 32-bit arithmetic, a third of drawing a question of a small item; a class's row asks it
    for every item of one seed, so here the steps run once on arrays holding every item. The words
    are checked against numpy's own once a process (`_row_words_agree`): wherever they could differ
    (another numpy), each stream is made by `question_rng` instead, the same streams either way.
    """

    def __init__(self, seed: int, items: Sequence[tuple[str, str]]) -> None:
        """``items``: (bank name, item id) pairs, the streams that `rng` is asked for."""
        self.seed = check_seed(seed)
        self._index = {pair: index for index, pair in enumerate(items)}
        self._words = _row_words(seed, tuple(items)) if items and _row_words_agree() else None

    def rng(self, bank: str, item: str) -> np.random.Generator:
        """`question_rng` of the seed, ``bank`` and ``item`` (any item, even one not given)."""
        index = self._index.get((bank, item))
        if self._words is None or index is None:
            return question_rng(self.seed, bank, item)
        return np.random.Generator(np.random.PCG64(_SeededWords(self._words[index], self.seed, bank, item)))


class _SeededWords(ISpawnableSeedSequence):
    """A seed sequence whose state words for PCG64 are known: what `SeedSequence(entropy)` gives,
    and its own for anything else asked of it (spawning, other words), made when first asked."""

    def __init__(self, words: NDArray[np.uint64], seed: int, bank: str, item: str) -> None:
        self._known = words
        self._of = (seed, bank, item)
        self._own: np.random.SeedSequence | None = None

    def _sequence(self) -> np.random.SeedSequence:
        if self._own is None:
            seed, bank, item = self._of
            self._own = np.random.SeedSequence(np.array([seed, _crc(bank), _crc(item)], dtype=np.uint32))
        return self._own

    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> NDArray[Any]:
        """The state words, as `SeedSequence.generate_state` gives them."""
        # PCG64 asks with the type itself: told apart without making a dtype of it.
        if n_words == _PCG64_WORDS and (dtype is np.uint64 or np.dtype(dtype) == np.uint64):
            return self._known.copy()
        return self._sequence().generate_state(n_words, dtype)

    def spawn(self, n_children: int) -> list[Any]:  # SeedSequences: the children numpy's own has
        """Children, as the `SeedSequence` of the entropy spawns them."""
        return self._sequence().spawn(n_children)

    def __getattr__(self, name: str) -> Any:  # entropy, pool, spawn_key...: the sequence's own
        return getattr(self._sequence(), name)


# numpy's SeedSequence (numpy/random/bit_generator.pyx), for an entropy of three 32-bit words and
# its default pool of four: its hash constants do not depend on the entropy, so they are listed once.
_POOL = 4
_PCG64_WORDS = 4  # 64-bit words PCG64 asks for: its 128-bit state and its 128-bit increment
_MASK = 0xFFFFFFFF
_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715


def _constants(start: int, multiplier: int, count: int) -> list[tuple[int, int]]:
    """The (xor, multiply) constants of ``count`` hash steps, in order."""
    steps = []
    constant = start
    for _ in range(count):
        following = (constant * multiplier) & _MASK
        steps.append((constant, following))
        constant = following
    return steps


# Four steps fill the pool, then every word is mixed into every other (twelve), in that order.
_MIX_STEPS = _constants(_INIT_A, _MULT_A, _POOL + _POOL * (_POOL - 1))
_STATE_STEPS = _constants(_INIT_B, _MULT_B, 2 * _PCG64_WORDS)  # 32-bit words


def _hashed(value: int, step: tuple[int, int]) -> int:
    """One hash step of one 32-bit word."""
    xor, multiply = step
    value = ((value ^ xor) * multiply) & _MASK
    return value ^ (value >> 16)


def _hashed_words(words: NDArray[np.uint32], xor: NDArray[np.uint32], multiply: NDArray[np.uint32]) -> Any:
    """One hash step of many words at once, each column with its own constants."""
    words = (words ^ xor) * multiply
    return words ^ (words >> np.uint32(16))


def _columns(steps: Sequence[tuple[int, int]]) -> tuple[NDArray[np.uint32], NDArray[np.uint32]]:
    """The xor and multiply constants of hash steps, as rows to apply to columns."""
    return (
        np.array([xor for xor, _ in steps], dtype=np.uint32),
        np.array([multiply for _, multiply in steps], dtype=np.uint32),
    )


# The mixing in order: each word of the pool (the source) into the three others, three hash steps.
_SOURCES = [
    (
        source,
        [target for target in range(_POOL) if target != source],
        _columns(_MIX_STEPS[_POOL + 3 * source :][:3]),
    )
    for source in range(_POOL)
]
_STATE_COLUMNS = [index % _POOL for index in range(2 * _PCG64_WORDS)]
_STATE_CONSTANTS = _columns(_STATE_STEPS)


@lru_cache(maxsize=64)
def _item_pools(items: tuple[tuple[str, str], ...]) -> NDArray[np.uint32]:
    """The pool of each item before any mixing, with the seed's word left 0: the rest does not
    depend on the seed."""
    pool = np.zeros((len(items), _POOL), dtype=np.uint32)
    pool[:, 1] = [_hashed(_crc(bank), _MIX_STEPS[1]) for bank, _ in items]
    pool[:, 2] = [_hashed(_crc(item), _MIX_STEPS[2]) for _, item in items]
    pool[:, 3] = _hashed(0, _MIX_STEPS[3])
    return pool


def _row_words(seed: int, items: tuple[tuple[str, str], ...]) -> NDArray[np.uint64]:
    """For each (bank, item), the four 64-bit words `SeedSequence([seed, crc32(bank), crc32(item)])`
    gives PCG64, one row an item."""
    pool = _item_pools(items).copy()
    pool[:, 0] = _hashed(seed, _MIX_STEPS[0])
    for source, targets, (xor, multiply) in _SOURCES:
        hashed = _hashed_words(pool[:, source : source + 1], xor, multiply)
        mixed = pool[:, targets] * np.uint32(_MIX_L) - hashed * np.uint32(_MIX_R)
        pool[:, targets] = mixed ^ (mixed >> np.uint32(16))
    state = _hashed_words(pool[:, _STATE_COLUMNS], *_STATE_CONSTANTS)
    if sys.byteorder == "big":  # numpy reads the 32-bit words as little-endian pairs
        state = state.byteswap()
    return np.ascontiguousarray(state, dtype=np.uint32).view(np.uint64)


@lru_cache(maxsize=1)
def _row_words_agree() -> bool:
    """Whether `_row_words` gives numpy's own words here (checked on a few entropies, once)."""
    items = (("week1", "additive-score"), ("b", ""), ("\u00e9", "x" * 40))
    for seed in (0, 2026, MAX_SEED):
        words = _row_words(seed, items)
        for row, (bank, item) in zip(words, items, strict=True):
            entropy = np.array([seed, _crc(bank), _crc(item)], dtype=np.uint32)
            expected = np.random.SeedSequence(entropy).generate_state(_PCG64_WORDS, np.uint64)
            if not np.array_equal(row, expected):
                return False
    return True


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
