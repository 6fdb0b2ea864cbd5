"""engine.units: what a learner types, parsed into base units; labelled display."""

from __future__ import annotations

import json
import math
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st
from uniseg.graphemecluster import grapheme_clusters

from engine import units
from engine.checks import whole_number
from engine.errors import QUOTED_CHARACTERS, InputError, beginning, escaped, quoted


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1e9", 1e9), ("1B", 1e9), ("7.5B", 7.5e9), ("350M", 350e6), ("12k", 12e3), (" 2 T ", 2e12)],
)
def test_parse_count(text: str, expected: float) -> None:
    assert units.parse_count("params", text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("80GB", 80e9),
        ("80GiB", 80 * 2**30),
        ("512 MB", 512e6),
        ("1e9", 1e9),
        ("4KiB", 4096),
    ],
)
def test_parse_bytes(text: str, expected: float) -> None:
    assert units.parse_bytes("size", text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("100GB/s", 100e9), ("400Gb/s", 50e9), ("400Gbit/s", 50e9), ("25GiB/s", 25 * 2**30)],
)
def test_parse_rate(text: str, expected: float) -> None:
    assert units.parse_rate("bandwidth", text) == expected


@pytest.mark.parametrize(("text", "expected"), [("5us", 5e-6), ("2ms", 2e-3), ("1.5s", 1.5)])
def test_parse_time(text: str, expected: float) -> None:
    assert math.isclose(units.parse_time("latency", text), expected)


@pytest.mark.parametrize("bad", ["", "  ", "abc", "-1", "0", "1e400", "nan", "inf", "5 parsecs"])
def test_bad_counts_name_the_field(bad: str) -> None:
    with pytest.raises(InputError) as info:
        units.parse_count("params", bad)
    assert info.value.field == "params"
    assert str(info.value).startswith("params: ")


@pytest.mark.parametrize(
    ("value", "digits", "shown"),
    [
        (1_234.5, 2, "1,234.50"),
        # 15 significant digits, the most a float always keeps: still the fixed form.
        (9_999_999_999_999.0, 2, "9,999,999,999,999.00"),
        (999_999_999_999_999.0, 0, "999,999,999,999,999"),
        # More would be noise: 1e24 bytes / 4e9 showed 250,000,000,000,000.03 GB.
        (1e24 / 4e9, 2, "2.5e+14"),
        (1e24, 0, "1e+24"),  # not 999,999,999,999,999,983,222,784
        (-1e24, 0, "-1e+24"),
    ],
)
def test_format_fixed_writes_no_digit_past_a_floats_precision(
    value: float, digits: int, shown: str
) -> None:
    assert units.format_fixed(value, digits) == shown


def test_parse_int_refuses_fractions() -> None:
    with pytest.raises(InputError, match="whole number"):
        units.parse_int("micro_batches", "2.5")
    assert units.parse_int("micro_batches", "8") == 8
    with pytest.raises(InputError, match="at least 1"):
        units.parse_int("micro_batches", "0")


def test_format_bytes_labels_both_conventions() -> None:
    assert units.format_bytes(16e9) == "16.00 GB (14.90 GiB)"


def test_format_bytes_never_writes_digits_past_float_precision() -> None:
    """1.5e40 bytes is 1.5e31 GB (GB = 1e9) and 1.5e40 / 2^30 = 1.397e31 GiB: a float holds
    about 15-17 significant digits, so the fixed form's 32 integer digits would be noise."""
    assert units.format_bytes(1.5e40) == "1.5e+31 GB (1.397e+31 GiB)"
    # 15 significant digits still fit the fixed form: 9,999,999,999,999.00 has 15.
    assert units.format_gb(9_999_999_999_999e9) == "9,999,999,999,999.00 GB"
    assert units.format_gb(1e22) == "1e+13 GB"


@pytest.mark.parametrize(
    ("count", "shown"),
    [
        (7.5e9, "7.5B"),  # Llama-class sizes read in billions (B = 1e9)
        (350e6, "350M"),
        (999e12, "999T"),
        # A thousand T and more: a suffix over a power of ten read 1e24 as "1e+12T".
        (1e15, "1e+15"),
        (1e24, "1e+24"),
        (-2.5e18, "-2.5e+18"),
    ],
)
def test_format_count_never_puts_a_suffix_on_a_power_of_ten(count: float, shown: str) -> None:
    assert units.format_count(count) == shown


@pytest.mark.parametrize("typed", ["100000000", " 100000000 ", "100M"])
def test_whole_number_bound_shows_the_value_as_typed(typed: str) -> None:
    with pytest.raises(InputError) as caught:
        units.parse_int("ranks", typed, maximum=16_777_216)
    assert caught.value.message == f"must be at most 16,777,216, got {typed.strip()}"
    assert units.format_gib(2**30) == "1.00 GiB"


@pytest.mark.parametrize(
    ("typed", "quoted"),
    [
        ("1e300", "1e300"),
        ("1e20", "1e20"),
        # 39 digits: cut to 31 and an ellipsis, as every quoted input is (README).
        ("1" * 39, "1" * 31 + "…"),
    ],
)
def test_a_huge_whole_number_is_quoted_as_typed_not_by_its_digits(typed: str, quoted: str) -> None:
    """No spec takes a count above 1e12; 1e300 as an int has 301 digits, which the refusal
    must not print."""
    with pytest.raises(InputError) as caught:
        units.parse_int("seq", typed)
    assert caught.value.message == f"must be at most 1,000,000,000,000, got {quoted}"


@given(st.text(max_size=30))
def test_parsers_return_a_finite_number_or_a_named_error(text: str) -> None:
    for parser in (units.parse_count, units.parse_bytes, units.parse_rate, units.parse_time):
        try:
            value = parser("f", text)
        except InputError as error:
            assert error.field == "f"
        else:
            assert math.isfinite(value) and value >= 0


@pytest.mark.parametrize(
    ("text", "expected"), [("1,024", 1024.0), ("1,000,000", 1e6), ("12,345.5", 12345.5)]
)
def test_commas_between_groups_of_three_digits_are_thousands(text: str, expected: float) -> None:
    assert units.parse_number("seq", text) == expected
    assert units.parse_bytes("gpu_memory", f"{text} GB") == expected * 1e9


@pytest.mark.parametrize("text", ["1,5", "1,5,,", "1,0000", ",5", "1,5GB", "2,5 GB"])
def test_a_decimal_comma_is_refused_not_read_as_thousands(text: str) -> None:
    # "1,5" is 1.5 in much of the world; read as 15 it would give a figure 10x off.
    for parser in (units.parse_number, units.parse_count, units.parse_bytes):
        with pytest.raises(InputError, match=r"use '\.' for decimals"):
            parser("seq", text)


def test_a_message_quotes_an_emoji_as_it_was_typed() -> None:
    # 👩‍💻 is three code points, woman + zero-width joiner + laptop (Unicode emoji ZWJ
    # sequence): repr() would show the joiner as \u200d.
    with pytest.raises(InputError) as error:
        units.parse_count("params", "7B👩\u200d💻")
    assert "'B👩\u200d💻'" in str(error.value)
    with pytest.raises(InputError) as error:
        units.parse_count("params", "1B\x1b[31m\tx")
    assert "\t" not in str(error.value) and "\x1b" not in str(error.value)
    assert "'1B\\x1b[31m\\tx'" in str(error.value)


@given(st.text())
def test_a_quoted_input_has_no_character_that_moves_the_cursor(text: str) -> None:
    shown = quoted(text)
    assert shown.startswith("'") and shown.endswith("'")
    assert not any(char in shown for char in "\n\r\t\x1b\x07\x00\u2028\u2029\x85")
    if all(char.isprintable() for char in text) and len(text) <= QUOTED_CHARACTERS:
        assert shown == f"'{text}'"
    # A long text: its beginning (a grapheme is kept or left whole) and an ellipsis.
    assert len(shown) <= len(repr(text)) + 2 or shown.endswith("…'")


# Characters whose grapheme boundaries depend on their neighbours (UAX #29): combining marks,
# the zero-width joiner and emoji, regional indicators (flags pair up), Hangul jamo, CR LF.
_CLUSTERING = st.text(
    alphabet=st.sampled_from(
        "ae9 \r\n\u0301\u0308\u200d\U0001f469\U0001f4bb\ufe0f"
        "\u1100\u1161\u11a8\uac00\U0001f1eb\U0001f1f7"
    ),
    max_size=300,
)


@given(_CLUSTERING, st.integers(min_value=1, max_value=40))
def test_a_long_texts_beginning_is_its_first_whole_graphemes(text: str, limit: int) -> None:
    # Expected from the whole text's grapheme clusters (uniseg, UAX #29), however long it is.
    clusters = list(grapheme_clusters(text))
    if len(clusters) > limit:
        assert beginning(text, limit) == escaped("".join(clusters[: limit - 1])) + "…"
    else:
        assert beginning(text, limit) == escaped(text)


def test_a_whole_number_past_its_bound_is_quoted_by_its_beginning() -> None:
    """10**300 handed to a spec (not typed) is 301 digits: its first 31 and an ellipsis."""
    with pytest.raises(InputError) as caught:
        whole_number("seq", 10**300)
    assert caught.value.message == "must be at most 1,000,000,000,000, got 1" + "0" * 30 + "…"


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (0.375, "0.375"),
        (3 / 11, "0.2727"),
        (49.5, "49.5"),
        (2e-05, "2e-05"),
        # Every integer digit past 1,000: 4 significant digits showed 300009 as 3e+05.
        (300_009.0, "300,009"),
        (100_000.0, "100,000"),
        (1_234.5, "1,234"),
        # Past the digits a float holds (about 15): scientific, as format_gb.
        (1.1e25, "1.1e+25"),
    ],
)
def test_format_figure_keeps_every_integer_digit(value: float, shown: str) -> None:
    assert units.format_figure(value) == shown


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("100GB/s", True),
        ("5 us", True),
        ("400Gb/s", True),
        ("1GiB", True),
        ("100", False),
        ("1e11", False),
        (" 7 ", False),
        (100, False),
        ("", False),
        ("abc", False),
        ("1e400", False),
    ],
)
def test_has_unit_tells_a_bare_number_from_one_with_a_unit(text: str | int, expected: bool) -> None:
    assert units.has_unit(text) is expected


@pytest.mark.parametrize(
    ("num_bytes", "expected"),
    [
        (1, "1e-09 GB (9.313e-10 GiB)"),  # 1 B: 1/1e9 GB, 1/2^30 GiB
        (160_000, "0.00016 GB (0.000149 GiB)"),
        (5e6, "0.01 GB (0.004657 GiB)"),  # 0.005 GB rounds to 0.01; 5e6/2^30 = 0.004657 GiB
        (0, "0.00 GB (0.00 GiB)"),
        (16e9, "16.00 GB (14.90 GiB)"),
    ],
)
def test_a_nonzero_size_is_never_shown_as_zero(num_bytes: float, expected: str) -> None:
    assert units.format_bytes(num_bytes) == expected


@pytest.mark.parametrize(
    ("typed", "got"), [("1e40", "1e40 bytes"), (" 1e40 ", "1e40 bytes"), ("2e15 GB", "2e15 GB")]
)
def test_a_size_past_its_bound_is_refused_in_gb_and_gib(typed: str, got: str) -> None:
    """The bound of 1e24 bytes written as every size is: 1e24 / 1e9 = 1e15 GB and
    1e24 / 2^30 = 9.313e14 GiB; a bare number typed is said to be bytes, a unit typed kept."""
    with pytest.raises(InputError) as caught:
        units.parse_bytes("gpu_memory", typed, maximum=1e24)
    assert caught.value.message == f"must be at most 1e+15 GB (9.313e+14 GiB), got {got}"


@pytest.mark.parametrize(
    ("text", "written"), [("5us", "5e-06"), ("2.5ms", "0.0025"), ("7ns", "7e-09"), ("0.1GB", "1e8")]
)
def test_a_value_with_a_unit_is_the_decimal_written(text: str, written: str) -> None:
    """5 us is 5e-06 s exactly as a float writes it: 5 x 1e-6 is 4.9999999999999996e-06 in
    binary, and the command line's JSON printed that."""
    parse = units.parse_bytes if text.endswith("B") else units.parse_time
    assert parse("value", text) == float(written)
    assert json.dumps(parse("value", text)) == json.dumps(float(written))


@pytest.mark.parametrize(
    ("parser", "text", "shown", "character"),
    [
        (units.parse_count, "7\tB", "'7\\tB'", "\\t"),
        (units.parse_count, "7\nB", "'7\\nB'", "\\n"),
        (units.parse_count, "7\x1bB", "'7\\x1bB'", "\\x1b"),
        (units.parse_bytes, "80\rGB", "'80\\rGB'", "\\r"),
        (units.parse_int, "1\t024", "'1\\t024'", "\\t"),
        (units.parse_rate, "100GB\t/s", "'100GB\\t/s'", "\\t"),
        (units.parse_time, "5\x00us", "'5\\x00us'", "\\x00"),
    ],
)
def test_a_control_character_inside_a_number_is_refused(
    parser: Callable[[str, str], float], text: str, shown: str, character: str
) -> None:
    """``7<TAB>B`` and ``7<newline>B`` read as 7B (the pattern took them for spaces), while
    ``7<ESC>B`` was an unknown suffix: each is refused, naming the field and the character."""
    with pytest.raises(InputError) as error:
        parser("params", text)
    assert str(error.value) == (
        f"params: {shown} holds a control character ({character}); type the number on one line"
    )


@pytest.mark.parametrize("text", ["7B\n", "\t7B", " 7 B ", "\n7B\r\n"])
def test_whitespace_around_a_number_is_still_no_part_of_it(text: str) -> None:
    """A shell's or an editor's newline at an end, or a space between number and unit."""
    assert units.parse_count("params", text) == 7e9
