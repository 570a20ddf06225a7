"""Coordinates: every conversion round-trips on every size, every bad input is a
CoordinateError, and the 8 symmetries behave as a group (style principle 8)."""

import itertools

import numpy as np
import pytest

from fuseki.engine.core import base
from fuseki.engine.core.base import (
    PASS,
    CoordinateError,
    point_to_sgf,
    point_to_vertex,
    point_to_xy,
    sgf_to_point,
    vertex_to_point,
    xy_to_point,
)
from fuseki.engine.core.coords import INVERSE, compose, symmetry_table, transform_point, transform_xy

SIZES = range(1, base.MAX_SIZE + 1)

# The issue's table, written out independently of engine.core.coords: (x, y) -> image, M = size - 1.
ISSUE_TABLE = {
    0: lambda x, y, m: (x, y),
    1: lambda x, y, m: (m - x, y),
    2: lambda x, y, m: (x, m - y),
    3: lambda x, y, m: (y, m - x),
    4: lambda x, y, m: (m - x, m - y),
    5: lambda x, y, m: (m - y, x),
    6: lambda x, y, m: (y, x),
    7: lambda x, y, m: (m - y, m - x),
}


# --- points and (x, y) -----------------------------------------------------------

@pytest.mark.parametrize("size", SIZES)
def test_every_conversion_round_trips(size):
    seen = set()
    for y in range(size):
        for x in range(size):
            p = xy_to_point(x, y, size)
            assert p == (y + 1) * (size + 2) + x + 1
            assert point_to_xy(p, size) == (x, y)
            vertex = point_to_vertex(p, size)
            assert vertex_to_point(vertex, size) == p
            assert vertex_to_point(vertex.lower(), size) == p
            sgf = point_to_sgf(p, size)
            assert sgf == "abcdefghijklmnopqrstuvwxy"[x] + "abcdefghijklmnopqrstuvwxy"[y]
            assert sgf_to_point(sgf, size) == p
            seen.add(p)
    assert seen == set(base.board_points(size))
    assert len(base.board_points(size)) == size * size


@pytest.mark.parametrize("vertex, xy", [
    ("A19", (0, 0)), ("T19", (18, 0)), ("A1", (0, 18)), ("T1", (18, 18)),
    ("Q16", (15, 3)), ("D4", (3, 15)), ("H8", (7, 11)), ("J8", (8, 11)), ("K10", (9, 9)),
])
def test_gtp_vertices_skip_i_and_count_rows_from_the_bottom(vertex, xy):
    assert point_to_xy(vertex_to_point(vertex, 19), 19) == xy
    assert point_to_vertex(xy_to_point(*xy, 19), 19) == vertex


def test_the_largest_board_uses_every_letter_but_i():
    assert [point_to_vertex(xy_to_point(x, 0, 25), 25)[0] for x in range(25)] == list(
        "ABCDEFGHJKLMNOPQRSTUVWXYZ")


@pytest.mark.parametrize("text", ["q16", "Q16", " q16 ", "\tQ16"])
def test_vertices_are_case_insensitive_and_stripped(text):
    assert vertex_to_point(text, 19) == xy_to_point(15, 3, 19)


@pytest.mark.parametrize("text", ["pass", "PASS", "Pass"])
def test_pass_vertex(text):
    assert vertex_to_point(text, 19) == PASS
    assert point_to_vertex(PASS, 19) == "pass"


@pytest.mark.parametrize("size", SIZES)
def test_sgf_passes(size):
    assert sgf_to_point("", size) == PASS
    assert point_to_sgf(PASS, size) == ""
    if size <= 19:
        assert sgf_to_point("tt", size) == PASS
    else:  # on big boards tt is the point (19, 19)
        assert point_to_xy(sgf_to_point("tt", size), size) == (19, 19)


@pytest.mark.parametrize("text, size", [
    ("I5", 19), ("A0", 19), ("A20", 19), ("U1", 19), ("T1", 9), ("J10", 9), ("B1", 1),
    ("", 19), ("A", 19), ("5A", 19), ("pas", 19), ("A-1", 19), ("A 1", 19), ("AA1", 19),
    ("A1.5", 19), ("ZZ", 19), ("passs", 19), ("11", 19),
])
def test_bad_vertices_raise_coordinate_error(text, size):
    with pytest.raises(CoordinateError):
        vertex_to_point(text, size)


def test_coordinate_error_is_a_value_error():
    assert issubclass(CoordinateError, ValueError)


@pytest.mark.parametrize("text, size", [
    ("a", 19), ("abc", 19), ("A1", 19), ("AA", 19), ("ta", 19), ("at", 19), ("za", 25),
    ("j", 9), ("jj", 9), ("a ", 19), ("1a", 19), ("uu", 20), ("ut", 20),
])
def test_bad_sgf_points_raise_coordinate_error(text, size):
    with pytest.raises(CoordinateError):
        sgf_to_point(text, size)


@pytest.mark.parametrize("x, y, size", [(-1, 0, 9), (0, -1, 9), (9, 0, 9), (0, 9, 9), (1, 0, 1)])
def test_off_board_xy_raises(x, y, size):
    with pytest.raises(CoordinateError):
        xy_to_point(x, y, size)


@pytest.mark.parametrize("size", SIZES)
def test_border_indices_and_pass_are_not_points(size):
    w = size + 2
    border = [p for p in range(w * w) if p not in set(base.board_points(size))]
    assert len(border) == 4 * size + 4
    for p in border + [PASS, -5, w * w, w * w + 3]:
        with pytest.raises(CoordinateError):
            point_to_xy(p, size)
        with pytest.raises(CoordinateError):
            point_to_sgf(p, size) if p != PASS else point_to_xy(p, size)
        if p != PASS:
            with pytest.raises(CoordinateError):
                point_to_vertex(p, size)


@pytest.mark.parametrize("size", [0, -1, 26, 100])
def test_check_size(size):
    with pytest.raises(CoordinateError):
        base.check_size(size)


# --- symmetries --------------------------------------------------------------------

@pytest.mark.parametrize("size", SIZES)
def test_transform_xy_matches_the_issue_table(size):
    for n, image in ISSUE_TABLE.items():
        for x, y in itertools.product(range(size), repeat=2):
            assert transform_xy(n, x, y, size) == image(x, y, size - 1), (n, x, y)


@pytest.mark.parametrize("size", SIZES)
def test_symmetry_table_for_every_size(size):
    table = symmetry_table(size)
    length = (size + 2) ** 2
    points = np.array(base.board_points(size))
    border = np.setdiff1d(np.arange(length), points)
    assert table.shape == (8, length) and table.dtype == np.int32
    assert not table.flags.writeable
    for n in range(8):
        row = table[n]
        assert sorted(row[points]) == sorted(points), "a symmetry permutes the points"
        assert (row[border] == border).all(), "border cells are fixed"
        for p in points:
            x, y = point_to_xy(int(p), size)
            assert point_to_xy(int(row[p]), size) == ISSUE_TABLE[n](x, y, size - 1)
            assert transform_point(n, int(p), size) == row[p]
        inverse = table[INVERSE[n]]
        assert (inverse[row] == np.arange(length)).all()


def test_inverse_undoes_every_symmetry():
    for n in range(8):
        assert compose(n, INVERSE[n]) == 0
        assert compose(INVERSE[n], n) == 0
        assert INVERSE[INVERSE[n]] == n


@pytest.mark.parametrize("size", [2, 3, 5, 19])
def test_compose_is_apply_a_then_b(size):
    for a, b in itertools.product(range(8), repeat=2):
        c = compose(a, b)
        for x, y in itertools.product(range(size), repeat=2):
            assert transform_xy(c, x, y, size) == transform_xy(b, *transform_xy(a, x, y, size), size)


def test_composition_table():
    # Rows a, columns b: compose(a, b).  Written by hand from the transforms.
    expected = [
        [0, 1, 2, 3, 4, 5, 6, 7],
        [1, 0, 4, 6, 2, 7, 3, 5],
        [2, 4, 0, 7, 1, 6, 5, 3],
        [3, 7, 6, 4, 5, 0, 1, 2],
        [4, 2, 1, 5, 0, 3, 7, 6],
        [5, 6, 7, 0, 3, 4, 2, 1],
        [6, 5, 3, 2, 7, 1, 0, 4],
        [7, 3, 5, 1, 6, 2, 4, 0],
    ]
    assert [[compose(a, b) for b in range(8)] for a in range(8)] == expected


def test_group_laws():
    for a, b, c in itertools.product(range(8), repeat=3):
        assert compose(compose(a, b), c) == compose(a, compose(b, c))
    for a in range(8):
        assert compose(0, a) == compose(a, 0) == a
        assert sorted(compose(a, b) for b in range(8)) == list(range(8))


def test_an_asymmetric_point_has_8_distinct_images_and_pass_is_fixed():
    p = vertex_to_point("R14", 19)
    assert len({transform_point(n, p, 19) for n in range(8)}) == 8
    assert all(transform_point(n, PASS, 19) == PASS for n in range(8))


def test_centre_is_fixed_by_every_symmetry():
    centre = vertex_to_point("K10", 19)
    assert {transform_point(n, centre, 19) for n in range(8)} == {centre}


@pytest.mark.parametrize("n, expected", [(0, "pd dp pp"), (1, "dd pp dp"), (3, "dd pp pd")])
def test_issue_example_on_19x19(n, expected):
    moves = "pd dp pp".split()
    images = [point_to_sgf(transform_point(n, sgf_to_point(m, 19), 19), 19) for m in moves]
    assert " ".join(images) == expected


def test_unknown_symmetry_raises():
    with pytest.raises(ValueError):
        transform_xy(8, 0, 0, 19)


@pytest.mark.parametrize("text", ["A\u00b2", "A\u0661", "\uff211", "Q1\u0666", "pa\u017fs", "\u0131\u0031"])
def test_vertices_are_ascii_only(text):
    # str.isdigit and str.upper accept other scripts: 'A²', Arabic-Indic digits, 'paſs'.upper() == 'PASS'
    with pytest.raises(CoordinateError):
        vertex_to_point(text, 19)
